#include "window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- scratch (grown as needed, shared by every run) ---------- */

static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(p, nc * elem);
    if (!q) {
        fputs("window: out of memory\n", stderr);
        exit(70);
    }
    *cap = nc;
    return q;
}

static int64_t *g_C, *g_chat, *g_newp, *g_cnt, *g_off;
static size_t c_C, c_chat, c_newp, c_cnt, c_off;
static uint32_t *g_order;
static size_t c_order;
static unsigned char *g_bits, *g_sel;
static size_t c_bits, c_sel;
static sbuf g_req;

/* ---------- parameters ---------- */

bool wparams_init(wparams *w, int64_t T, int k, double rho, int64_t n_pad, fault_t fault, char *err,
                  size_t errsz) {
    memset(w, 0, sizeof *w);
    if (k > MAX_K) {
        snprintf(err, errsz, "k: this implementation holds windows of at most %d reports (2^k bins) (got %d)",
                 MAX_K, k);
        return false;
    }
    double sigma2 = (double)(T - k + 1) / rho;
    if (!(sigma2 > 0) || !isfinite(sigma2)) {
        snprintf(err, errsz, "rho: gives a noise sigma2 of %g, which must be finite and > 0 (got %.17g)", sigma2,
                 rho);
        return false;
    }
    if (sigma2 > 1e30) {
        snprintf(err, errsz, "rho: gives a noise sigma2 of %g, above 1e30 (discrete_gaussian draws) (got %.17g)",
                 sigma2, rho);
        return false;
    }
    if (((int64_t)1 << k) > MAX_RECORDS / (n_pad > 0 ? n_pad : 1)) {
        snprintf(err, errsz,
                 "n_pad: 2^k * n_pad synthetic records exceed what this implementation holds (2^27) (got %lld)",
                 (long long)n_pad);
        return false;
    }
    w->T = T;
    w->k = k;
    w->rho = rho;
    w->n_pad = n_pad;
    w->sigma2 = sigma2;
    w->sigma2_used = fault == F_VAR225 ? sigma2 / 2.25 : fault == F_VAR3 ? sigma2 / 3.0 : sigma2;
    w->nbins = (uint32_t)1 << k;
    w->nz = (uint32_t)1 << (k - 1);
    w->mask = w->nbins - 1;
    w->sstride = k + 1;
    w->zstride = k > 1 ? k : 2;
    w->sbits = malloc((size_t)w->nbins * (size_t)w->sstride);
    w->zbits = malloc((size_t)w->nz * (size_t)w->zstride);
    if (!w->sbits || !w->zbits) exit(70);
    for (uint32_t s = 0; s < w->nbins; s++) {
        char *o = w->sbits + (size_t)s * (size_t)w->sstride;
        for (int j = 0; j < k; j++) o[j] = (char)('0' + ((s >> (k - 1 - j)) & 1));
        o[k] = 0;
    }
    for (uint32_t z = 0; z < w->nz; z++) {
        char *o = w->zbits + (size_t)z * (size_t)w->zstride;
        if (k == 1) {
            o[0] = '-';
            o[1] = 0;
        } else {
            for (int j = 0; j < k - 1; j++) o[j] = (char)('0' + ((z >> (k - 2 - j)) & 1));
            o[k - 1] = 0;
        }
    }
    return true;
}

void wparams_free(wparams *w) {
    free(w->sbits);
    free(w->zbits);
    w->sbits = w->zbits = NULL;
}

static const char *sb_of(const wparams *w, uint32_t s) { return w->sbits + (size_t)s * (size_t)w->sstride; }
static const char *zb_of(const wparams *w, uint32_t z) { return w->zbits + (size_t)z * (size_t)w->zstride; }

void wstate_reset(wstate *s, const wparams *w) {
    s->t = 0;
    s->n = -1;
    s->m = 0;
    s->failed = false;
    s->fail_t = 0;
    free(s->p);
    s->p = calloc(w->nbins ? w->nbins : 1, sizeof *s->p);
    if (!s->p) exit(70);
}

void wstate_free(wstate *s) {
    free(s->tw);
    free(s->sw);
    free(s->p);
    memset(s, 0, sizeof *s);
}

/* ---------- draws ---------- */

static void site_u(sbuf *b, const char *line, int64_t t, const char *var, const char *bits) {
    sb_puts(b, "002-alg1 ");
    sb_puts(b, line);
    sb_puts(b, " t=");
    sb_int(b, t);
    sb_putc(b, ' ');
    sb_puts(b, var);
    sb_putc(b, '=');
    sb_puts(b, bits);
}

static void draw_head(sbuf *b, const char *line, int64_t t, const char *var, const char *bits, const char *kind) {
    sb_puts(b, "{\"site\":\"");
    site_u(b, line, t, var, bits);
    sb_puts(b, "\",\"kind\":\"");
    sb_puts(b, kind);
    sb_puts(b, "\",\"params\":");
}

