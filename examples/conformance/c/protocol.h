/*
 * protocol.h - writing protocol answers (shared by the message loop and the noise source).
 *
 * Every answer is one line of JSON followed by '\n' and fflush: the harness
 * reads line by line and may be waiting for exactly this line.
 */
#ifndef DPSTREAM_PROTOCOL_H
#define DPSTREAM_PROTOCOL_H

#include <stddef.h>
#include <stdio.h>

/* Write `len` bytes as a JSON string literal (quotes, backslashes and control
 * characters escaped; other bytes copied, so pass valid UTF-8). */
void write_json_string(FILE *out, const char *bytes, size_t len);

/* Write a finite double with 17 significant digits (enough to round-trip any
 * double exactly, e.g. 0.10000000000000001). A non-finite value has no JSON
 * form; callers never pass one (it is written as null, defensively). */
void write_json_number(FILE *out, double x);

#endif
