//! dpstream 002-alg2 (Bun, Gaboardi, Neunhoeffer, Zhang: the cumulative time synthesizer, with
//! tree-aggregation counters and discrete Gaussian noise), written outside dpstream from its public
//! docs (docs/longitudinal.md "002-alg2 written out", docs/conformance.md, docs/tape-format.md,
//! docs/catalog.md), speaking the conformance protocol v1: JSON lines on stdin/stdout.
//!
//! ```text
//! cumulative [FAULT]      FAULT: none (default) | variance/2.25 | variance/3 | noiseless-b1
//!                                | noiseless-b1-omit
//!                                | own-rng | reverse-records
//! ```
//!
//! Floating-point evaluation order, chosen on purpose to differ from the straightforward one
//! (rho_b = rho L_b^3 / sum L^3, then sigma2 = bit_length(T_b) / rho_b), within the error model
//! (draw parameters within 2 gamma(6) relative):
//!   * default budgets: the budget rho_b is never formed;
//!     sigma2_b = ((bit_length(T_b) * sum_c L_c^3) / L_b^3) / rho   (an exact integer product,
//!     then two rounded divisions; this order cannot overflow for a huge rho);
//!   * given budgets: sigma2_b = bit_length(T_b) * (1 / rho_b)  (two roundings instead of one);
//!   * the check that the given rho_b sum to rho sums them in reverse order (b = T down to 1).
//! Every release is an integer (counts, records), so nothing else depends on the order.
//!
//! Faults (planted mistakes; transcript mode reports the parameters and values actually used):
//!   variance/2.25, variance/3  every discrete Gaussian variance divided by 2.25 (sigma / 1.5) or 3;
//!   noiseless-b1               counter b = 1 adds no noise (its draws are reported with value 0);
//!   noiseless-b1-omit          the same, its draws left out of the transcript (none was made) and,
//!                              in tape mode, not requested;
//!   own-rng                    control: xoshiro256** instead of PCG64 (correct);
//!   reverse-records            control: post-processing, record i released as record n-1-i.
//!
//! Own-mode noise is NOT secure (a seeded statistical generator): for tests only.

mod dgauss;
mod json;
mod rng;
mod synth;

use std::io::{BufRead, BufReader, BufWriter, Stdin, Stdout, Write};

use dgauss::DGauss;
use json::Json;
use rng::Rng;
use synth::{site_choice, site_gaussian, Config, Fail, Fault, Scratch, Source, State};

const ANCHOR: &str = "002-alg2";
const MAX_T: i64 = 65536;
const SIGMA2_MAX: f64 = 1e30;

// ---- lines ---------------------------------------------------------------------------------------

struct Io {
    input: BufReader<Stdin>,
    output: BufWriter<Stdout>,
    buf: Vec<u8>,
}

impl Io {
    fn next_line(&mut self) -> Option<Result<String, String>> {
        self.buf.clear();
        match self.input.read_until(b'\n', &mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                }
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                Some(String::from_utf8(std::mem::take(&mut self.buf)).map_err(|_| "the line is not UTF-8".to_string()))
            }
        }
    }
    /// One answer line, written and flushed at once.
    fn say(&mut self, mut line: Vec<u8>) {
        line.push(b'\n');
        if self.output.write_all(&line).is_err() || self.output.flush().is_err() {
            std::process::exit(0);
        }
    }
}

fn refuse<T>(m: String) -> Result<T, Fail> {
    Err(Fail::Refused(m))
}

// ---- noise sources ---------------------------------------------------------------------------

struct TapeSource<'a> {
    io: &'a mut Io,
}

