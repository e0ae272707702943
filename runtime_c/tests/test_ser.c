/*
 * test_ser.c: unit tests of the out-of-band serialization that the MPI
 * transport uses (sgl_ser_oob / sgl_deser_oob and the piece lists,
 * sgl_internal.h), linked with stub_tree.c like test_values.c.
 *
 * A transfer is simulated without MPI: the sender's pieces, concatenated,
 * are copied into the receiver's pieces in order, as the transport's
 * messages do.  Prints each failure, then "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sgl_internal.h"
#include "check.h"
#include "stub_tree.h"


static const sgl_type T_IV = {.kind = SGL_T_VEC, .elem = &sgl_t_int};
static const sgl_type T_FV = {.kind = SGL_T_VEC, .elem = &sgl_t_float};
static const sgl_type T_BV = {.kind = SGL_T_VEC, .elem = &sgl_t_bool};
static const sgl_type T_IVV = {.kind = SGL_T_VEC, .elem = &T_IV};
static const sgl_type T_FVV = {.kind = SGL_T_VEC, .elem = &T_FV};
static const sgl_type T_BVV = {.kind = SGL_T_VEC, .elem = &T_BV};
static const sgl_type T_IVVV = {.kind = SGL_T_VEC, .elem = &T_IVV};

#define MIN_OOB ((size_t)64)

/* Copies the sender's pieces into the receiver's, as one byte stream. */
static void transfer(const sgl_pieces *from, const sgl_pieces *to)
{
    int64_t k = 0;
    size_t off = 0;
    for (int64_t i = 0; i < from->n; i++) {
        size_t done = 0;
        while (done < from->len[i]) {
            size_t room = to->len[k] - off, left = from->len[i] - done;
            size_t n = room < left ? room : left;
            memcpy(to->ptr[k] + off, from->ptr[i] + done, n);
            done += n;
            off += n;
            if (off == to->len[k]) {
                k++;
                off = 0;
            }
        }
    }
}

/* Sends *v through sgl_ser_oob and back; checks the copy and returns the
 * sender's number of pieces. */
static int64_t round_trip(const sgl_type *t, const void *v, int line)
{
    sgl_buf b = {0};
    sgl_pieces send = {0}, recv = {0};
    sgl_ser_oob(&b, t, v, MIN_OOB, &send);
    sgl_vec out = {0};
    const char *end = sgl_deser_oob(b.data ? b.data : "", t, &out, &recv);
    check(end == (b.data ? b.data : "") + b.len, "deser_oob consumed the string", line);
    check(send.bytes == recv.bytes, "both sides have the same piece bytes", line);
    transfer(&send, &recv);
    check(sgl_value_eq(t, v, &out), "value survives the round trip", line);
    int64_t n = send.n;
    sgl_vec_free(t, &out);
    sgl_pieces_free(&send);
    sgl_pieces_free(&recv);
    sgl_buf_free(&b);
    return n;
}

static sgl_vec ints(int64_t n, int64_t seed)
{
    sgl_vec v = sgl_vec_new(&T_IV, n, 0, 0);
    for (int64_t i = 0; i < n; i++) ((sgl_int *)v.data)[i] = (i * 7 + seed) % 13 - 6;
    return v;
}

static void push_move(const sgl_type *vt, sgl_vec *v, sgl_vec x) { sgl_vec_push_move(vt, v, &x, 0, 0); }

