//! 004-alg1, the online hypercube synthesizer (He, Vershynin, Zhu), written outside dpstream from its
//! public docs (docs/hypercube.md, docs/conformance.md, docs/tape-format.md, docs/catalog.md, the
//! errata), speaking the conformance protocol v1 on stdin/stdout.
//!
//! ```text
//! hypercube [FAULT]     FAULT: none (default) | whole-eps | scale/2 | noiseless | own-rng
//! ```
//! * `whole-eps`: every region counter runs with the whole epsilon instead of its share eps_{j,r} (leak);
//! * `scale/2`:   every discrete Laplace scale halved (leak);
//! * `noiseless`: the depth-1 regions' counters use noise 0 (reported honestly: value 0) (leak);
//! * `own-rng`:   PCG XSL-RR 128/64 instead of xoshiro256++ (a control: still correct).
//! Transcript mode reports every draw with the parameters and the value actually used, faults included.
//!
//! FLOATING-POINT EVALUATION ORDER (deliberately not the docs' straightforward one; the error model
//! of docs/conformance.md allows any correct order):
//! * region budget (4.1): eps_{j,r} = eps * (C1 * exp2(-(r - j) * a)), associated so, with
//!   a = (d - 1) / (2 d) (not (1 - 1/d)/2), exp2 instead of pow(2, .), and
//!   C1 = fma(-0.5, exp2(-a), 0.5) instead of (1 - 2^(-a)) / 2;
//! * (5.1), d = 1: eps_j = (3 eps) / (pi * pi * (j + 1)^2) instead of 3/pi^2 * eps / (j + 1)^2;
//! * scales: 4 / eps_{j,r} first; the S~ update's scale is that times 0.5, A_sub's is that times
//!   bit_length(T) (not 2/eps_r and bit_length(T) / (eps_r / 4));
//! * T_0 = ln(T) * (18 / eps_{j,r}) instead of 9 ln(T) / (eps_{j,r} / 2);
//! * own-mode uniform points: fma(u, high - low, low).
//! Level times t_j = ceil(2^j / eps) are exact (integer arithmetic on the double's bits); every count
//! and release is an integer, so no other float reaches a release.

mod json;
mod noise;

use json::{put_f, put_str, V};
use noise::{Io, Mode, Noise, Rng, Site, Tail};

const ANCHOR: &str = "004-alg1";
/// level times are tabulated for j = 0..=NJ (t_j saturates at u64::MAX long before)
const NJ: usize = 160;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    None,
    WholeEps,
    Scale2,
    Noiseless,
    OwnRng,
}

// ---- parameters ----------------------------------------------------------------------------

struct Cfg {
    eps: f64,
    d: usize,
    fault: Fault,
    /// t_j = ceil(2^j / eps) on the exact value of eps, saturated at u64::MAX
    tl: Vec<u64>,
    c1: f64,
    a: f64,
}

fn level_times(eps: f64) -> Vec<u64> {
    let bits = eps.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if field == 0 { (frac, -1074i64) } else { (frac | (1u64 << 52), field - 1075) };
    while m & 1 == 0 {
        m >>= 1;
        e += 1;
    }
    (0..=NJ as i64)
        .map(|j| {
            let sh = j - e;
            if sh < 0 {
                1 // 0 < 2^j / eps < 1
            } else if sh >= 126 {
                u64::MAX
            } else {
                let q = ((1u128 << sh) + m as u128 - 1) / m as u128;
                u64::try_from(q).unwrap_or(u64::MAX)
            }
        })
        .collect()
}

impl Cfg {
    fn new(eps: f64, d: usize, fault: Fault) -> Cfg {
        let a = (d as f64 - 1.0) / (2.0 * d as f64);
        Cfg { eps, d, fault, tl: level_times(eps), c1: (-0.5f64).mul_add((-a).exp2(), 0.5), a }
    }
    /// the level of time t: the largest r with t_r <= t (None before t_0); also the depth at t
    fn level(&self, t: u64) -> Option<u32> {
        let mut r = None;
        for (j, &tj) in self.tl.iter().enumerate() {
            if tj <= t {
                r = Some(j as u32);
            } else {
                break;
            }
        }
        r
    }
    /// eps_{j,r}: the budget of a depth-j region's counter at its level r
    fn budget(&self, j: u32, r: u32) -> f64 {
        if self.fault == Fault::WholeEps {
            return self.eps;
        }
        if self.d == 1 {
            let k = (j as f64 + 1.0) * (j as f64 + 1.0);
            3.0 * self.eps / (std::f64::consts::PI * std::f64::consts::PI * k)
        } else {
            self.eps * (self.c1 * (-((r - j) as f64) * self.a).exp2())
        }
    }
    fn halve(&self) -> f64 {
        if self.fault == Fault::Scale2 {
            0.5
        } else {
            1.0
        }
    }
}