impl TapeSource<'_> {
    fn ask(&mut self, request: Vec<u8>, site: &str) -> Result<Json, Fail> {
        self.io.say(request);
        let line = match self.io.next_line() {
            None => return Err(Fail::EndOfInput),
            Some(Err(m)) => return refuse(format!("draw {site}: {m}")),
            Some(Ok(l)) => l,
        };
        match json::parse(&line) {
            Ok(Json::Obj(m)) if m.len() == 1 && m[0].0 == "value" => Ok(m.into_iter().next().unwrap().1),
            Ok(other) => refuse(format!("draw {site}: the answer must be {{\"value\": V}} (got {})", other.describe())),
            Err(e) => refuse(format!("draw {site}: the answer is not JSON ({e})")),
        }
    }
}

impl Source for TapeSource<'_> {
    fn gaussian(&mut self, cfg: &Config, b: usize, tau: usize) -> Result<i64, Fail> {
        let mut req = Vec::with_capacity(128);
        req.extend_from_slice(b"{\"draw\":{\"site\":");
        site_gaussian(&mut req, b, tau);
        req.extend_from_slice(b",\"kind\":\"discrete_gaussian\",\"params\":{\"sigma2\":");
        json::push_f64(&mut req, cfg.dg[b - 1].sigma2);
        req.extend_from_slice(b"}}}");
        if cfg.fault == Fault::NoiselessB1Omit && b == 1 {
            return Ok(0);
        }
        let site = format!("002-alg2 u5 b={b} / 002-alg3 u8 t={tau}");
        let v = self.ask(req, &site)?;
        let Some(z) = v.as_int() else {
            return refuse(format!("draw {site}: a discrete_gaussian value is an integer (got {})", v.describe()));
        };
        if cfg.fault == Fault::NoiselessB1 && b == 1 {
            return Ok(0);
        }
        Ok(z)
    }

    fn choice(&mut self, t: usize, b: usize, n: usize, k: usize, marks: &mut [u8], _chosen: &mut Vec<u32>) -> Result<(), Fail> {
        let mut req = Vec::with_capacity(96);
        req.extend_from_slice(b"{\"draw\":{\"site\":");
        site_choice(&mut req, t, b);
        req.extend_from_slice(b",\"kind\":\"choice\",\"params\":{\"n\":");
        json::push_i64(&mut req, n as i64);
        req.extend_from_slice(b",\"k\":");
        json::push_i64(&mut req, k as i64);
        req.extend_from_slice(b"}}}");
        let site = format!("002-alg2 u8 t={t} b={b}");
        let v = self.ask(req, &site)?;
        // what the harness sends for another request is its own; refuse what does not fit this one
        let ok = match &v {
            Json::Arr(items) if items.len() == k => {
                let mut last: i64 = -1;
                let mut fine = true;
                for it in items {
                    match it.as_int() {
                        Some(i) if i > last && (i as usize) < n => last = i,
                        _ => {
                            fine = false;
                            break;
                        }
                    }
                }
                fine
            }
            _ => false,
        };
        if !ok {
            return refuse(format!(
                "draw {site}: a choice of k = {k} of n = {n} is a sorted list of k distinct integers in [0, n) (got {})",
                v.describe()
            ));
        }
        if let Json::Arr(items) = v {
            for it in items {
                marks[it.as_int().unwrap() as usize] = 1;
            }
        }
        Ok(())
    }
}

struct OwnSource<'a> {
    rng: &'a mut Rng,
}

impl Source for OwnSource<'_> {
    #[inline]
    fn gaussian(&mut self, cfg: &Config, b: usize, _tau: usize) -> Result<i64, Fail> {
        if (cfg.fault == Fault::NoiselessB1 || cfg.fault == Fault::NoiselessB1Omit) && b == 1 {
            return Ok(0);
        }
        Ok(cfg.dg[b - 1].sample(self.rng))
    }
    #[inline]
    fn choice(&mut self, _t: usize, _b: usize, n: usize, k: usize, marks: &mut [u8], _chosen: &mut Vec<u32>) -> Result<(), Fail> {
        synth::own_choice(self.rng, n, k, marks);
        Ok(())
    }
}

