/*
 * counters.c - 001-alg8 (Simple) and 001-alg10 (Binary tree) for the protocol.
 *
 * Compile-time switch AS_PRINTED (make builds both):
 *   0 (build/counters)            001-alg10 draws Lap(bit_length(T)/epsilon), the
 *                                 corrected scale: one input enters up to
 *                                 floor(log2 T) + 1 = bit_length(T) tree nodes.
 *   1 (build/counters_as_printed) 001-alg10 draws Lap(log2(T)/epsilon) as printed
 *                                 in paper 001 (L8): NOT epsilon-DP (true loss
 *                                 bit_length(T)/log2(T) * epsilon).
 * 001-alg8 is the same in both builds.
 *
 * The arithmetic follows the reference (reference/dpstream/counters/simple.py and
 * binary_tree.py) operation by operation, so with the same noise the releases are
 * the same doubles, not merely close.
 */
#include "counters.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef AS_PRINTED
#define AS_PRINTED 0
#endif

const char *const IMPLEMENTATION_NAME =
    AS_PRINTED ? "dpstream C example counters, 001-alg10 as printed (scale log2(T)/epsilon)"
               : "dpstream C example counters (001-alg10 scale bit_length(T)/epsilon)";
const char *const COUNTER_ANCHORS[] = {"001-alg8", "001-alg10"};
const size_t COUNTER_ANCHOR_COUNT = sizeof COUNTER_ANCHORS / sizeof COUNTER_ANCHORS[0];

/* The range every counter keeps (docs/counters.md, "Range"; the reference's
 * dpstream.errors.MAX_STREAM_SUM): |f(t)| and every sum of inputs a counter forms
 * within +-(2^53 - 1). Beyond it doubles round, so inputs at distance 1 could give
 * sums 2 apart. A JSON integer above it (2^53 + 1, say) parses to a double >= 2^53,
 * still outside: the check on the parsed double is the check on the number sent. */
#define MAX_STREAM_SUM 9007199254740991.0

static bool within_range(double v)
{
    return v >= -MAX_STREAM_SUM && v <= MAX_STREAM_SUM;
}

/* floor(log2 t) + 1 for t >= 1: the number of binary digits of t. */
static int bit_length(int64_t t)
{
    int n = 0;
    for (uint64_t u = (uint64_t)t; u; u >>= 1)
        n++;
    return n;
}

/* ---- parameters ---------------------------------------------------------- */