struct Ctx<'a> {
    cfg: &'a Cfg,
    noise: &'a mut Noise,
    io: &'a mut Io,
}

// ---- 004-lem3.1 inside 004-alg2: the Binary Mechanism with discrete Laplace noise -------------

#[derive(Clone, Default)]
struct BinMech {
    k: u64,
    alpha: Vec<i64>,
    noisy: Vec<i64>,
    release: i64,
}

// ---- 004-alg2: sparse counting -----------------------------------------------------------------

#[derive(Clone)]
struct Alg2 {
    r: u32,
    tau: u64,
    seg: u32,
    n: i64,
    /// floor(T_0) + lambda_j + 1: segment j ends when N_j + lambda' >= bar
    bar: i64,
    t0_floor: i64,
    s_test: f64,
    s_sub: f64,
    sub: BinMech,
}

impl Alg2 {
    fn new(r: u32, eps_r: f64, horizon: u64, halve: f64) -> Result<Alg2, String> {
        let four = 4.0 / eps_r; // 2 / (eps_r / 2): threshold and tests
        let t0 = (horizon as f64).ln() * (18.0 / eps_r); // 9 ln T / (eps_r / 2)
        if !(t0 < 4.0e18) || !four.is_finite() {
            return Err(format!("a region budget {eps_r:?} whose noise no source accepts"));
        }
        let bl = 64 - horizon.leading_zeros();
        Ok(Alg2 { r, tau: 0, seg: 0, n: 0, bar: 0, t0_floor: t0.floor() as i64, s_test: four * halve, s_sub: four * bl as f64 * halve, sub: BinMech::default() })
    }

    fn threshold(&mut self, cx: &mut Ctx, depth: u32, idx: u64, zero: bool) -> Result<(), String> {
        let site = Site { depth, idx, tail: Tail::Threshold { r: self.r, j: self.seg } };
        let lam = cx.noise.dlap(cx.io, site, self.s_test, zero)?;
        self.bar = self.t0_floor + lam + 1;
        Ok(())
    }

    fn step(&mut self, cx: &mut Ctx, depth: u32, idx: u64, x: i64, zero: bool) -> Result<i64, String> {
        self.tau += 1;
        if self.tau == 1 {
            self.seg = 1;
            self.n = 0;
            self.threshold(cx, depth, idx, zero)?;
        } else {
            // the open segment has read an input (every step after the first)
            let site = Site { depth, idx, tail: Tail::Test { r: self.r, j: self.seg, t: self.tau - 1 } };
            let lp = cx.noise.dlap(cx.io, site, self.s_test, zero)?;
            if self.n + lp >= self.bar {
                // segment ends: A_sub steps with N_j
                let b = &mut self.sub;
                b.k += 1;
                let low = b.k.trailing_zeros() as usize;
                if b.alpha.len() <= low {
                    b.alpha.resize(low + 1, 0);
                    b.noisy.resize(low + 1, 0);
                }
                let mut p = self.n;
                for i in 0..low {
                    p += b.alpha[i];
                    b.alpha[i] = 0;
                    b.noisy[i] = 0;
                }
                b.alpha[low] = p;
                let site = Site { depth, idx, tail: Tail::Sub { r: self.r, k: b.k } };
                let z = cx.noise.dlap(cx.io, site, self.s_sub, zero)?;
                b.noisy[low] = p + z;
                b.release = (low..b.noisy.len()).filter(|i| (b.k >> i) & 1 == 1).map(|i| b.noisy[i]).sum();
                self.seg += 1;
                self.n = 0;
                self.threshold(cx, depth, idx, zero)?;
            }
        }
        self.n += x;
        Ok(self.sub.release)
    }
}

// ---- 004-alg3: inhomogeneous sparse counting (one per region) ---------------------------------

#[derive(Clone)]
struct Alg3 {
    r0: u32,
    level: Option<u32>,
    level_sum: i64,
    s: i64,
    alg2: Option<Alg2>,
}