/// Own randomness, every draw reported as a tape writes it (the parameters and values used).
struct TranscriptSource<'a> {
    rng: &'a mut Rng,
    draws: &'a mut Vec<u8>,
    first: bool,
}

impl TranscriptSource<'_> {
    fn sep(&mut self) {
        if !self.first {
            self.draws.push(b',');
        }
        self.first = false;
    }
}

impl Source for TranscriptSource<'_> {
    fn gaussian(&mut self, cfg: &Config, b: usize, tau: usize) -> Result<i64, Fail> {
        let z = OwnSource { rng: self.rng }.gaussian(cfg, b, tau)?;
        if cfg.fault == Fault::NoiselessB1Omit && b == 1 {
            return Ok(z); // no draw was made: nothing to report
        }
        self.sep();
        self.draws.extend_from_slice(b"{\"site\":");
        site_gaussian(self.draws, b, tau);
        self.draws.extend_from_slice(b",\"kind\":\"discrete_gaussian\",\"params\":{\"sigma2\":");
        json::push_f64(self.draws, cfg.dg[b - 1].sigma2);
        self.draws.extend_from_slice(b"},\"value\":");
        json::push_i64(self.draws, z);
        self.draws.push(b'}');
        Ok(z)
    }
    fn choice(&mut self, t: usize, b: usize, n: usize, k: usize, marks: &mut [u8], _chosen: &mut Vec<u32>) -> Result<(), Fail> {
        synth::own_choice(self.rng, n, k, marks);
        self.sep();
        self.draws.extend_from_slice(b"{\"site\":");
        site_choice(self.draws, t, b);
        self.draws.extend_from_slice(b",\"kind\":\"choice\",\"params\":{\"n\":");
        json::push_i64(self.draws, n as i64);
        self.draws.extend_from_slice(b",\"k\":");
        json::push_i64(self.draws, k as i64);
        self.draws.extend_from_slice(b"},\"value\":[");
        let mut firstv = true;
        for (i, &m) in marks.iter().enumerate() {
            if m != 0 {
                if !firstv {
                    self.draws.push(b',');
                }
                firstv = false;
                json::push_i64(self.draws, i as i64);
            }
        }
        self.draws.extend_from_slice(b"]}");
        Ok(())
    }
}

// ---- parameters ------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Tape,
    Own,
    Transcript,
}

fn bit_length(x: u64) -> u64 {
    64 - x.leading_zeros() as u64
}

/// L_b = max(ceil(log2 T_b), 1)
fn l_b(tb: u64) -> u64 {
    if tb <= 1 {
        1
    } else {
        bit_length(tb - 1).max(1)
    }
}

