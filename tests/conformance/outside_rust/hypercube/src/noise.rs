//! Where the randomness comes from: the harness's tape (draw requests on stdout, answers on stdin),
//! or this program's own seeded generator (own mode; transcript mode also logs every draw it made,
//! with the parameters and value actually used). NOT a secure sampler: tests only.

use crate::json::{self, put_f, put_str, V};
use std::io::{BufRead, BufReader, BufWriter, Stdin, Stdout, Write};

// ---- lines ---------------------------------------------------------------------------------

pub struct Io {
    inp: BufReader<Stdin>,
    out: BufWriter<Stdout>,
    buf: Vec<u8>,
}

pub const MAX_LINE: usize = 64 << 20;

impl Io {
    pub fn new() -> Io {
        Io { inp: BufReader::with_capacity(1 << 16, std::io::stdin()), out: BufWriter::with_capacity(1 << 16, std::io::stdout()), buf: Vec::new() }
    }
    /// The next line (without its newline); None at end of input; Err for a line that is not UTF-8 or too long.
    pub fn line(&mut self) -> Option<Result<String, String>> {
        self.buf.clear();
        match self.inp.read_until(b'\n', &mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                }
                if self.buf.len() > MAX_LINE {
                    return Some(Err("line longer than 64 MiB".into()));
                }
                Some(String::from_utf8(std::mem::take(&mut self.buf)).map_err(|_| "the line is not UTF-8".to_string()))
            }
        }
    }
    /// One line out, flushed at once (one flush per answer line).
    pub fn say(&mut self, s: &str) {
        if self.out.write_all(s.as_bytes()).is_err() || self.out.write_all(b"\n").is_err() || self.out.flush().is_err() {
            std::process::exit(0);
        }
    }
    /// The harness's answer to a draw request: `{"value": V}`. End of input here: exit 0.
    fn answer(&mut self) -> Result<V, String> {
        let line = match self.line() {
            None => std::process::exit(0),
            Some(l) => l?,
        };
        let v = json::parse(&line).map_err(|e| format!("draw answer is not JSON: {e}"))?;
        match v.key("value") {
            Some(x) if matches!(v, V::Obj(ref m) if m.len() == 1) => Ok(x.clone()),
            _ => Err("a draw request must be answered with {\"value\": V} only".into()),
        }
    }
}

// ---- sites ---------------------------------------------------------------------------------

/// A draw's site, written out only when it is needed (tape and transcript modes).
#[derive(Clone, Copy)]
pub enum Tail {
    /// 004-alg3 u3 r=<r>: the end-of-level update of S~
    LevelEnd { r: u32 },
    /// 004-alg3 u2 r=<r> / 004-alg2 u2 j=<j>: a segment's threshold
    Threshold { r: u32, j: u32 },
    /// 004-alg3 u2 r=<r> / 004-alg2 u3 j=<j> t=<t>: a segment's test
    Test { r: u32, j: u32, t: u64 },
    /// 004-alg3 u2 r=<r> / 004-alg2 u8 / 001-alg10 L8 t=<k>: A_sub's k-th node
    Sub { r: u32, k: u64 },
    /// 004-alg1 u8 t=<t> theta=<bits>: the synthetic points of a deepest region
    Out { t: u64 },
}

#[derive(Clone, Copy)]
pub struct Site {
    pub depth: u32,
    pub idx: u64,
    pub tail: Tail,
}

fn theta(out: &mut String, depth: u32, idx: u64) {
    if depth == 0 {
        out.push_str("root");
    }
    for i in (0..depth).rev() {
        out.push(if (idx >> i) & 1 == 1 { '1' } else { '0' });
    }
}

