#define _POSIX_C_SOURCE 200809L
#include "lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lr_init(lreader *r, int fd) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
}

static bool fill(lreader *r) {
    if (r->start > 0 && (r->start == r->end || r->start > r->cap / 2)) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scanned -= r->start;
        r->start = 0;
    }
    if (r->cap - r->end < 65536 + 1) {
        size_t nc = r->cap ? r->cap * 2 : 1 << 17;
        char *nb = realloc(r->buf, nc);
        if (!nb) return false;
        r->buf = nb;
        r->cap = nc;
    }
    ssize_t got;
    do {
        got = read(r->fd, r->buf + r->end, r->cap - r->end - 1);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return false;
    if (got == 0) r->eof = true;
    r->end += (size_t)got;
    return true;
}

ln_status lr_read(lreader *r, char **line, size_t *len) {
    for (;;) {
        char *nl = NULL;
        if (r->scanned < r->end) nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
        if (nl) {
            size_t pos = (size_t)(nl - r->buf);
            size_t s = r->start;
            r->start = r->scanned = pos + 1;
            if (r->skipping) {
                r->skipping = false;
                return LN_TOO_LONG;
            }
            *nl = 0;
            *line = r->buf + s;
            *len = pos - s;
            return LN_OK;
        }
        r->scanned = r->end;
        if (r->end - r->start > MAX_LINE) { /* drop what we have, skip to the newline */
            r->skipping = true;
            r->start = r->scanned = r->end;
        }
        if (r->eof) {
            if (r->end > r->start && !r->skipping) {
                size_t s = r->start;
                r->buf[r->end] = 0;
                *line = r->buf + s;
                *len = r->end - s;
                r->start = r->scanned = r->end;
                return LN_OK;
            }
            if (r->skipping) {
                r->skipping = false;
                return LN_TOO_LONG;
            }
            return LN_EOF;
        }
        if (!fill(r)) return LN_ERR;
    }
}
