//! The noise of a session: Laplace draws asked of the harness (tape mode) or drawn here from a
//! seeded generator (own mode).

use crate::json::{self, Json};
use crate::lines::Lines;

/// Why a step did not complete.
pub enum Fail {
    /// refused: answered `{"error": message}`, and nothing changes
    Refused(String),
    /// stdin ended, possibly while a draw request waited for its answer: exit 0
    EndOfInput,
}

pub fn refuse<T>(message: String) -> Result<T, Fail> {
    Err(Fail::Refused(message))
}

// ---- own mode: splitmix64 -> xoshiro256** ----------------------------------------------------

/// xoshiro256** (Blackman and Vigna), its state filled by splitmix64 from the init's seed, so seeds
/// 0, 1, 2, ... give unrelated streams.
pub struct Generator {
    s: [u64; 4],
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        let mut x = seed;
        let mut s = [0u64; 4];
        for word in s.iter_mut() {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            *word = z ^ (z >> 31);
        }
        if s == [0; 4] {
            s[0] = 1; // the one state xoshiro must never be in
        }
        Generator { s }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
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

    /// u uniform on {1, ..., 2^53 - 1} / 2^53 (53 random bits; 0 is drawn again).
    fn uniform(&mut self) -> f64 {
        loop {
            let k = self.next_u64() >> 11;
            if k != 0 {
                return k as f64 / 9_007_199_254_740_992.0;
            }
        }
    }

    /// Laplace(b) by inversion: z = -b sign(u - 1/2) ln(1 - 2|u - 1/2|). NOT differentially private
    /// in the strict sense: floating-point inversion leaks through the low-order bits of x + z
    /// (Mironov, CCS 2012). Fine for an example and for the statistical checks, never for data.
    pub fn laplace(&mut self, b: f64) -> f64 {
        if b == 0.0 {
            return 0.0; // only the printed 001-alg10 scale at T = 1 asks for it
        }
        let d = self.uniform() - 0.5;
        let sign = if d < 0.0 { -1.0 } else { 1.0 };
        -b * sign * (1.0 - 2.0 * d.abs()).ln()
    }
}

// ---- the source ------------------------------------------------------------------------------

pub enum Noise {
    Tape,
    Own(Generator),
}

/// One Laplace draw at `site` with scale `scale`. In tape mode the harness answers {"value": V} with
/// the tape's noise: the noisy statistic is statistic + V (docs/tape-format.md).
pub fn laplace(noise: &mut Noise, io: &mut Lines, site: &str, scale: f64) -> Result<f64, Fail> {
    match noise {
        Noise::Own(generator) => Ok(generator.laplace(scale)),
        Noise::Tape => {
            let mut params = String::new();
            json::write_number(scale, &mut params);
            let mut request = String::from("{\"draw\":{\"site\":");
            json::write_string(site, &mut request);
            request.push_str(",\"kind\":\"laplace\",\"params\":{\"scale\":");
            request.push_str(&params);
            request.push_str("}}}");
            io.say(&request);
            let line = match io.next_line() {
                None => return Err(Fail::EndOfInput),
                Some(Err(message)) => return refuse(format!("draw {site}: {message}")),
                Some(Ok(line)) => line,
            };
            let answer = match json::parse(&line) {
                Ok(answer) => answer,
                Err(message) => return refuse(format!("draw {site}: the answer is not JSON ({message})")),
            };
            match (&answer, answer.get("value").and_then(Json::as_finite)) {
                (Json::Object(members), Some(v)) if members.len() == 1 => Ok(v),
                _ => refuse(format!(
                    "draw {site}: the answer must be {{\"value\": <finite number>}} (got {})",
                    answer.describe()
                )),
            }
        }
    }
}