impl Site {
    pub fn write(&self, out: &mut String) {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(80);
        match self.tail {
            Tail::Out { t } => {
                let _ = write!(s, "004-alg1 u8 t={t} theta=");
                theta(&mut s, self.depth, self.idx);
            }
            tail => {
                s.push_str("004-alg1 u6 theta=");
                theta(&mut s, self.depth, self.idx);
                let _ = match tail {
                    Tail::LevelEnd { r } => write!(s, " / 004-alg3 u3 r={r}"),
                    Tail::Threshold { r, j } => write!(s, " / 004-alg3 u2 r={r} / 004-alg2 u2 j={j}"),
                    Tail::Test { r, j, t } => write!(s, " / 004-alg3 u2 r={r} / 004-alg2 u3 j={j} t={t}"),
                    Tail::Sub { r, k } => write!(s, " / 004-alg3 u2 r={r} / 004-alg2 u8 / 001-alg10 L8 t={k}"),
                    Tail::Out { .. } => unreachable!(),
                };
            }
        }
        put_str(out, &s);
    }
}

// ---- generators ----------------------------------------------------------------------------

#[derive(Clone)]
pub enum Rng {
    /// default: splitmix64-seeded xoshiro256++
    Xoshiro([u64; 4]),
    /// control `own-rng`: PCG XSL-RR 128/64 (another family)
    Pcg { state: u128, inc: u128 },
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64, pcg: bool) -> Rng {
        let mut s = seed;
        if pcg {
            let a = ((splitmix(&mut s) as u128) << 64) | splitmix(&mut s) as u128;
            let b = ((splitmix(&mut s) as u128) << 64) | splitmix(&mut s) as u128;
            let mut r = Rng::Pcg { state: 0, inc: (b << 1) | 1 };
            r.next();
            if let Rng::Pcg { state, .. } = &mut r {
                *state = state.wrapping_add(a);
            }
            r.next();
            r
        } else {
            Rng::Xoshiro([splitmix(&mut s), splitmix(&mut s), splitmix(&mut s), splitmix(&mut s)])
        }
    }
    pub fn next(&mut self) -> u64 {
        match self {
            Rng::Xoshiro(s) => {
                let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
                let t = s[1] << 17;
                s[2] ^= s[0];
                s[3] ^= s[1];
                s[1] ^= s[2];
                s[0] ^= s[3];
                s[2] ^= t;
                s[3] = s[3].rotate_left(45);
                r
            }
            Rng::Pcg { state, inc } => {
                *state = state.wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645).wrapping_add(*inc);
                let rot = (*state >> 122) as u32;
                (((*state >> 64) as u64) ^ (*state as u64)).rotate_right(rot)
            }
        }
    }
    /// uniform on [0, 1), 53 bits
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }
    /// uniform on (0, 1]
    fn unit_open0(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 * (1.0 / 9007199254740992.0)
    }
    /// Geometric on {0, 1, ...} with P(G >= k) = exp(-k/scale): floor(-scale ln U), U on (0, 1].
    fn geometric(&mut self, scale: f64) -> i64 {
        let g = (-scale * self.unit_open0().ln()).floor();
        if g >= 4.0e18 {
            4_000_000_000_000_000_000
        } else {
            g as i64
        }
    }
    /// Discrete Laplace, pmf proportional to exp(-|z|/scale): the difference of two geometrics.
    pub fn dlap(&mut self, scale: f64) -> i64 {
        self.geometric(scale) - self.geometric(scale)
    }
}

// ---- the noise door --------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Tape,
    Own,
    Transcript,
}

pub struct Noise {
    pub mode: Mode,
    pub rng: Rng,
    /// transcript mode: the draws made since the log was last taken, each a JSON object
    pub log: Vec<String>,
}

fn draw_head(out: &mut String, site: &Site, kind: &str) {
    out.push_str("{\"site\":");
    site.write(out);
    out.push_str(",\"kind\":\"");
    out.push_str(kind);
    out.push_str("\",\"params\":{");
}

fn put_row(out: &mut String, row: &[f64]) {
    out.push('[');
    for (i, x) in row.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        put_f(out, *x);
    }
    out.push(']');
}