/* tape: send the request in g_req (a draw object without value), read {"value":V} */
static step_status tape_ask(noise_ctx *ctx, const js_node **val) {
    fputs("{\"draw\":", stdout);
    fwrite(g_req.d, 1, g_req.len, stdout);
    fputs("}}\n", stdout);
    fflush(stdout);
    char *line;
    size_t len;
    ln_status st = lr_read(ctx->in, &line, &len);
    if (st == LN_EOF || st == LN_ERR) {
        ctx->eof = true;
        snprintf(ctx->err, sizeof ctx->err, "input ended while waiting for a draw value");
        return ST_EOF;
    }
    if (st == LN_TOO_LONG) {
        snprintf(ctx->err, sizeof ctx->err, "draw answer: line too long");
        return ST_ERR;
    }
    if (!js_parse(ctx->ans, line, len)) {
        snprintf(ctx->err, sizeof ctx->err, "draw answer: %s", ctx->ans->err);
        return ST_ERR;
    }
    const js_node *root = js_root(ctx->ans);
    const js_node *v = js_get(ctx->ans, root, "value");
    if (root->type != JS_OBJ || !v) {
        snprintf(ctx->err, sizeof ctx->err, "draw answer: expected {\"value\": ...}");
        return ST_ERR;
    }
    *val = v;
    return ST_OK;
}

static step_status draw_dg(const wparams *w, noise_ctx *ctx, int64_t t, uint32_t s, int64_t *out) {
    bool silent = ctx->fault == F_NOISELESS && t == w->k;
    if (ctx->mode == NM_TAPE) {
        g_req.len = 0;
        draw_head(&g_req, "u3", t, "s", sb_of(w, s), "discrete_gaussian");
        sb_puts(&g_req, "{\"sigma2\":");
        sb_double(&g_req, w->sigma2_used);
        sb_putc(&g_req, '}');
        const js_node *v;
        step_status st = tape_ask(ctx, &v);
        if (st != ST_OK) return st;
        if (v->type != JS_NUM || !v->integral || fabs(v->num) > 9007199254740991.0) {
            snprintf(ctx->err, sizeof ctx->err,
                     "draw answer: a discrete_gaussian value must be an integer within +-(2^53 - 1) (got %s)",
                     js_typename(v));
            return ST_ERR;
        }
        *out = silent ? 0 : (int64_t)v->num;
        return ST_OK;
    }
    int64_t z = silent ? 0 : rng_dgauss(&ctx->rng, w->sigma2_used);
    *out = z;
    if (ctx->mode == NM_TRANSCRIPT) {
        sbuf *b = ctx->draws;
        if (ctx->ndraws++) sb_putc(b, ',');
        draw_head(b, "u3", t, "s", sb_of(w, s), "discrete_gaussian");
        sb_puts(b, "{\"sigma2\":");
        sb_double(b, w->sigma2_used);
        sb_puts(b, "},\"value\":");
        sb_int(b, z);
        sb_putc(b, '}');
    }
    return ST_OK;
}

static step_status draw_coin(const wparams *w, noise_ctx *ctx, int64_t t, uint32_t z, bool *out) {
    if (ctx->mode == NM_TAPE) {
        g_req.len = 0;
        draw_head(&g_req, "u11", t, "z", zb_of(w, z), "coin");
        sb_puts(&g_req, "{}");
        const js_node *v;
        step_status st = tape_ask(ctx, &v);
        if (st != ST_OK) return st;
        if (v->type != JS_TRUE && v->type != JS_FALSE) {
            snprintf(ctx->err, sizeof ctx->err, "draw answer: a coin value must be a boolean (got %s)",
                     js_typename(v));
            return ST_ERR;
        }
        *out = v->type == JS_TRUE;
        return ST_OK;
    }
    bool c = rng_coin(&ctx->rng);
    *out = c;
    if (ctx->mode == NM_TRANSCRIPT) {
        sbuf *b = ctx->draws;
        if (ctx->ndraws++) sb_putc(b, ',');
        draw_head(b, "u11", t, "z", zb_of(w, z), "coin");
        sb_puts(b, c ? "{},\"value\":true}" : "{},\"value\":false}");
    }
    return ST_OK;
}

