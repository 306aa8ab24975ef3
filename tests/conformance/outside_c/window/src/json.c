#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    js_doc *d;
    const unsigned char *s;
    size_t len, pos;
} parser;

static bool fail(parser *p, const char *what) {
    snprintf(p->d->err, sizeof p->d->err, "invalid JSON: %s at byte %zu", what, p->pos);
    return false;
}

static uint32_t new_node(parser *p, js_type t) {
    js_doc *d = p->d;
    if (d->nn == d->capn) {
        uint32_t nc = d->capn ? d->capn * 2 : 64;
        js_node *nn = realloc(d->n, (size_t)nc * sizeof *nn);
        if (!nn) {
            fputs("window: out of memory\n", stderr);
            exit(70);
        }
        d->n = nn;
        d->capn = nc;
    }
    js_node *v = &d->n[d->nn];
    memset(v, 0, sizeof *v);
    v->type = t;
    return d->nn++;
}

static void put_char(parser *p, char c) {
    js_doc *d = p->d;
    if (d->nc == d->capc) {
        size_t nc = d->capc ? d->capc * 2 : 256;
        char *x = realloc(d->chars, nc);
        if (!x) {
            fputs("window: out of memory\n", stderr);
            exit(70);
        }
        d->chars = x;
        d->capc = nc;
    }
    d->chars[d->nc++] = c;
}

static void ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->pos++;
        else
            break;
    }
}

static void put_utf8(parser *p, uint32_t cp) {
    if (cp < 0x80) {
        put_char(p, (char)cp);
    } else if (cp < 0x800) {
        put_char(p, (char)(0xC0 | (cp >> 6)));
        put_char(p, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        put_char(p, (char)(0xE0 | (cp >> 12)));
        put_char(p, (char)(0x80 | ((cp >> 6) & 0x3F)));
        put_char(p, (char)(0x80 | (cp & 0x3F)));
    } else {
        put_char(p, (char)(0xF0 | (cp >> 18)));
        put_char(p, (char)(0x80 | ((cp >> 12) & 0x3F)));
        put_char(p, (char)(0x80 | ((cp >> 6) & 0x3F)));
        put_char(p, (char)(0x80 | (cp & 0x3F)));
    }
}

static int hex4(parser *p, uint32_t *out) {
    if (p->pos + 4 > p->len) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    p->pos += 4;
    *out = v;
    return 1;
}

/* parse a string at p->pos (on the opening quote); decoded bytes appended to chars */
static bool parse_string(parser *p, uint32_t *off, uint32_t *slen) {
    p->pos++;
    size_t start = p->d->nc;
    for (;;) {
        if (p->pos >= p->len) return fail(p, "unterminated string");
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) return fail(p, "control character in string");
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->len) return fail(p, "unterminated escape");
            unsigned char e = p->s[p->pos++];
            switch (e) {
            case '"': put_char(p, '"'); break;
            case '\\': put_char(p, '\\'); break;
            case '/': put_char(p, '/'); break;
            case 'b': put_char(p, '\b'); break;
            case 'f': put_char(p, '\f'); break;
            case 'n': put_char(p, '\n'); break;
            case 'r': put_char(p, '\r'); break;
            case 't': put_char(p, '\t'); break;
            case 'u': {
                uint32_t cp;
                if (!hex4(p, &cp)) return fail(p, "bad \\u escape");
                if (cp >= 0xD800 && cp < 0xDC00) {
                    uint32_t lo;
                    if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return fail(p, "lone surrogate");
                    p->pos += 2;
                    if (!hex4(p, &lo) || lo < 0xDC00 || lo >= 0xE000) return fail(p, "lone surrogate");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    return fail(p, "lone surrogate");
                }
                put_utf8(p, cp);
                break;
            }
            default: return fail(p, "bad escape");
            }
            continue;
        }
        /* UTF-8 validation of a raw sequence */
        size_t need;
        uint32_t cp, min;
        if (c < 0x80) {
            put_char(p, (char)c);
            p->pos++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1; cp = c & 0x1F; min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2; cp = c & 0x0F; min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3; cp = c & 0x07; min = 0x10000;
        } else {
            return fail(p, "invalid UTF-8");
        }
        if (p->pos + need >= p->len) return fail(p, "invalid UTF-8");
        for (size_t i = 1; i <= need; i++) {
            unsigned char cc = p->s[p->pos + i];
            if ((cc & 0xC0) != 0x80) return fail(p, "invalid UTF-8");
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return fail(p, "invalid UTF-8");
        for (size_t i = 0; i <= need; i++) put_char(p, (char)p->s[p->pos + i]);
        p->pos += need + 1;
    }
    if (p->d->nc - start > UINT32_MAX) return fail(p, "string too long");
    *off = (uint32_t)start;
    *slen = (uint32_t)(p->d->nc - start);
    return true;
}

static bool parse_value(parser *p, uint32_t *out, int depth);

