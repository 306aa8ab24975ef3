//! 003-alg2, StreamingMWEM, as docs/tabular.md "The boxes exactly" states it (with errata
//! E-tabular-1, -3, -6: selection budget eps/(2k), a public or measured mass, g_0 = 0).
//!
//! EVALUATION ORDER (deliberately not the straightforward one; the error model of
//! docs/conformance.md allows any order):
//! * the multiplicative weights are kept as log-probabilities, log p(x); an MW step adds a(x) to
//!   log p(x) and renormalises by subtracting log-sum-exp (max-shifted), instead of
//!   p <- p e^a / sum p e^a; p(x) = exp(log p(x)) only where an answer is needed;
//! * a fit's starting distribution p = init / |init| is carried over as the previous fit's log p
//!   (the same real number), not recomputed from N p;
//! * every sum over the cells of a query entry is taken in reverse cell order;
//! * the measured mass uses weights 1/|W| (the common factor 1/b^2 cancelled);
//! * g_t = g_{t-1} + (h_1 + ... + h_k) / k (a division, not a product with 1/k).
//! The `linear-space` fault (a correct control) evaluates the straightforward way instead, as
//! docs/tabular.md's prose says the reference does: p kept as doubles, each step exp(log p + a minus
//! its maximum) normalised, forward sums, b^2 weights, x (1/k). (Not the doc-check code's
//! p e^(a - max a), which is 0/0 once every weight that a raises has underflowed to 0: QUESTIONS.md.)

use crate::noise::Source;
use crate::params::{Batch, Config, Query};

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Fault {
    None,
    /// the exponential mechanism run with c times its epsilon (reported honestly)
    EmTimes(f64),
    /// every measurement's Laplace scale divided by c (reported honestly)
    ScaleOver(f64),
    /// the first measurement of each run (t = 1, l = 1, every cell) released without noise
    Noiseless,
    /// another generator family and other samplers (a correct control)
    OwnRng,
    /// the straightforward evaluation order (a correct control)
    LinearSpace,
}

#[derive(Clone)]
pub struct State {
    pub t: usize,
    /// the present dataset f_t as cell counts (to refuse a removal of an absent record)
    pub f: Vec<i64>,
    pub g: Vec<f64>,
    /// the mass of the previous step's last fit (measured total: h_{t,0}'s mass)
    pub last_mass: f64,
}

pub fn fresh(cfg: &Config) -> State {
    State { t: 0, f: vec![0; cfg.ncells], g: vec![0.0; cfg.ncells], last_mass: 0.0 }
}

/// The horizon check and the data check of a step, before any draw. Returns the new counts.
pub fn admit(cfg: &Config, st: &State, b: &Batch) -> Result<Vec<i64>, String> {
    if !cfg.measured && st.t >= cfg.public.len() {
        return Err(format!("t: the public sizes cover T = {} steps (got step {})", cfg.public.len(), st.t + 1));
    }
    let mut f = st.f.clone();
    crate::params::apply(&mut f, b)?;
    Ok(f)
}

/// The distribution of a fit: log-probabilities (default) or probabilities (`linear-space`).
struct Weights {
    log: bool,
    w: Vec<f64>,
}

impl Weights {
    fn uniform(n: usize, log: bool) -> Weights {
        let v = if log { -(n as f64).ln() } else { 1.0 / n as f64 };
        Weights { log, w: vec![v; n] }
    }
    fn probs(&self, out: &mut Vec<f64>) {
        out.clear();
        if self.log {
            out.extend(self.w.iter().map(|l| l.exp()));
        } else {
            out.extend_from_slice(&self.w);
        }
    }
}

/// The answer of one entry of a query on the cells' values `h`.
#[inline]
fn entry_sum(h: &[f64], cells: &[u32], reversed: bool) -> f64 {
    let mut s = 0.0;
    if reversed {
        for x in cells.iter().rev() {
            s += h[*x as usize];
        }
    } else {
        for x in cells {
            s += h[*x as usize];
        }
    }
    s
}

/// One multiplicative-weights step for the measurement `m` of query `q` with mass N > 0.
fn mw_step(wts: &mut Weights, q: &Query, m: &[f64], n: f64, p: &mut Vec<f64>) {
    wts.probs(p);
    let clip = |a: f64| a.clamp(-1e300, 1e300);
    if wts.log {
        for (c, cells) in q.groups.iter().enumerate() {
            let a = clip((m[c] - n * entry_sum(p, cells, true)) / (2.0 * n));
            for x in cells {
                wts.w[*x as usize] += a;
            }
        }
        let top = wts.w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut s = 0.0;
        for l in wts.w.iter().rev() {
            s += (l - top).exp();
        }
        let shift = top + s.ln();
        for l in wts.w.iter_mut() {
            *l -= shift;
        }
    } else {
        // docs/tabular.md's prose: log p + a minus its maximum, exponentiated and normalised
        // (log 0 = -inf: a weight that is 0 stays 0)
        let mut la: Vec<f64> = p.iter().map(|px| px.ln()).collect();
        for (c, cells) in q.groups.iter().enumerate() {
            let ac = clip((m[c] - n * entry_sum(p, cells, false)) / (2.0 * n));
            for x in cells {
                la[*x as usize] += ac;
            }
        }
        let top = la.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut s = 0.0;
        for (x, lx) in la.iter().enumerate() {
            let wx = (lx - top).exp();
            wts.w[x] = wx;
            s += wx;
        }
        for wx in wts.w.iter_mut() {
            *wx /= s;
        }
    }
}

