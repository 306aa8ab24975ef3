/* main.c - the dpstream conformance protocol v1 loop for 002-alg1 (docs/conformance.md).
 *
 *   window [FAULT]     FAULT: none (default), variance/2.25, variance/3, noiseless, own-rng
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lines.h"
#include "rng.h"
#include "sbuf.h"
#include "window.h"

static lreader g_in;
static js_doc g_doc, g_ans;
static sbuf g_out, g_draws, g_rel;
static noise_ctx g_ctx;
static wparams g_w;
static wstate g_step, g_run;
static bool g_ready;
static fault_t g_fault = F_NONE;
static unsigned char *g_cols;
static size_t g_cols_cap;

static void send(void) {
    sb_putc(&g_out, '\n');
    fwrite(g_out.d, 1, g_out.len, stdout);
    fflush(stdout);
    g_out.len = 0;
}

static void send_error(const char *msg) {
    g_out.len = 0;
    sb_puts(&g_out, "{\"error\":");
    sb_jstr(&g_out, msg, strlen(msg));
    sb_putc(&g_out, '}');
    send();
}

static void describe(const js_node *v, char *buf, size_t sz) {
    if (v->type == JS_NUM) snprintf(buf, sz, "%.17g", v->num);
    else snprintf(buf, sz, "%s", js_typename(v));
}

/* an integer parameter by value: 16, 16.0 and 1.6e1 are 16 */
static bool int_param(const js_node *v, const char *name, int64_t lo, int64_t hi, int64_t *out, char *err,
                      size_t esz) {
    char got[64];
    if (!v) {
        snprintf(err, esz, "%s: is required", name);
        return false;
    }
    describe(v, got, sizeof got);
    if (v->type != JS_NUM || !v->integral) {
        snprintf(err, esz, "%s: must be an integer (got %s)", name, got);
        return false;
    }
    if (v->num < (double)lo || v->num > (double)hi) {
        snprintf(err, esz, "%s: must be an integer in [%lld, %lld] (got %s)", name, (long long)lo, (long long)hi,
                 got);
        return false;
    }
    *out = (int64_t)v->num;
    return true;
}

#define INT_MAX_ACCEPTED 4611686018427387904LL /* 2^62 */

static void op_init(const js_node *root) {
    char err[320];
    const js_node *alg = js_get(&g_doc, root, "algorithm");
    const js_node *params = js_get(&g_doc, root, "params");
    const js_node *noise = js_get(&g_doc, root, "noise");
    const js_node *seedv = js_get(&g_doc, root, "seed");
    if (g_ready) {
        wparams_free(&g_w);
        g_ready = false; /* a refused init forgets the earlier run */
    }
    if (!alg || alg->type != JS_STR) return send_error("init: algorithm must be a string");
    if (!js_streq(&g_doc, alg, "002-alg1")) return send_error("init: unknown algorithm (this program serves 002-alg1)");
    noise_mode mode;
    if (js_streq(&g_doc, noise, "tape")) mode = NM_TAPE;
    else if (js_streq(&g_doc, noise, "own")) mode = NM_OWN;
    else if (js_streq(&g_doc, noise, "transcript")) mode = NM_TRANSCRIPT;
    else return send_error("init: noise must be \"tape\", \"own\" or \"transcript\"");
    int64_t seed;
    if (!int_param(seedv, "seed", 0, INT_MAX_ACCEPTED, &seed, err, sizeof err)) return send_error(err);
    if (!params || params->type != JS_OBJ) return send_error("params: must be an object");
    for (const js_node *m = js_first(&g_doc, params); m; m = js_next(&g_doc, m)) {
        const char *key = js_key(&g_doc, m);
        bool known = (m->klen == 1 && (key[0] == 'T' || key[0] == 'k')) || (m->klen == 3 && !memcmp(key, "rho", 3)) ||
                     (m->klen == 5 && !memcmp(key, "n_pad", 5));
        if (!known) {
            sbuf b = {0};
            sb_puts(&b, "params: unknown parameter ");
            sb_jstr(&b, key, m->klen);
            sb_puts(&b, " (002-alg1 takes T, k, rho, n_pad)");
            send_error(b.d);
            sb_free(&b);
            return;
        }
    }
    int64_t T, k, n_pad;
    if (!int_param(js_get(&g_doc, params, "T"), "T", 1, INT_MAX_ACCEPTED, &T, err, sizeof err)) return send_error(err);
    if (!int_param(js_get(&g_doc, params, "k"), "k", 1, INT_MAX_ACCEPTED, &k, err, sizeof err)) return send_error(err);
    if (k > T) {
        snprintf(err, sizeof err, "k: must satisfy k <= T = %lld (got %lld)", (long long)T, (long long)k);
        return send_error(err);
    }
    const js_node *rv = js_get(&g_doc, params, "rho");
    if (!rv) return send_error("rho: is required");
    if (rv->type != JS_NUM) {
        snprintf(err, sizeof err, "rho: must be a number (got %s)", js_typename(rv));
        return send_error(err);
    }
    if (!isfinite(rv->num) || !(rv->num > 0)) {
        snprintf(err, sizeof err, "rho: must be finite and > 0 (got %.17g)", rv->num);
        return send_error(err);
    }
    if (!int_param(js_get(&g_doc, params, "n_pad"), "n_pad", 0, INT_MAX_ACCEPTED, &n_pad, err, sizeof err))
        return send_error(err);
    if (k > MAX_K) {
        snprintf(err, sizeof err, "k: this implementation holds windows of at most %d reports (got %lld)", MAX_K,
                 (long long)k);
        return send_error(err);
    }
    if (!wparams_init(&g_w, T, (int)k, rv->num, n_pad, g_fault, err, sizeof err)) return send_error(err);
    g_ctx.mode = mode;
    g_ctx.fault = g_fault;
    rng_seed(&g_ctx.rng, g_fault == F_OWNRNG ? 1 : 0, (uint64_t)seed);
    wstate_reset(&g_step, &g_w);
    g_ready = true;
    g_out.len = 0;
    sb_puts(&g_out, "{\"ok\":true}");
    send();
}

