#include "sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_reserve(sbuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra + 1) nc *= 2;
    char *nd = realloc(b->d, nc);
    if (!nd) {
        fputs("window: out of memory\n", stderr);
        exit(70);
    }
    b->d = nd;
    b->cap = nc;
}

void sb_put(sbuf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    memcpy(b->d + b->len, s, n);
    b->len += n;
    b->d[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_putc(sbuf *b, char c) {
    sb_reserve(b, 1);
    b->d[b->len++] = c;
    b->d[b->len] = 0;
}

void sb_int(sbuf *b, int64_t v) {
    char tmp[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    sb_put(b, tmp + i, (size_t)(24 - i));
}

void sb_double(sbuf *b, double x) {
    char tmp[40];
    /* shortest of %.15g .. %.17g that reads back exactly */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, x);
        if (strtod(tmp, NULL) == x) break;
    }
    sb_puts(b, tmp);
}

void sb_jstr(sbuf *b, const char *s, size_t n) {
    sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            sb_puts(b, e);
        } else {
            sb_putc(b, (char)c);
        }
    }
    sb_putc(b, '"');
}

void sb_free(sbuf *b) {
    free(b->d);
    b->d = NULL;
    b->len = b->cap = 0;
}
