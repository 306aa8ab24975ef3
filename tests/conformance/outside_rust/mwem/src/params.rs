//! 003-alg2's `init` parameters (docs/catalog.md, section 003-alg2; `dpstream serve --describe`) and
//! the checks of an INPUT (docs/tabular.md, "Shared pieces").

use crate::json::Json;

/// One query of Q, as the cells of X it sums: `groups[c]` are the cells of its answer's entry c
/// (one entry for a marginal query, |W| for a workload, in row-major order of its columns).
pub struct Query {
    pub columns: Vec<usize>,
    pub values: Option<Vec<usize>>,
    pub groups: Vec<Vec<u32>>,
}

pub struct Config {
    pub sizes: Vec<usize>,
    pub strides: Vec<usize>,
    pub ncells: usize,
    pub queries: Vec<Query>,
    pub workloads: bool,
    pub k: usize,
    #[allow(dead_code)]
    pub epsilon: f64,
    pub measured: bool,
    /// the public sizes |nabla f_t| (total 'public'; their number is the horizon)
    pub public: Vec<f64>,
    pub mw_all: bool,
    /// the exponential mechanism's parameters, as the reference states them
    pub em_epsilon: f64,
    pub sensitivity: f64,
    /// the measurements' Laplace scale 2k / eps
    pub scale: f64,
}

const MAX_SCALE: f64 = 1.8e305;

fn int_in(v: &Json, lo: i64, hi: i64, name: &str) -> Result<i64, String> {
    match v.as_int() {
        Some(i) if i >= lo && i <= hi => Ok(i),
        _ => Err(format!("{}: must be an integer in [{}, {}] (got {})", name, lo, hi, v.brief())),
    }
}