/* sel[0..n-1]: 1 for the chosen positions of I_z */
static step_status draw_choice(const wparams *w, noise_ctx *ctx, int64_t t, uint32_t z, int64_t n, int64_t k,
                               unsigned char *sel) {
    if (ctx->mode == NM_TAPE) {
        g_req.len = 0;
        draw_head(&g_req, "u16", t, "z", zb_of(w, z), "choice");
        sb_puts(&g_req, "{\"n\":");
        sb_int(&g_req, n);
        sb_puts(&g_req, ",\"k\":");
        sb_int(&g_req, k);
        sb_putc(&g_req, '}');
        const js_node *v;
        step_status st = tape_ask(ctx, &v);
        if (st != ST_OK) return st;
        if (v->type != JS_ARR || (int64_t)v->count != k) {
            snprintf(ctx->err, sizeof ctx->err, "draw answer: a choice value must be a list of k = %lld indices",
                     (long long)k);
            return ST_ERR;
        }
        memset(sel, 0, (size_t)n);
        double prev = -1;
        for (const js_node *e = js_first(ctx->ans, v); e; e = js_next(ctx->ans, e)) {
            if (e->type != JS_NUM || !e->integral || e->num <= prev || e->num >= (double)n) {
                snprintf(ctx->err, sizeof ctx->err,
                         "draw answer: a choice value must be increasing integers in [0, n = %lld)", (long long)n);
                return ST_ERR;
            }
            prev = e->num;
            sel[(int64_t)e->num] = 1;
        }
        return ST_OK;
    }
    rng_choice(&ctx->rng, n, k, sel);
    if (ctx->mode == NM_TRANSCRIPT) {
        sbuf *b = ctx->draws;
        if (ctx->ndraws++) sb_putc(b, ',');
        draw_head(b, "u16", t, "z", zb_of(w, z), "choice");
        sb_puts(b, "{\"n\":");
        sb_int(b, n);
        sb_puts(b, ",\"k\":");
        sb_int(b, k);
        sb_puts(b, "},\"value\":[");
        bool first = true;
        for (int64_t i = 0; i < n; i++)
            if (sel[i]) {
                if (!first) sb_putc(b, ',');
                first = false;
                sb_int(b, i);
            }
        sb_puts(b, "]}");
    }
    return ST_OK;
}

/* ---------- one round ---------- */

static void write_p(sbuf *out, const int64_t *p, uint32_t nbins) {
    sb_puts(out, "{\"p\":[");
    for (uint32_t s = 0; s < nbins; s++) {
        if (s) sb_putc(out, ',');
        sb_int(out, p[s]);
    }
    sb_puts(out, "],\"columns\":[");
}

static void write_bits(sbuf *out, const unsigned char *bits, int64_t m) {
    sb_reserve(out, (size_t)m * 2 + 2);
    char *o = out->d + out->len;
    *o++ = '[';
    for (int64_t i = 0; i < m; i++) {
        if (i) *o++ = ',';
        *o++ = (char)('0' + bits[i]);
    }
    *o++ = ']';
    out->len = (size_t)(o - out->d);
    out->d[out->len] = 0;
}

static void commit_true(wstate *s, const wparams *w, const unsigned char *x, int64_t n) {
    if (s->n < 0) {
        s->tw = grow(s->tw, &s->tw_cap, (size_t)(n ? n : 1), sizeof *s->tw);
        memset(s->tw, 0, (size_t)(n ? n : 1) * sizeof *s->tw);
        s->n = n;
    }
    for (int64_t i = 0; i < n; i++) s->tw[i] = ((s->tw[i] << 1) | x[i]) & w->mask;
}

static step_status padding_fail(const wparams *w, wstate *s, noise_ctx *ctx, int64_t t, uint32_t bin,
                                int64_t value) {
    snprintf(ctx->err, sizeof ctx->err,
             "padding exhausted at t=%lld: target count for s=%s is %lld < 0 (n_pad=%lld); nothing of round t "
             "was released and the synthesizer stops",
             (long long)t, sb_of(w, bin), (long long)value, (long long)w->n_pad);
    s->failed = true;
    s->fail_t = t;
    return ST_FAIL;
}