static void test_nested(void)
{
    /* ragged rows: empty, short (inline) and long (out of band) */
    int64_t lens[] = {0, 3, 100, 0, 1, 257, 7, 8, 0};
    sgl_vec m = {0};
    for (int r = 0; r < 9; r++) push_move(&T_IVV, &m, ints(lens[r], r));
    int64_t pieces = round_trip(&T_IVV, &m, __LINE__);
    /* together 376 ints (over MIN_OOB bytes): every non-empty row out of
     * band, each from its own storage */
    CHECK(pieces == 6);

    /* short rows under MIN_OOB bytes together: all in the string */
    sgl_vec few = {0};
    for (int r = 1; r <= 3; r++) push_move(&T_IVV, &few, ints(r, r));
    CHECK(round_trip(&T_IVV, &few, __LINE__) == 0);
    sgl_vec_free(&T_IVV, &few);

    /* short rows over MIN_OOB bytes together (each of 5 ints, 40 bytes):
     * all out of band, received as adjacent views of one buffer */
    sgl_vec shorts = {0};
    for (int r = 0; r < 6; r++) push_move(&T_IVV, &shorts, ints(5, r));
    {
        sgl_buf sb = {0};
        sgl_pieces sp = {0}, rp = {0};
        sgl_ser_oob(&sb, &T_IVV, &shorts, MIN_OOB, &sp);
        CHECK(sp.n == 6 && sp.bytes == 30 * sizeof(sgl_int));
        sgl_vec got = {0};
        sgl_deser_oob(sb.data, &T_IVV, &got, &rp);
        CHECK(rp.n == 1 && rp.bytes == sp.bytes); /* one receive */
        transfer(&sp, &rp);
        CHECK(sgl_value_eq(&T_IVV, &shorts, &got));
        const sgl_vec *gr = got.data;
        CHECK(got.len == 6 && gr[0].buf && gr[5].buf == gr[0].buf &&
              (char *)gr[5].data == (char *)gr[0].data + 25 * sizeof(sgl_int));
        sgl_vec_free(&T_IVV, &got);
        sgl_pieces_free(&sp);
        sgl_pieces_free(&rp);
        sgl_buf_free(&sb);
    }
    sgl_vec_free(&T_IVV, &shorts);

    /* the rows of one vector's slices are adjacent: one piece, from v */
    sgl_vec flat = ints(4000, 1), rows = {0};
    for (int r = 0; r < 10; r++) push_move(&T_IVV, &rows, sgl_slice(&T_IV, &flat, r * 400, (r + 1) * 400, 0, 0));
    sgl_buf b = {0};
    sgl_pieces send = {0};
    sgl_ser_oob(&b, &T_IVV, &rows, MIN_OOB, &send);
    CHECK(send.n == 1);
    CHECK(send.n == 1 && send.ptr[0] == (char *)flat.data && send.len[0] == 4000 * sizeof(sgl_int));
    sgl_buf_free(&b);
    sgl_pieces_free(&send);
    CHECK(round_trip(&T_IVV, &rows, __LINE__) == 1);

    /* a block of split(v, k) is sent from v's storage (no staging copy) */
    sgl_vec blocks = sgl_split(&T_IV, &flat, 3, 0, 0);
    sgl_ser_oob(&b, &T_IV, &((sgl_vec *)blocks.data)[1], MIN_OOB, &send);
    CHECK(send.n == 1 && send.ptr[0] == (char *)flat.data + 1334 * sizeof(sgl_int) &&
          send.len[0] == 1333 * sizeof(sgl_int));
    CHECK(b.len == sizeof(int64_t)); /* only the mark */
    sgl_buf_free(&b);
    sgl_pieces_free(&send);

    /* empty outer vector; a vector of empty rows */
    sgl_vec empty = {0};
    CHECK(round_trip(&T_IVV, &empty, __LINE__) == 0);
    sgl_vec er = {0};
    for (int r = 0; r < 4; r++) push_move(&T_IVV, &er, (sgl_vec){0});
    CHECK(round_trip(&T_IVV, &er, __LINE__) == 0);

    /* deeper: [[[int]]] with empty matrices and long rows */
    sgl_vec d = {0};
    for (int k = 0; k < 5; k++) {
        sgl_vec mk = {0};
        for (int i = 0; i < k % 3; i++) push_move(&T_IVV, &mk, ints(lens[(k + i) % 9] * 3, k + i));
        push_move(&T_IVVV, &d, mk);
    }
    round_trip(&T_IVVV, &d, __LINE__);

    /* floats and bools */
    sgl_vec fm = {0};
    for (int r = 0; r < 4; r++) {
        sgl_vec x = sgl_vec_new(&T_FV, r * 20, 0, 0);
        for (int j = 0; j < r * 20; j++) ((sgl_float *)x.data)[j] = j * 0.5 - r;
        push_move(&T_FVV, &fm, x);
    }
    round_trip(&T_FVV, &fm, __LINE__);
    sgl_vec bm = {0};
    for (int r = 0; r < 4; r++) {
        sgl_vec x = sgl_vec_new(&T_BV, r * 50, 0, 0);
        for (int j = 0; j < r * 50; j++) ((sgl_bool *)x.data)[j] = (j + r) % 3 == 0;
        push_move(&T_BVV, &bm, x);
    }
    CHECK(round_trip(&T_BVV, &bm, __LINE__) == 3); /* the rows of 50, 100 and 150 bools */

    /* scalars are inline */
    sgl_int k = 42;
    CHECK(round_trip(&sgl_t_int, &k, __LINE__) == 0);

    sgl_vec_free(&T_IVV, &m);
    sgl_vec_free(&T_IVV, &rows);
    sgl_vec_free(&T_IVV, &blocks);
    sgl_vec_free(&T_IV, &flat);
    sgl_vec_free(&T_IVV, &er);
    sgl_vec_free(&T_IVVV, &d);
    sgl_vec_free(&T_FVV, &fm);
    sgl_vec_free(&T_BVV, &bm);
}