fn configure(p: &Json, fault: Fault) -> Result<Config, Fail> {
    let Json::Obj(members) = p else {
        return refuse(format!("params: must be an object (got {})", p.describe()));
    };
    for (k, _) in members {
        if k != "T" && k != "rho" && k != "rho_b" {
            return refuse(format!("params: unknown parameter {k:?} (002-alg2 takes T, rho, rho_b)"));
        }
    }
    let tj = p.get("T");
    let horizon = match tj {
        None => return refuse("T: required".to_string()),
        Some(Json::Num(v)) if v.is_finite() && v.fract() == 0.0 => {
            let v = *v;
            if v < 1.0 {
                return refuse(format!("T: must be an integer >= 1 (got {v})"));
            }
            if v > MAX_T as f64 {
                return refuse(format!("T: must be <= {MAX_T} (got {v})"));
            }
            v as usize
        }
        Some(other) => return refuse(format!("T: must be an integer (got {})", other.describe())),
    };
    let rho = match p.get("rho") {
        None => return refuse("rho: required".to_string()),
        Some(Json::Num(v)) if !v.is_finite() => return refuse(format!("rho: must be finite (got {v})")),
        Some(Json::Num(v)) if *v > 0.0 => *v,
        Some(other) => return refuse(format!("rho: must be a number > 0 (got {})", other.describe())),
    };
    let given: Option<Vec<f64>> = match p.get("rho_b") {
        None => None,
        Some(Json::Arr(items)) => {
            if items.len() != horizon {
                return refuse(format!("rho_b: must hold T = {horizon} budgets (got {})", items.len()));
            }
            let mut v = Vec::with_capacity(horizon);
            for (i, it) in items.iter().enumerate() {
                match it {
                    Json::Num(x) if x.is_finite() && *x > 0.0 => v.push(*x),
                    other => return refuse(format!("rho_b[{i}]: must be a finite number > 0 (got {})", other.describe())),
                }
            }
            // the sum in reverse order; math.isclose(sum, rho, rel_tol=1e-9)
            let mut sum = 0.0f64;
            for x in v.iter().rev() {
                sum += x;
            }
            if !((sum - rho).abs() <= 1e-9 * sum.abs().max(rho.abs())) {
                return refuse(format!("rho_b: must sum to rho = {rho} within a relative 1e-9 (sums to {sum})"));
            }
            Some(v)
        }
        Some(other) => return refuse(format!("rho_b: must be a JSON array of T budgets (got {})", other.describe())),
    };
    let mut sigma2 = Vec::with_capacity(horizon);
    let mut levels = Vec::with_capacity(horizon);
    let sum_l3: u64 = (1..=horizon as u64).map(|b| l_b(horizon as u64 - b + 1).pow(3)).sum();
    for b in 1..=horizon as u64 {
        let tb = horizon as u64 - b + 1;
        let bl = bit_length(tb);
        let s2 = match &given {
            None => ((bl * sum_l3) as f64 / l_b(tb).pow(3) as f64) / rho,
            Some(v) => bl as f64 * (1.0 / v[b as usize - 1]),
        };
        sigma2.push(s2);
        levels.push(bl as usize);
    }
    let largest = sigma2.iter().cloned().fold(0.0f64, f64::max);
    if !(largest <= SIGMA2_MAX) {
        return refuse(format!(
            "rho: gives a discrete Gaussian sigma2 of {largest:e}, above the largest any source accepts (1e30)"
        ));
    }
    if sigma2.iter().any(|s| !(*s > 0.0)) {
        return refuse("rho: gives a discrete Gaussian sigma2 of 0 (rho too large for a double)".to_string());
    }
    let factor = match fault {
        Fault::VarianceDiv(f) => f,
        _ => 1.0,
    };
    let dg = sigma2
        .iter()
        .map(|&s| {
            let used = if factor != 1.0 { s / factor } else { s };
            DGauss::new(used)
        })
        .collect();
    let max_levels = levels.iter().cloned().max().unwrap_or(1);
    Ok(Config { horizon, dg, max_levels, fault })
}

/// A column of 0/1 reports (integers by value; booleans, fractions, strings, nesting refused).
fn check_column(x: &Json, place: &str, n: Option<usize>) -> Result<Vec<u8>, Fail> {
    let Json::Arr(items) = x else {
        return refuse(format!("{place}: a column is a JSON array of 0/1 reports (got {})", x.describe()));
    };
    let mut col = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        match it {
            Json::Num(v) if *v == 0.0 => col.push(0u8),
            Json::Num(v) if *v == 1.0 => col.push(1u8),
            other => return refuse(format!("{place}[{i}]: a report is the integer 0 or 1 (got {})", other.describe())),
        }
    }
    if let Some(n) = n {
        if col.len() != n {
            return refuse(format!("{place}: must have length n = {n} (n is fixed by the first column) (got {})", col.len()));
        }
    }
    Ok(col)
}

