/*
 * noise.c - the noise source declared in noise.h.
 */
#include "noise.h"

#include <math.h>
#include <string.h>

#include "protocol.h"

/* ---- own mode: splitmix64 -> xoshiro256** --------------------------------
 * Both are Vigna's published generators, written here from their definitions:
 * splitmix64 turns the 64-bit seed into four well-mixed state words (so seeds
 * 0, 1, 2, ... give unrelated states); xoshiro256** (period 2^256 - 1) produces
 * the stream. Its one forbidden state, all zero, is guarded in noise_seed. */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro256starstar(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void noise_seed(noise_source *noise, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        noise->s[i] = splitmix64(&x);
    if ((noise->s[0] | noise->s[1] | noise->s[2] | noise->s[3]) == 0)
        noise->s[0] = 1; /* the one state xoshiro must never be in */
}

double noise_uniform(noise_source *noise)
{
    /* k uniform on {0, ..., 2^53 - 1}; u = k / 2^53 is exact (53 bits fit a double).
     * k = 0 would give u = 0, where the Laplace inversion is log(0): draw again
     * (probability 2^-53). So u is uniform on the grid {1, ..., 2^53 - 1} / 2^53. */
    for (;;) {
        uint64_t k = xoshiro256starstar(noise->s) >> 11;
        if (k != 0)
            return (double)k * 0x1.0p-53;
    }
}

/* Laplace(b) by inversion: with d = u - 1/2 (exact for u on the 2^-53 grid),
 *   z = -b * sign(d) * log(1 - 2|d|).
 * Edge cases: 1 - 2|d| is exact and > 0 because u is neither 0 nor 1, so the
 * log is finite; at u = 1/2 (d = 0) we take sign(0) = +1 and log(1) = 0, so z = 0
 * (the median), never a NaN. */
static double laplace_by_inversion(noise_source *noise, double b)
{
    double d = noise_uniform(noise) - 0.5;
    double sign = d < 0 ? -1.0 : 1.0;
    return -b * sign * log(1.0 - 2.0 * fabs(d));
}

/* ---- tape mode: ask the harness ---------------------------------------- */

static draw_status draw_from_tape(noise_source *noise, const char *site, double scale, double *z, char *err,
                                  size_t err_size)
{
    /* the request: {"draw":{"site":SITE,"kind":"laplace","params":{"scale":B}}} */
    fputs("{\"draw\":{\"site\":", noise->out);
    write_json_string(noise->out, site, strlen(site));
    fputs(",\"kind\":\"laplace\",\"params\":{\"scale\":", noise->out);
    write_json_number(noise->out, scale);
    fputs("}}}\n", noise->out);
    fflush(noise->out); /* the harness answers only what it has seen */

    /* the answer: exactly {"value":V}, V a finite number */
    const char *line;
    size_t len;
    switch (line_read(noise->in, &line, &len)) {
    case LINE_OK: break;
    case LINE_EOF: return DRAW_EOF;
    case LINE_ERROR: return DRAW_EOF; /* cannot read any more: as good as the end */
    case LINE_TOO_LONG:
        snprintf(err, err_size, "draw %s: the answer line is longer than %u bytes", site, MAX_LINE_BYTES);
        return DRAW_ERROR;
    }
    if (!json_parse(noise->answer, line, len)) {
        snprintf(err, err_size, "draw %s: the answer is not JSON (%s)", site, noise->answer->error);
        return DRAW_ERROR;
    }
    const json_value *root = json_root(noise->answer);
    const json_value *value = json_get(noise->answer, root, "value");
    if (root->type != JSON_OBJECT || root->count != 1 || !value || value->type != JSON_NUMBER) {
        snprintf(err, err_size, "draw %s: the answer must be {\"value\":<number>}", site);
        return DRAW_ERROR;
    }
    if (!isfinite(value->number)) {
        snprintf(err, err_size, "draw %s: the answer's value must be finite", site);
        return DRAW_ERROR;
    }
    *z = value->number;
    return DRAW_OK;
}

draw_status noise_laplace(noise_source *noise, const char *site, double scale, double *z, char *err,
                          size_t err_size)
{
    if (noise->mode == NOISE_TAPE)
        return draw_from_tape(noise, site, scale, z, err, err_size);
    /* Laplace(0) is the point mass at 0: only the printed variant of 001-alg10 at
     * T = 1 asks for it (see counters.c). */
    *z = scale == 0.0 ? 0.0 : laplace_by_inversion(noise, scale);
    return DRAW_OK;
}
