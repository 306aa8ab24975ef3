/*
 * json.c - the strict JSON reader declared in json.h.
 *
 * Recursive descent over (pointer, end): every read checks `p < end` first, so
 * the parser never looks past the input, whatever the bytes. Recursion depth is
 * bounded by JSON_MAX_DEPTH; node and string storage grows geometrically and a
 * failed allocation is reported as an ordinary parse error.
 */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *start; /* beginning of the text (for error offsets) */
    const char *p;     /* next unread byte */
    const char *end;   /* one past the last byte */
    json_doc *doc;
    int depth;
} parser;

/* Record an error message (with the byte offset) and return false. */
static bool fail(parser *ps, const char *fmt, ...)
{
    char what[120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(ps->doc->error, sizeof ps->doc->error, "%s at byte %lu", what,
             (unsigned long)(ps->p - ps->start));
    return false;
}

/* ---- storage ------------------------------------------------------------ */

/* Append a zeroed node; its index goes to *index. Indices, not pointers, are
 * kept across calls because the array may move when it grows. */
static bool new_node(parser *ps, json_type type, uint32_t *index)
{
    json_doc *d = ps->doc;
    if (d->n_nodes == d->cap_nodes) {
        uint32_t cap = d->cap_nodes ? d->cap_nodes * 2 : 64;
        if (cap <= d->cap_nodes || cap > UINT32_MAX / 2)
            return fail(ps, "too many values");
        json_value *grown = realloc(d->nodes, (size_t)cap * sizeof *grown);
        if (!grown)
            return fail(ps, "out of memory");
        d->nodes = grown;
        d->cap_nodes = cap;
    }
    *index = d->n_nodes++;
    memset(&d->nodes[*index], 0, sizeof d->nodes[*index]);
    d->nodes[*index].type = type;
    return true;
}

/* Append n decoded string bytes. */
static bool put_chars(parser *ps, const char *bytes, size_t n)
{
    json_doc *d = ps->doc;
    if (n > (size_t)(UINT32_MAX / 2) - d->n_chars)
        return fail(ps, "string too long");
    if (d->n_chars + n > d->cap_chars) {
        size_t cap = d->cap_chars ? d->cap_chars : 256;
        while (cap < d->n_chars + n)
            cap *= 2;
        char *grown = realloc(d->chars, cap);
        if (!grown)
            return fail(ps, "out of memory");
        d->chars = grown;
        d->cap_chars = (uint32_t)cap;
    }
    memcpy(d->chars + d->n_chars, bytes, n);
    d->n_chars += (uint32_t)n;
    return true;
}

/* The decoded bytes at `off` (chars is NULL until the first string byte is
 * stored, so an empty string must not do pointer arithmetic on it). */
static const char *chars_at(const json_doc *d, uint32_t off)
{
    return d->chars ? d->chars + off : "";
}

/* Byte-wise equality of two decoded strings (memcmp must not see NULL, even for 0 bytes). */
static bool same_bytes(const char *a, const char *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* ---- lexical helpers ---------------------------------------------------- */

static void skip_whitespace(parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Consume the exact keyword (true, false, null). */
static bool expect_word(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "invalid literal (expected %s)", word);
    ps->p += n;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Read the 4 hex digits after "\u". */
static bool read_hex4(parser *ps, unsigned *code)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_digit(ps->p[i]);
        if (h < 0)
            return fail(ps, "invalid \\u escape");
        v = v * 16 + (unsigned)h;
    }
    ps->p += 4;
    *code = v;
    return true;
}

/* Append code point `cp` (<= 0x10FFFF, not a surrogate) as UTF-8. */
static bool put_utf8(parser *ps, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put_chars(ps, b, n);
}

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0 when it is not
 * well-formed (bad lead byte, bad continuation, overlong, surrogate, > U+10FFFF,
 * or truncated by `end`). Follows the table of well-formed sequences in the
 * Unicode standard (section 3.9). */
static size_t utf8_sequence_length(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates U+D800..U+DFFF */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90; /* no overlong forms */
        if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* ---- values ------------------------------------------------------------- */

static bool parse_value(parser *ps, uint32_t *index);

/* A string starting at the opening quote; decoded bytes go to doc->chars and
 * their (offset, length) to *off, *len. */
static bool parse_string(parser *ps, uint32_t *off, uint32_t *len)
{
    ps->p++; /* opening quote */
    *off = ps->doc->n_chars;
    for (;;) {
        if (ps->p >= ps->end)
            return fail(ps, "unterminated string");
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20)
            return fail(ps, "control character in string");
        if (c == '\\') {
            ps->p++;
            if (ps->p >= ps->end)
                return fail(ps, "unterminated string");
            char e = *ps->p++;
            const char *simple = NULL;
            switch (e) {
            case '"': simple = "\""; break;
            case '\\': simple = "\\"; break;
            case '/': simple = "/"; break;
            case 'b': simple = "\b"; break;
            case 'f': simple = "\f"; break;
            case 'n': simple = "\n"; break;
            case 'r': simple = "\r"; break;
            case 't': simple = "\t"; break;
            case 'u': break;
            default:
                ps->p--;
                return fail(ps, "invalid escape");
            }
            if (simple) {
                if (!put_chars(ps, simple, 1))
                    return false;
                continue;
            }
            unsigned cp;
            if (!read_hex4(ps, &cp))
                return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(ps, "lone low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* a high surrogate must be followed by an escaped low surrogate */
                unsigned low;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
                    return fail(ps, "lone high surrogate in \\u escape");
                ps->p += 2;
                if (!read_hex4(ps, &low))
                    return false;
                if (low < 0xDC00 || low > 0xDFFF)
                    return fail(ps, "high surrogate not followed by a low surrogate");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            if (!put_utf8(ps, cp))
                return false;
            continue;
        }
        /* a raw byte: ASCII, or the start of a multi-byte UTF-8 sequence */
        size_t n = utf8_sequence_length((const unsigned char *)ps->p, (const unsigned char *)ps->end);
        if (n == 0)
            return fail(ps, "invalid UTF-8 in string");
        if (!put_chars(ps, ps->p, n))
            return false;
        ps->p += n;
    }
    *len = ps->doc->n_chars - *off;
    return true;
}

static bool is_digit(const parser *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

/* A number: check the JSON grammar -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * first (strtod alone would also accept "inf", "0x10", " 1", "1." ...), then
 * convert the token with strtod. */
static bool parse_number(parser *ps, uint32_t index)
{
    const char *begin = ps->p;
    bool negative = false, integer_literal = true, fits = true;
    uint64_t magnitude = 0;

    if (*ps->p == '-') {
        negative = true;
        ps->p++;
    }
    if (!is_digit(ps))
        return fail(ps, "invalid number");
    if (*ps->p == '0') {
        ps->p++;
        if (is_digit(ps))
            return fail(ps, "leading zero in number");
    } else {
        while (is_digit(ps)) {
            unsigned d = (unsigned)(*ps->p - '0');
            if (magnitude > (UINT64_MAX - d) / 10)
                fits = false;
            else
                magnitude = magnitude * 10 + d;
            ps->p++;
        }
    }
    if (ps->p < ps->end && *ps->p == '.') {
        integer_literal = false;
        ps->p++;
        if (!is_digit(ps))
            return fail(ps, "digit expected after decimal point");
        while (is_digit(ps))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integer_literal = false;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!is_digit(ps))
            return fail(ps, "digit expected in exponent");
        while (is_digit(ps))
            ps->p++;
    }

    /* strtod needs a NUL-terminated copy; short tokens use the stack. The C
     * locale is in effect (we never call setlocale), so '.' is the decimal point. */
    size_t n = (size_t)(ps->p - begin);
    char small[64];
    char *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy)
        return fail(ps, "out of memory");
    memcpy(copy, begin, n);
    copy[n] = '\0';
    errno = 0;
    double value = strtod(copy, NULL); /* ERANGE: +-HUGE_VAL or a (sub)normal near 0, both fine */
    if (copy != small)
        free(copy);

    /* The protocol reads numbers by value: 16.0 and 1.6e1 are the integer 16 too. */
    bool integer = integer_literal;
    if (!integer_literal && isfinite(value) && value == floor(value)) {
        integer = true;
        negative = signbit(value) != 0;
        fits = fabs(value) < 18446744073709551616.0; /* 2^64 */
        magnitude = fits ? (uint64_t)fabs(value) : 0;
    }

    json_value *v = &ps->doc->nodes[index];
    v->number = value;
    v->integer_literal = integer_literal;
    v->integer = integer;
    v->negative = negative;
    v->magnitude_fits = integer && fits;
    v->magnitude = integer && fits ? magnitude : 0;
    return true;
}

/* The key of an object member and its ':' (before the member's value). Duplicate
 * keys are refused (see json.h); the member limit keeps this quadratic search
 * cheap on any input. */
static bool parse_member_key(parser *ps, uint32_t object, uint32_t count, uint32_t *key, uint32_t *key_len)
{
    skip_whitespace(ps);
    if (ps->p >= ps->end || *ps->p != '"')
        return fail(ps, "string key expected in object");
    if (!parse_string(ps, key, key_len))
        return false;
    if (count == JSON_MAX_MEMBERS)
        return fail(ps, "more than %d members in an object", JSON_MAX_MEMBERS);
    for (uint32_t m = ps->doc->nodes[object].first_child; m; m = ps->doc->nodes[m].next_sibling) {
        const json_value *mv = &ps->doc->nodes[m];
        if (mv->key_len == *key_len && same_bytes(chars_at(ps->doc, mv->key), chars_at(ps->doc, *key), *key_len))
            return fail(ps, "duplicate key in object");
    }
    skip_whitespace(ps);
    if (ps->p >= ps->end || *ps->p != ':')
        return fail(ps, "':' expected after object key");
    ps->p++;
    return true;
}

/* An array or an object, from its opening bracket: values (for an object,
 * "key": value members) separated by commas, chained as the children of node
 * `index` in order. */
static bool parse_container(parser *ps, uint32_t index, bool object)
{
    const char close = object ? '}' : ']';
    const char *what = object ? "object" : "array";
    ps->p++; /* '[' or '{' */
    uint32_t last = 0, count = 0;
    skip_whitespace(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        uint32_t key = 0, key_len = 0, child;
        if (object && !parse_member_key(ps, index, count, &key, &key_len))
            return false;
        if (!parse_value(ps, &child))
            return false;
        ps->doc->nodes[child].key = key;
        ps->doc->nodes[child].key_len = key_len;
        if (last)
            ps->doc->nodes[last].next_sibling = child;
        else
            ps->doc->nodes[index].first_child = child;
        last = child;
        count++;
        skip_whitespace(ps);
        if (ps->p >= ps->end)
            return fail(ps, "unterminated %s", what);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            break;
        }
        return fail(ps, "',' or '%c' expected in %s", close, what);
    }
    ps->doc->nodes[index].count = count;
    return true;
}