/// Every input of a fresh run, checked before any draw.
fn check_stream(cfg: &Config, inputs: &[Json]) -> Result<Vec<Vec<u8>>, Fail> {
    if inputs.len() > cfg.horizon {
        return refuse(format!("inputs: {} steps, past the horizon T = {}", inputs.len(), cfg.horizon));
    }
    let mut cols: Vec<Vec<u8>> = Vec::with_capacity(inputs.len());
    for (i, x) in inputs.iter().enumerate() {
        let n = cols.first().map(|c| c.len());
        cols.push(check_column(x, &format!("inputs[{i}]"), n)?);
    }
    Ok(cols)
}

// ---- the program ----------------------------------------------------------------------------

struct Session {
    cfg: Config,
    mode: Mode,
    rng: Rng,
    state: State,
    scratch: Scratch,
}

struct Program {
    fault: Fault,
    fault_name: String,
    session: Option<Session>,
}

fn only_keys(m: &Json, keys: &[&str], op: &str) -> Result<(), Fail> {
    if let Json::Obj(members) = m {
        for (k, _) in members {
            if !keys.contains(&k.as_str()) {
                return refuse(format!("{op}: unknown key {k:?}"));
            }
        }
    }
    Ok(())
}

/// One fresh run of `cols` with a source; releases (and draws) appended.
fn run_once<S: Source>(cfg: &Config, st: &mut State, sc: &mut Scratch, cols: &[Vec<u8>], src: &mut S, out: &mut Vec<u8>) -> Result<(), Fail> {
    out.push(b'[');
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        st.round(cfg, c, src, sc, out)?;
    }
    out.push(b']');
    Ok(())
}

impl Program {
    fn hello(&self, m: &Json) -> Result<Vec<u8>, Fail> {
        only_keys(m, &["op"], "hello")?;
        let mut o = Vec::new();
        o.extend_from_slice(b"{\"protocol\":1,\"implementation\":");
        let name = if self.fault == Fault::None {
            "cumulative (outside Rust 002-alg2)".to_string()
        } else {
            format!("cumulative (outside Rust 002-alg2), fault {}", self.fault_name)
        };
        json::push_str(&mut o, &name);
        o.extend_from_slice(b",\"algorithms\":[\"002-alg2\"],\"modes\":[\"tape\",\"own\",\"transcript\"],\"ops\":[\"runs\"]}");
        Ok(o)
    }

    fn init(&mut self, m: &Json) -> Result<Vec<u8>, Fail> {
        self.session = None; // a refused init leaves no algorithm
        only_keys(m, &["op", "algorithm", "params", "noise", "seed"], "init")?;
        match m.get("algorithm") {
            Some(Json::Str(a)) if a == ANCHOR => {}
            other => return refuse(format!("algorithm: only {ANCHOR} is served (got {})", json::describe_opt(other))),
        }
        let Some(p) = m.get("params") else {
            return refuse("init needs params".to_string());
        };
        let cfg = configure(p, self.fault)?;
        let mode = match m.get("noise") {
            Some(Json::Str(s)) if s == "tape" => Mode::Tape,
            Some(Json::Str(s)) if s == "own" => Mode::Own,
            Some(Json::Str(s)) if s == "transcript" => Mode::Transcript,
            other => return refuse(format!("noise: must be tape, own or transcript (got {})", json::describe_opt(other))),
        };
        let seed = match m.get("seed").and_then(Json::as_int) {
            Some(s) if s >= 0 => s as u64,
            _ => return refuse(format!("seed: must be an integer >= 0 (got {})", json::describe_opt(m.get("seed")))),
        };
        let state = State::new(&cfg);
        self.session = Some(Session {
            cfg,
            mode,
            rng: Rng::new(seed, self.fault == Fault::OwnRng),
            state,
            scratch: Scratch::default(),
        });
        Ok(b"{\"ok\":true}".to_vec())
    }

    fn session(&mut self, op: &str) -> Result<&mut Session, Fail> {
        match self.session.as_mut() {
            Some(s) => Ok(s),
            None => refuse(format!("{op} before a successful init")),
        }
    }

