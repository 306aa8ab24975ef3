/* sbuf.h - a growable byte buffer for building answer lines. */
#ifndef WIN_SBUF_H
#define WIN_SBUF_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *d;
    size_t len, cap;
} sbuf;

void sb_reserve(sbuf *b, size_t extra);
void sb_put(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_putc(sbuf *b, char c);
void sb_int(sbuf *b, int64_t v);
void sb_double(sbuf *b, double x);
void sb_jstr(sbuf *b, const char *s, size_t n); /* JSON string literal */
void sb_free(sbuf *b);
#endif
