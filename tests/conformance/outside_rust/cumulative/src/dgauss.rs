//! The discrete Gaussian N_Z(0, sigma2) of Canonne, Kamath and Steinke (NeurIPS 2020, Algorithms 1-3),
//! in exact integer arithmetic: sigma2 is a double, hence a dyadic rational N / D, and every
//! Bernoulli(exp(-gamma)) has a rational gamma compared with exact uniform integers. Where a 128-bit
//! intermediate would overflow (sigma2 below ~2^-70 or a far tail of a huge sigma2) the last
//! acceptance test falls back to a float exp() against a 53-bit uniform. NOT a secure sampler
//! (the generator is not cryptographic, timing is data-dependent); for tests only.

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct DGauss {
    pub sigma2: f64,
    /// t = floor(sigma) + 1
    t: u64,
    /// sigma2 = num / den exactly (den a power of two), when representable
    exact: Option<(u128, u128)>,
}

fn isqrt(x: u128) -> u128 {
    if x == 0 {
        return 0;
    }
    let mut r = (x as f64).sqrt() as u128;
    while r > 0 && r.checked_mul(r).map_or(true, |s| s > x) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).map_or(false, |s| s <= x) {
        r += 1;
    }
    r
}

impl DGauss {
    pub fn new(sigma2: f64) -> DGauss {
        assert!(sigma2 > 0.0 && sigma2.is_finite());
        let bits = sigma2.to_bits();
        let exp_bits = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mut m, mut e) = if exp_bits == 0 { (frac, -1074i64) } else { (frac | (1u64 << 52), exp_bits - 1075) };
        while m & 1 == 0 && e < 0 {
            m >>= 1;
            e += 1;
        }
        let exact = if e >= 0 {
            if e <= 70 {
                Some(((m as u128) << e, 1u128))
            } else {
                None
            }
        } else if -e <= 100 {
            Some((m as u128, 1u128 << (-e)))
        } else {
            None
        };
        let t = match exact {
            Some((num, den)) => isqrt(num / den) as u64 + 1,
            None => sigma2.sqrt().floor() as u64 + 1,
        };
        DGauss { sigma2, t, exact }
    }

    /// Bernoulli(num / den), 0 <= num <= den.
    #[inline]
    fn bernoulli(rng: &mut Rng, num: u128, den: u128) -> bool {
        rng.below_u128(den) < num
    }

    /// Bernoulli(exp(-num/den)) for 0 <= num/den <= 1 (CKS Algorithm 1); None if den*K overflows.
    fn bern_exp_le1(rng: &mut Rng, num: u128, den: u128) -> Option<bool> {
        let mut k: u128 = 1;
        loop {
            let d = den.checked_mul(k)?;
            if !Self::bernoulli(rng, num, d) {
                return Some(k % 2 == 1);
            }
            k += 1;
        }
    }

    /// Bernoulli(exp(-num/den)) for any num/den >= 0 (CKS Algorithm 2).
    fn bern_exp(rng: &mut Rng, num: u128, den: u128) -> Option<bool> {
        let whole = num / den;
        let mut i = 0u128;
        while i < whole {
            if !Self::bern_exp_le1(rng, 1, 1)? {
                return Some(false);
            }
            i += 1;
        }
        Self::bern_exp_le1(rng, num % den, den)
    }

    pub fn sample(&self, rng: &mut Rng) -> i64 {
        let t = self.t;
        loop {
            let u = rng.below(t);
            if !Self::bern_exp_le1(rng, u as u128, t as u128).expect("t fits") {
                continue;
            }
            let mut v: u64 = 0;
            while Self::bern_exp_le1(rng, 1, 1).expect("small") {
                v += 1;
            }
            let negative = rng.bit();
            if negative && u == 0 && v == 0 {
                continue;
            }
            let mag = u + t * v;
            // accept with probability exp(-(|Y| - sigma2/t)^2 / (2 sigma2))
            //   = exp(-(|Y| D t - N)^2 / (2 N D t^2)) with sigma2 = N / D
            let exact = self.exact.and_then(|(n, d)| {
                let a = (mag as u128).checked_mul(d)?.checked_mul(t as u128)?;
                let diff = if a >= n { a - n } else { n - a };
                let num = diff.checked_mul(diff)?;
                let den = n.checked_mul(d)?.checked_mul(2)?.checked_mul(t as u128)?.checked_mul(t as u128)?;
                Self::bern_exp(rng, num, den)
            });
            let accept = match exact {
                Some(a) => a,
                None => {
                    let x = mag as f64 - self.sigma2 / t as f64;
                    rng.open01() < (-(x * x) / (2.0 * self.sigma2)).exp()
                }
            };
            if accept {
                return if negative { -(mag as i64) } else { mag as i64 };
            }
        }
    }
}