    fn step(&mut self, m: &Json, io: &mut Io) -> Result<Vec<u8>, Fail> {
        only_keys(m, &["op", "input"], "step")?;
        let s = self.session("step")?;
        let Some(x) = m.get("input") else {
            return refuse("step needs input".to_string());
        };
        if s.state.t >= s.cfg.horizon {
            return refuse(format!("t: cannot step past the horizon T = {} (got {})", s.cfg.horizon, s.state.t + 1));
        }
        let col = check_column(x, "input", s.state.n)?;
        let mut st = s.state.clone(); // kept only when every draw succeeded
        let mut rel = Vec::with_capacity(16 + 2 * col.len());
        let mut draws = Vec::new();
        match s.mode {
            Mode::Tape => st.round(&s.cfg, &col, &mut TapeSource { io }, &mut s.scratch, &mut rel)?,
            Mode::Own => st.round(&s.cfg, &col, &mut OwnSource { rng: &mut s.rng }, &mut s.scratch, &mut rel)?,
            Mode::Transcript => st.round(
                &s.cfg,
                &col,
                &mut TranscriptSource { rng: &mut s.rng, draws: &mut draws, first: true },
                &mut s.scratch,
                &mut rel,
            )?,
        }
        s.state = st;
        let mut o = Vec::with_capacity(rel.len() + draws.len() + 32);
        o.extend_from_slice(b"{\"release\":");
        o.extend_from_slice(&rel);
        if s.mode == Mode::Transcript {
            o.extend_from_slice(b",\"draws\":[");
            o.extend_from_slice(&draws);
            o.push(b']');
        }
        o.push(b'}');
        Ok(o)
    }

    fn run(&mut self, m: &Json, io: &mut Io) -> Result<Vec<u8>, Fail> {
        only_keys(m, &["op", "inputs"], "run")?;
        let s = self.session("run")?;
        let Some(Json::Arr(inputs)) = m.get("inputs") else {
            return refuse(format!("inputs: must be an array (got {})", json::describe_opt(m.get("inputs"))));
        };
        let cols = check_stream(&s.cfg, inputs)?;
        let mut st = State::new(&s.cfg);
        let mut rel = Vec::new();
        let mut draws = Vec::new();
        match s.mode {
            Mode::Tape => run_once(&s.cfg, &mut st, &mut s.scratch, &cols, &mut TapeSource { io }, &mut rel)?,
            Mode::Own => run_once(&s.cfg, &mut st, &mut s.scratch, &cols, &mut OwnSource { rng: &mut s.rng }, &mut rel)?,
            Mode::Transcript => run_once(
                &s.cfg,
                &mut st,
                &mut s.scratch,
                &cols,
                &mut TranscriptSource { rng: &mut s.rng, draws: &mut draws, first: true },
                &mut rel,
            )?,
        }
        let mut o = Vec::with_capacity(rel.len() + draws.len() + 32);
        o.extend_from_slice(b"{\"releases\":");
        o.extend_from_slice(&rel);
        if s.mode == Mode::Transcript {
            o.extend_from_slice(b",\"draws\":[");
            o.extend_from_slice(&draws);
            o.push(b']');
        }
        o.push(b'}');
        Ok(o)
    }