static bool parse_value(parser *ps, uint32_t *index)
{
    skip_whitespace(ps);
    if (ps->p >= ps->end)
        return fail(ps, "value expected");
    char c = *ps->p;
    json_type type;
    switch (c) {
    case '{': type = JSON_OBJECT; break;
    case '[': type = JSON_ARRAY; break;
    case '"': type = JSON_STRING; break;
    case 't': type = JSON_TRUE; break;
    case 'f': type = JSON_FALSE; break;
    case 'n': type = JSON_NULL; break;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            type = JSON_NUMBER;
            break;
        }
        return fail(ps, "unexpected character");
    }
    if (!new_node(ps, type, index))
        return false;
    switch (type) {
    case JSON_OBJECT:
    case JSON_ARRAY: {
        if (ps->depth >= JSON_MAX_DEPTH)
            return fail(ps, "nesting deeper than %d", JSON_MAX_DEPTH);
        ps->depth++;
        bool ok = parse_container(ps, *index, type == JSON_OBJECT);
        ps->depth--;
        return ok;
    }
    case JSON_STRING: {
        uint32_t off, len;
        if (!parse_string(ps, &off, &len))
            return false;
        ps->doc->nodes[*index].str = off;
        ps->doc->nodes[*index].str_len = len;
        return true;
    }
    case JSON_TRUE: return expect_word(ps, "true");
    case JSON_FALSE: return expect_word(ps, "false");
    case JSON_NULL: return expect_word(ps, "null");
    case JSON_NUMBER: return parse_number(ps, *index);
    }
    return fail(ps, "unexpected character");
}

