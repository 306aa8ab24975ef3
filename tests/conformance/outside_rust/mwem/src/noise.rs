//! Where the randomness comes from: the harness's tape (`tape` mode: every draw is requested by its
//! site) or this program's own seeded generator (`own`; `transcript` = own + every draw reported).
//!
//! Own generators (NOT secure: floating-point samplers by inversion are not DP in the strict sense,
//! Mironov 2012, and neither generator is cryptographic; fine for tests):
//! * default: splitmix64 -> xoshiro256**; Laplace by inversion with ln_1p; the exponential
//!   mechanism by inversion of its cumulative weights;
//! * `own-rng` fault (a correct control): PCG-XSL-RR 128/64; Laplace as scale * (E1 - E2), E
//!   standard exponentials; the exponential mechanism by the Gumbel-max trick.

use crate::io::Io;
use crate::json::{self, Json};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Tape,
    Own,
    Transcript,
}

pub enum Rng {
    Xoshiro([u64; 4]),
    Pcg { state: u128, inc: u128 },
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E3779B97F4A7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

const PCG_MUL: u128 = 0x2360ED051FC65DA44385DF649FCCF645;

impl Rng {
    pub fn new(seed: u64, pcg: bool) -> Rng {
        let mut sm = seed;
        if pcg {
            let a = ((splitmix(&mut sm) as u128) << 64) | splitmix(&mut sm) as u128;
            let b = ((splitmix(&mut sm) as u128) << 64) | splitmix(&mut sm) as u128;
            let mut r = Rng::Pcg { state: 0, inc: (b << 1) | 1 };
            r.next_u64();
            if let Rng::Pcg { state, .. } = &mut r {
                *state = state.wrapping_add(a);
            }
            r.next_u64();
            r
        } else {
            Rng::Xoshiro([splitmix(&mut sm), splitmix(&mut sm), splitmix(&mut sm), splitmix(&mut sm)])
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        match self {
            Rng::Xoshiro(s) => {
                let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
                let t = s[1] << 17;
                s[2] ^= s[0];
                s[3] ^= s[1];
                s[1] ^= s[2];
                s[0] ^= s[3];
                s[2] ^= t;
                s[3] = s[3].rotate_left(45);
                result
            }
            Rng::Pcg { state, inc } => {
                *state = state.wrapping_mul(PCG_MUL).wrapping_add(*inc);
                let rot = (*state >> 122) as u32;
                let xsl = ((*state >> 64) as u64) ^ (*state as u64);
                xsl.rotate_right(rot)
            }
        }
    }

    /// A uniform double in the open interval (0, 1): (n + 1/2) 2^-53.
    #[inline]
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / 9007199254740992.0)
    }

    fn is_pcg(&self) -> bool {
        matches!(self, Rng::Pcg { .. })
    }

    pub fn laplace(&mut self, scale: f64) -> f64 {
        if self.is_pcg() {
            let e1 = -self.open01().ln();
            let e2 = -self.open01().ln();
            scale * (e1 - e2)
        } else {
            let v = 2.0 * self.open01() - 1.0; // exact, in (-1, 1)
            let mag = -scale * (-v.abs()).ln_1p();
            if v < 0.0 {
                -mag
            } else {
                mag
            }
        }
    }

    /// P[i] proportional to exp(epsilon scores[i] / (2 sensitivity)).
    pub fn exponential_mechanism(&mut self, scores: &[f64], epsilon: f64, sensitivity: f64) -> usize {
        let c = epsilon / (2.0 * sensitivity);
        let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        // exponent relative to the best score: 0 at the best, <= 0 (possibly -inf) elsewhere
        let expo = |s: f64| if s == top { 0.0 } else { c * (s - top) };
        if self.is_pcg() {
            let mut best = 0;
            let mut best_v = f64::NEG_INFINITY;
            for (i, s) in scores.iter().enumerate() {
                let g = -(-self.open01().ln()).ln();
                let v = expo(*s) + g;
                if v > best_v {
                    best_v = v;
                    best = i;
                }
            }
            best
        } else {
            let w: Vec<f64> = scores.iter().map(|s| expo(*s).exp()).collect();
            let total: f64 = w.iter().sum();
            let u = self.open01() * total;
            let mut acc = 0.0;
            let mut last = 0;
            for (i, wi) in w.iter().enumerate() {
                if *wi > 0.0 {
                    last = i;
                    acc += wi;
                    if u < acc {
                        return i;
                    }
                }
            }
            last
        }
    }
}

