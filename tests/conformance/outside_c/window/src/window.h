/* window.h - 002-alg1, the fixed time window synthesizer (docs/longitudinal.md). */
#ifndef WIN_WINDOW_H
#define WIN_WINDOW_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "lines.h"
#include "rng.h"
#include "sbuf.h"

#define MAX_K 24                    /* 2^24 bins: larger windows are refused at init */
#define MAX_RECORDS ((int64_t)1 << 27) /* synthetic records this program holds */

typedef enum { NM_TAPE, NM_OWN, NM_TRANSCRIPT } noise_mode;
typedef enum { F_NONE, F_VAR225, F_VAR3, F_NOISELESS, F_OWNRNG } fault_t;

typedef struct {
    int64_t T, n_pad;
    int k;
    double rho, sigma2;      /* sigma2 = (T - k + 1)/rho, the stated variance */
    double sigma2_used;      /* the variance actually sampled / requested (faults) */
    uint32_t nbins, nz, mask;
    char *sbits, *zbits;     /* site labels: k (k-1) characters + NUL each */
    int sstride, zstride;
} wparams;

typedef struct {
    noise_mode mode;
    fault_t fault;
    rng_t rng;
    lreader *in;       /* tape: answers */
    js_doc *ans;
    sbuf *draws;       /* transcript: draw objects of the current step/run, comma separated */
    int ndraws;
    bool eof;          /* tape: input ended while waiting */
    char err[320];
} noise_ctx;

typedef struct {
    int64_t t, n, m;
    bool failed;
    int64_t fail_t;
    uint32_t *tw; /* true window codes, n */
    uint32_t *sw; /* synthetic window codes, m */
    int64_t *p;   /* p^{t} (nbins) once t >= k */
    size_t tw_cap, sw_cap;
} wstate;

typedef enum { ST_OK, ST_ERR, ST_FAIL, ST_EOF } step_status;

bool wparams_init(wparams *w, int64_t T, int k, double rho, int64_t n_pad, fault_t fault, char *err,
                  size_t errsz);
void wparams_free(wparams *w);
void wstate_reset(wstate *s, const wparams *w);
void wstate_free(wstate *s);
/* One round with column x (n entries, already validated against s->n). Appends the
 * release to out. ST_ERR: nothing changed (ctx->err); ST_FAIL: the padding ran out,
 * the run is over (ctx->err); ST_EOF: input ended during a tape draw. */
step_status wstep(const wparams *w, wstate *s, const unsigned char *x, int64_t n, noise_ctx *ctx,
                  sbuf *out);
#endif