impl Alg3 {
    fn new(r0: u32) -> Alg3 {
        Alg3 { r0, level: None, level_sum: 0, s: 0, alg2: None }
    }

    /// One global time t (whose level is `lvl`) with input x in {0, 1}; returns S~ + c_t.
    fn step(&mut self, cx: &mut Ctx, depth: u32, idx: u64, t: u64, lvl: Option<u32>, x: i64) -> Result<i64, String> {
        let _ = t;
        let Some(l) = lvl.filter(|&l| l >= self.r0) else {
            return Ok(0); // before t_{r0}: nothing drawn, input ignored
        };
        let zero = cx.cfg.fault == Fault::Noiseless && depth == 1;
        if self.level != Some(l) {
            // every level from the current one (or r0) up to l - 1 has ended: S~ += sum + Lap_Z(2/eps_k)
            let from = self.level.unwrap_or(self.r0);
            for k in from..l {
                let e = cx.cfg.budget(depth, k);
                let scale = 4.0 / e * 0.5 * cx.cfg.halve();
                let site = Site { depth, idx, tail: Tail::LevelEnd { r: k } };
                let z = cx.noise.dlap(cx.io, site, scale, zero)?;
                self.s += self.level_sum + z;
                self.level_sum = 0;
            }
            let horizon = cx.cfg.tl[l as usize + 1] - cx.cfg.tl[l as usize];
            self.alg2 = Some(Alg2::new(l, cx.cfg.budget(depth, l), horizon, cx.cfg.halve())?);
            self.level = Some(l);
            self.level_sum = 0;
        }
        let c = self.alg2.as_mut().expect("a level's counter").step(cx, depth, idx, x, zero)?;
        self.level_sum += x;
        Ok(self.s + c)
    }
}

// ---- 004-alg1 ----------------------------------------------------------------------------------

#[derive(Clone)]
struct State {
    t: u64,
    depth: u32,
    /// regions[j - 1][theta as a binary number]
    regions: Vec<Vec<Alg3>>,
    /// d = 1: the past points, replayed into a new depth's counters (r0 = 0)
    hist: Vec<f64>,
}

impl State {
    fn new() -> State {
        State { t: 0, depth: 0, regions: Vec::new(), hist: Vec::new() }
    }
}

/// theta of x's region at `depth`, read as a binary number (depth k -> k + 1 halves coordinate
/// k mod d; lower halves half-open, the last cell closed at 1)
fn path(x: &[f64], d: usize, depth: u32) -> u64 {
    let mut p = 0u64;
    for i in 0..depth as usize {
        let xc = x[i % d];
        let bit = if xc >= 1.0 { 1 } else { ((xc * 2f64.powi((i / d) as i32 + 1)).floor() % 2.0) as u64 };
        p = (p << 1) | bit;
    }
    p
}

fn region_box(d: usize, depth: u32, idx: u64) -> (Vec<f64>, Vec<f64>) {
    let mut low = vec![0.0; d];
    let mut w = vec![1.0; d];
    for i in 0..depth {
        let c = i as usize % d;
        w[c] *= 0.5;
        if (idx >> (depth - 1 - i)) & 1 == 1 {
            low[c] += w[c];
        }
    }
    let high = low.iter().zip(&w).map(|(l, w)| l + w).collect();
    (low, high)
}

fn put_rows_i(out: &mut String, rows: &[Vec<i64>]) {
    out.push('[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        for (k, v) in row.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(&v.to_string());
        }
        out.push(']');
    }
    out.push(']');
}

