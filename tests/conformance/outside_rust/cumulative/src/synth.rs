//! 002-alg2, the cumulative time synthesizer, as docs/longitudinal.md "002-alg2 written out" states it.
//!
//! Round t (t = 1..T), w_i the true weight of individual i before round t, x_i its report:
//!   counter b = 1..t (created at t = b, horizon T_b = T - b + 1, local time tau = t - b + 1) is
//!   stepped with z_b = #{i : w_i = b - 1 and x_i = 1}: tree aggregation (002-alg3, conformance.md's
//!   counters table): j = lsb(tau), alpha_j = alpha_0 + ... + alpha_{j-1} + z_b, alpha_i = 0 (i < j),
//!   alpha^_j = alpha_j + noise (discrete_gaussian at '002-alg2 u5 b=<b> / 002-alg3 u8 t=<tau>'),
//!   S~_b = sum over the set bits i of tau of alpha^_i;
//!   clamp S^_b^t = min(max(S~_b, S^_b^{t-1}), S^_{b-1}^{t-1}), S^_0 = n, S^_b^{b-1} = 0;
//!   z^_b = S^_b^t - S^_b^{t-1} synthetic records of weight b - 1 (listed in index order) get a 1:
//!   choice at '002-alg2 u8 t=<t> b=<b>' with n = |I_b|, k = z^_b, drawn for every b.

use crate::dgauss::DGauss;
use crate::json;
use crate::rng::Rng;

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Fault {
    None,
    /// every discrete Gaussian variance divided by `f` (leak)
    VarianceDiv(f64),
    /// counter b = 1 without noise (leak); transcript reports value 0
    NoiselessB1,
    /// as NoiselessB1, but the draws that are not made are not reported (nor requested in tape mode)
    NoiselessB1Omit,
    /// another PRNG family (control)
    OwnRng,
    /// post-processing: the released records in reverse order (control; see QUESTIONS.md)
    ReverseRecords,
}

pub struct Config {
    pub horizon: usize,
    /// per counter b (index b - 1): the variance the program uses (after a planted fault)
    pub dg: Vec<DGauss>,
    pub max_levels: usize,
    pub fault: Fault,
}

/// The state of one run. Reused between the runs of a `runs` message (no per-run allocation).
#[derive(Clone)]
pub struct State {
    pub t: usize,
    pub n: Option<usize>,
    /// true weights of the individuals
    w: Vec<u32>,
    /// synthetic weights of the records
    sw: Vec<u32>,
    /// S^_b^{t}, b = 0..T
    s_hat: Vec<i64>,
    /// exact and noisy p-sums, counter-major (b - 1) * max_levels + level
    alpha: Vec<i64>,
    alpha_hat: Vec<i64>,
}

/// Scratch buffers of a round (never part of the state).
#[derive(Default)]
pub struct Scratch {
    z: Vec<i64>,
    s_tilde: Vec<i64>,
    zhat: Vec<i64>,
    group_start: Vec<usize>,
    fill: Vec<usize>,
    members: Vec<u32>,
    marks: Vec<u8>,
    column: Vec<u8>,
    chosen: Vec<u32>,
}

pub enum Fail {
    Refused(String),
    EndOfInput,
}

/// Where draws come from.
pub trait Source {
    /// discrete Gaussian at counter b (1-based), local time tau: the noise to add
    fn gaussian(&mut self, cfg: &Config, b: usize, tau: usize) -> Result<i64, Fail>;
    /// a uniform k-subset of n at round t, threshold b; `marks[0..n]` are set to 1 for the chosen
    fn choice(&mut self, t: usize, b: usize, n: usize, k: usize, marks: &mut [u8], chosen: &mut Vec<u32>) -> Result<(), Fail>;
}

pub fn site_gaussian(out: &mut Vec<u8>, b: usize, tau: usize) {
    out.extend_from_slice(b"\"002-alg2 u5 b=");
    json::push_i64(out, b as i64);
    out.extend_from_slice(b" / 002-alg3 u8 t=");
    json::push_i64(out, tau as i64);
    out.push(b'"');
}

pub fn site_choice(out: &mut Vec<u8>, t: usize, b: usize) {
    out.extend_from_slice(b"\"002-alg2 u8 t=");
    json::push_i64(out, t as i64);
    out.extend_from_slice(b" b=");
    json::push_i64(out, b as i64);
    out.push(b'"');
}

/// Floyd's algorithm: a uniform m-subset of {0..n-1} marked in `marks` (exact, O(m)).
pub fn floyd(rng: &mut Rng, n: usize, m: usize, marks: &mut [u8]) {
    for j in (n - m)..n {
        let r = rng.below(j as u64 + 1) as usize;
        if marks[r] != 0 {
            marks[j] = 1;
        } else {
            marks[r] = 1;
        }
    }
}

/// Own randomness: a uniform k-subset; the complement is drawn when k > n/2.
pub fn own_choice(rng: &mut Rng, n: usize, k: usize, marks: &mut [u8]) {
    if 2 * k <= n {
        floyd(rng, n, k, marks);
    } else {
        floyd(rng, n, n - k, marks);
        for m in marks[..n].iter_mut() {
            *m ^= 1;
        }
    }
}

