//! 001-alg5, PrivTree_T (paper 001, Appendix A), served as a stream of length 1.
//!
//! The tree T of [0,1]^d: the vertex at depth k cuts coordinate k mod d into `fanout` equal parts; a
//! vertex is named "root" or by the dotted path of its child indices ("0.1.1"). PrivTree needs only
//! the labels: the cells (and so d) do not enter its decisions.

use std::collections::HashMap;

use crate::json::{self, Json};
use crate::lines::Lines;
use crate::noise::{self, refuse, Fail, Noise};
use crate::params;

#[derive(Clone, Copy)]
pub struct Config {
    pub depth: usize, // D
    pub fanout: u64,  // beta
    pub theta: f64,
    pub lambda: f64,
    pub delta: f64,
}

pub fn configure(p: &Json) -> Result<Config, Fail> {
    params::only_keys(p, &["d", "D", "fanout", "epsilon", "theta", "lambda_rule"], "params")?;
    params::integer_at_least(p, "d", 1, None)?;
    let depth = params::integer_at_least(p, "D", 0, None)?;
    if depth > 64 {
        return refuse(format!("params.D: this example supports D <= 64 (got {depth})"));
    }
    let fanout = params::integer_at_least(p, "fanout", 2, Some(2))?;
    if fanout > i128::from(u32::MAX) {
        return refuse(format!(
            "params.fanout: this example supports fanout < 2^32 (got {fanout})"
        ));
    }
    let epsilon = params::positive_number(p, "epsilon")?;
    let theta = match p.get("theta") {
        None => 0.0,
        Some(v) => match v.as_finite() {
            Some(x) if x >= 0.0 => x,
            _ => {
                return refuse(format!(
                    "params.theta: must be a finite number >= 0 (got {})",
                    v.describe()
                ))
            }
        },
    };
    let rule = match p.get("lambda_rule") {
        None => "general",
        Some(Json::String(s)) if ["general", "proof", "printed"].contains(&s.as_str()) => s.as_str(),
        Some(v) => {
            return refuse(format!(
                "params.lambda_rule: must be one of general, proof, printed (got {})",
                v.describe()
            ))
        }
    };
    // [001-alg5 L3] the scale lambda (docs/phdstream.md; errata E-phdstream-3, -4):
    //   general  D/epsilon (Theorem 3.1 for every F in C(T)); at D = 0 the corpus uses 1/epsilon
    //   proof    (2 beta - 1)/((beta - 1) epsilon)   (Appendix A; valid on counts only)
    //   printed  (2 beta - 1)/(beta - 1) * 2/epsilon (L3 as printed)
    let b = fanout as f64;
    let lambda = match rule {
        "general" => depth.max(1) as f64 / epsilon,
        "proof" => (2.0 * b - 1.0) / ((b - 1.0) * epsilon),
        _ => (2.0 * b - 1.0) / (b - 1.0) * 2.0 / epsilon,
    };
    let delta = lambda * b.ln(); // delta = lambda ln(beta) (errata E-phdstream-3, 'Default')
    if !lambda.is_finite() || !delta.is_finite() {
        return refuse(format!(
            "params.epsilon: too small, the noise scale overflows (got {epsilon:?})"
        ));
    }
    Ok(Config {
        depth: depth as usize,
        fanout: fanout as u64,
        theta,
        lambda,
        delta,
    })
}

fn label_of(path: &[u64]) -> String {
    if path.is_empty() {
        "root".to_string()
    } else {
        path.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
    }
}

/// "root" or a dotted path of child indices, each < fanout, at most D of them.
fn parse_label(label: &str, config: &Config, place: &str) -> Result<Vec<u64>, Fail> {
    if label == "root" {
        return Ok(Vec::new());
    }
    let mut path = Vec::new();
    for part in label.split('.') {
        let canonical =
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) && (part == "0" || !part.starts_with('0'));
        let Some(index) = part.parse::<u64>().ok().filter(|_| canonical) else {
            return refuse(format!(
                "{place}: a vertex is \"root\" or a dotted path of child indices (got {label:?})"
            ));
        };
        if index >= config.fanout {
            return refuse(format!(
                "{place}: child index {index} of {label:?} must be < fanout = {}",
                config.fanout
            ));
        }
        path.push(index);
    }
    if path.len() > config.depth {
        return refuse(format!("{place}: vertex {label:?} is deeper than D = {}", config.depth));
    }
    Ok(path)
}

