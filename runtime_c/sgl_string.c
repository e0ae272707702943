/*
 * sgl_string.c: the string type (brief §3): concatenation, comparison,
 * str(x), the C string of a file name, printing (as text, or quoted inside
 * a vector) and the stable sort of a [string].
 *
 * A string is a sgl_vec of bytes (sgl.h: descriptor sgl_t_str, elements
 * sgl_t_byte), so copy, free, slice and serialization are the vector
 * code's.  A literal is {static data, len, NULL}: no buffer to free, and
 * never written (sgl_str_append copies it first, as it does any string
 * whose buffer is shared).
 */
#include "sgl.h"

#include <stdlib.h>
#include <string.h>

const sgl_type sgl_t_byte = {.kind = SGL_T_BYTE, .elem = NULL};
const sgl_type sgl_t_str = {.kind = SGL_T_STR, .elem = &sgl_t_byte};

sgl_vec sgl_str_from(const char *p, size_t n, int line, int col)
{
    sgl_vec r = sgl_vec_new_uninit(&sgl_t_str, (int64_t)n, line, col);
    if (n)
        memcpy(r.data, p, n);
    return r;
}

sgl_vec sgl_str_concat(const sgl_vec *a, const sgl_vec *b, int line, int col)
{
    if (b->len == 0)
        return sgl_vec_copy(&sgl_t_str, a);
    if (a->len == 0)
        return sgl_vec_copy(&sgl_t_str, b);
    if (a->len > INT64_MAX - b->len)
        sgl_fail(line, col, "out of memory: a string of more than %lld bytes", (long long)INT64_MAX);
    sgl_vec r = sgl_vec_new_uninit(&sgl_t_str, a->len + b->len, line, col);
    memcpy(r.data, a->data, (size_t)a->len);
    memcpy((char *)r.data + a->len, b->data, (size_t)b->len);
    return r;
}

void sgl_str_append(sgl_vec *s, const sgl_vec *t, int line, int col)
{
    if (t->len == 0)
        return;
    /* t may be s itself, or a view of s's buffer, which growing moves:
     * hold a reference to its bytes meanwhile */
    sgl_vec tt = sgl_vec_copy(&sgl_t_str, t);
    int64_t n = s->len;
    if (n > INT64_MAX - tt.len)
        sgl_fail(line, col, "out of memory: a string of more than %lld bytes", (long long)INT64_MAX);
    int64_t need = n + tt.len;
    /* doubling, so that a loop of appends takes linear time */
    int64_t cap = need < 16 ? 16 : need;
    if (s->buf && sgl_vec_unique(s) && s->buf->cap >= need)
        cap = need;
    else if (need <= INT64_MAX / 2)
        cap = need * 2 < 16 ? 16 : need * 2;
    sgl_vec_reserve(&sgl_t_str, s, cap, line, col);
    memcpy((char *)s->data + n, tt.data, (size_t)tt.len);
    s->len = need;
    s->buf->used = need;
    sgl_vec_free(&sgl_t_str, &tt);
}

int sgl_str_cmp(const sgl_vec *a, const sgl_vec *b)
{
    int64_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, (size_t)n) : 0;
    if (c)
        return c;
    return (a->len > b->len) - (a->len < b->len);
}

sgl_vec sgl_str(const sgl_type *t, const void *v, int line, int col)
{
    if (t->kind == SGL_T_STR)
        return sgl_vec_copy(t, v);
    sgl_buf b = {.line = line, .col = col};
    sgl_fmt_value(&b, t, v);
    sgl_vec r = sgl_str_from(b.data, b.len, line, col);
    sgl_buf_free(&b);
    return r;
}

sgl_vec sgl_str_cstr(const sgl_vec *s, int line, int col)
{
    if (s->len && memchr(s->data, '\0', (size_t)s->len))
        sgl_fail(line, col, "the file name contains a NUL byte");
    sgl_vec r = sgl_vec_new_uninit(&sgl_t_str, s->len + 1, line, col);
    if (s->len)
        memcpy(r.data, s->data, (size_t)s->len);
    ((char *)r.data)[s->len] = '\0';
    return r;
}

void sgl_fmt_text(sgl_buf *b, const sgl_vec *s)
{
    sgl_buf_put(b, s->data, (size_t)s->len);
}

void sgl_fmt_quoted(sgl_buf *b, const sgl_vec *s)
{
    const char *p = s->data;
    sgl_buf_put(b, "\"", 1);
    int64_t run = 0; /* bytes written unchanged, not yet put */
    for (int64_t i = 0; i < s->len; i++) {
        const char *esc = NULL;
        switch (p[i]) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        default: continue;
        }
        sgl_buf_put(b, p + run, (size_t)(i - run));
        sgl_buf_put(b, esc, 2);
        run = i + 1;
    }
    sgl_buf_put(b, p + run, (size_t)(s->len - run));
    sgl_buf_put(b, "\"", 1);
}

/* ------------------------------------------------------------------ */
/* sort([string]): a stable merge sort of the sgl_vec headers            */

static void merge_sort(sgl_vec *a, sgl_vec *tmp, int64_t n)
{
    if (n < 2)
        return;
    if (n <= 16) { /* insertion sort: stable */
        for (int64_t i = 1; i < n; i++) {
            sgl_vec x = a[i];
            int64_t j = i;
            while (j > 0 && sgl_str_cmp(&a[j - 1], &x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    if (sgl_str_cmp(&a[h - 1], &a[h]) <= 0)
        return;
    memcpy(tmp, a, (size_t)h * sizeof *a);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = sgl_str_cmp(&a[j], &tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h)
        a[k++] = tmp[i++];
}

static bool str_in_order(const sgl_vec *v)
{
    const sgl_vec *e = v->data;
    for (int64_t i = 1; i < v->len; i++)
        if (sgl_str_cmp(&e[i - 1], &e[i]) > 0)
            return false;
    return true;
}

static void sort_in_place(sgl_vec *v, int line, int col)
{
    sgl_vec *tmp = sgl_alloc((size_t)(v->len / 2 + 1) * sizeof(sgl_vec), line, col);
    merge_sort(v->data, tmp, v->len);
    free(tmp);
}

sgl_vec sgl_sort_str(const sgl_type *vt, const sgl_vec *v, int line, int col)
{
    if (v->len == 0 || str_in_order(v))
        return sgl_vec_copy(vt, v);
    sgl_vec r = sgl_vec_copy(vt, v);
    sgl_vec_make_unique(vt, &r, line, col); /* copies the headers, sharing the strings */
    sort_in_place(&r, line, col);
    return r;
}

sgl_vec sgl_sort_str_take(const sgl_type *vt, sgl_vec *v, int line, int col)
{
    sgl_vec r = *v;
    *v = (sgl_vec){NULL, 0, NULL};
    if (r.len == 0 || str_in_order(&r))
        return r;
    sgl_vec_make_unique(vt, &r, line, col);
    sort_in_place(&r, line, col);
    return r;
}
