#include "rng.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void rng_seed(rng_t *r, int family, uint64_t seed) {
    memset(r, 0, sizeof *r);
    r->family = family;
    uint64_t x = seed ^ (family ? 0x5851F42D4C957F2Dull : 0);
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&x);
    if (family) {
        r->s[1] |= 1; /* pcg increments must be odd */
        r->s[3] |= 1;
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint32_t pcg32(uint64_t *state, uint64_t inc) {
    uint64_t old = *state;
    *state = old * 6364136223846793005ull + inc;
    uint32_t xs = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xs >> rot) | (xs << ((32 - rot) & 31));
}

uint64_t rng_u64(rng_t *r) {
    if (r->family == 0) {
        uint64_t *s = r->s;
        uint64_t res = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return res;
    }
    uint64_t hi = pcg32(&r->s[0], r->s[1]);
    uint64_t lo = pcg32(&r->s[2], r->s[3]);
    return (hi << 32) | lo;
}

double rng_uniform(rng_t *r) {
    /* (m + 0.5) / 2^53: never 0, never 1 */
    return ((double)(rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

bool rng_coin(rng_t *r) {
    if (r->nbits == 0) {
        r->bits = rng_u64(r);
        r->nbits = 64;
    }
    bool b = r->bits & 1;
    r->bits >>= 1;
    r->nbits--;
    return b;
}

/* discrete Laplace with pmf proportional to exp(-|y|/t), t > 0 */
static int64_t dlaplace(rng_t *r, double t) {
    for (;;) {
        double u = rng_uniform(r);
        double g = floor(-t * log(u));
        bool neg = rng_coin(r);
        if (neg && g == 0) continue;
        int64_t m = (int64_t)g;
        return neg ? -m : m;
    }
}

int64_t rng_dgauss(rng_t *r, double sigma2) {
    double t = floor(sqrt(sigma2)) + 1.0;
    double c = sigma2 / t;
    for (;;) {
        int64_t y = dlaplace(r, t);
        double a = fabs((double)y) - c;
        double acc = exp(-(a * a) / (2.0 * sigma2));
        if (acc >= 1.0 || rng_uniform(r) < acc) return y;
    }
}

void rng_choice(rng_t *r, int64_t n, int64_t k, unsigned char *sel) {
    if (k <= 0) {
        memset(sel, 0, (size_t)n);
        return;
    }
    if (k >= n) {
        memset(sel, 1, (size_t)n);
        return;
    }
    /* Knuth's selection sampling: slot i is taken with probability (k - taken)/(n - i) */
    int64_t need = k;
    for (int64_t i = 0; i < n; i++) {
        int64_t left = n - i;
        if (need == 0) {
            sel[i] = 0;
        } else if (need == left) {
            sel[i] = 1;
            need--;
        } else {
            /* exact: take iff a uniform integer in [0, left) is < need */
            uint64_t bound = (uint64_t)left;
            uint64_t lim = UINT64_MAX - UINT64_MAX % bound;
            uint64_t x;
            do x = rng_u64(r); while (x >= lim);
            if ((int64_t)(x % bound) < need) {
                sel[i] = 1;
                need--;
            } else {
                sel[i] = 0;
            }
        }
    }
}