/// F: a consistent tree function {label: F(v)}; absent vertices count 0. Consistency (6) on the
/// vertices with children (erratum E-phdstream-1): F(v) = the sum of F over children(v).
/// `t` is the number of steps taken: PrivTree is one-shot, so only t = 0 is accepted.
pub fn check_input(config: &Config, t: u64, f: &Json, place: &str) -> Result<HashMap<String, f64>, Fail> {
    let Json::Object(members) = f else {
        return refuse(format!(
            "{place}: F must be a JSON object {{label: number}} (got {})",
            f.describe()
        ));
    };
    if t >= 1 {
        return refuse(format!("{place}: PrivTree is one-shot, a second input is past T = 1"));
    }
    let mut values = HashMap::new();
    let mut child_sums: HashMap<String, f64> = HashMap::new();
    for (label, value) in members {
        let path = parse_label(label, config, place)?;
        let Some(x) = value.as_finite() else {
            return refuse(format!(
                "{place}: F({label}) must be a finite number (got {})",
                value.describe()
            ));
        };
        if let Some((_, parent)) = path.split_last() {
            *child_sums.entry(label_of(parent)).or_insert(0.0) += x;
        }
        if path.len() < config.depth {
            child_sums.entry(label.clone()).or_insert(0.0); // its children may all be absent
        }
        values.insert(label.clone(), x);
    }
    for (parent, sum) in &child_sums {
        let own = values.get(parent).copied().unwrap_or(0.0);
        if (own - sum).abs() > 1e-9 * own.abs().max(sum.abs()).max(1.0) {
            return refuse(format!(
                "{place}: F must be consistent (6): F({parent}) = {own:?} but its children sum to {sum:?}"
            ));
        }
    }
    Ok(values)
}

/// PrivTree_T (001-alg5 L9-L12): visit the vertices breadth first from the root; at v the biased count
/// b(v) = max(F(v) - depth(v) delta, theta - delta) plus Lap(lambda) decides whether v is split
/// (> theta, below depth D). Every visited vertex draws, depth D included. The visiting order is
/// sorted by (depth, path): the release's order of `nodes` and `leaves`. The docs give the draw (L11)
/// but not this rule: it is PrivTree's (Zhang et al. 2016), and the clamp at theta - delta is confirmed
/// by the corpus vector 001-alg5/privtree-d2-D4-eps2-theta1 (without it: 11 nodes, not 13).
pub fn run(config: &Config, values: &HashMap<String, f64>, noise: &mut Noise, io: &mut Lines) -> Result<Json, Fail> {
    let mut nodes = Vec::new();
    let mut leaves = Vec::new();
    let mut queue: Vec<Vec<u64>> = vec![Vec::new()];
    let mut head = 0;
    while head < queue.len() {
        let path = queue[head].clone();
        head += 1;
        let label = label_of(&path);
        let depth = path.len();
        let f = values.get(&label).copied().unwrap_or(0.0);
        let b = (f - depth as f64 * config.delta).max(config.theta - config.delta);
        let z = noise::laplace(noise, io, &format!("001-alg5 L11 v={label}"), config.lambda)?; // [001-alg5 L11]
        if depth < config.depth && b + z > config.theta {
            // split: every child joins the queue
            for i in 0..config.fanout {
                let mut child = path.clone();
                child.push(i);
                queue.push(child);
            }
        } else {
            leaves.push(json::string(&label));
        }
        nodes.push(json::string(&label));
    }
    Ok(json::object(vec![
        ("nodes", Json::Array(nodes)),
        ("leaves", Json::Array(leaves)),
    ]))
}
