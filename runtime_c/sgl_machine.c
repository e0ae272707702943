/*
 * sgl_machine.c: the BSP parameters of a machine file for --sgl-predict
 * (docs/machine-file.md; the workers' speeds of the same file are read by
 * sgl_speed.c).
 */
#include "sgl_internal.h"
#include "sgl_json.h"
#include "sgl_machine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The machine file (docs/machine-file.md): a JSON object with "levels":
 * [{"level": k, "l": ..., "g_scatter": ..., "g_bcast": ..., "g_gather": ...},
 * ...].  Only those keys are read here; a missing l or g is 0. */

/* A level's parameter: 0 when absent; false (the reason in why) when it
 * is not a finite number >= 0 (a time cannot be negative, and an infinite
 * one would make the report's JSON invalid). */
static bool member_num(const json_doc *d, const json_val *o, const char *key, int level,
                       double *out, char *why, size_t whylen)
{
    const json_val *v = json_get(d, o, key);
    *out = 0;
    if (!v) return true;
    if (v->kind != JSON_NUMBER || !isfinite(v->num) || v->num < 0) {
        snprintf(why, whylen, "level %d: \"%s\" is not a finite number >= 0", level, key);
        return false;
    }
    *out = v->num;
    return true;
}

/* False, with the reason in why, if the file gives no level's parameters
 * or a bad one (a level that is not a whole number from 0, a parameter
 * that is not a finite number >= 0). */
bool sgl_machine_load(const char *path, sgl_machine_level *machine, int nlevels, char *why,
                      size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "%s", strerror(errno));
        return false;
    }
    sgl_buf text = {0};
    char chunk[4096];
    size_t got;
    bool large = false; /* a machine file is small: /dev/urandom is not read for ever */
    while (!large && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sgl_buf_put(&text, chunk, got);
        large = text.len > (size_t)256 << 20;
    }
    bool failed = !large && ferror(f) != 0;
    fclose(f);
    if (large || failed) {
        snprintf(why, whylen, "%s", large ? "larger than 256 MiB" : "read error");
        sgl_buf_free(&text);
        return false;
    }
    sgl_buf_put(&text, "", 1);
    json_doc doc;
    char jwhy[160];
    bool any = false, bad = false;
    if (!json_parse(text.data, &doc, jwhy, sizeof jwhy)) {
        snprintf(why, whylen, "not valid JSON: %s", jwhy);
        sgl_buf_free(&text);
        return false;
    }
    const json_val *levels = json_get(&doc, &doc.vals[0], "levels");
    for (int k = 0; levels && levels->kind == JSON_ARRAY && k < levels->n; k++) {
        const json_val *o = json_item(&doc, levels, k);
        const json_val *lv = json_get(&doc, o, "level");
        if (!lv) continue;
        if (lv->kind != JSON_NUMBER || lv->num < 0 || lv->num != floor(lv->num)) {
            snprintf(why, whylen, "a \"level\" that is not a whole number >= 0");
            bad = true;
            break;
        }
        if (lv->num >= nlevels) continue;
        int l = (int)lv->num;
        sgl_machine_level m = {true, 0, {0, 0, 0}};
        if (!member_num(&doc, o, "l", l, &m.l, why, whylen) ||
            !member_num(&doc, o, "g_scatter", l, &m.g[0], why, whylen) ||
            !member_num(&doc, o, "g_bcast", l, &m.g[1], why, whylen) ||
            !member_num(&doc, o, "g_gather", l, &m.g[2], why, whylen)) {
            bad = true;
            break;
        }
        machine[l] = m;
        any = true;
    }
    if (bad) {
        for (int l = 0; l < nlevels; l++) machine[l] = (sgl_machine_level){0};
        any = false;
    } else if (!any) {
        snprintf(why, whylen, "no \"levels\" with a \"level\"");
    }
    json_free(&doc);
    sgl_buf_free(&text);
    return any;
}