pub fn parse(p: &Json) -> Result<Config, String> {
    let members = match p {
        Json::Obj(m) => m,
        _ => return Err("params: must be a JSON object".into()),
    };
    const KNOWN: [&str; 7] = ["domain", "queries", "k", "epsilon", "total", "sizes", "A_Dataset"];
    for (key, _) in members {
        if !KNOWN.contains(&key.as_str()) {
            return Err(format!("params: unknown parameter {:?}", key));
        }
    }
    // domain
    let domain = p.get("domain").ok_or("domain: is required")?;
    let mut dk = domain.keys();
    dk.sort();
    if !matches!(domain, Json::Obj(_)) || dk != ["names", "sizes"] {
        return Err(format!("domain: must be a JSON object with exactly the keys 'names' and 'sizes' (got {})", domain.brief()));
    }
    let names = domain.get("names").unwrap().as_arr().ok_or("domain: names must be an array")?;
    let dsizes = domain.get("sizes").unwrap().as_arr().ok_or("domain: sizes must be an array")?;
    if names.is_empty() {
        return Err("domain: must have at least one attribute".into());
    }
    if names.len() != dsizes.len() {
        return Err("domain: one size per attribute name".into());
    }
    let mut seen: Vec<&str> = Vec::new();
    for n in names {
        match n.as_str() {
            Some(s) if !s.is_empty() && !seen.contains(&s) => seen.push(s),
            _ => return Err(format!("domain: names must be distinct non-empty strings (got {})", n.brief())),
        }
    }
    let mut sizes = Vec::new();
    let mut ncells: usize = 1;
    for s in dsizes {
        let v = int_in(s, 1, 65536, "domain sizes (every attribute size is >= 1, |X| <= 65536)")? as usize;
        ncells = ncells.saturating_mul(v);
        if ncells > 65536 {
            return Err("domain: |X| must be <= 65536 cells".into());
        }
        sizes.push(v);
    }
    let pdim = sizes.len();
    let mut strides = vec![1usize; pdim];
    for i in (0..pdim.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * sizes[i + 1];
    }
    // queries
    let qs = p.get("queries").ok_or("queries: is required")?.as_arr().ok_or("queries: must be a JSON array")?;
    if qs.is_empty() {
        return Err("queries: Q is non-empty".into());
    }
    let mut queries: Vec<Query> = Vec::new();
    let mut kinds = (false, false);
    for q in qs {
        let mut keys = q.keys();
        keys.sort();
        let marginal = keys == ["columns", "values"];
        if !matches!(q, Json::Obj(_)) || !(marginal || keys == ["columns"]) {
            return Err(format!("queries: a query is {{columns, values}} (marginal) or {{columns}} (workload) (got {})", q.brief()));
        }
        let cols = q.get("columns").unwrap().as_arr().ok_or("columns: must be an array")?;
        if cols.is_empty() {
            return Err("columns: a query needs at least one column".into());
        }
        let mut columns = Vec::new();
        for c in cols {
            let c = int_in(c, 0, pdim as i64 - 1, "columns (a query's columns lie in [0, p))")? as usize;
            if let Some(last) = columns.last() {
                if c <= *last {
                    return Err("columns: a query's columns are strictly increasing".into());
                }
            }
            columns.push(c);
        }
        let values = if marginal {
            let vs = q.get("values").unwrap().as_arr().ok_or("values: must be an array")?;
            if vs.len() != columns.len() {
                return Err("values: one value per column".into());
            }
            let mut values = Vec::new();
            for (v, c) in vs.iter().zip(&columns) {
                values.push(int_in(v, 0, sizes[*c] as i64 - 1, "values (a query's value lies in its attribute's domain)")? as usize);
            }
            kinds.0 = true;
            Some(values)
        } else {
            kinds.1 = true;
            None
        };
        if queries.iter().any(|o| o.columns == columns && o.values == values) {
            return Err("queries: Q must not hold the same query twice".into());
        }
        let groups = groups_of(&sizes, &strides, ncells, &columns, values.as_deref());
        queries.push(Query { columns, values, groups });
    }
    if kinds.0 && kinds.1 {
        return Err("queries: Q holds only marginal queries or only workloads".into());
    }
    let workloads = kinds.1;
    // k, epsilon
    let k = int_in(p.get("k").ok_or("k: is required")?, 1, 1000, "k")? as usize;
    if k > queries.len() {
        return Err(format!("k: must not exceed |Q| = {} (got {})", queries.len(), k));
    }
    let epsilon = match p.get("epsilon").ok_or("epsilon: is required")?.as_num() {
        Some(e) if e > 0.0 => e,
        _ => return Err(format!("epsilon: must be a finite number > 0 (got {})", p.get("epsilon").unwrap().brief())),
    };
    // total, sizes
    let measured = match p.get("total") {
        None => false,
        Some(t) => match t.as_str() {
            Some("public") => false,
            Some("measured") => true,
            _ => return Err(format!("total: is 'public' or 'measured' (got {})", t.brief())),
        },
    };
    let mut public = Vec::new();
    match p.get("sizes") {
        None => {
            if !measured {
                return Err("sizes: total 'public' needs sizes".into());
            }
        }
        Some(s) => {
            if measured {
                return Err("sizes: are only used with total 'public'".into());
            }
            for v in s.as_arr().ok_or("sizes: must be a JSON array")? {
                match v.as_num() {
                    Some(x) if x >= 0.0 => public.push(x),
                    _ => return Err(format!("sizes: must hold finite numbers >= 0 (got {})", v.brief())),
                }
            }
        }
    }
    if measured && !workloads {
        return Err("total: 'measured' needs workloads".into());
    }
    let mw_all = match p.get("A_Dataset") {
        None => false,
        Some(a) => match a.as_str() {
            Some("mw") => false,
            Some("mw-all") => true,
            _ => return Err(format!("A_Dataset: is mw or mw-all (got {})", a.brief())),
        },
    };
    let kf = k as f64;
    let scale = 2.0 * kf / epsilon;
    if !scale.is_finite() || scale > MAX_SCALE || scale <= 0.0 {
        return Err(format!("epsilon: gives the Laplace scale 2k/epsilon = {:e}, outside (0, 1.8e305] (got {})", scale, epsilon));
    }
    let em_epsilon = epsilon / (2.0 * kf);
    if !(em_epsilon > 0.0 && em_epsilon.is_finite()) {
        return Err(format!("epsilon: gives the selection budget eps/(2k) = {:e}, not a positive finite number", em_epsilon));
    }
    let sensitivity = if workloads {
        let smallest = queries.iter().map(|q| q.groups.len()).min().unwrap();
        1.0 / smallest as f64
    } else {
        1.0
    };
    Ok(Config { sizes, strides, ncells, queries, workloads, k, epsilon, measured, public, mw_all, em_epsilon, sensitivity, scale })
}