bool counter_configure(const json_doc *doc, const json_value *algorithm, const json_value *params,
                       counter_config *out, char *err, size_t err_size)
{
    char got[96];
    counter_config c;
    memset(&c, 0, sizeof c);

    if (json_string_is(doc, algorithm, "001-alg8"))
        c.kind = SIMPLE_COUNTER;
    else if (json_string_is(doc, algorithm, "001-alg10"))
        c.kind = BINARY_TREE_COUNTER;
    else {
        json_describe(doc, algorithm, got, sizeof got);
        snprintf(err, err_size, "algorithm: must be \"001-alg8\" or \"001-alg10\" (got %s)", got);
        return false;
    }

    if (params->type != JSON_OBJECT) {
        snprintf(err, err_size, "params: must be an object {\"epsilon\":..., \"T\":...} (got %s)",
                 json_type_name(params->type));
        return false;
    }
    /* Unknown parameters are refused rather than ignored: a parameter we do not
     * know (say "discrete": true) would ask for a variant we do not implement. */
    for (const json_value *m = json_first(doc, params); m; m = json_next(doc, m)) {
        const char *key = json_key_bytes(doc, m);
        bool known = (m->key_len == 7 && memcmp(key, "epsilon", 7) == 0) || (m->key_len == 1 && key[0] == 'T');
        if (!known) {
            snprintf(err, err_size, "params: unknown parameter (only \"epsilon\" and \"T\" are accepted)");
            return false;
        }
    }

    /* [001-alg8 L1] / [001-alg10 L1] privacy budget epsilon: a finite number > 0 */
    const json_value *eps = json_get(doc, params, "epsilon");
    if (!eps) {
        snprintf(err, err_size, "params.epsilon: missing");
        return false;
    }
    json_describe(doc, eps, got, sizeof got);
    if (eps->type != JSON_NUMBER || !isfinite(eps->number) || !(eps->number > 0)) {
        snprintf(err, err_size, "params.epsilon: must be a finite number > 0 (got %s)", got);
        return false;
    }
    c.epsilon = eps->number;

    /* [001-alg10 L1] time horizon T: an integer >= 1, read by value (16, 16.0
     * and 1.6e1 are all 16; 2.5 is refused), as the protocol reads numbers.
     * 001-alg8 has no horizon in the paper: there T is optional (absent = no
     * horizon), as in the reference and the protocol's catalog. */
    const json_value *T = json_get(doc, params, "T");
    if (!T && c.kind == SIMPLE_COUNTER) {
        c.T = INT64_MAX; /* no horizon: 2^63 - 1 steps will not be reached */
    } else if (!T) {
        snprintf(err, err_size, "params.T: missing");
        return false;
    } else {
        json_describe(doc, T, got, sizeof got);
        if (T->type != JSON_NUMBER || !T->integer || T->negative ||
            (T->magnitude_fits && T->magnitude < 1)) {
            snprintf(err, err_size, "params.T: must be an integer >= 1 (got %s)", got);
            return false;
        }
        if (!T->magnitude_fits || T->magnitude > (uint64_t)INT64_MAX) {
            snprintf(err, err_size, "params.T: must be at most 2^63 - 1 (got %s)", got);
            return false;
        }
        c.T = (int64_t)T->magnitude;
    }

    if (c.kind == SIMPLE_COUNTER) {
        c.scale = 1.0 / c.epsilon; /* [001-alg8 L4] Lap(1/epsilon) */
    } else if (AS_PRINTED) {
        /* [001-alg10 L8] as printed: Lap(log2(T)/epsilon). At T = 1 this is
         * log2(1)/epsilon = 0: the printed line adds no noise at all, and that is
         * what this build does (own mode: z = 0; tape mode: the draw is still
         * requested, with "scale": 0, so a harness sees the printed parameters).
         * The reference refuses as_printed at T = 1 instead; an outside
         * implementation that follows the printed line literally looks like this. */
        c.scale = log2((double)c.T) / c.epsilon;
    } else {
        /* [001-alg10 L8] corrected: Lap((floor(log2 T) + 1)/epsilon), erratum E-counters-1 */
        c.scale = (double)bit_length(c.T) / c.epsilon;
    }
    if (!isfinite(c.scale)) {
        snprintf(err, err_size, "params.epsilon: too small, the noise scale overflows (got %.17g)", c.epsilon);
        return false;
    }
    *out = c;
    return true;
}

void counter_reset(counter_state *state)
{
    memset(state, 0, sizeof *state); /* [001-alg8 L3] g(0) = 0; [001-alg10 L3] alpha_i = alpha_hat_i = 0 */
}

/* ---- steps --------------------------------------------------------------- */

static step_status draw(noise_source *noise, const char *line, int64_t t, double scale, double *z, char *err,
                        size_t err_size)
{
    char site[64];
    snprintf(site, sizeof site, "%s t=%" PRId64, line, t); /* e.g. "001-alg8 L4 t=5" */
    switch (noise_laplace(noise, site, scale, z, err, err_size)) {
    case DRAW_OK: return STEP_OK;
    case DRAW_ERROR: return STEP_ERROR;
    case DRAW_EOF: return STEP_EOF;
    }
    return STEP_ERROR;
}

/* 001-alg8 at time t: g(t) = g(t-1) + f(t) + z, z ~ Lap(1/epsilon).
 * Evaluated left to right, (g + x) + z, as the reference does; g + (x + z) is the
 * same number in exact arithmetic but can differ in the last bits. */
static step_status simple_step(const counter_config *c, counter_state *s, int64_t t, double x,
                               noise_source *noise, double *release, char *err, size_t err_size)
{
    double z;
    step_status st = draw(noise, "001-alg8 L4", t, c->scale, &z, err, err_size);
    if (st != STEP_OK)
        return st;
    double g = s->g + x + z; /* [001-alg8 L4] */
    if (!isfinite(g)) {
        snprintf(err, err_size, "g(%" PRId64 ") overflows the double range", t);
        return STEP_ERROR;
    }
    s->g = g; /* commit */
    *release = g;
    return STEP_OK;
}