/// One step with a checked point x; works in place (callers that must stay atomic pass a copy).
fn step(cx: &mut Ctx, st: &mut State, x: &[f64]) -> Result<String, String> {
    let cfg = cx.cfg;
    let d = cfg.d;
    let t = st.t + 1;
    let lvl = cfg.level(t);
    let depth = lvl.unwrap_or(0);
    if depth > 40 {
        return Err(format!("the partition would reach depth {depth}: not served"));
    }
    // u2-u4: open the new depths; d = 1 replays the history into the new counters (r0 = 0)
    for j in st.depth + 1..=depth {
        let n = 1usize << j;
        let r0 = if d == 1 { 0 } else { j };
        let mut layer = vec![Alg3::new(r0); n];
        if d == 1 {
            for (i, xi) in st.hist.iter().enumerate() {
                let ti = i as u64 + 1;
                let li = cfg.level(ti);
                let p = path(std::slice::from_ref(xi), 1, j);
                for (idx, a) in layer.iter_mut().enumerate() {
                    a.step(cx, j, idx as u64, ti, li, (p == idx as u64) as i64)?;
                }
            }
        }
        st.regions.push(layer);
    }
    st.depth = depth;
    // u6: every counter reads 1{x_t in its region}
    let p = path(x, d, depth);
    let mut noisy: Vec<Vec<i64>> = Vec::with_capacity(depth as usize + 1);
    noisy.push(vec![t as i64]);
    for j in 1..=depth {
        let pj = p >> (depth - j);
        let layer = &mut st.regions[j as usize - 1];
        let mut row = Vec::with_capacity(layer.len());
        for (idx, a) in layer.iter_mut().enumerate() {
            row.push(a.step(cx, j, idx as u64, t, lvl, (pj == idx as u64) as i64)?);
        }
        noisy.push(row);
    }
    // u7: 004-alg4, EQUAL_SHIFT, n'_root = t, children clamped at 0
    let mut cons: Vec<Vec<i64>> = Vec::with_capacity(noisy.len());
    cons.push(vec![t as i64]);
    for j in 1..=depth as usize {
        let mut row = vec![0i64; noisy[j].len()];
        for q in 0..cons[j - 1].len() {
            let m = cons[j - 1][q];
            let a = noisy[j][2 * q].max(0);
            let b = noisy[j][2 * q + 1].max(0);
            let m0 = (a + (m - a - b).div_euclid(2)).clamp(0, m);
            row[2 * q] = m0;
            row[2 * q + 1] = m - m0;
        }
        cons.push(row);
    }
    // u8: m_theta uniform points in every deepest region with m_theta > 0
    let mut points: Vec<Vec<f64>> = Vec::with_capacity(t as usize);
    for (idx, &m) in cons[depth as usize].iter().enumerate() {
        if m > 0 {
            let (low, high) = region_box(d, depth, idx as u64);
            let site = Site { depth, idx: idx as u64, tail: Tail::Out { t } };
            cx.noise.ubox(cx.io, site, &low, &high, m, &mut points)?;
        }
    }
    st.t = t;
    if d == 1 {
        st.hist.push(x[0]);
    }
    let mut out = String::with_capacity(64 + 20 * d * points.len());
    out.push_str("{\"t\":");
    out.push_str(&t.to_string());
    out.push_str(",\"depth\":");
    out.push_str(&depth.to_string());
    out.push_str(",\"noisy\":");
    put_rows_i(&mut out, &noisy);
    out.push_str(",\"consistent\":");
    put_rows_i(&mut out, &cons);
    out.push_str(",\"points\":[");
    for (i, p) in points.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        for (k, v) in p.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            put_f(&mut out, *v);
        }
        out.push(']');
    }
    out.push_str("]}");
    Ok(out)
}

/// An INPUT: a flat array of exactly d finite numbers in [0, 1] (no booleans, strings, null, ...).
fn check_point(cfg: &Cfg, v: &V, place: &str) -> Result<Vec<f64>, String> {
    let V::Arr(items) = v else {
        return Err(format!("{place}: a point must be an array of {} numbers in [0, 1] (got {})", cfg.d, v.short()));
    };
    if items.len() != cfg.d {
        return Err(format!("{place}: a point must have d = {} coordinates (got {})", cfg.d, items.len()));
    }
    let mut x = Vec::with_capacity(cfg.d);
    for (i, it) in items.iter().enumerate() {
        match it {
            V::Num { f, .. } if f.is_finite() && *f >= 0.0 && *f <= 1.0 => x.push(*f),
            _ => return Err(format!("{place}[{i}]: a coordinate must be a finite number in [0, 1] (got {})", it.short())),
        }
    }
    Ok(x)
}

// ---- the protocol ------------------------------------------------------------------------------

struct Session {
    cfg: Cfg,
    state: State,
    noise: Noise,
}

struct Program {
    fault: Fault,
    session: Option<Session>,
}

fn ok_obj(body: &str) -> Result<String, String> {
    Ok(body.to_string())
}

fn draws_list(out: &mut String, log: &[String]) {
    out.push('[');
    for (i, s) in log.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(s);
    }
    out.push(']');
}

