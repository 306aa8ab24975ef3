/*
 * lineio.c - the line reader declared in lineio.h (POSIX read(2)).
 */
#define _POSIX_C_SOURCE 200809L

#include "lineio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { READ_CHUNK = 1 << 16 };

void line_reader_init(line_reader *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
}

void line_reader_free(line_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

/* Make room for READ_CHUNK more bytes after `end`: first move the unread bytes
 * to the front, then grow the buffer if that is not enough. */
static bool make_room(line_reader *r)
{
    if (r->start > 0) {
        size_t unread = r->end - r->start;
        memmove(r->buf, r->buf + r->start, unread);
        r->scanned -= r->start;
        r->start = 0;
        r->end = unread;
    }
    if (r->cap - r->end >= READ_CHUNK)
        return true;
    size_t cap = r->cap ? r->cap * 2 : 2 * READ_CHUNK;
    char *grown = realloc(r->buf, cap);
    if (!grown)
        return false;
    r->buf = grown;
    r->cap = cap;
    return true;
}

/* One read(2): however many bytes are available now (blocks only when none is). */
static bool fill(line_reader *r)
{
    if (!make_room(r))
        return false;
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (n > 0) {
            r->end += (size_t)n;
            return true;
        }
        if (n == 0) {
            r->eof = true;
            return true;
        }
        if (errno != EINTR)
            return false;
    }
}

line_status line_read(line_reader *r, const char **line, size_t *len)
{
    bool skipping = false; /* inside a too-long line: drop bytes up to its '\n' */
    for (;;) {
        char *nl = r->scanned < r->end ? memchr(r->buf + r->scanned, '\n', r->end - r->scanned) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->start));
            *line = r->buf + r->start;
            *len = n;
            r->start = r->scanned = (size_t)(nl - r->buf) + 1;
            if (skipping || n > MAX_LINE_BYTES)
                return LINE_TOO_LONG;
            return LINE_OK;
        }
        r->scanned = r->end;
        if (r->end - r->start > MAX_LINE_BYTES) {
            /* too long already: forget what we have, keep reading to the '\n' */
            skipping = true;
            r->start = r->scanned = r->end = 0;
        }
        if (r->eof) {
            if (r->start == r->end && !skipping)
                return LINE_EOF;
            *line = r->buf + r->start;
            *len = r->end - r->start;
            r->start = r->scanned = r->end;
            return skipping ? LINE_TOO_LONG : LINE_OK;
        }
        if (!fill(r))
            return LINE_ERROR;
    }
}
