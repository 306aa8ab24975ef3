/*
 * counters.h - the two counters of paper 001 (Appendix D) behind the protocol:
 *
 *   001-alg8   Simple counter:      g(t) = g(t-1) + f(t) + Lap(1/epsilon)
 *   001-alg10  Binary tree counter: noisy p-sums of dyadic intervals, Lap(b) each,
 *              b = bit_length(T)/epsilon (corrected; erratum E-counters-1), or the
 *              printed b = log2(T)/epsilon when compiled with -DAS_PRINTED=1.
 *
 * Parameters: {"epsilon": finite number > 0, "T": integer >= 1} (the horizon; a
 * step past T is an error; optional for 001-alg8). Inputs: finite numbers f(t)
 * with |f(t)| <= 2^53 - 1, and (001-alg10) every p-sum within +-(2^53 - 1).
 */
#ifndef DPSTREAM_COUNTERS_H
#define DPSTREAM_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "noise.h"

/* What the hello answer announces. */
extern const char *const IMPLEMENTATION_NAME;
extern const char *const COUNTER_ANCHORS[];
extern const size_t COUNTER_ANCHOR_COUNT;

typedef enum { SIMPLE_COUNTER, BINARY_TREE_COUNTER } counter_kind;

/* A validated initialisation: which counter, its parameters, its noise scale. */
typedef struct {
    counter_kind kind;
    double epsilon;
    int64_t T;    /* horizon: steps t = 1..T (INT64_MAX: none) */
    double scale; /* Laplace scale of every draw */
} counter_config;

/* The state between steps (both counters share one struct to keep it simple). */
typedef struct {
    int64_t t;            /* steps taken so far */
    double g;             /* Simple: g(t) */
    double alpha[64];     /* Binary tree: p-sums alpha_i (bit i of t; t < 2^63) */
    double alpha_hat[64]; /* Binary tree: their noisy versions alpha_hat_i */
} counter_state;

/* Check `algorithm` (a string value) and `params` (an object) of an init
 * message and fill *out. On failure returns false with a message in err. */
bool counter_configure(const json_doc *doc, const json_value *algorithm, const json_value *params,
                       counter_config *out, char *err, size_t err_size);

/* The empty state g(0) = 0, all alpha = 0 (printed lines 001-alg8 L3, 001-alg10 L3). */
void counter_reset(counter_state *state);

/* One step with input f(t) = x (a finite number, checked by the caller):
 * checks the horizon, draws, computes into locals, and changes *state only
 * when everything succeeded (an error leaves the counter as it was). */
typedef enum { STEP_OK, STEP_ERROR, STEP_EOF } step_status;
step_status counter_step(const counter_config *config, counter_state *state, double x, noise_source *noise,
                         double *release, char *err, size_t err_size);

#endif