static bool parse_number(parser *p, uint32_t *out) {
    size_t st = p->pos;
    const unsigned char *s = p->s;
    if (p->pos < p->len && s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len) return fail(p, "bad number");
    if (s[p->pos] == '0') {
        p->pos++;
    } else if (s[p->pos] >= '1' && s[p->pos] <= '9') {
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    } else {
        return fail(p, "bad number");
    }
    if (p->pos < p->len && s[p->pos] == '.') {
        p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9') return fail(p, "bad number");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9') return fail(p, "bad number");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
    }
    /* strtod on a bounded copy (the token is validated above) */
    size_t n = p->pos - st;
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) exit(70);
    memcpy(buf, s + st, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    uint32_t id = new_node(p, JS_NUM);
    p->d->n[id].num = v;
    p->d->n[id].integral = isfinite(v) && v == floor(v);
    *out = id;
    return true;
}

static bool lit(parser *p, const char *w) {
    size_t n = strlen(w);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, w, n) != 0) return false;
    p->pos += n;
    return true;
}

static bool parse_value(parser *p, uint32_t *out, int depth) {
    if (depth > JS_MAX_DEPTH) return fail(p, "nesting too deep");
    ws(p);
    if (p->pos >= p->len) return fail(p, "unexpected end");
    unsigned char c = p->s[p->pos];
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        uint32_t id = new_node(p, obj ? JS_OBJ : JS_ARR);
        p->pos++;
        ws(p);
        uint32_t last = 0, count = 0;
        if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
            p->pos++;
            *out = id;
            return true;
        }
        for (;;) {
            uint32_t koff = 0, klen = 0, child;
            if (obj) {
                ws(p);
                if (p->pos >= p->len || p->s[p->pos] != '"') return fail(p, "expected a key");
                if (!parse_string(p, &koff, &klen)) return false;
                ws(p);
                if (p->pos >= p->len || p->s[p->pos] != ':') return fail(p, "expected ':'");
                p->pos++;
            }
            if (!parse_value(p, &child, depth + 1)) return false;
            p->d->n[child].key = koff;
            p->d->n[child].klen = klen;
            if (last) p->d->n[last].next = child;
            else p->d->n[id].child = child;
            last = child;
            count++;
            ws(p);
            if (p->pos >= p->len) return fail(p, "unexpected end");
            if (p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->s[p->pos] == (obj ? '}' : ']')) {
                p->pos++;
                break;
            }
            return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        p->d->n[id].count = count;
        *out = id;
        return true;
    }
    if (c == '"') {
        uint32_t off, l;
        if (!parse_string(p, &off, &l)) return false;
        uint32_t id = new_node(p, JS_STR);
        p->d->n[id].str = off;
        p->d->n[id].slen = l;
        *out = id;
        return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, out);
    if (lit(p, "true")) { *out = new_node(p, JS_TRUE); return true; }
    if (lit(p, "false")) { *out = new_node(p, JS_FALSE); return true; }
    if (lit(p, "null")) { *out = new_node(p, JS_NULL); return true; }
    return fail(p, "unexpected character (NaN and Infinity are not JSON)");
}

bool js_parse(js_doc *d, const char *text, size_t len) {
    parser p = {d, (const unsigned char *)text, len, 0};
    d->nn = 0;
    d->nc = 0;
    d->err[0] = 0;
    uint32_t root;
    /* node 0 must be the root: parse_value allocates the root first */
    if (!parse_value(&p, &root, 0)) return false;
    ws(&p);
    if (p.pos != len) return fail(&p, "trailing characters");
    return true;
}

const js_node *js_root(const js_doc *d) { return &d->n[0]; }

const js_node *js_first(const js_doc *d, const js_node *c) { return c->child ? &d->n[c->child] : NULL; }

const js_node *js_next(const js_doc *d, const js_node *v) { return v->next ? &d->n[v->next] : NULL; }

const js_node *js_get(const js_doc *d, const js_node *obj, const char *key) {
    if (!obj || obj->type != JS_OBJ) return NULL;
    size_t kl = strlen(key);
    const js_node *found = NULL;
    for (const js_node *m = js_first(d, obj); m; m = js_next(d, m))
        if (m->klen == kl && memcmp(d->chars + m->key, key, kl) == 0) found = m;
    return found;
}

bool js_streq(const js_doc *d, const js_node *v, const char *s) {
    size_t l = strlen(s);
    return v && v->type == JS_STR && v->slen == l && memcmp(d->chars + v->str, s, l) == 0;
}

const char *js_key(const js_doc *d, const js_node *m) { return d->chars + m->key; }

const char *js_typename(const js_node *v) {
    switch (v->type) {
    case JS_NULL: return "null";
    case JS_FALSE:
    case JS_TRUE: return "a boolean";
    case JS_NUM: return "a number";
    case JS_STR: return "a string";
    case JS_ARR: return "an array";
    default: return "an object";
    }
}

void js_free(js_doc *d) {
    free(d->n);
    free(d->chars);
    memset(d, 0, sizeof *d);
}
