/*
 * noise.h - where the counters get their noise: their own generator ("own"
 * mode) or the harness's tape ("tape" mode).
 *
 * Own mode: xoshiro256** seeded through splitmix64 from the `seed` of the init
 * message, uniform doubles in (0, 1) from 53 random bits, Laplace by inversion.
 * Inversion in floating point is NOT a float-safe Laplace sampler (the output
 * grid leaks information in theory; see README.md): fine for an example and for
 * statistical testing, not for protecting real data.
 *
 * Tape mode: each draw is a request line to the harness,
 *   {"draw":{"site":SITE,"kind":"laplace","params":{"scale":B}}}
 * answered by one line {"value":V}; V is the draw.
 */
#ifndef DPSTREAM_NOISE_H
#define DPSTREAM_NOISE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "lineio.h"

typedef enum { NOISE_TAPE, NOISE_OWN } noise_mode;

typedef struct {
    noise_mode mode;
    uint64_t s[4];    /* own: xoshiro256** state */
    line_reader *in;  /* tape: where the answers come from (the message stream) */
    FILE *out;        /* tape: where requests go (stdout) */
    json_doc *answer; /* tape: scratch document for the answers */
} noise_source;

typedef enum {
    DRAW_OK,
    DRAW_ERROR, /* tape: the answer was not {"value":<finite number>}; message in err */
    DRAW_EOF    /* tape: input ended while waiting for the answer */
} draw_status;

/* Own mode: (re)seed the generator from `seed` (all 2^64 values are fine). */
void noise_seed(noise_source *noise, uint64_t seed);

/* A uniform double in the open interval (0, 1) (own mode). */
double noise_uniform(noise_source *noise);

/* z ~ Laplace(scale) for the draw named `site`. scale >= 0 is finite; scale 0 is
 * the point mass at 0 (no noise) in own mode, and is requested as such in tape mode. */
draw_status noise_laplace(noise_source *noise, const char *site, double scale, double *z, char *err,
                          size_t err_size);

#endif