    fn runs(&mut self, m: &Json) -> Result<Vec<u8>, Fail> {
        only_keys(m, &["op", "inputs", "count"], "runs")?;
        let s = self.session("runs")?;
        if s.mode == Mode::Tape {
            return refuse("runs: only in own and transcript mode".to_string());
        }
        let Some(Json::Arr(inputs)) = m.get("inputs") else {
            return refuse(format!("inputs: must be an array (got {})", json::describe_opt(m.get("inputs"))));
        };
        let count = match m.get("count").and_then(Json::as_int) {
            Some(c) if (1..=1_000_000).contains(&c) => c as usize,
            _ => return refuse(format!("count: must be an integer in 1..1000000 (got {})", json::describe_opt(m.get("count")))),
        };
        let cols = check_stream(&s.cfg, inputs)?;
        let n = cols.first().map_or(0, |c| c.len());
        let mut st = State::new(&s.cfg);
        let mut o = Vec::with_capacity(count * (cols.len() * (2 * n + 40) + 2) + 16);
        let transcript = s.mode == Mode::Transcript;
        let mut draws = Vec::new();
        o.extend_from_slice(b"{\"runs\":[");
        if transcript {
            draws.extend_from_slice(b",\"draws\":[");
        }
        for r in 0..count {
            if r > 0 {
                o.push(b',');
                if transcript {
                    draws.push(b',');
                }
            }
            st.reset();
            if transcript {
                draws.push(b'[');
                let mut src = TranscriptSource { rng: &mut s.rng, draws: &mut draws, first: true };
                run_once(&s.cfg, &mut st, &mut s.scratch, &cols, &mut src, &mut o)?;
                draws.push(b']');
            } else {
                run_once(&s.cfg, &mut st, &mut s.scratch, &cols, &mut OwnSource { rng: &mut s.rng }, &mut o)?;
            }
        }
        o.push(b']');
        if transcript {
            draws.push(b']');
            o.extend_from_slice(&draws);
        }
        o.push(b'}');
        Ok(o)
    }

    fn handle(&mut self, line: Result<String, String>, io: &mut Io) -> Result<Vec<u8>, Fail> {
        let line = match line {
            Ok(l) => l,
            Err(e) => return refuse(e),
        };
        if line.trim().is_empty() {
            return refuse("empty line: one JSON object per line".to_string());
        }
        let m = match json::parse(&line) {
            Ok(m @ Json::Obj(_)) => m,
            Ok(_) => return refuse("a message must be a JSON object".to_string()),
            Err(e) => return refuse(format!("not a JSON line: {e}")),
        };
        match m.get("op") {
            Some(Json::Str(op)) if op == "hello" => self.hello(&m),
            Some(Json::Str(op)) if op == "init" => self.init(&m),
            Some(Json::Str(op)) if op == "step" => self.step(&m, io),
            Some(Json::Str(op)) if op == "run" => self.run(&m, io),
            Some(Json::Str(op)) if op == "runs" => self.runs(&m),
            other => refuse(format!("op: must be one of hello, init, step, run, runs (got {})", json::describe_opt(other))),
        }
    }
}

fn parse_fault(a: &str) -> Option<Fault> {
    Some(match a {
        "none" => Fault::None,
        "variance/2.25" => Fault::VarianceDiv(2.25),
        "variance/3" => Fault::VarianceDiv(3.0),
        "noiseless-b1" => Fault::NoiselessB1,
        "noiseless-b1-omit" => Fault::NoiselessB1Omit,
        "own-rng" => Fault::OwnRng,
        "reverse-records" => Fault::ReverseRecords,
        _ => return None,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().cloned().unwrap_or_else(|| "none".to_string());
    let Some(fault) = (if args.len() <= 1 { parse_fault(&name) } else { None }) else {
        eprintln!("usage: cumulative [none|variance/2.25|variance/3|noiseless-b1|noiseless-b1-omit|own-rng|reverse-records]");
        std::process::exit(2);
    };
    let mut program = Program { fault, fault_name: name, session: None };
    let mut io = Io {
        input: BufReader::with_capacity(1 << 20, std::io::stdin()),
        output: BufWriter::with_capacity(1 << 20, std::io::stdout()),
        buf: Vec::new(),
    };
    while let Some(line) = io.next_line() {
        let answer = match program.handle(line, &mut io) {
            Ok(a) => a,
            Err(Fail::EndOfInput) => break,
            Err(Fail::Refused(msg)) => json::error_line(&msg),
        };
        io.say(answer);
    }
}