impl Noise {
    /// A discrete Laplace noise value at `site` with `scale`. `zero`: the planted fault `noiseless`
    /// (the value used, and reported, is 0).
    pub fn dlap(&mut self, io: &mut Io, site: Site, scale: f64, zero: bool) -> Result<i64, String> {
        if !(scale > 0.0 && scale <= 1e15) {
            return Err(format!("a discrete_laplace scale {scale:?} that no noise source accepts"));
        }
        match self.mode {
            Mode::Tape => {
                let mut s = String::from("{\"draw\":");
                draw_head(&mut s, &site, "discrete_laplace");
                s.push_str("\"scale\":");
                put_f(&mut s, scale);
                s.push_str("}}}");
                io.say(&s);
                let v = io.answer()?;
                let z = match v.int() {
                    Some(z) if z.abs() < (1i128 << 62) => z as i64,
                    _ => return Err(format!("a discrete_laplace value must be an integer (got {})", v.short())),
                };
                Ok(if zero { 0 } else { z })
            }
            Mode::Own | Mode::Transcript => {
                let z = if zero { 0 } else { self.rng.dlap(scale) };
                if self.mode == Mode::Transcript {
                    let mut s = String::with_capacity(128);
                    draw_head(&mut s, &site, "discrete_laplace");
                    s.push_str("\"scale\":");
                    put_f(&mut s, scale);
                    s.push_str("},\"value\":");
                    s.push_str(&z.to_string());
                    s.push('}');
                    self.log.push(s);
                }
                Ok(z)
            }
        }
    }

    /// `count` uniform points of the box [low, high), appended to `points` in the draw's order.
    pub fn ubox(&mut self, io: &mut Io, site: Site, low: &[f64], high: &[f64], count: i64, points: &mut Vec<Vec<f64>>) -> Result<(), String> {
        let d = low.len();
        let params = |s: &mut String| {
            s.push_str("\"low\":");
            put_row(s, low);
            s.push_str(",\"high\":");
            put_row(s, high);
            s.push_str(",\"count\":");
            s.push_str(&count.to_string());
            s.push('}');
        };
        match self.mode {
            Mode::Tape => {
                let mut s = String::from("{\"draw\":");
                draw_head(&mut s, &site, "uniform_box");
                params(&mut s);
                s.push_str("}}");
                io.say(&s);
                let v = io.answer()?;
                let bad = || Err("a uniform_box value must be `count` rows of d numbers".to_string());
                let V::Arr(rows) = v else { return bad() };
                if rows.len() as i64 != count {
                    return bad();
                }
                for row in rows {
                    let V::Arr(xs) = row else { return bad() };
                    if xs.len() != d {
                        return bad();
                    }
                    let mut p = Vec::with_capacity(d);
                    for x in xs {
                        match x.num() {
                            Some(f) if f.is_finite() => p.push(f),
                            _ => return bad(),
                        }
                    }
                    points.push(p);
                }
                Ok(())
            }
            Mode::Own | Mode::Transcript => {
                let start = points.len();
                for _ in 0..count {
                    let mut p = Vec::with_capacity(d);
                    for c in 0..d {
                        let w = high[c] - low[c];
                        loop {
                            // u w + low in one rounding (fma); the boxes are dyadic, so a sum that rounds
                            // up onto `high` is redrawn: the law is uniform on [low, high)
                            let x = self.rng.unit().mul_add(w, low[c]);
                            if x < high[c] {
                                p.push(x);
                                break;
                            }
                        }
                    }
                    points.push(p);
                }
                if self.mode == Mode::Transcript {
                    let mut s = String::with_capacity(128 + 24 * d * count as usize);
                    draw_head(&mut s, &site, "uniform_box");
                    params(&mut s);
                    s.push_str(",\"value\":[");
                    for (i, p) in points[start..].iter().enumerate() {
                        if i > 0 {
                            s.push(',');
                        }
                        put_row(&mut s, p);
                    }
                    s.push_str("]}");
                    self.log.push(s);
                }
                Ok(())
            }
        }
    }
}