/// One time step of StreamingMWEM on the checked batch `b` (its new counts `f`, from `admit`).
/// Returns the new state and the release g_t; `st` itself is not changed (a failing draw or a
/// release that is not finite changes nothing).
pub fn step(cfg: &Config, fault: Fault, st: &State, b: &Batch, f: Vec<i64>, src: &mut Source) -> Result<State, String> {
    let t = st.t + 1;
    let log = fault != Fault::LinearSpace;
    let reversed = log;
    let n_cells = cfg.ncells;
    // nabla f_t and the targets q_i(nabla f_t)
    let mut nabla = vec![0.0f64; n_cells];
    for c in &b.added {
        nabla[*c as usize] += 1.0;
    }
    for c in &b.removed {
        nabla[*c as usize] -= 1.0;
    }
    let targets: Vec<Vec<f64>> =
        cfg.queries.iter().map(|q| q.groups.iter().map(|cells| entry_sum(&nabla, cells, false)).collect()).collect();
    let em_epsilon = match fault {
        Fault::EmTimes(c) => cfg.em_epsilon * c,
        _ => cfg.em_epsilon,
    };
    let scale = match fault {
        Fault::ScaleOver(c) => cfg.scale / c,
        _ => cfg.scale,
    };
    // h_{t,0}: the uniform dataset of mass N_t
    let mut mass = if cfg.measured { st.last_mass } else { cfg.public[t - 1] };
    let mut wts = Weights::uniform(n_cells, log);
    let mut selected = vec![false; cfg.queries.len()];
    let mut measured: Vec<(usize, Vec<f64>)> = Vec::with_capacity(cfg.k);
    let mut hsum = vec![0.0f64; n_cells];
    let mut p: Vec<f64> = Vec::with_capacity(n_cells);
    for l in 1..=cfg.k {
        // scores of the candidates J_{t,l} against h_{t,l-1}
        wts.probs(&mut p);
        let cand: Vec<usize> = (0..cfg.queries.len()).filter(|i| !selected[*i]).collect();
        let mut scores = Vec::with_capacity(cand.len());
        for &i in &cand {
            let q = &cfg.queries[i];
            let mut e = 0.0;
            for (c, cells) in q.groups.iter().enumerate() {
                let current = if mass == 0.0 { 0.0 } else { mass * entry_sum(&p, cells, reversed) };
                e += (targets[i][c] - current).abs();
            }
            scores.push(if cfg.workloads { e / q.groups.len() as f64 } else { e });
        }
        let site = if src.names_sites() { format!("003-alg2 L11 t={} l={}", t, l) } else { String::new() };
        let idx = src.exponential_mechanism(&site, &scores, em_epsilon, cfg.sensitivity)?;
        let j = cand[idx];
        selected[j] = true;
        // the measurement m(t, j) = q_j(nabla f_t) + Lap(2k/eps), cell by cell
        let mut m = Vec::with_capacity(targets[j].len());
        for (c, stat) in targets[j].iter().enumerate() {
            let site = if src.names_sites() { format!("003-alg2 L16 t={} l={} cell={}", t, l, c) } else { String::new() };
            let z = src.laplace(&site, scale, fault == Fault::Noiseless && t == 1 && l == 1)?;
            m.push(stat + z);
        }
        measured.push((j, m));
        // the mass N of this fit
        let n = if cfg.measured {
            let (mut num, mut den) = (0.0, 0.0);
            for (i, m) in &measured {
                let size = cfg.queries[*i].groups.len() as f64;
                let total: f64 = if reversed { m.iter().rev().sum() } else { m.iter().sum() };
                if log {
                    num += total / size;
                    den += 1.0 / size;
                } else {
                    let w = 1.0 / (size * cfg.scale * cfg.scale);
                    num += w * total;
                    den += w;
                }
            }
            (num / den).max(0.0)
        } else {
            cfg.public[t - 1]
        };
        // h_{t,l} = A_Dataset(M_t, h_{t,l-1}, N)
        if n == 0.0 {
            mass = 0.0;
            wts = Weights::uniform(n_cells, log);
        } else {
            if mass == 0.0 {
                wts = Weights::uniform(n_cells, log); // |init| = 0: start from the uniform distribution
            }
            let from = if cfg.mw_all { 0 } else { measured.len() - 1 };
            for (i, m) in &measured[from..] {
                mw_step(&mut wts, &cfg.queries[*i], m, n, &mut p);
            }
            mass = n;
            wts.probs(&mut p);
            for x in 0..n_cells {
                hsum[x] += n * p[x];
            }
        }
    }
    let kf = cfg.k as f64;
    let g: Vec<f64> = if log {
        st.g.iter().zip(&hsum).map(|(g, h)| g + h / kf).collect()
    } else {
        let inv = 1.0 / kf;
        st.g.iter().zip(&hsum).map(|(g, h)| g + h * inv).collect()
    };
    if g.iter().any(|v| !v.is_finite()) {
        return Err(format!("t={}: the release would not be finite", t));
    }
    Ok(State { t, f, g, last_mass: mass })
}
