/* lines.h - JSON Lines from a pipe: read(2) whatever is there, cut at '\n',
 * never wait for more than the next line (the harness may be waiting for us). */
#ifndef WIN_LINES_H
#define WIN_LINES_H
#include <stdbool.h>
#include <stddef.h>

#define MAX_LINE ((size_t)64 << 20) /* 64 MiB, as the reference */

typedef enum { LN_OK, LN_TOO_LONG, LN_EOF, LN_ERR } ln_status;

typedef struct {
    int fd;
    char *buf;
    size_t cap, start, end, scanned;
    bool eof, skipping;
} lreader;

void lr_init(lreader *r, int fd);
/* On LN_OK, *line (NUL-terminated at line[len]) stays valid until the next call. */
ln_status lr_read(lreader *r, char **line, size_t *len);
#endif
