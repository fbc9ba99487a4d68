/* test_coll.c - every collective x algorithm x mode (offload, host-based) x
 * op x type, over group sizes 1-9, 16, 17, 32, roots first/middle/last, counts
 * 0, 1, 7, around the inline limit, in place and not.  Results must equal the
 * serial reference exactly (inputs are chosen so any order is exact; the
 * reproducibility test covers rounding).  Then calls of a kind taking turns
 * over more shapes than a group remembers.
 * Usage: test_coll [n ...] */
#include "glex_test.h"
#include "glex_test_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int counts_for(glex_type_t t, uint64_t *out)
{
    size_t es = glex_type_size(t);
    uint64_t in = 48 / es; /* elements at the default inline limit */
    uint64_t c[] = { 0, 1, 7, in ? in - 1 : 0, in, in + 1, 100 };
    int k = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int dup = 0;
        for (int j = 0; j < k; j++)
            dup |= out[j] == c[i];
        if (!dup)
            out[k++] = c[i];
    }
    return k;
}

/* one call; returns NULL on success or a failure description (static buffer) */
static const char *one_call(glex_tctx_t *c, glex_coll_args_t *a, uint64_t seed, int inplace)
{
    static char msg[256];
    size_t es = glex_type_size(a->type);
    uint64_t n = a->count, bytes = n * es + 16;
    uint8_t *send = malloc(bytes), *recv = malloc(bytes), *exp = malloc(bytes);
    const char *err = NULL;
    int root_or_all = a->kind == GLEX_COLL_ALLREDUCE || (uint32_t)c->rank == a->root;
    glex_op_t op = a->kind == GLEX_COLL_BCAST ? GLEX_OP_MAX : a->op;
    memset(recv, 0xA5, bytes);
    if (a->kind == GLEX_COLL_BCAST) {
        ref_fill(a->type, op, (int)a->root, seed, exp, n);
        if ((uint32_t)c->rank == a->root)
            memcpy(recv, exp, n * es);
        a->sendbuf = NULL;
    } else {
        ref_fill(a->type, op, c->rank, seed, send, n);
        if (inplace && root_or_all) {
            memcpy(recv, send, n * es);
            a->sendbuf = GLEX_IN_PLACE;
        } else {
            a->sendbuf = send;
        }
        ref_expected(a->type, op, c->n, seed, exp, n);
    }
    a->recvbuf = recv;
    int rc = glex_coll_run(c->g, a);
    if (rc) {
        snprintf(msg, sizeof msg, "rc=%d: %s", rc, glex_last_error());
        err = msg;
    } else if (a->kind == GLEX_COLL_BCAST || root_or_all) {
        int64_t at = ref_compare(a->type, recv, exp, n);
        if (at >= 0) {
            snprintf(msg, sizeof msg, "wrong result at element %lld of %llu", (long long)at,
                     (unsigned long long)n);
            err = msg;
        }
    } else {
        for (uint64_t i = 0; i < bytes && !err; i++)
            if (recv[i] != 0xA5)
                err = "non-root recvbuf was written";
    }
    if (!err && a->kind != GLEX_COLL_BCAST && a->sendbuf == send) {
        ref_fill(a->type, op, c->rank, seed, exp, n);
        if (memcmp(exp, send, n * es))
            err = "sendbuf was modified";
    }
    free(send);
    free(recv);
    free(exp);
    return err;
}

/* Calls of one kind taking turns over more shapes (root, count, in place)
 * than the group remembers (GLEX_MEMO_WAYS): each call's plan is its own
 * shape's, whether remembered, pushed out or kept again */
