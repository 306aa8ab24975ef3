/*
 * protocol.c - the message loop of the dpstream conformance protocol, version 1
 * (docs/conformance.md): read one JSON object per line on stdin, answer one line on
 * stdout (plus draw requests in tape mode), until stdin ends; then exit 0.
 *
 *   {"op":"hello"}                    -> {"protocol":1,"implementation":...,"algorithms":[...],"modes":[...]}
 *   {"op":"init","algorithm":A,"params":{...},"noise":"tape"|"own","seed":S} -> {"ok":true}
 *   {"op":"step","input":X}           -> [draw requests] {"release":G}
 *   {"op":"run","inputs":[X,...]}     -> [draw requests] {"releases":[G,...]}
 *   anything else                     -> {"error":MESSAGE}
 *
 * Rules kept here for every message:
 *   - every request line gets exactly one final answer line (even an empty or
 *     unparsable line), so a harness that writes ahead can match answers to
 *     requests by counting;
 *   - everything is validated before the first draw, and an error changes
 *     nothing: the next message sees the state as it was before the bad one;
 *   - messages have exactly the keys listed above (an unknown key is an error,
 *     not silently ignored).
 */
#include "protocol.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "json.h"
#include "lineio.h"
#include "noise.h"

/* ---- writing answers ------------------------------------------------------ */

void write_json_string(FILE *out, const char *bytes, size_t len)
{
    putc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
        } else if (c == '\n') {
            fputs("\\n", out);
        } else if (c < 0x20 || c == 0x7F) {
            fprintf(out, "\\u%04x", c);
        } else {
            putc(c, out);
        }
    }
    putc('"', out);
}

void write_json_number(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, "%.17g", x);
    else
        fputs("null", out);
}

/* {"error":MESSAGE} with a printf-style message. */
static void reply_error(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fputs("{\"error\":", stdout);
    write_json_string(stdout, message, strlen(message));
    fputs("}\n", stdout);
    fflush(stdout);
}

/* ---- the session ------------------------------------------------------------ */

typedef struct {
    bool ready;            /* an init has succeeded */
    counter_config config; /* from the last successful init */
    counter_state state;   /* the stream of `step` messages */
    noise_source noise;
    double *inputs, *releases; /* scratch arrays for `run` */
    size_t run_cap;
} session;

typedef enum { KEEP_GOING, END_OF_INPUT } loop_status;

/* True when every key of object `msg` is one of the NULL-terminated `allowed`;
 * otherwise answers an error naming the first unknown key (when printable). */
static bool only_keys(const json_doc *doc, const json_value *msg, const char *const *allowed)
{
    for (const json_value *m = json_first(doc, msg); m; m = json_next(doc, m)) {
        bool known = false;
        for (const char *const *a = allowed; *a; a++)
            if (m->key_len == strlen(*a) && memcmp(json_key_bytes(doc, m), *a, m->key_len) == 0)
                known = true;
        if (!known) {
            const char *key = json_key_bytes(doc, m);
            bool printable = m->key_len <= 32;
            for (uint32_t i = 0; printable && i < m->key_len; i++)
                printable = (unsigned char)key[i] >= 0x20 && (unsigned char)key[i] <= 0x7E;
            if (printable)
                reply_error("unknown key \"%.*s\" in this message", (int)m->key_len, key);
            else
                reply_error("unknown key in this message");
            return false;
        }
    }
    return true;
}

/* An input f(t): a finite JSON number. `where` names it in the error. */
static bool input_value(const json_doc *doc, const json_value *v, const char *where, double *x)
{
    if (v->type != JSON_NUMBER || !isfinite(v->number)) {
        char got[96];
        json_describe(doc, v, got, sizeof got);
        reply_error("%s: must be a finite number (got %s)", where, got);
        return false;
    }
    *x = v->number;
    return true;
}

