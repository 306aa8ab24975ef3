/*
 * json.h - a small, strict JSON reader for the dpstream conformance protocol.
 *
 * The protocol's messages are single-line JSON objects of a few shapes (objects,
 * strings, numbers, true/false/null, arrays of numbers). This reader parses any
 * JSON text (RFC 8259) into a flat array of nodes, with these deliberate limits:
 *
 *   - nesting deeper than JSON_MAX_DEPTH is an error (no unbounded recursion),
 *     and so is an object with more than JSON_MAX_MEMBERS members;
 *   - a duplicate key inside one object is an error (RFC 8259 leaves it open;
 *     for a test protocol, guessing which copy was meant is worse than refusing);
 *   - strings must be valid UTF-8, and \u escapes must not be lone surrogates,
 *     so everything decoded can be written back out as valid JSON;
 *   - it never reads outside the given bytes (the text need not end with NUL
 *     and may contain NUL bytes, which are simply invalid JSON).
 *
 * Numbers are converted to the nearest double (strtod; out-of-range literals
 * become +-inf, which callers reject as "not finite"). A number whose value is
 * an integer is recorded as an integer with its exact magnitude (when it fits in
 * 64 bits): "T": 16, 16.0 and 1.6e1 are all the integer 16, since the protocol
 * compares JSON numbers by value (docs/conformance.md, "JSON numbers"); a literal
 * written without fraction or exponent keeps its exact digits beyond 2^53.
 *
 * Decoded nodes do not point into the input text: the caller may reuse or free
 * the text as soon as json_parse returns.
 */
#ifndef DPSTREAM_JSON_H
#define DPSTREAM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 32    /* protocol messages nest 3 deep */
#define JSON_MAX_MEMBERS 256 /* protocol objects have at most 5 members */

typedef enum {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

/* One parsed value. Children of arrays and objects are chained through
 * `first_child` / `next_sibling` (node indices; 0 means "none": node 0 is the
 * root and can never be a child). */
typedef struct {
    json_type type;
    uint32_t count;        /* JSON_ARRAY, JSON_OBJECT: number of elements / members */
    uint32_t first_child;
    uint32_t next_sibling;
    uint32_t key, key_len; /* for a member of an object: its key (offset, length in doc->chars) */
    uint32_t str, str_len; /* JSON_STRING: decoded bytes (offset, length in doc->chars) */
    double number;         /* JSON_NUMBER: nearest double, possibly +-inf */
    bool integer_literal;  /* JSON_NUMBER written as -?digits (no '.', no exponent) */
    bool integer;          /* JSON_NUMBER whose value is an integer (16, 16.0, 1.6e1) */
    bool negative;         /* integer: has a leading '-' (or is -0.0) */
    bool magnitude_fits;   /* integer: |value| <= UINT64_MAX */
    uint64_t magnitude;    /* integer: |value| when magnitude_fits */
} json_value;

/* A parsed document. Zero-initialise it once, reuse it for many json_parse
 * calls (its buffers grow as needed), release it with json_free. */
typedef struct {
    json_value *nodes; /* nodes[0] is the root after a successful parse */
    uint32_t n_nodes, cap_nodes;
    char *chars; /* decoded string bytes (keys and values), not NUL-terminated */
    uint32_t n_chars, cap_chars;
    char error[160]; /* why the last json_parse failed */
} json_doc;

/* Parse `len` bytes at `text` as one JSON value (surrounding whitespace allowed).
 * Returns true on success; on failure doc->error says what and where. */
bool json_parse(json_doc *doc, const char *text, size_t len);

void json_free(json_doc *doc);

/* The root value of a successfully parsed document. */
const json_value *json_root(const json_doc *doc);

/* Member `key` (NUL-terminated) of object `obj`, or NULL when absent. */
const json_value *json_get(const json_doc *doc, const json_value *obj, const char *key);

/* The next element of an array / member of an object after `v` (NULL at the end),
 * and the first one of `container`. */
const json_value *json_first(const json_doc *doc, const json_value *container);
const json_value *json_next(const json_doc *doc, const json_value *v);

/* True when string value `v` equals the NUL-terminated `s` (byte for byte). */
bool json_string_is(const json_doc *doc, const json_value *v, const char *s);

/* The decoded bytes of a string value, or of the key of an object member. */
const char *json_string_bytes(const json_doc *doc, const json_value *v);
const char *json_key_bytes(const json_doc *doc, const json_value *member);

/* "null", "a string", "an array", ... for error messages. */
const char *json_type_name(json_type type);

/* A short description of `v` for an error message ("got ..."): the number
 * itself, a short printable-ASCII string in quotes, or the type name. */
void json_describe(const json_doc *doc, const json_value *v, char *buf, size_t size);

#endif
