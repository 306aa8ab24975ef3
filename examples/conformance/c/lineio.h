/*
 * lineio.h - read JSON Lines from a pipe without ever waiting for more than one line.
 *
 * Why not fread or fgets? fread(buf, 1, 65536, stdin) keeps reading until it has
 * 65536 bytes or end of input: on a pipe it would sit waiting for requests the
 * harness will only send after it has read our answer (deadlock). fgets returns
 * after one line but cannot report NUL bytes inside a line. So we call read(2)
 * ourselves: it returns whatever bytes are available (at least one), we cut them
 * into lines with memchr, and keep the rest for the next call. A harness may
 * write many requests ahead ("pipelining"); they simply wait in our buffer or in
 * the pipe, and we answer them one by one, in order.
 */
#ifndef DPSTREAM_LINEIO_H
#define DPSTREAM_LINEIO_H

#include <stdbool.h>
#include <stddef.h>

/* Longest accepted line, in bytes (without the newline). A `run` message of
 * T = 16 inputs is ~400 bytes; 1 MiB holds ~50000 inputs. Longer lines are
 * consumed and refused (LINE_TOO_LONG) so one bad line cannot exhaust memory. */
#ifndef MAX_LINE_BYTES
#define MAX_LINE_BYTES (1u << 20)
#endif

typedef enum {
    LINE_OK,       /* a line (without its '\n') is in *line, *len */
    LINE_TOO_LONG, /* a line longer than MAX_LINE_BYTES was skipped */
    LINE_EOF,      /* end of input, nothing left */
    LINE_ERROR     /* read(2) failed or out of memory (errno says why) */
} line_status;

typedef struct {
    int fd;
    char *buf;
    size_t cap;        /* allocated bytes */
    size_t start, end; /* unread bytes are buf[start, end) */
    size_t scanned;    /* buf[start, scanned) is known to hold no '\n' */
    bool eof;          /* read(2) returned 0 */
} line_reader;

/* A reader on file descriptor fd (0 for stdin). */
void line_reader_init(line_reader *r, int fd);
void line_reader_free(line_reader *r);

/* Next line. On LINE_OK the bytes at *line stay valid until the next call.
 * A last line without a final '\n' is returned as a line. A '\r' before the
 * '\n' is left in the line (JSON treats it as whitespace). */
line_status line_read(line_reader *r, const char **line, size_t *len);

#endif
