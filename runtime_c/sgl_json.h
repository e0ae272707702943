/*
 * sgl_json.h: a small JSON reader for the runtime's machine files
 * (internal).  json_parse checks the whole text against RFC 8259 and
 * builds a tree of values in one array; containers link their members
 * (child, next).  Used by sgl_speed.c (--sgl-machine) and sgl_instr.c
 * (--sgl-predict).
 */
#ifndef SGL_JSON_H
#define SGL_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_val {
    json_kind kind;
    double num;      /* JSON_NUMBER; JSON_BOOL: 0 or 1 */
    char *str;       /* JSON_STRING (owned, decoded; \u escapes above 0x7f as '?') */
    char *key;       /* a member of an object: its key (owned) */
    int n;           /* a container: number of members */
    int child, next; /* first member, next sibling: indices into vals, -1: none */
} json_val;

typedef struct json_doc {
    json_val *vals; /* vals[0] is the document's value */
    int n, cap;
} json_doc;

/* Parse the NUL-terminated text; false with a message ("line 3: expected
 * ',' or ']'") in why (the doc is then empty, json_free is still fine). */
bool json_parse(const char *text, json_doc *doc, char *why, size_t whylen);
void json_free(json_doc *doc);
/* The member `key` of object o (the first one), or NULL (also if o is not an object). */
const json_val *json_get(const json_doc *d, const json_val *o, const char *key);
/* Element k of array a (0 <= k < a->n). */
const json_val *json_item(const json_doc *d, const json_val *a, int k);

#endif