static void op_hello(const json_doc *doc, const json_value *msg)
{
    static const char *const keys[] = {"op", NULL};
    if (!only_keys(doc, msg, keys))
        return;
    fputs("{\"protocol\":1,\"implementation\":", stdout);
    write_json_string(stdout, IMPLEMENTATION_NAME, strlen(IMPLEMENTATION_NAME));
    fputs(",\"algorithms\":[", stdout);
    for (size_t i = 0; i < COUNTER_ANCHOR_COUNT; i++) {
        if (i)
            putc(',', stdout);
        write_json_string(stdout, COUNTER_ANCHORS[i], strlen(COUNTER_ANCHORS[i]));
    }
    fputs("],\"modes\":[\"tape\",\"own\"],\"version\":\"1\"}\n", stdout);
    fflush(stdout);
}

static void op_init(session *s, const json_doc *doc, const json_value *msg)
{
    static const char *const keys[] = {"op", "algorithm", "params", "noise", "seed", NULL};
    if (!only_keys(doc, msg, keys))
        return;
    const json_value *algorithm = json_get(doc, msg, "algorithm");
    const json_value *params = json_get(doc, msg, "params");
    const json_value *mode = json_get(doc, msg, "noise");
    const json_value *seed = json_get(doc, msg, "seed");
    if (!algorithm || !params || !mode || !seed) {
        reply_error("init needs the keys algorithm, params, noise and seed");
        return;
    }
    char err[256];
    counter_config config;
    if (!counter_configure(doc, algorithm, params, &config, err, sizeof err)) {
        reply_error("%s", err);
        return;
    }
    noise_mode noise;
    if (json_string_is(doc, mode, "tape"))
        noise = NOISE_TAPE;
    else if (json_string_is(doc, mode, "own"))
        noise = NOISE_OWN;
    else {
        reply_error("noise: must be \"tape\" or \"own\"");
        return;
    }
    /* the seed: an integer 0 <= seed < 2^64 (present in both modes; used in own mode) */
    if (seed->type != JSON_NUMBER || !seed->integer || !seed->magnitude_fits ||
        (seed->negative && seed->magnitude != 0)) {
        char got[96];
        json_describe(doc, seed, got, sizeof got);
        reply_error("seed: must be an integer >= 0 and < 2^64 (got %s)", got);
        return;
    }

    /* everything is valid: only now forget the previous run */
    s->ready = true;
    s->config = config;
    counter_reset(&s->state);
    s->noise.mode = noise;
    if (noise == NOISE_OWN)
        noise_seed(&s->noise, seed->magnitude);
    fputs("{\"ok\":true}\n", stdout);
    fflush(stdout);
}

/* step and run: the message's keys are known and an init has succeeded (else an error is answered). */
static bool ready_for(const session *s, const json_doc *doc, const json_value *msg, const char *const *keys,
                      const char *op)
{
    if (!only_keys(doc, msg, keys))
        return false;
    if (!s->ready) {
        reply_error("%s before a successful init", op);
        return false;
    }
    return true;
}

static loop_status op_step(session *s, const json_doc *doc, const json_value *msg)
{
    static const char *const keys[] = {"op", "input", NULL};
    if (!ready_for(s, doc, msg, keys, "step"))
        return KEEP_GOING;
    const json_value *input = json_get(doc, msg, "input");
    if (!input) {
        reply_error("step needs the key input");
        return KEEP_GOING;
    }
    double x;
    if (!input_value(doc, input, "input", &x))
        return KEEP_GOING;
    double g;
    char err[256];
    switch (counter_step(&s->config, &s->state, x, &s->noise, &g, err, sizeof err)) {
    case STEP_OK: break;
    case STEP_ERROR: reply_error("%s", err); return KEEP_GOING;
    case STEP_EOF: return END_OF_INPUT;
    }
    fputs("{\"release\":", stdout);
    write_json_number(stdout, g);
    fputs("}\n", stdout);
    fflush(stdout);
    return KEEP_GOING;
}

