/*
 * test_strings.c: C unit tests of the string type (sgl_string.c): a
 * literal view, concatenation and append (in place, from a literal, of
 * itself), byte-order comparison with prefixes and bytes above 0x7f, str(),
 * quoting, the stable sort of a [string], serialization and the NUL check
 * of a file name.  Expected values follow from the brief (§3, §8).
 */
#include "../sgl.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define LIT(s) ((sgl_vec){(void *)(s), (int64_t)(sizeof(s) - 1), NULL})

static bool is(const sgl_vec *v, const char *s)
{
    size_t n = strlen(s);
    return v->len == (int64_t)n && (n == 0 || memcmp(v->data, s, n) == 0);
}

static void test_concat_append(void)
{
    sgl_vec a = LIT("ab"), e = LIT("");
    sgl_vec c = sgl_str_concat(&a, &a, 0, 0);
    CHECK(is(&c, "abab") && c.buf != NULL);
    sgl_vec d = sgl_str_concat(&e, &a, 0, 0); /* a copy of a literal: the same view */
    CHECK(is(&d, "ab") && d.buf == NULL && d.data == a.data);
    sgl_vec s = LIT("x"); /* a literal: append copies it */
    sgl_str_append(&s, &a, 0, 0);
    CHECK(is(&s, "xab") && s.buf != NULL);
    CHECK(is(&a, "ab"));
    sgl_vec shared = sgl_vec_copy(&sgl_t_str, &s);
    sgl_str_append(&s, &s, 0, 0); /* shared: copied first; itself as the tail */
    CHECK(is(&s, "xabxab") && is(&shared, "xab"));
    void *before = s.data;
    sgl_vec y = LIT("y");
    for (int i = 0; i < 4; i++) sgl_str_append(&s, &y, 0, 0); /* room doubled: in place */
    CHECK(is(&s, "xabxabyyyy") && s.data == before);
    sgl_vec_free(&sgl_t_str, &s);
    sgl_vec_free(&sgl_t_str, &shared);
    sgl_vec_free(&sgl_t_str, &c);
    sgl_vec_free(&sgl_t_str, &d);
}

static void test_compare(void)
{
    sgl_vec app = LIT("app"), apple = LIT("apple"), e = LIT(""), z = LIT("z"), eacute = LIT("\xc3\xa9");
    CHECK(sgl_str_cmp(&app, &apple) < 0 && sgl_str_cmp(&apple, &app) > 0);
    CHECK(sgl_str_cmp(&app, &app) == 0 && sgl_str_cmp(&e, &e) == 0 && sgl_str_cmp(&e, &z) < 0);
    CHECK(sgl_str_cmp(&z, &eacute) < 0); /* unsigned bytes */
    CHECK(sgl_value_eq(&sgl_t_str, &app, &app) && !sgl_value_eq(&sgl_t_str, &app, &apple));
}

static void test_str_and_print(void)
{
    sgl_float x = 2.0;
    sgl_vec s = sgl_str(&sgl_t_float, &x, 0, 0);
    CHECK(is(&s, "2.0"));
    sgl_vec_free(&sgl_t_str, &s);
    sgl_type vs = {.kind = SGL_T_VEC, .elem = &sgl_t_str};
    sgl_vec v = sgl_vec_new(&vs, 2, 0, 0);
    ((sgl_vec *)v.data)[0] = LIT("a \"b\"\\\n\t\xc3\xa9");
    ((sgl_vec *)v.data)[1] = LIT("");
    sgl_vec t = sgl_str(&vs, &v, 0, 0);
    CHECK(is(&t, "[\"a \\\"b\\\"\\\\\\n\\t\xc3\xa9\", \"\"]"));
    sgl_vec_free(&sgl_t_str, &t);
    sgl_buf b = {0};
    sgl_fmt_text(&b, &((sgl_vec *)v.data)[0]);
    CHECK(b.len == 10 && memcmp(b.data, "a \"b\"\\\n\t\xc3\xa9", 10) == 0);
    sgl_buf_free(&b);
    /* serialization: a [string] goes and comes back equal */
    sgl_ser(&b, &vs, &v);
    CHECK(b.len == sgl_ser_size(&vs, &v));
    sgl_vec back;
    const char *end = sgl_deser(b.data, &vs, &back);
    CHECK(end == b.data + b.len && sgl_value_eq(&vs, &v, &back));
    sgl_buf_free(&b);
    sgl_vec_free(&vs, &back);
    sgl_vec_free(&vs, &v);
}

static void test_sort(void)
{
    sgl_type vs = {.kind = SGL_T_VEC, .elem = &sgl_t_str};
    const char *in[] = {"b", "a", "ab", "", "\xc3\xa9", "Z", "a", "b"};
    int n = 8;
    for (int rep = 0; rep < 2; rep++) {
        sgl_vec v = sgl_vec_new(&vs, 40, 0, 0);
        for (int i = 0; i < 40; i++) {
            const char *s = in[(i * 5) % n];
            ((sgl_vec *)v.data)[i] = sgl_str_from(s, strlen(s), 0, 0);
        }
        void *bufs[40];
        for (int i = 0; i < 40; i++) bufs[i] = ((sgl_vec *)v.data)[i].buf;
        sgl_vec r = rep == 0 ? sgl_sort(&vs, &v, 0, 0) : sgl_sort_take(&vs, &v, 0, 0);
        const sgl_vec *e = r.data;
        bool ordered = true;
        for (int i = 1; i < 40; i++) ordered = ordered && sgl_str_cmp(&e[i - 1], &e[i]) <= 0;
        CHECK(r.len == 40 && ordered && is(&e[0], "") && is(&e[39], "\xc3\xa9"));
        /* stable: equal strings keep their order (each has a buffer of its own) */
        bool stable = true;
        for (int i = 1; i < 40; i++) {
            if (sgl_str_cmp(&e[i - 1], &e[i]) != 0 || e[i].len == 0) continue; /* "" has no buffer */
            int a = -1, b = -1;
            for (int k = 0; k < 40; k++) {
                if (bufs[k] == e[i - 1].buf) a = k;
                if (bufs[k] == e[i].buf) b = k;
            }
            stable = stable && a >= 0 && a < b;
        }
        CHECK(stable);
        sgl_vec_free(&vs, &r);
        sgl_vec_free(&vs, &v);
    }
}

static void test_cstr(void)
{
    sgl_vec p = LIT("dir/x.txt");
    sgl_vec c = sgl_str_cstr(&p, 0, 0);
    CHECK(c.len == 10 && strcmp(c.data, "dir/x.txt") == 0);
    sgl_vec_free(&sgl_t_str, &c);
}

int main(void)
{
    test_concat_append();
    test_compare();
    test_str_and_print();
    test_sort();
    test_cstr();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