step_status wstep(const wparams *w, wstate *s, const unsigned char *x, int64_t n, noise_ctx *ctx, sbuf *out) {
    const int64_t t = s->t + 1;
    const uint32_t nb = w->nbins, nz = w->nz;
    if (t < w->k) {
        commit_true(s, w, x, n);
        s->t = t;
        sb_puts(out, "null");
        return ST_OK;
    }
    g_C = grow(g_C, &c_C, nb, sizeof *g_C);
    g_chat = grow(g_chat, &c_chat, nb, sizeof *g_chat);
    g_newp = grow(g_newp, &c_newp, nb, sizeof *g_newp);
    memset(g_C, 0, nb * sizeof *g_C);
    for (int64_t i = 0; i < n; i++) {
        uint32_t old = s->n < 0 ? 0 : s->tw[i];
        g_C[((old << 1) | x[i]) & w->mask]++;
    }
    /* u3: one discrete Gaussian per bin */
    for (uint32_t b = 0; b < nb; b++) {
        int64_t v;
        step_status st = draw_dg(w, ctx, t, b, &v);
        if (st != ST_OK) return st;
        g_chat[b] = g_C[b] + w->n_pad + v;
    }
    if (t == w->k) {
        /* u5: p = C^; u6: records laid out by pattern, increasing code */
        int64_t m = 0;
        for (uint32_t b = 0; b < nb; b++)
            if (g_chat[b] < 0) return padding_fail(w, s, ctx, t, b, g_chat[b]);
        for (uint32_t b = 0; b < nb; b++) {
            m += g_chat[b];
            if (m > MAX_RECORDS) {
                snprintf(ctx->err, sizeof ctx->err,
                         "too many synthetic records at t=%lld (more than 2^27, this implementation's limit); "
                         "the synthesizer stops",
                         (long long)t);
                s->failed = true;
                s->fail_t = t;
                return ST_FAIL;
            }
        }
        s->sw = grow(s->sw, &s->sw_cap, (size_t)(m ? m : 1), sizeof *s->sw);
        int64_t i = 0;
        for (uint32_t b = 0; b < nb; b++)
            for (int64_t j = 0; j < g_chat[b]; j++) s->sw[i++] = b;
        s->m = m;
        memcpy(s->p, g_chat, nb * sizeof *g_chat);
        write_p(out, s->p, nb);
        g_bits = grow(g_bits, &c_bits, (size_t)(m ? m : 1), 1);
        for (int j = 0; j < w->k; j++) {
            int shift = w->k - 1 - j;
            for (int64_t r = 0; r < m; r++) g_bits[r] = (unsigned char)((s->sw[r] >> shift) & 1);
            if (j) sb_putc(out, ',');
            write_bits(out, g_bits, m);
        }
        sb_puts(out, "]}");
        commit_true(s, w, x, n);
        s->t = t;
        return ST_OK;
    }
    /* u8-u12: Delta_z and the coins */
    for (uint32_t z = 0; z < nz; z++) {
        int64_t N = s->p[z] + s->p[z + nz]; /* p_{0z} + p_{1z} */
        int64_t d = N - g_chat[2 * z] - g_chat[2 * z + 1]; /* 2 Delta_z */
        int64_t b2 = 0;
        if (d & 1) {
            bool c;
            step_status st = draw_coin(w, ctx, t, z, &c);
            if (st != ST_OK) return st;
            b2 = c ? 1 : -1;
        }
        g_newp[2 * z] = g_chat[2 * z] + (d + b2) / 2;
        g_newp[2 * z + 1] = g_chat[2 * z + 1] + (d - b2) / 2;
    }
    for (uint32_t b = 0; b < nb; b++)
        if (g_newp[b] < 0) return padding_fail(w, s, ctx, t, b, g_newp[b]);
    /* u16-u17: I_z = synthetic records ending in z, in index order */
    const int64_t m = s->m;
    const uint32_t zmask = nz - 1;
    g_cnt = grow(g_cnt, &c_cnt, nz, sizeof *g_cnt);
    g_off = grow(g_off, &c_off, nz, sizeof *g_off);
    g_order = grow(g_order, &c_order, (size_t)(m ? m : 1), sizeof *g_order);
    g_bits = grow(g_bits, &c_bits, (size_t)(m ? m : 1), 1);
    g_sel = grow(g_sel, &c_sel, (size_t)(m ? m : 1), 1);
    memset(g_cnt, 0, nz * sizeof *g_cnt);
    for (int64_t i = 0; i < m; i++) g_cnt[s->sw[i] & zmask]++;
    int64_t acc = 0;
    for (uint32_t z = 0; z < nz; z++) {
        g_off[z] = acc;
        acc += g_cnt[z];
    }
    for (int64_t i = 0; i < m; i++) g_order[g_off[s->sw[i] & zmask]++] = (uint32_t)i;
    acc = 0;
    for (uint32_t z = 0; z < nz; z++) {
        int64_t nI = g_cnt[z], kk = g_newp[2 * z + 1];
        if (kk > nI) { /* cannot happen: p_{z0} + p_{z1} = |I_z| and both >= 0 */
            snprintf(ctx->err, sizeof ctx->err, "internal error: k = %lld > n = %lld at z=%s", (long long)kk,
                     (long long)nI, zb_of(w, z));
            return ST_ERR;
        }
        step_status st = draw_choice(w, ctx, t, z, nI, kk, g_sel);
        if (st != ST_OK) return st;
        for (int64_t j = 0; j < nI; j++) g_bits[g_order[acc + j]] = g_sel[j];
        acc += nI;
    }
    memcpy(s->p, g_newp, nb * sizeof *g_newp);
    write_p(out, s->p, nb);
    write_bits(out, g_bits, m);
    sb_puts(out, "]}");
    for (int64_t i = 0; i < m; i++) s->sw[i] = ((s->sw[i] << 1) | g_bits[i]) & w->mask;
    commit_true(s, w, x, n);
    s->t = t;
    return ST_OK;
}