impl Program {
    fn hello(&self) -> Result<String, String> {
        let mut s = String::from("{\"protocol\":1,\"implementation\":");
        put_str(&mut s, &format!("outside Rust 004-alg1 (fault {:?})", self.fault));
        s.push_str(",\"algorithms\":[\"004-alg1\"],\"modes\":[\"tape\",\"own\",\"transcript\"],\"ops\":[\"runs\"]}");
        Ok(s)
    }

    fn init(&mut self, m: &V) -> Result<String, String> {
        self.session = None; // a refused init leaves no algorithm (as the reference does)
        match m.key("algorithm") {
            Some(V::Str(a)) if a == ANCHOR => {}
            other => return Err(format!("algorithm: only {ANCHOR} is served (got {})", other.map(V::short).unwrap_or("nothing".into()))),
        }
        let Some(V::Obj(params)) = m.key("params") else {
            return Err("params: must be an object".into());
        };
        for (k, _) in params {
            if k != "epsilon" && k != "d" {
                return Err(format!("params: unknown parameter {k:?} (004-alg1 takes epsilon and d)"));
            }
        }
        let eps = match m.key("params").and_then(|p| p.key("epsilon")) {
            Some(V::Num { f, .. }) if f.is_finite() && *f > 0.0 => *f,
            Some(v) => return Err(format!("epsilon: must be a finite number > 0 (got {})", v.short())),
            None => return Err("epsilon: required".into()),
        };
        if eps >= 131072.0 {
            return Err(format!("epsilon: must be < 2^17 (at t = 1 the partition would have depth > 16) (got {eps:?})"));
        }
        let d = match m.key("params").and_then(|p| p.key("d")) {
            Some(v @ V::Num { .. }) => match v.int() {
                Some(d) if d >= 1 && d <= (1i128 << 53) - 1 => d as usize,
                _ => return Err(format!("d: must be an integer >= 1 (got {})", v.short())),
            },
            Some(v) => return Err(format!("d: must be an integer >= 1 (got {})", v.short())),
            None => return Err("d: required".into()),
        };
        let mode = match m.key("noise") {
            Some(V::Str(s)) if s == "tape" => Mode::Tape,
            Some(V::Str(s)) if s == "own" => Mode::Own,
            Some(V::Str(s)) if s == "transcript" => Mode::Transcript,
            other => return Err(format!("noise: must be tape, own or transcript (got {})", other.map(V::short).unwrap_or("nothing".into()))),
        };
        let seed = match m.key("seed").and_then(V::int) {
            Some(s) if (0..1i128 << 64).contains(&s) => s as u64,
            _ => return Err(format!("seed: must be an integer in [0, 2^64) (got {})", m.key("seed").map(V::short).unwrap_or("nothing".into()))),
        };
        let rng = Rng::new(seed, self.fault == Fault::OwnRng);
        self.session = Some(Session { cfg: Cfg::new(eps, d, self.fault), state: State::new(), noise: Noise { mode, rng, log: Vec::new() } });
        ok_obj("{\"ok\":true}")
    }

    fn session(&mut self, op: &str) -> Result<&mut Session, String> {
        self.session.as_mut().ok_or_else(|| format!("{op} before a successful init"))
    }

    fn step(&mut self, m: &V, io: &mut Io) -> Result<String, String> {
        let s = self.session("step")?;
        let input = m.key("input").ok_or("step: needs input")?;
        let x = check_point(&s.cfg, input, "input")?;
        s.noise.log.clear();
        let mut st = s.state.clone(); // atomic: kept only when every draw succeeded
        let mut cx = Ctx { cfg: &s.cfg, noise: &mut s.noise, io };
        let rel = match step(&mut cx, &mut st, &x) {
            Ok(r) => r,
            Err(e) => {
                s.noise.log.clear();
                return Err(e);
            }
        };
        s.state = st;
        let mut out = String::from("{\"release\":");
        out.push_str(&rel);
        if s.noise.mode == Mode::Transcript {
            out.push_str(",\"draws\":");
            draws_list(&mut out, &s.noise.log);
            s.noise.log.clear();
        }
        out.push('}');
        Ok(out)
    }