/* sum_{i<j} alpha_i + x with Neumaier's compensated summation: every rounding
 * error of the running sum is kept exactly and added back once, so for integer
 * values whose sum lies within 2^53 the result is the exact sum even when a partial
 * sum leaves the range (left to right, M + 2 - M with M = 2^53 - 1 gives 1, not 2).
 * The reference computes it correctly rounded (math.fsum); for real inputs the two
 * can differ in the last bit. */
static double p_sum(const double *alpha, int j, double x)
{
    double sum = 0.0, compensation = 0.0;
    for (int i = 0; i <= j; i++) {
        double v = i < j ? alpha[i] : x;
        double next = sum + v;
        compensation += fabs(sum) >= fabs(v) ? (sum - next) + v : (v - next) + sum;
        sum = next;
    }
    return sum + compensation;
}

/* 001-alg10 at time t. Node j (the lowest set bit of t) gets the p-sum of the
 * dyadic interval (t - 2^j, t]: alpha_j = alpha_0 + ... + alpha_{j-1} + f(t),
 * then alpha_hat_j = alpha_j + z once; g(t) adds alpha_hat_i over the set bits i
 * of t, lowest bit first (the reference's summation order). */
static step_status binary_tree_step(const counter_config *c, counter_state *s, int64_t t, double x,
                                    noise_source *noise, double *release, char *err, size_t err_size)
{
    int n = bit_length(t) - 1; /* [001-alg10 L5] b_n ... b_1 b_0: the bits of t */
    int j = 0;
    while (!((t >> j) & 1)) /* [001-alg10 L6] j = min{i : b_i != 0} */
        j++;

    double alpha_j = p_sum(s->alpha, j, x); /* [001-alg10 L7] alpha_j = sum_{i<j} alpha_i + f(t) */
    if (!within_range(alpha_j)) {           /* refused before the draw */
        snprintf(err, err_size,
                 "input: would take the p-sum alpha_%d to %.17g, outside +-(2^53 - 1) (MAX_STREAM_SUM)", j, alpha_j);
        return STEP_ERROR;
    }

    double z;
    step_status st = draw(noise, "001-alg10 L8", t, c->scale, &z, err, err_size);
    if (st != STEP_OK)
        return st;
    double alpha_hat_j = alpha_j + z; /* [001-alg10 L8] alpha_hat_j = alpha_j + Lap(scale) */

    /* [001-alg10 L10] g(t) = sum of alpha_hat_i over the set bits i of t. Bits
     * below j are 0 and bit j uses the new node, so no state is touched yet. */
    double g = 0.0;
    for (int i = 0; i <= n; i++)
        if ((t >> i) & 1)
            g += i == j ? alpha_hat_j : s->alpha_hat[i];
    if (!isfinite(g) || !isfinite(alpha_j)) {
        snprintf(err, err_size, "g(%" PRId64 ") overflows the double range", t);
        return STEP_ERROR;
    }

    /* commit: the new node, and [001-alg10 L9] alpha_i = alpha_hat_i = 0 for i < j */
    s->alpha[j] = alpha_j;
    s->alpha_hat[j] = alpha_hat_j;
    for (int i = 0; i < j; i++)
        s->alpha[i] = s->alpha_hat[i] = 0.0;
    *release = g;
    return STEP_OK;
}

step_status counter_step(const counter_config *config, counter_state *state, double x, noise_source *noise,
                         double *release, char *err, size_t err_size)
{
    /* [001-alg8 L4] / [001-alg10 L4] for t = 1, 2, ..., T: a step past the
     * horizon is refused before anything is drawn */
    if (state->t >= config->T) {
        snprintf(err, err_size, "input: step %" PRId64 " is past the horizon T = %" PRId64, state->t + 1,
                 config->T);
        return STEP_ERROR;
    }
    if (!within_range(x)) {
        snprintf(err, err_size, "input: must lie within +-(2^53 - 1) (MAX_STREAM_SUM) (got %.17g)", x);
        return STEP_ERROR;
    }
    int64_t t = state->t + 1;
    step_status st = config->kind == SIMPLE_COUNTER
                         ? simple_step(config, state, t, x, noise, release, err, err_size)
                         : binary_tree_step(config, state, t, x, noise, release, err, err_size);
    if (st == STEP_OK)
        state->t = t;
    return st;
}
