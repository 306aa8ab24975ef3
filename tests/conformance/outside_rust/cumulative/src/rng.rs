//! Own-mode randomness (NOT a secure source; fine for tests): PCG64 (XSL-RR 128/64, O'Neill) by
//! default, xoshiro256** (Blackman-Vigna) under the `own-rng` control. Both seeded through splitmix64.

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const PCG_MULT: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

#[derive(Clone)]
pub enum Rng {
    Pcg { state: u128, inc: u128 },
    Xoshiro([u64; 4]),
}

impl Rng {
    pub fn new(seed: u64, alternative: bool) -> Rng {
        let mut x = seed;
        if alternative {
            let mut s = [0u64; 4];
            for w in s.iter_mut() {
                *w = splitmix(&mut x);
            }
            if s == [0; 4] {
                s[0] = 1;
            }
            Rng::Xoshiro(s)
        } else {
            let a = splitmix(&mut x) as u128;
            let b = splitmix(&mut x) as u128;
            let c = splitmix(&mut x) as u128;
            let d = splitmix(&mut x) as u128;
            let inc = ((c << 64 | d) << 1) | 1;
            let mut r = Rng::Pcg { state: 0, inc };
            r.next_u64();
            if let Rng::Pcg { state, .. } = &mut r {
                *state = state.wrapping_add(a << 64 | b);
            }
            r.next_u64();
            r
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        match self {
            Rng::Pcg { state, inc } => {
                *state = state.wrapping_mul(PCG_MULT).wrapping_add(*inc);
                let s = *state;
                let rot = (s >> 122) as u32;
                (((s >> 64) as u64) ^ (s as u64)).rotate_right(rot)
            }
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
        }
    }

    /// Uniform on {0, ..., m - 1}, m >= 1 (Lemire's multiply-and-reject: exact).
    #[inline]
    pub fn below(&mut self, m: u64) -> u64 {
        let mut x = self.next_u64();
        let mut p = (x as u128) * (m as u128);
        let mut low = p as u64;
        if low < m {
            let threshold = m.wrapping_neg() % m;
            while low < threshold {
                x = self.next_u64();
                p = (x as u128) * (m as u128);
                low = p as u64;
            }
        }
        (p >> 64) as u64
    }

    /// Uniform on {0, ..., m - 1} for a 128-bit m >= 1 (masked rejection: exact).
    pub fn below_u128(&mut self, m: u128) -> u128 {
        if m <= u64::MAX as u128 {
            return self.below(m as u64) as u128;
        }
        let bits = 128 - (m - 1).leading_zeros();
        let mask: u128 = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
        loop {
            let x = ((self.next_u64() as u128) << 64 | self.next_u64() as u128) & mask;
            if x < m {
                return x;
            }
        }
    }

    #[inline]
    pub fn bit(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }

    /// Uniform on (0, 1) with 53 random bits (only the float fallback of the sampler uses it).
    pub fn open01(&mut self) -> f64 {
        loop {
            let k = self.next_u64() >> 11;
            if k != 0 {
                return k as f64 * (1.0 / 9_007_199_254_740_992.0);
            }
        }
    }
}
