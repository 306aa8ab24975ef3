/* json.h - a strict JSON (RFC 8259) reader into a flat node array.
 * Numbers are kept by value (a double, plus whether that value is an integer). */
#ifndef WIN_JSON_H
#define WIN_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JS_MAX_DEPTH 64

typedef enum { JS_NULL, JS_FALSE, JS_TRUE, JS_NUM, JS_STR, JS_ARR, JS_OBJ } js_type;

typedef struct {
    js_type type;
    uint32_t count;  /* array elements / object members */
    uint32_t child;  /* first child (0: none) */
    uint32_t next;   /* next sibling (0: none) */
    uint32_t key, klen; /* member key in chars */
    uint32_t str, slen; /* string value in chars */
    double num;
    bool integral; /* finite and an integer by value */
} js_node;

typedef struct {
    js_node *n;
    uint32_t nn, capn;
    char *chars;
    size_t nc, capc;
    char err[128];
} js_doc;

/* text must be followed by a NUL byte at text[len] (strtod relies on it). */
bool js_parse(js_doc *d, const char *text, size_t len);
const js_node *js_root(const js_doc *d);
const js_node *js_get(const js_doc *d, const js_node *obj, const char *key); /* last match */
const js_node *js_first(const js_doc *d, const js_node *c);
const js_node *js_next(const js_doc *d, const js_node *v);
bool js_streq(const js_doc *d, const js_node *v, const char *s);
const char *js_key(const js_doc *d, const js_node *m);
const char *js_typename(const js_node *v);
void js_free(js_doc *d);
#endif