/// One step's (or run's) source of draws.
pub struct Source<'a> {
    pub mode: Mode,
    pub rng: &'a mut Rng,
    pub io: &'a mut Io,
    /// transcript mode: the draws made, as JSON objects joined by commas
    pub draws: String,
}

impl<'a> Source<'a> {
    fn ask(&mut self, request: &str) -> Result<Json, String> {
        self.io.say(request);
        let line = match self.io.next_line() {
            None => std::process::exit(0),
            Some(Err(e)) => return Err(format!("the answer to a draw request: {}", e)),
            Some(Ok(l)) => l,
        };
        let v = json::parse(&line).map_err(|e| format!("the answer to a draw request: {}", e))?;
        match v.get("value") {
            Some(x) if v.keys().len() == 1 => Ok(x.clone()),
            _ => Err(format!("the answer to a draw request must be {{\"value\": V}}, got {}", v.brief())),
        }
    }

    /// Sites are only spelt out where they are sent or reported (not in own mode).
    pub fn names_sites(&self) -> bool {
        self.mode != Mode::Own
    }

    fn record(&mut self, site: &str, kind: &str, params: &str, value: &str) {
        if !self.draws.is_empty() {
            self.draws.push(',');
        }
        self.draws.push_str("{\"site\":");
        json::push_str(&mut self.draws, site);
        self.draws.push_str(",\"kind\":\"");
        self.draws.push_str(kind);
        self.draws.push_str("\",\"params\":");
        self.draws.push_str(params);
        self.draws.push_str(",\"value\":");
        self.draws.push_str(value);
        self.draws.push('}');
    }

    /// An index into `scores`, drawn with exactly these parameters.
    pub fn exponential_mechanism(&mut self, site: &str, scores: &[f64], epsilon: f64, sensitivity: f64) -> Result<usize, String> {
        if self.mode == Mode::Own {
            return Ok(self.rng.exponential_mechanism(scores, epsilon, sensitivity));
        }
        let mut params = String::from("{\"scores\":");
        json::push_nums(&mut params, scores);
        params.push_str(",\"epsilon\":");
        json::push_num(&mut params, epsilon);
        params.push_str(",\"sensitivity\":");
        json::push_num(&mut params, sensitivity);
        params.push('}');
        match self.mode {
            Mode::Tape => {
                let req = format!("{{\"draw\":{{\"site\":{},\"kind\":\"exponential_mechanism\",\"params\":{}}}}}", quoted(site), params);
                let v = self.ask(&req)?;
                match v.as_int() {
                    Some(i) if i >= 0 && (i as usize) < scores.len() => Ok(i as usize),
                    _ => Err(format!("site '{}': exponential_mechanism value must be an index into the scores, got {}", site, v.brief())),
                }
            }
            Mode::Own | Mode::Transcript => {
                let i = self.rng.exponential_mechanism(scores, epsilon, sensitivity);
                if self.mode == Mode::Transcript {
                    self.record(site, "exponential_mechanism", &params, &i.to_string());
                }
                Ok(i)
            }
        }
    }

    /// Laplace noise of this scale (the value to add to the statistic). `forced_zero`: the planted
    /// `noiseless` fault: the noise actually used is 0 (in tape mode the draw is still requested and
    /// its value ignored; in transcript mode the value 0 is reported).
    pub fn laplace(&mut self, site: &str, scale: f64, forced_zero: bool) -> Result<f64, String> {
        if self.mode == Mode::Own {
            return Ok(if forced_zero { 0.0 } else { self.rng.laplace(scale) });
        }
        let mut params = String::from("{\"scale\":");
        json::push_num(&mut params, scale);
        params.push('}');
        match self.mode {
            Mode::Tape => {
                let req = format!("{{\"draw\":{{\"site\":{},\"kind\":\"laplace\",\"params\":{}}}}}", quoted(site), params);
                let v = self.ask(&req)?;
                match v.as_num() {
                    Some(z) => Ok(if forced_zero { 0.0 } else { z }),
                    None => Err(format!("site '{}': laplace value must be a finite number, got {}", site, v.brief())),
                }
            }
            Mode::Own | Mode::Transcript => {
                let z = if forced_zero { 0.0 } else { self.rng.laplace(scale) };
                if self.mode == Mode::Transcript {
                    let mut v = String::new();
                    json::push_num(&mut v, z);
                    self.record(site, "laplace", &params, &v);
                }
                Ok(z)
            }
        }
    }
}

fn quoted(s: &str) -> String {
    let mut o = String::new();
    json::push_str(&mut o, s);
    o
}