    fn inputs(s: &Session, m: &V) -> Result<Vec<Vec<f64>>, String> {
        let Some(V::Arr(items)) = m.key("inputs") else {
            return Err("inputs: must be an array".into());
        };
        items.iter().enumerate().map(|(i, v)| check_point(&s.cfg, v, &format!("inputs[{i}]"))).collect()
    }

    /// A fresh run over `xs`: its releases and (transcript mode) its draws.
    fn fresh_run(s: &mut Session, io: &mut Io, xs: &[Vec<f64>], out: &mut String, draws: &mut String) -> Result<(), String> {
        let mut st = State::new();
        s.noise.log.clear();
        let mut cx = Ctx { cfg: &s.cfg, noise: &mut s.noise, io };
        out.push('[');
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&step(&mut cx, &mut st, x)?);
        }
        out.push(']');
        if s.noise.mode == Mode::Transcript {
            draws_list(draws, &s.noise.log);
        }
        s.noise.log.clear();
        Ok(())
    }

    fn run(&mut self, m: &V, io: &mut Io) -> Result<String, String> {
        let s = self.session("run")?;
        let xs = Self::inputs(s, m)?;
        let (mut rel, mut dr) = (String::new(), String::new());
        Self::fresh_run(s, io, &xs, &mut rel, &mut dr)?;
        let mut out = String::from("{\"releases\":");
        out.push_str(&rel);
        if s.noise.mode == Mode::Transcript {
            out.push_str(",\"draws\":");
            out.push_str(&dr);
        }
        out.push('}');
        Ok(out)
    }

    fn runs(&mut self, m: &V, io: &mut Io) -> Result<String, String> {
        let s = self.session("runs")?;
        if s.noise.mode == Mode::Tape {
            return Err("runs: an own-mode and transcript-mode op (not in tape mode)".into());
        }
        let n = match m.key("count").and_then(V::int) {
            Some(n) if (1..=1_000_000).contains(&n) => n as usize,
            _ => return Err(format!("count: must be an integer in [1, 10^6] (got {})", m.key("count").map(V::short).unwrap_or("nothing".into()))),
        };
        let xs = Self::inputs(s, m)?;
        let transcript = s.noise.mode == Mode::Transcript;
        let mut rel = String::from("{\"runs\":[");
        let mut dr = String::from(",\"draws\":[");
        for i in 0..n {
            if i > 0 {
                rel.push(',');
                dr.push(',');
            }
            Self::fresh_run(s, io, &xs, &mut rel, &mut dr)?;
        }
        rel.push(']');
        if transcript {
            rel.push_str(&dr);
            rel.push(']');
        }
        rel.push('}');
        Ok(rel)
    }

    fn handle(&mut self, line: Result<String, String>, io: &mut Io) -> Result<String, String> {
        let line = line?;
        if line.trim_matches(|c| c == ' ' || c == '\t' || c == '\r').is_empty() {
            return Err("empty line: one JSON object per line".into());
        }
        let m = json::parse(&line).map_err(|e| format!("not a JSON line: {e}"))?;
        if !matches!(m, V::Obj(_)) {
            return Err("a message must be a JSON object".into());
        }
        match m.key("op") {
            Some(V::Str(op)) => match op.as_str() {
                "hello" => self.hello(),
                "init" => self.init(&m),
                "step" => self.step(&m, io),
                "run" => self.run(&m, io),
                "runs" => self.runs(&m, io),
                other => Err(format!("unknown op {other:?}")),
            },
            _ => Err("a message needs a string op".into()),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fault = match args.first().map(String::as_str) {
        None | Some("none") => Fault::None,
        Some("whole-eps") => Fault::WholeEps,
        Some("scale/2") => Fault::Scale2,
        Some("noiseless") => Fault::Noiseless,
        Some("own-rng") => Fault::OwnRng,
        Some(other) => {
            eprintln!("hypercube: unknown FAULT {other:?} (none, whole-eps, scale/2, noiseless, own-rng)");
            std::process::exit(2);
        }
    };
    if args.len() > 1 {
        eprintln!("hypercube: one argument at most (FAULT)");
        std::process::exit(2);
    }
    let mut prog = Program { fault, session: None };
    let mut io = Io::new();
    while let Some(line) = io.line() {
        let answer = match prog.handle(line, &mut io) {
            Ok(a) => a,
            Err(e) => {
                let mut s = String::from("{\"error\":");
                put_str(&mut s, &e);
                s.push('}');
                s
            }
        };
        io.say(&answer);
    }
}