/* ---- public interface --------------------------------------------------- */

bool json_parse(json_doc *doc, const char *text, size_t len)
{
    parser ps = {text, text, text + len, doc, 0};
    doc->n_nodes = 0;
    doc->n_chars = 0;
    doc->error[0] = '\0';
    if (len > UINT32_MAX / 2) /* node and string offsets are 32-bit */
        return fail(&ps, "text too long");
    uint32_t root;
    if (!parse_value(&ps, &root))
        return false;
    skip_whitespace(&ps);
    if (ps.p != ps.end)
        return fail(&ps, "unexpected data after the JSON value");
    return true;
}

void json_free(json_doc *doc)
{
    free(doc->nodes);
    free(doc->chars);
    memset(doc, 0, sizeof *doc);
}

const json_value *json_root(const json_doc *doc)
{
    return doc->n_nodes ? &doc->nodes[0] : NULL;
}

const json_value *json_first(const json_doc *doc, const json_value *container)
{
    if (container->type != JSON_ARRAY && container->type != JSON_OBJECT)
        return NULL;
    return container->first_child ? &doc->nodes[container->first_child] : NULL;
}

const json_value *json_next(const json_doc *doc, const json_value *v)
{
    return v->next_sibling ? &doc->nodes[v->next_sibling] : NULL;
}

