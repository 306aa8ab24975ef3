/* rng.h - own randomness (NOT secure; for tests only).
 * Two generator families: xoshiro256** (default) and PCG32 x2 (fault "own-rng").
 * Samplers: uniform (0,1), fair coin, discrete Gaussian (Canonne-Kamath-Steinke
 * rejection from a discrete Laplace, evaluated in floating point), uniform
 * sorted k-subset of [0, n) (selection sampling). */
#ifndef WIN_RNG_H
#define WIN_RNG_H
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    int family; /* 0 xoshiro256**, 1 pcg32 pair */
    uint64_t s[4];
    uint64_t bits;  /* spare random bits for coins */
    int nbits;
} rng_t;

void rng_seed(rng_t *r, int family, uint64_t seed);
uint64_t rng_u64(rng_t *r);
double rng_uniform(rng_t *r); /* in (0, 1) */
bool rng_coin(rng_t *r);
int64_t rng_dgauss(rng_t *r, double sigma2);
/* marks k of the n slots of sel[] with 1 (others 0), uniformly */
void rng_choice(rng_t *r, int64_t n, int64_t k, unsigned char *sel);
#endif
