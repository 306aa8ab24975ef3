//! 001-alg10, the Binary tree counter (Chan et al.'s Binary Mechanism).

use crate::json::{self, Json};
use crate::lines::Lines;
use crate::noise::{self, refuse, Fail, Noise};
use crate::params;

#[derive(Clone, Copy)]
pub struct Config {
    pub horizon: u64,
    pub scale: f64,
}

/// The range every counter keeps (docs/counters.md, "Range"): |f(t)| and every p-sum within
/// +-(2^53 - 1). Beyond it doubles round, so inputs at distance 1 could give p-sums 2 apart. A JSON
/// integer above it (2^53 + 1) reads as a double >= 2^53, still outside: the check on the parsed
/// double is the check on the number sent.
const MAX_STREAM_SUM: f64 = 9_007_199_254_740_991.0;

fn within_range(v: f64) -> bool {
    (-MAX_STREAM_SUM..=MAX_STREAM_SUM).contains(&v)
}

/// sum_{i<j} alpha_i + x with Neumaier's compensated summation: every rounding error of the running
/// sum is kept exactly and added back once, so for integers whose sum lies within 2^53 the result is
/// exact even when a partial sum leaves the range (left to right, M + 2 - M with M = 2^53 - 1 gives
/// 1, not 2). The reference computes it correctly rounded (math.fsum); for real inputs the two can
/// differ in the last bit.
fn p_sum(alpha: &[f64], x: f64) -> f64 {
    let (mut sum, mut compensation) = (0.0_f64, 0.0_f64);
    for &v in alpha.iter().chain(std::iter::once(&x)) {
        let next = sum + v;
        compensation += if sum.abs() >= v.abs() {
            (sum - next) + v
        } else {
            (v - next) + sum
        };
        sum = next;
    }
    sum + compensation
}

/// floor(log2 t) + 1 for t >= 1: the number of binary digits of t.
fn bit_length(t: u64) -> u32 {
    64 - t.leading_zeros()
}

pub fn configure(p: &Json, as_printed: bool) -> Result<Config, Fail> {
    params::only_keys(p, &["epsilon", "T"], "params")?;
    let epsilon = params::positive_number(p, "epsilon")?; // [001-alg10 L1]
    let horizon = params::integer_at_least(p, "T", 1, None)?; // [001-alg10 L1] horizon T
    if horizon > (1 << 63) {
        return refuse(format!("params.T: must be at most 2^63 (got {horizon})"));
    }
    let horizon = horizon as u64;
    // [001-alg10 L8] corrected scale (floor(log2 T) + 1)/epsilon, erratum E-counters-1: an input enters
    // up to floor(log2 T) + 1 nodes. As printed: log2(T)/epsilon, NOT epsilon-DP.
    let scale = if as_printed {
        (horizon as f64).log2() / epsilon
    } else {
        f64::from(bit_length(horizon)) / epsilon
    };
    if !scale.is_finite() {
        return refuse(format!(
            "params.epsilon: too small, the noise scale overflows (got {epsilon:?})"
        ));
    }
    Ok(Config { horizon, scale })
}

/// [001-alg10 L3] alpha_i = alpha_hat_i = 0 for all i (64 bits cover every t <= 2^63).
#[derive(Clone)]
pub struct State {
    pub t: u64,
    alpha: [f64; 64],
    alpha_hat: [f64; 64],
}

pub fn fresh() -> State {
    State {
        t: 0,
        alpha: [0.0; 64],
        alpha_hat: [0.0; 64],
    }
}

/// The input of step t + 1 (t steps taken): a finite number within the range and the horizon.
pub fn check_input(config: &Config, t: u64, x: &Json, place: &str) -> Result<f64, Fail> {
    let Some(value) = x.as_finite() else {
        return refuse(format!("{place}: must be a finite number (got {})", x.describe()));
    };
    if !within_range(value) {
        return refuse(format!(
            "{place}: must lie within +-(2^53 - 1) (MAX_STREAM_SUM) (got {})",
            x.describe()
        ));
    }
    if t >= config.horizon {
        return refuse(format!(
            "{place}: step {} is past the horizon T = {}",
            t + 1,
            config.horizon
        ));
    }
    Ok(value)
}

/// One step: draw into locals, compute, then commit. Node j, the lowest set bit of t, gets the p-sum
/// of (t - 2^j, t]; g(t) adds the noisy nodes of the set bits of t, lowest bit first.
pub fn step(config: &Config, s: &mut State, x: f64, noise: &mut Noise, io: &mut Lines) -> Result<Json, Fail> {
    let t = s.t + 1;
    let j = t.trailing_zeros() as usize; // [001-alg10 L6] j = min{i : b_i(t) != 0}
    let alpha_j = p_sum(&s.alpha[..j], x); // [001-alg10 L7] alpha_j = sum_{i<j} alpha_i + f(t)
    if !within_range(alpha_j) {
        // refused before the draw
        return refuse(format!(
            "input: would take the p-sum alpha_{j} to {alpha_j:?}, outside +-(2^53 - 1) (MAX_STREAM_SUM)"
        ));
    }
    let z = noise::laplace(noise, io, &format!("001-alg10 L8 t={t}"), config.scale)?;
    let alpha_hat_j = alpha_j + z; // [001-alg10 L8] + Lap(scale)
    let mut g = 0.0; // [001-alg10 L10] the sum over the set bits of t
    for i in 0..bit_length(t) as usize {
        if (t >> i) & 1 == 1 {
            g += if i == j { alpha_hat_j } else { s.alpha_hat[i] };
        }
    }
    if !g.is_finite() || !alpha_j.is_finite() {
        return refuse(format!("g({t}) overflows the double range"));
    }
    s.alpha[j] = alpha_j; // commit
    s.alpha_hat[j] = alpha_hat_j;
    for i in 0..j {
        s.alpha[i] = 0.0; // [001-alg10 L9]
        s.alpha_hat[i] = 0.0;
    }
    s.t = t;
    Ok(json::number(g))
}