const json_value *json_get(const json_doc *doc, const json_value *obj, const char *key)
{
    if (obj->type != JSON_OBJECT)
        return NULL;
    size_t n = strlen(key);
    for (const json_value *m = json_first(doc, obj); m; m = json_next(doc, m))
        if (m->key_len == n && same_bytes(chars_at(doc, m->key), key, n))
            return m;
    return NULL;
}

bool json_string_is(const json_doc *doc, const json_value *v, const char *s)
{
    size_t n = strlen(s);
    return v->type == JSON_STRING && v->str_len == n && same_bytes(chars_at(doc, v->str), s, n);
}

const char *json_string_bytes(const json_doc *doc, const json_value *v)
{
    return chars_at(doc, v->str);
}

const char *json_key_bytes(const json_doc *doc, const json_value *member)
{
    return chars_at(doc, member->key);
}

const char *json_type_name(json_type type)
{
    switch (type) {
    case JSON_NULL: return "null";
    case JSON_FALSE: return "false";
    case JSON_TRUE: return "true";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    }
    return "an unknown value";
}

void json_describe(const json_doc *doc, const json_value *v, char *buf, size_t size)
{
    if (v->type == JSON_NUMBER) {
        if (v->integer_literal && v->magnitude_fits)
            snprintf(buf, size, "%s%" PRIu64, v->negative && v->magnitude ? "-" : "", v->magnitude);
        else if (!isfinite(v->number))
            snprintf(buf, size, "a number beyond the double range");
        else
            snprintf(buf, size, "%.17g", v->number);
        return;
    }
    if (v->type == JSON_STRING && v->str_len <= 32) {
        const char *s = json_string_bytes(doc, v);
        bool printable = true;
        for (uint32_t i = 0; i < v->str_len; i++)
            if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E)
                printable = false;
        if (printable) {
            snprintf(buf, size, "the string \"%.*s\"", (int)v->str_len, s);
            return;
        }
    }
    snprintf(buf, size, "%s", json_type_name(v->type));
}
