/*
 * sgl_print.c: formatting of SGL values for print and write_floats.
 *
 * ints in decimal, bools as true/false, vectors as [a, b, c], and floats
 * exactly as Python's repr(float): the shortest digit string that reads
 * back as the same double, laid out in fixed notation when the decimal
 * point position decpt satisfies -4 < decpt <= 16 and in scientific
 * notation otherwise (Python's float_repr_style 'short').
 */
#include "sgl.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sgl_fmt_int(sgl_buf *b, sgl_int x)
{
    char s[32];
    int n = snprintf(s, sizeof s, "%" PRId64, x);
    sgl_buf_put(b, s, (size_t)n);
}

void sgl_fmt_float(sgl_buf *b, sgl_float x)
{
    char s[32];
    int n = sgl_float_repr(s, x);
    sgl_buf_put(b, s, (size_t)n);
}

void sgl_fmt_bool(sgl_buf *b, sgl_bool x)
{
    sgl_buf_puts(b, x ? "true" : "false");
}

void sgl_fmt_value(sgl_buf *b, const sgl_type *t, const void *v)
{
    switch (t->kind) {
    case SGL_T_INT:
        sgl_fmt_int(b, *(const sgl_int *)v);
        return;
    case SGL_T_FLOAT:
        sgl_fmt_float(b, *(const sgl_float *)v);
        return;
    case SGL_T_BOOL:
        sgl_fmt_bool(b, *(const sgl_bool *)v);
        return;
    case SGL_T_BYTE:
        sgl_fmt_int(b, *(const unsigned char *)v);
        return;
    case SGL_T_STR: /* a string on its own is printed by sgl_fmt_text */
        sgl_fmt_quoted(b, v);
        return;
    case SGL_T_VEC:
        break;
    case SGL_T_STRUCT:
        /* Body(x=1.0, y=2.0, mass=0.5, id=7) */
        sgl_buf_puts(b, t->name);
        sgl_buf_put(b, "(", 1);
        for (int i = 0; i < t->nfields; i++) {
            const sgl_field *f = &t->fields[i];
            if (i > 0)
                sgl_buf_put(b, ", ", 2);
            sgl_buf_puts(b, f->name);
            sgl_buf_put(b, "=", 1);
            sgl_fmt_value(b, f->type, (const char *)v + f->offset);
        }
        sgl_buf_put(b, ")", 1);
        return;
    }
    const sgl_vec *x = v;
    const sgl_type *et = t->elem;
    size_t esz = sgl_sizeof(et);
    sgl_buf_put(b, "[", 1);
    for (int64_t i = 0; i < x->len; i++) {
        if (i > 0)
            sgl_buf_put(b, ", ", 2);
        sgl_fmt_value(b, et, (const char *)x->data + (size_t)i * esz);
    }
    sgl_buf_put(b, "]", 1);
}

/* ------------------------------------------------------------------ */
/* Shortest round-trip digits                                          */

/* A positive finite double's decimal form 0.DIGITS x 10^decpt. */
typedef struct {
    char digits[24]; /* at most 17 significant digits, NUL-terminated */
    int ndigits;
    int decpt;
} decimal;

/* Parses the output of "%.*e" ("d.ddde+XX") into d. */
static void parse_e(const char *s, decimal *d)
{
    d->ndigits = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            d->digits[d->ndigits++] = *s;
    d->digits[d->ndigits] = '\0';
    d->decpt = atoi(s + 1) + 1;
}

/* Reads d back as a double. */
static double decimal_value(const decimal *d)
{
    char s[48];
    snprintf(s, sizeof s, "0.%se%d", d->digits, d->decpt);
    return strtod(s, NULL);
}

/* Adds one unit in the last digit of d (9.99 -> 10.0 = 1.00e1). */
static void decimal_increment(decimal *d)
{
    int i = d->ndigits - 1;
    while (i >= 0 && d->digits[i] == '9')
        d->digits[i--] = '0';
    if (i >= 0) {
        d->digits[i]++;
    } else { /* all nines: 0.99..9 -> 0.10..0 with one more decpt */
        d->digits[0] = '1';
        d->decpt++;
    }
}

/* The n-digit decimal that reads back as x (x positive and finite), if
 * there is one: the nearest n-digit decimal, or when that one lies below
 * x and fails, the next one up.  (At a power of two the gap above x is
 * twice the gap below, so the nearest decimal may fall below x outside
 * its rounding interval while the next one up is still inside.)  So this
 * succeeds exactly when some n-digit decimal reads back as x, which makes
 * success monotone in n, and picks the closest such decimal, as Python's
 * repr does. */
static bool digits_of_length(double x, int n, decimal *d)
{
    char s[48];
    snprintf(s, sizeof s, "%.*e", n - 1, x);
    parse_e(s, d);
    double v = decimal_value(d);
    if (v == x)
        return true;
    if (v > x)
        return false;
    decimal up = *d;
    decimal_increment(&up);
    if (decimal_value(&up) != x)
        return false;
    *d = up;
    return true;
}

/* The shortest digits that read back as x (x positive and finite). */
static void shortest_digits(double x, decimal *d)
{
    /* 17 significant digits always suffice, and a length that reads back
     * makes every longer one read back.  Most doubles of a computation
     * need 16 or 17: 15 first, then 16 and 17 (two or three formattings
     * instead of the five or six of a binary search over 1 .. 17), else a
     * binary search below 15. */
    decimal t;
    if (!digits_of_length(x, 15, &t)) {
        if (!digits_of_length(x, 16, d))
            digits_of_length(x, 17, d);
    } else {
        *d = t;
        int lo = 1, hi = 15; /* d: the digits of length hi */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (digits_of_length(x, mid, &t)) {
                hi = mid;
                *d = t;
            } else {
                lo = mid + 1;
            }
        }
    }
    while (d->ndigits > 1 && d->digits[d->ndigits - 1] == '0')
        d->digits[--d->ndigits] = '\0';
}

int sgl_float_repr(char *out, sgl_float x)
{
    if (isnan(x))
        return sprintf(out, "nan");
    if (isinf(x))
        return sprintf(out, x > 0 ? "inf" : "-inf");

    char *p = out;
    if (signbit(x)) {
        *p++ = '-';
        x = -x;
    }
    if (x == 0) {
        strcpy(p, "0.0");
        return (int)(p + 3 - out);
    }

    decimal d;
    shortest_digits(x, &d);
    const char *dg = d.digits;
    int n = d.ndigits, decpt = d.decpt;

    if (decpt > -4 && decpt <= 16) {
        /* Fixed notation, always with a '.' and a digit after it. */
        if (decpt <= 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -decpt; i++)
                *p++ = '0';
            memcpy(p, dg, (size_t)n);
            p += n;
        } else if (decpt < n) {
            memcpy(p, dg, (size_t)decpt);
            p += decpt;
            *p++ = '.';
            memcpy(p, dg + decpt, (size_t)(n - decpt));
            p += n - decpt;
        } else {
            memcpy(p, dg, (size_t)n);
            p += n;
            for (int i = n; i < decpt; i++)
                *p++ = '0';
            *p++ = '.';
            *p++ = '0';
        }
        *p = '\0';
    } else {
        /* Scientific: d[.ddd]e+XX, at least two exponent digits. */
        *p++ = dg[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, dg + 1, (size_t)(n - 1));
            p += n - 1;
        }
        int e = decpt - 1;
        p += sprintf(p, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    return (int)(p - out);
}