/// The cells of X in each entry of a query's answer.
fn groups_of(sizes: &[usize], strides: &[usize], ncells: usize, columns: &[usize], values: Option<&[usize]>) -> Vec<Vec<u32>> {
    let entries: usize = match values {
        Some(_) => 1,
        None => columns.iter().map(|c| sizes[*c]).product(),
    };
    let mut groups = vec![Vec::new(); entries];
    for x in 0..ncells {
        let mut entry = 0usize;
        let mut inside = true;
        for (j, c) in columns.iter().enumerate() {
            let code = (x / strides[*c]) % sizes[*c];
            match values {
                Some(vs) => {
                    if code != vs[j] {
                        inside = false;
                        break;
                    }
                }
                None => entry = entry * sizes[*c] + code,
            }
        }
        if inside {
            groups[entry].push(x as u32);
        }
    }
    groups
}

/// A checked INPUT: the cells of its added and removed records.
pub struct Batch {
    pub added: Vec<u32>,
    pub removed: Vec<u32>,
}

fn records(cfg: &Config, v: Option<&Json>, name: &str) -> Result<Vec<u32>, String> {
    let list = v.and_then(|v| v.as_arr()).ok_or_else(|| format!("input: '{}' must be an array of records", name))?;
    let mut cells = Vec::with_capacity(list.len());
    for r in list {
        let codes = r.as_arr().ok_or_else(|| format!("{}: a record is an array of p integer codes (got {})", name, r.brief()))?;
        if codes.len() != cfg.sizes.len() {
            return Err(format!("{}: a record has p = {} values (got {})", name, cfg.sizes.len(), r.brief()));
        }
        let mut cell = 0usize;
        for (i, c) in codes.iter().enumerate() {
            match c.as_int() {
                Some(x) if x >= 0 && (x as usize) < cfg.sizes[i] => cell += x as usize * cfg.strides[i],
                _ => return Err(format!("{}: a record's value lies in its attribute's domain, an integer in [0, {}) (got {})", name, cfg.sizes[i], r.brief())),
            }
        }
        cells.push(cell as u32);
    }
    Ok(cells)
}

/// Checks an INPUT's shape and codes (not yet against the data present).
pub fn check_input(cfg: &Config, x: &Json) -> Result<Batch, String> {
    let mut keys = x.keys();
    keys.sort();
    if !matches!(x, Json::Obj(_)) || keys != ["added", "removed"] {
        return Err(format!("input: must be a JSON object with exactly the keys 'added' and 'removed' (got {})", x.brief()));
    }
    Ok(Batch { added: records(cfg, x.get("added"), "added")?, removed: records(cfg, x.get("removed"), "removed")? })
}

/// Applies a batch to the present counts f, refusing a removal of an absent record (f + nabla f >= 0
/// in every cell; a record may be removed in the step that adds it). `f` is unchanged on refusal.
pub fn apply(f: &mut [i64], b: &Batch) -> Result<(), String> {
    for c in &b.added {
        f[*c as usize] += 1;
    }
    for (i, c) in b.removed.iter().enumerate() {
        f[*c as usize] -= 1;
        if f[*c as usize] < 0 {
            // undo
            for d in &b.removed[..=i] {
                f[*d as usize] += 1;
            }
            for d in &b.added {
                f[*d as usize] -= 1;
            }
            return Err(format!("removed: a record can only be removed if it is present (f_t(x) >= 0): cell {}", c));
        }
    }
    Ok(())
}