impl State {
    pub fn new(cfg: &Config) -> State {
        State {
            t: 0,
            n: None,
            w: Vec::new(),
            sw: Vec::new(),
            s_hat: vec![0; cfg.horizon + 1],
            alpha: vec![0; cfg.horizon * cfg.max_levels],
            alpha_hat: vec![0; cfg.horizon * cfg.max_levels],
        }
    }

    /// Forget the run (keeps the buffers).
    pub fn reset(&mut self) {
        self.t = 0;
        self.n = None;
        self.s_hat.iter_mut().for_each(|x| *x = 0);
        self.alpha.iter_mut().for_each(|x| *x = 0);
        // alpha_hat entries are always written before they are read
    }

    /// One round on a checked column; writes the release into `out`.
    pub fn round<S: Source>(&mut self, cfg: &Config, x: &[u8], src: &mut S, sc: &mut Scratch, out: &mut Vec<u8>) -> Result<(), Fail> {
        if self.n.is_none() {
            let n = x.len();
            self.n = Some(n);
            self.w.clear();
            self.w.resize(n, 0);
            self.sw.clear();
            self.sw.resize(n, 0);
        }
        let n = self.n.unwrap();
        let t = self.t + 1;
        let lv = cfg.max_levels;
        // u4: z_b^t from the true weights
        sc.z.clear();
        sc.z.resize(t + 1, 0);
        for (wi, &xi) in self.w.iter_mut().zip(x) {
            if xi != 0 {
                sc.z[*wi as usize + 1] += 1;
                *wi += 1;
            }
        }
        // u5: every counter steps (all draws before anything is kept)
        sc.s_tilde.clear();
        sc.s_tilde.resize(t + 1, 0);
        for b in 1..=t {
            let tau = t - b + 1;
            let j = tau.trailing_zeros() as usize;
            let base = (b - 1) * lv;
            let a = &mut self.alpha[base..base + lv];
            let mut p = sc.z[b];
            for level in 0..j {
                p += a[level];
                a[level] = 0;
            }
            a[j] = p;
            let noise = src.gaussian(cfg, b, tau)?;
            let ah = &mut self.alpha_hat[base..base + lv];
            ah[j] = p + noise;
            let mut s = 0i64;
            let mut bits = tau;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                s += ah[i];
                bits &= bits - 1;
            }
            sc.s_tilde[b] = s;
        }
        // u6: the clamp, descending so that S^_{b-1}^{t-1} is still last round's
        self.s_hat[0] = n as i64;
        sc.zhat.clear();
        sc.zhat.resize(t + 1, 0);
        for b in (1..=t).rev() {
            let old = self.s_hat[b];
            let v = sc.s_tilde[b].max(old).min(self.s_hat[b - 1]);
            sc.zhat[b] = v - old;
            self.s_hat[b] = v;
        }
        // u7-u9: group the synthetic records by weight (increasing index order), choose
        sc.group_start.clear();
        sc.group_start.resize(t + 1, 0);
        for &s in &self.sw {
            sc.group_start[s as usize + 1] += 1;
        }
        for g in 1..=t {
            sc.group_start[g] += sc.group_start[g - 1];
        }
        sc.members.clear();
        sc.members.resize(n, 0);
        sc.fill.clear();
        sc.fill.extend_from_slice(&sc.group_start[..t]);
        for (r, &s) in self.sw.iter().enumerate() {
            let g = s as usize;
            sc.members[sc.fill[g]] = r as u32;
            sc.fill[g] += 1;
        }
        sc.column.clear();
        sc.column.resize(n, 0);
        if sc.marks.len() < n {
            sc.marks.resize(n, 0);
        }
        for b in 1..=t {
            let lo = sc.group_start[b - 1];
            let hi = sc.group_start[b];
            let size = hi - lo;
            let k = sc.zhat[b] as usize;
            let marks = &mut sc.marks[..size];
            src.choice(t, b, size, k, marks, &mut sc.chosen)?;
            for (pos, m) in marks.iter_mut().enumerate() {
                if *m != 0 {
                    sc.column[sc.members[lo + pos] as usize] = 1;
                    *m = 0;
                }
            }
        }
        for (s, &c) in self.sw.iter_mut().zip(&sc.column) {
            *s += c as u32;
        }
        self.t = t;
        // the release
        out.extend_from_slice(b"{\"column\":[");
        if cfg.fault == Fault::ReverseRecords {
            for (i, &c) in sc.column.iter().rev().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'0' + c);
            }
        } else {
            for (i, &c) in sc.column.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'0' + c);
            }
        }
        out.extend_from_slice(b"],\"S_hat\":[");
        for b in 0..=t {
            if b > 0 {
                out.push(b',');
            }
            json::push_i64(out, self.s_hat[b]);
        }
        out.extend_from_slice(b"]}");
        Ok(())
    }
}