static int run_shapes(glex_tctx_t *c, uint64_t seed)
{
    static const glex_coll_kind_t kinds[] = { GLEX_COLL_BCAST, GLEX_COLL_REDUCE,
                                              GLEX_COLL_ALLREDUCE };
    static const uint64_t counts[] = { 1, 12, 13, 40 };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int id = glex_case(c, "%s auto: 7 shapes taking turns", glex_coll_kind_name(kinds[k]));
        for (int round = 0; round < 4; round++) {
            for (int sh = 0; sh < 7; sh++) {
                glex_coll_args_t a;
                memset(&a, 0, sizeof a);
                a.kind = kinds[k];
                a.algo = GLEX_ALGO_AUTO;
                a.type = GLEX_INT32;
                a.op = GLEX_OP_SUM;
                a.root = (uint32_t)sh % (uint32_t)c->n;
                a.count = counts[sh % 4];
                int inplace = sh >= 4;
                const char *e = one_call(c, &a, seed++, inplace);
                if (e)
                    glex_case_fail(c, id, "round %d shape %d (count %llu root %u%s): %s", round,
                                   sh, (unsigned long long)a.count, a.root,
                                   inplace ? " in-place" : "", e);
            }
        }
    }
    return 0;
}

static int run_matrix(glex_tctx_t *c)
{
    uint64_t seed = 1;
    uint32_t roots[3] = { 0, (uint32_t)c->n / 2, (uint32_t)c->n - 1 };
    for (int kind = 0; kind < GLEX_COLL_KIND_COUNT; kind++) {
        for (int algo = 0; algo < GLEX_ALGO_COUNT; algo++) {
            if (!glex_algo_valid((glex_coll_kind_t)kind, (glex_algo_t)algo))
                continue;
            for (int host = 0; host < 2; host++) {
                const char *mode = host ? "host" : "offload";
                glex_coll_args_t a;
                memset(&a, 0, sizeof a);
                a.kind = (glex_coll_kind_t)kind;
                a.algo = (glex_algo_t)algo;
                a.host_mode = host;
                if (kind == GLEX_COLL_BARRIER) {
                    int id = glex_case(c, "barrier %s %s", glex_algo_name(a.algo), mode);
                    for (int rep = 0; rep < 3; rep++)
                        if (glex_coll_run(c->g, &a))
                            glex_case_fail(c, id, "barrier: %s", glex_last_error());
                    continue;
                }
                for (int t = 0; t < GLEX_TYPE_COUNT; t++) {
                    a.type = (glex_type_t)t;
                    int id = glex_case(c, "%s %s %s %s", glex_coll_kind_name(a.kind),
                                       glex_algo_name(a.algo), mode, glex_type_name(a.type));
                    uint64_t counts[8];
                    int nc = counts_for(a.type, counts);
                    for (int op = 0; op < GLEX_OP_COUNT; op++) {
                        if (kind == GLEX_COLL_BCAST ? op > 0
                                                    : !glex_alu_supported((glex_op_t)op, a.type))
                            continue;
                        a.op = (glex_op_t)op;
                        for (int ci = 0; ci < nc; ci++) {
                            int nroots = kind == GLEX_COLL_ALLREDUCE ? 1 : 3;
                            for (int ri = 0; ri < nroots; ri++) {
                                if (ri > 0 && roots[ri] == roots[ri - 1])
                                    continue;
                                a.root = roots[ri];
                                a.count = counts[ci];
                                int inplace = (int)((seed + (uint64_t)ci) & 1);
                                const char *e = one_call(c, &a, seed++, inplace);
                                if (e)
                                    glex_case_fail(c, id, "op %s count %llu root %u%s: %s",
                                                   glex_op_name(a.op),
                                                   (unsigned long long)a.count, a.root,
                                                   inplace ? " in-place" : "", e);
                            }
                        }
                    }
                }
            }
        }
    }
    return run_shapes(c, seed);
}

int main(int argc, char **argv)
{
    int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32 };
    int ns = (int)(sizeof sizes / sizeof sizes[0]);
    if (argc > 1) {
        ns = argc - 1;
        for (int i = 0; i < ns; i++)
            sizes[i] = atoi(argv[i + 1]);
    }
    for (int i = 0; i < ns; i++)
        glex_run_group(sizes[i], NULL, run_matrix, NULL, 1200, "coll");
    return tap_done();
}