static loop_status op_run(session *s, const json_doc *doc, const json_value *msg)
{
    static const char *const keys[] = {"op", "inputs", NULL};
    if (!ready_for(s, doc, msg, keys, "run"))
        return KEEP_GOING;
    const json_value *inputs = json_get(doc, msg, "inputs");
    if (!inputs || inputs->type != JSON_ARRAY) {
        reply_error("inputs: must be an array of finite numbers");
        return KEEP_GOING;
    }
    /* validate every input, and the length against the horizon, before any draw */
    size_t n = inputs->count;
    if ((uint64_t)n > (uint64_t)s->config.T) {
        reply_error("inputs: %zu inputs are more than the horizon T = %" PRId64, n, s->config.T);
        return KEEP_GOING;
    }
    if (n > s->run_cap) {
        double *in = realloc(s->inputs, n * sizeof *in);
        if (in)
            s->inputs = in;
        double *out = in ? realloc(s->releases, n * sizeof *out) : NULL;
        if (out)
            s->releases = out;
        if (!in || !out) {
            reply_error("out of memory for %zu inputs", n);
            return KEEP_GOING;
        }
        s->run_cap = n;
    }
    size_t i = 0;
    for (const json_value *v = json_first(doc, inputs); v; v = json_next(doc, v), i++) {
        char where[48];
        snprintf(where, sizeof where, "inputs[%zu]", i);
        if (!input_value(doc, v, where, &s->inputs[i]))
            return KEEP_GOING;
    }

    /* a fresh copy of the initialised counter; the generator goes on (not reseeded) */
    counter_state state;
    counter_reset(&state);
    char err[256];
    for (i = 0; i < n; i++) {
        switch (counter_step(&s->config, &state, s->inputs[i], &s->noise, &s->releases[i], err, sizeof err)) {
        case STEP_OK: break;
        case STEP_ERROR: reply_error("%s", err); return KEEP_GOING;
        case STEP_EOF: return END_OF_INPUT;
        }
    }
    fputs("{\"releases\":[", stdout);
    for (i = 0; i < n; i++) {
        if (i)
            putc(',', stdout);
        write_json_number(stdout, s->releases[i]);
    }
    fputs("]}\n", stdout);
    fflush(stdout);
    return KEEP_GOING;
}

/* One request line. */
static loop_status handle(session *s, json_doc *doc, const char *line, size_t len)
{
    if (!json_parse(doc, line, len)) {
        reply_error("not a JSON line: %s", doc->error);
        return KEEP_GOING;
    }
    const json_value *msg = json_root(doc);
    if (msg->type != JSON_OBJECT) {
        reply_error("a message must be a JSON object");
        return KEEP_GOING;
    }
    const json_value *op = json_get(doc, msg, "op");
    if (!op) {
        reply_error("a message needs the key op");
        return KEEP_GOING;
    }
    if (json_string_is(doc, op, "hello"))
        op_hello(doc, msg);
    else if (json_string_is(doc, op, "init"))
        op_init(s, doc, msg);
    else if (json_string_is(doc, op, "step"))
        return op_step(s, doc, msg);
    else if (json_string_is(doc, op, "run"))
        return op_run(s, doc, msg);
    else
        reply_error("op: must be \"hello\", \"init\", \"step\" or \"run\"");
    return KEEP_GOING;
}

int main(void)
{
    /* stdout fully buffered and flushed after each line: one write(2) per answer */
    static char out_buffer[1 << 16];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);

    line_reader in;
    line_reader_init(&in, 0);
    json_doc request = {0}, answer = {0};
    session s;
    memset(&s, 0, sizeof s);
    s.noise.in = &in; /* tape answers arrive on the same stream as requests */
    s.noise.out = stdout;
    s.noise.answer = &answer;

    int status = 0;
    for (;;) {
        const char *line;
        size_t len;
        line_status ls = line_read(&in, &line, &len);
        if (ls == LINE_EOF)
            break;
        if (ls == LINE_ERROR) {
            perror("counters: reading stdin");
            status = 1;
            break;
        }
        if (ls == LINE_TOO_LONG) {
            reply_error("line longer than %u bytes", MAX_LINE_BYTES);
            continue;
        }
        if (handle(&s, &request, line, len) == END_OF_INPUT)
            break; /* stdin ended while a draw was waiting for its answer */
    }
    free(s.inputs);
    free(s.releases);
    json_free(&request);
    json_free(&answer);
    line_reader_free(&in);
    return status;
}