/* one column: an array of 0/1 numbers; n < 0: not fixed yet */
static bool read_column(const js_node *v, int64_t n, unsigned char *dst, char *err, size_t esz) {
    if (v->type != JS_ARR) {
        snprintf(err, esz, "D^t: a column is a JSON array of 0/1 reports (got %s)", js_typename(v));
        return false;
    }
    if (n >= 0 && (int64_t)v->count != n) {
        snprintf(err, esz, "D^t: must have length n = %lld (n is fixed by the first column) (got %u)", (long long)n,
                 v->count);
        return false;
    }
    int64_t i = 0;
    for (const js_node *e = js_first(&g_doc, v); e; e = js_next(&g_doc, e), i++) {
        if (e->type != JS_NUM) {
            snprintf(err, esz, "D^t[%lld]: reports are JSON numbers 0 or 1 (got %s)", (long long)i, js_typename(e));
            return false;
        }
        if (!(e->num == 0 || e->num == 1)) {
            snprintf(err, esz, "D^t[%lld]: reports must be 0 or 1 (got %.17g)", (long long)i, e->num);
            return false;
        }
        dst[i] = e->num == 1;
    }
    return true;
}

static void op_step(const js_node *root) {
    char err[320];
    if (!g_ready) return send_error("step before a successful init");
    if (g_step.failed) {
        snprintf(err, sizeof err, "the synthesizer failed at t=%lld (padding exhausted); init again",
                 (long long)g_step.fail_t);
        return send_error(err);
    }
    const js_node *in = js_get(&g_doc, root, "input");
    if (!in) return send_error("step: input is required");
    if (g_step.t >= g_w.T) {
        snprintf(err, sizeof err, "t: cannot step past the horizon T = %lld (got %lld)", (long long)g_w.T,
                 (long long)g_step.t + 1);
        return send_error(err);
    }
    size_t need = in->type == JS_ARR && in->count ? in->count : 1;
    if (need > g_cols_cap) {
        g_cols = realloc(g_cols, need);
        if (!g_cols) exit(70);
        g_cols_cap = need;
    }
    if (!read_column(in, g_step.n, g_cols, err, sizeof err)) return send_error(err);
    int64_t n = in->count;
    g_rel.len = 0;
    g_draws.len = 0;
    g_ctx.draws = &g_draws;
    g_ctx.ndraws = 0;
    step_status st = wstep(&g_w, &g_step, g_cols, n, &g_ctx, &g_rel);
    if (st == ST_EOF) exit(0);
    if (st != ST_OK) return send_error(g_ctx.err);
    g_out.len = 0;
    sb_puts(&g_out, "{\"release\":");
    sb_put(&g_out, g_rel.d, g_rel.len);
    if (g_ctx.mode == NM_TRANSCRIPT) {
        sb_puts(&g_out, ",\"draws\":[");
        sb_put(&g_out, g_draws.d, g_draws.len);
        sb_putc(&g_out, ']');
    }
    sb_putc(&g_out, '}');
    send();
}