static void test_pieces(void)
{
    char buf[64];
    sgl_pieces l = {0};
    sgl_pieces_add(&l, buf, 8);
    sgl_pieces_add(&l, buf + 8, 8); /* continues: merged */
    sgl_pieces_add(&l, buf + 32, 4);
    sgl_pieces_add(&l, buf + 36, 0); /* empty: nothing */
    sgl_pieces_add(&l, NULL, 4);     /* a placeholder is never merged */
    sgl_pieces_add(&l, buf + 40, 4);
    CHECK(l.n == 4 && l.bytes == 28);
    CHECK(l.len[0] == 16 && l.ptr[1] == buf + 32 && l.ptr[2] == NULL && l.ptr[3] == buf + 40);
    sgl_pieces_clear(&l);
    CHECK(l.n == 0 && l.bytes == 0);
    sgl_pieces_free(&l);
}

/* concat of adjacent views of one buffer, in order, is a view (no copy) */
static void test_concat_views(void)
{
    sgl_vec flat = ints(1000, 3);
    sgl_vec blocks = sgl_split(&T_IV, &flat, 4, 0, 0);
    sgl_vec all = sgl_concat(&T_IVV, &blocks, 0, 0);
    CHECK(all.buf == flat.buf && all.data == flat.data && all.len == 1000);
    /* a write copies: the blocks are not changed */
    *(sgl_int *)sgl_at_mut(&T_IV, &all, 0, sizeof(sgl_int), 0, 0) = 99;
    CHECK(all.buf != flat.buf && ((sgl_int *)flat.data)[0] != 99);
    sgl_vec_free(&T_IV, &all);
    /* out of order: a copy */
    sgl_vec sw = {0};
    push_move(&T_IVV, &sw, sgl_vec_copy(&T_IV, &((sgl_vec *)blocks.data)[1]));
    push_move(&T_IVV, &sw, sgl_vec_copy(&T_IV, &((sgl_vec *)blocks.data)[0]));
    sgl_vec c = sgl_concat(&T_IVV, &sw, 0, 0);
    CHECK(c.buf != flat.buf && c.len == 500 && ((sgl_int *)c.data)[0] == ((sgl_int *)flat.data)[250]);
    sgl_vec_free(&T_IV, &c);
    sgl_vec_free(&T_IVV, &sw);
    sgl_vec_free(&T_IVV, &blocks);
    sgl_vec_free(&T_IV, &flat);
}

