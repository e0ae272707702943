/*
 * sgl_json.c: the JSON reader of sgl_json.h, a recursive descent parser
 * of RFC 8259 (no extensions; nesting limited to 64 levels).
 */
#define _POSIX_C_SOURCE 200809L
#include "sgl_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p, *start;
    json_doc *doc;
    char *why;
    size_t whylen;
    bool failed;
} parser;

static int line_of(const parser *ps)
{
    int line = 1;
    for (const char *q = ps->start; q < ps->p; q++)
        if (*q == '\n') line++;
    return line;
}

static bool fail(parser *ps, const char *what)
{
    if (!ps->failed) {
        if (*ps->p)
            snprintf(ps->why, ps->whylen, "line %d: %s", line_of(ps), what);
        else
            snprintf(ps->why, ps->whylen, "line %d: %s (at the end of the file)", line_of(ps),
                     what);
    }
    ps->failed = true;
    return false;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

/* A new value; -1 when out of memory. */
static int new_val(parser *ps, json_kind kind)
{
    json_doc *d = ps->doc;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        json_val *v = realloc(d->vals, (size_t)cap * sizeof *v);
        if (!v) return -1;
        d->vals = v;
        d->cap = cap;
    }
    d->vals[d->n] = (json_val){kind, 0, NULL, NULL, 0, -1, -1};
    return d->n++;
}

static bool parse_string(parser *ps, char **out)
{
    ps->p++; /* the opening quote */
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    if (!s) return fail(ps, "out of memory");
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') break;
        if (c == '\0' || c < 0x20) {
            free(s);
            return fail(ps, "unterminated string");
        }
        char ch = (char)c;
        if (c == '\\') {
            ps->p++;
            switch (*ps->p) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 1; k <= 4; k++) {
                    char h = ps->p[k];
                    int d = h >= '0' && h <= '9' ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) {
                        free(s);
                        return fail(ps, "bad \\u escape in a string");
                    }
                    v = v * 16 + (unsigned)d;
                }
                ps->p += 4;
                ch = v < 0x80 ? (char)v : '?';
                break;
            }
            default:
                free(s);
                return fail(ps, "bad escape in a string");
            }
        }
        if (len + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return fail(ps, "out of memory");
            }
            s = t;
        }
        s[len++] = ch;
        ps->p++;
    }
    ps->p++;
    s[len] = '\0';
    *out = s;
    return true;
}

static bool parse_number(parser *ps, double *out)
{
    const char *q = ps->p;
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
    else return fail(ps, "expected a value");
    if (*q == '.') {
        q++;
        if (*q < '0' || *q > '9') return fail(ps, "bad number");
        while (*q >= '0' && *q <= '9') q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (*q < '0' || *q > '9') return fail(ps, "bad number");
        while (*q >= '0' && *q <= '9') q++;
    }
    *out = strtod(ps->p, NULL);
    ps->p = q;
    return true;
}

static int parse_value(parser *ps, int depth);

/* The members of an array or object at index v ('[' or '{' at ps->p). */
static bool parse_members(parser *ps, int v, bool object, int depth)
{
    char close = object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return true;
    }
    int last = -1;
    for (;;) {
        char *key = NULL;
        if (object) {
            skip_ws(ps);
            if (*ps->p != '"') return fail(ps, "expected a key (a string)");
            if (!parse_string(ps, &key)) return false;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                return fail(ps, "expected ':' after a key");
            }
            ps->p++;
        }
        int m = parse_value(ps, depth + 1);
        if (m < 0) {
            free(key);
            return false;
        }
        json_val *vals = ps->doc->vals;
        vals[m].key = key;
        if (last < 0) vals[v].child = m;
        else vals[last].next = m;
        last = m;
        vals[v].n++;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return true;
        }
        return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *ps, int depth)
{
    if (depth > 64) return fail(ps, "nested too deeply"), -1;
    skip_ws(ps);
    char c = *ps->p;
    int v;
    if (c == '{' || c == '[') {
        v = new_val(ps, c == '{' ? JSON_OBJECT : JSON_ARRAY);
        if (v < 0) return fail(ps, "out of memory"), -1;
        return parse_members(ps, v, c == '{', depth) ? v : -1;
    }
    if (c == '"') {
        char *s;
        if (!parse_string(ps, &s)) return -1;
        v = new_val(ps, JSON_STRING);
        if (v < 0) {
            free(s);
            return fail(ps, "out of memory"), -1;
        }
        ps->doc->vals[v].str = s;
        return v;
    }
    static const struct { const char *word; json_kind kind; double num; } words[] = {
        {"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        size_t n = strlen(words[k].word);
        if (strncmp(ps->p, words[k].word, n) == 0) {
            ps->p += n;
            v = new_val(ps, words[k].kind);
            if (v < 0) return fail(ps, "out of memory"), -1;
            ps->doc->vals[v].num = words[k].num;
            return v;
        }
    }
    double x = 0;
    if (!parse_number(ps, &x)) return -1;
    v = new_val(ps, JSON_NUMBER);
    if (v < 0) return fail(ps, "out of memory"), -1;
    ps->doc->vals[v].num = x;
    return v;
}

bool json_parse(const char *text, json_doc *doc, char *why, size_t whylen)
{
    *doc = (json_doc){0};
    parser ps = {text, text, doc, why, whylen, false};
    int v = parse_value(&ps, 0);
    if (v >= 0) {
        skip_ws(&ps);
        if (*ps.p) fail(&ps, "text after the JSON value");
    }
    if (ps.failed) {
        json_free(doc);
        return false;
    }
    return true;
}

void json_free(json_doc *doc)
{
    for (int i = 0; i < doc->n; i++) {
        free(doc->vals[i].str);
        free(doc->vals[i].key);
    }
    free(doc->vals);
    *doc = (json_doc){0};
}

const json_val *json_get(const json_doc *d, const json_val *o, const char *key)
{
    if (o->kind != JSON_OBJECT) return NULL;
    for (int m = o->child; m >= 0; m = d->vals[m].next)
        if (strcmp(d->vals[m].key, key) == 0) return &d->vals[m];
    return NULL;
}

const json_val *json_item(const json_doc *d, const json_val *a, int k)
{
    int m = a->child;
    while (k-- > 0) m = d->vals[m].next;
    return &d->vals[m];
}