/* run (count < 0) and runs (count >= 1) */
static void op_run(const js_node *root, bool bulk) {
    char err[320];
    if (!g_ready) return send_error(bulk ? "runs before a successful init" : "run before a successful init");
    const js_node *inputs = js_get(&g_doc, root, "inputs");
    if (!inputs || inputs->type != JS_ARR) return send_error("inputs: must be an array of columns");
    int64_t count = 1;
    if (bulk) {
        if (g_ctx.mode == NM_TAPE) return send_error("runs: not served in tape mode (own and transcript only)");
        if (!int_param(js_get(&g_doc, root, "count"), "count", 1, 1000000, &count, err, sizeof err))
            return send_error(err);
    }
    int64_t steps = inputs->count;
    if (steps > g_w.T) {
        snprintf(err, sizeof err, "inputs: %lld columns is more than the horizon T = %lld", (long long)steps,
                 (long long)g_w.T);
        return send_error(err);
    }
    /* validate every column before any draw */
    int64_t n = -1;
    const js_node *c = js_first(&g_doc, inputs);
    if (c && c->type == JS_ARR) n = c->count;
    size_t need = (size_t)(steps * (n > 0 ? n : 0)) + 1;
    if (need > g_cols_cap) {
        g_cols = realloc(g_cols, need);
        if (!g_cols) exit(70);
        g_cols_cap = need;
    }
    int64_t t = 0;
    for (c = js_first(&g_doc, inputs); c; c = js_next(&g_doc, c), t++) {
        if (!read_column(c, n, g_cols + t * (n > 0 ? n : 0), err, sizeof err)) {
            char e2[400];
            snprintf(e2, sizeof e2, "inputs[%lld]: %s", (long long)t, err);
            return send_error(e2);
        }
    }
    g_out.len = 0;
    g_draws.len = 0;
    g_ctx.draws = &g_draws;
    sbuf alld = {0};
    sb_puts(&g_out, bulk ? "{\"runs\":[" : "{\"releases\":");
    for (int64_t r = 0; r < count; r++) {
        if (r) sb_putc(&g_out, ',');
        sb_putc(&g_out, '[');
        wstate_reset(&g_run, &g_w);
        g_draws.len = 0;
        g_ctx.ndraws = 0;
        for (int64_t j = 0; j < steps; j++) {
            if (j) sb_putc(&g_out, ',');
            step_status st = wstep(&g_w, &g_run, g_cols + j * (n > 0 ? n : 0), n, &g_ctx, &g_out);
            if (st == ST_EOF) exit(0);
            if (st != ST_OK) {
                sb_free(&alld);
                return send_error(g_ctx.err);
            }
        }
        sb_putc(&g_out, ']');
        if (g_ctx.mode == NM_TRANSCRIPT) {
            if (r) sb_putc(&alld, ',');
            if (bulk) sb_putc(&alld, '[');
            sb_put(&alld, g_draws.d ? g_draws.d : "", g_draws.len);
            if (bulk) sb_putc(&alld, ']');
        }
    }
    if (bulk) sb_putc(&g_out, ']');
    if (g_ctx.mode == NM_TRANSCRIPT) {
        sb_puts(&g_out, ",\"draws\":[");
        sb_put(&g_out, alld.d ? alld.d : "", alld.len);
        sb_putc(&g_out, ']');
    }
    sb_putc(&g_out, '}');
    sb_free(&alld);
    send();
}

static void op_hello(void) {
    g_out.len = 0;
    sb_puts(&g_out,
            "{\"protocol\":1,\"implementation\":\"outside C 002-alg1 (tests/conformance/outside_c/window)\","
            "\"algorithms\":[\"002-alg1\"],\"modes\":[\"tape\",\"own\",\"transcript\"],\"ops\":[\"runs\"]}");
    send();
}

int main(int argc, char **argv) {
    if (argc > 2) {
        fputs("usage: window [none|variance/2.25|variance/3|noiseless|own-rng]\n", stderr);
        return 2;
    }
    if (argc == 2) {
        const char *f = argv[1];
        if (!strcmp(f, "none")) g_fault = F_NONE;
        else if (!strcmp(f, "variance/2.25")) g_fault = F_VAR225;
        else if (!strcmp(f, "variance/3")) g_fault = F_VAR3;
        else if (!strcmp(f, "noiseless")) g_fault = F_NOISELESS;
        else if (!strcmp(f, "own-rng")) g_fault = F_OWNRNG;
        else {
            fprintf(stderr, "window: unknown fault '%s'\n", f);
            return 2;
        }
    }
    lr_init(&g_in, 0);
    g_ctx.in = &g_in;
    g_ctx.ans = &g_ans;
    for (;;) {
        char *line;
        size_t len;
        ln_status st = lr_read(&g_in, &line, &len);
        if (st == LN_EOF) return 0;
        if (st == LN_ERR) {
            perror("window: read");
            return 1;
        }
        if (st == LN_TOO_LONG) {
            send_error("line longer than 64 MiB (skipped)");
            continue;
        }
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
        if (i == len) {
            send_error("empty line: one JSON object per line");
            continue;
        }
        if (!js_parse(&g_doc, line, len)) {
            send_error(g_doc.err);
            continue;
        }
        const js_node *root = js_root(&g_doc);
        if (root->type != JS_OBJ) {
            send_error("a request must be a JSON object");
            continue;
        }
        const js_node *op = js_get(&g_doc, root, "op");
        if (!op || op->type != JS_STR) {
            send_error("a request needs a string \"op\"");
            continue;
        }
        if (js_streq(&g_doc, op, "hello")) op_hello();
        else if (js_streq(&g_doc, op, "init")) op_init(root);
        else if (js_streq(&g_doc, op, "step")) op_step(root);
        else if (js_streq(&g_doc, op, "run")) op_run(root, false);
        else if (js_streq(&g_doc, op, "runs")) op_run(root, true);
        else send_error("unknown op (hello, init, step, run, runs)");
    }
}