/* concat at a last use (sgl_concat_take) whose first non-empty part is a
 * whole buffer with no other owner grows that buffer: its elements are
 * not copied; the other parts are, and stay unchanged */
static void test_concat_grows_first(void)
{
    /* big enough to be a mapped block (sgl_blocks.c), then a small one */
    int64_t sizes[] = {3 << 20, 100};
    for (int k = 0; k < 2; k++) {
        int64_t n = sizes[k];
        sgl_vec a = ints(n, 5), b = ints(7, 2), keep = sgl_vec_copy(&T_IV, &b);
        sgl_int a0 = ((sgl_int *)a.data)[0], alast = ((sgl_int *)a.data)[n - 1];
        sgl_vec parts = {0};
        push_move(&T_IVV, &parts, (sgl_vec){NULL, 0, NULL}); /* an empty part first */
        push_move(&T_IVV, &parts, a);
        push_move(&T_IVV, &parts, b);
        sgl_vec c = sgl_concat_take(&T_IVV, &parts, 0, 0);
        CHECK(parts.len == 0 && parts.buf == NULL);
        CHECK(c.len == n + 7 && c.buf->used == n + 7 && c.buf->cap >= n + 7);
        CHECK(sgl_vec_unique(&c) && c.data == (void *)(c.buf + 1));
        sgl_int *d = c.data;
        CHECK(d[0] == a0 && d[n - 1] == alast);
        for (int64_t i = 0; i < 7; i++) CHECK(d[n + i] == ((sgl_int *)keep.data)[i]);
        /* b's elements were copied: writing c leaves them alone */
        d[n] = 1234;
        CHECK(((sgl_int *)keep.data)[0] != 1234);
        sgl_vec_free(&T_IV, &c);
        sgl_vec_free(&T_IV, &keep);
    }
    /* a first part with room for the rest: the result is its buffer */
    sgl_vec a = ints(1000, 4), b = ints(24, 8);
    sgl_vec_reserve(&T_IV, &a, 2000, 0, 0);
    sgl_vbuf *abuf = a.buf;
    void *adata = a.data;
    sgl_vec ab = {0};
    push_move(&T_IVV, &ab, a);
    push_move(&T_IVV, &ab, b);
    sgl_vec joined = sgl_concat_take(&T_IVV, &ab, 0, 0);
    CHECK(joined.buf == abuf && joined.data == adata && joined.len == 1024 && abuf->used == 1024);
    CHECK(((sgl_int *)joined.data)[1000] == 8 % 13 - 6); /* b[0], as ints() makes it */
    sgl_vec_free(&T_IV, &joined);
    /* nested: the first part's rows move with it, the others' are shared */
    sgl_vec m1 = {0}, m2 = {0};
    for (int r = 0; r < 3; r++) push_move(&T_IVV, &m1, ints(r + 1, r));
    push_move(&T_IVV, &m2, ints(4, 9));
    sgl_vec m2_keep = sgl_vec_copy(&T_IVV, &m2);
    sgl_vec parts = {0};
    push_move(&T_IVVV, &parts, m1);
    push_move(&T_IVVV, &parts, m2);
    sgl_vec c = sgl_concat_take(&T_IVVV, &parts, 0, 0);
    CHECK(c.len == 4);
    sgl_vec *rows = c.data, *kept = m2_keep.data;
    CHECK(rows[0].len == 1 && rows[2].len == 3 && rows[3].len == 4);
    CHECK(rows[3].buf == kept[0].buf); /* shared, copy-on-write */
    sgl_vec_free(&T_IVV, &c);
    CHECK(sgl_vec_unique(&kept[0]) && ((sgl_int *)kept[0].data)[0] == 9 % 13 - 6);
    sgl_vec_free(&T_IVV, &m2_keep);
}

int main(void)
{
    test_pieces();
    test_nested();
    test_concat_views();
    test_concat_grows_first();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    fflush(stdout);
    return n_failed == 0 ? 0 : 1;
}
