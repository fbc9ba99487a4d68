/* test_coll_big.c - messages around the 512 KB unit buffer for every
 * collective x algorithm x mode, a 64 MiB allreduce per algorithm through
 * the default 512 KB buffer (pulsed credits), flat beyond the eager pages,
 * and the direct path across its mailbox/RDMA threshold.
 * Usage: test_coll_big [n ...] */
#define _POSIX_C_SOURCE 200809L
#include "glex_test.h"
#include "glex_test_ref.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *check_call(glex_tctx_t *c, glex_coll_args_t *a, uint64_t seed)
{
    static char msg[200];
    size_t es = glex_type_size(a->type);
    uint64_t bytes = a->count * es;
    uint8_t *send = malloc(bytes + 1), *recv = malloc(bytes + 1), *exp = malloc(bytes + 1);
    const char *err = NULL;
    int have_result = a->kind != GLEX_COLL_REDUCE || (uint32_t)c->rank == a->root;
    glex_op_t op = a->kind == GLEX_COLL_BCAST ? GLEX_OP_SUM : a->op;
    if (a->kind == GLEX_COLL_BCAST) {
        ref_fill(a->type, op, (int)a->root, seed, exp, a->count);
        if ((uint32_t)c->rank == a->root)
            memcpy(recv, exp, bytes);
        else
            memset(recv, 0, bytes);
    } else {
        ref_fill(a->type, op, c->rank, seed, send, a->count);
        ref_expected(a->type, op, c->n, seed, exp, a->count);
    }
    a->sendbuf = send;
    a->recvbuf = recv;
    int rc = glex_coll_run(c->g, a);
    if (rc) {
        snprintf(msg, sizeof msg, "rc %d: %s", rc, glex_last_error());
        err = msg;
    } else if (have_result) {
        int64_t at = ref_compare(a->type, recv, exp, a->count);
        if (at >= 0) {
            snprintf(msg, sizeof msg, "wrong at element %lld", (long long)at);
            err = msg;
        }
    }
    free(send);
    free(recv);
    free(exp);
    return err;
}

/* allreduce with sendbuf GLEX_IN_PLACE */
static const char *check_inplace(glex_tctx_t *c, glex_coll_args_t *a, uint64_t seed)
{
    static char msg[200];
    uint64_t bytes = a->count * glex_type_size(a->type);
    uint8_t *buf = malloc(bytes + 1), *exp = malloc(bytes + 1);
    const char *err = NULL;
    ref_fill(a->type, a->op, c->rank, seed, buf, a->count);
    ref_expected(a->type, a->op, c->n, seed, exp, a->count);
    a->sendbuf = GLEX_IN_PLACE;
    a->recvbuf = buf;
    int rc = glex_coll_run(c->g, a);
    int64_t at = rc ? -1 : ref_compare(a->type, buf, exp, a->count);
    if (rc || at >= 0) {
        if (rc)
            snprintf(msg, sizeof msg, "rc %d: %s", rc, glex_last_error());
        else
            snprintf(msg, sizeof msg, "in place: wrong at element %lld", (long long)at);
        err = msg;
    }
    free(buf);
    free(exp);
    return err;
}

static int around_buffer(glex_tctx_t *c)
{
    uint64_t seed = 7;
    const uint64_t buf = 512 * 1024;
    glex_type_t types[2] = { GLEX_DOUBLE, GLEX_INT32 };
    for (int kind = 0; kind < GLEX_COLL_BARRIER; kind++)
        for (int algo = 1; algo < GLEX_ALGO_COUNT; algo++) {
            if (!glex_algo_valid((glex_coll_kind_t)kind, (glex_algo_t)algo))
                continue;
            for (int host = 0; host < 2; host++) {
                glex_coll_args_t a = { .kind = (glex_coll_kind_t)kind, .algo = (glex_algo_t)algo,
                                       .host_mode = host, .op = GLEX_OP_SUM };
                int id = glex_case(c, "%s %s %s around the 512 KB unit buffer",
                                   glex_coll_kind_name(a.kind), glex_algo_name(a.algo),
                                   host ? "host" : "offload");
                for (int t = 0; t < 2; t++) {
                    a.type = types[t];
                    size_t es = glex_type_size(a.type);
                    uint64_t counts[3] = { buf / es - 1, buf / es, buf / es + 1 };
                    for (int ci = 0; ci < 3; ci++) {
                        a.count = counts[ci];
                        a.root = (uint32_t)(ci % c->n);
                        const char *e = check_call(c, &a, seed++);
                        if (e)
                            glex_case_fail(c, id, "%s count %llu root %u: %s",
                                           glex_type_name(a.type), (unsigned long long)a.count,
                                           a.root, e);
                    }
                }
            }
        }
    return 0;
}

/* a counter of this rank's units (field at offset off of
 * glex_unit_counters_t), summed over them */
static uint64_t units_sum(glex_tctx_t *c, size_t off)
{
    uint64_t sum = 0;
    for (uint32_t u = 0; u < glex_fabric_params(c->f)->units; u++) {
        glex_unit_counters_t uc;
        uint64_t v;
        glex_unit_counters(c->f, (uint32_t)c->rank, u, &uc);
        memcpy(&v, (const char *)&uc + off, sizeof v);
        sum += v;
    }
    return sum;
}

/* the direct path on both sides of its mailbox/RDMA threshold (GLEX_RDMA_KB
 * of the run's parameters), every root, in place and not */
static int direct_sizes(glex_tctx_t *c)
{
    static const uint64_t counts[] = { 1, 7, 1023, 1024, 1025, 2048, 4095, 4096, 4097,
                                       16383, 16384, 16385, 40000, 200000 };
    uint64_t seed = 900;
    for (int kind = 0; kind < GLEX_COLL_BARRIER; kind++)
        for (int inplace = 0; inplace < 2; inplace++) {
            if (inplace && kind != GLEX_COLL_ALLREDUCE)
                continue;
            int id = glex_case(c, "direct %s%s, 4 B to 800 KB, every root",
                               glex_coll_kind_name((glex_coll_kind_t)kind),
                               inplace ? " in place" : "");
            for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
                glex_coll_args_t a = { .kind = (glex_coll_kind_t)kind, .algo = GLEX_ALGO_DIRECT,
                                       .type = GLEX_INT32, .op = GLEX_OP_SUM,
                                       .count = counts[i], .root = (uint32_t)(i % c->n) };
                const char *e = inplace ? check_inplace(c, &a, seed++) : check_call(c, &a, seed++);
                if (e) {
                    glex_case_fail(c, id, "count %llu root %u: %s", (unsigned long long)a.count,
                                   a.root, e);
                    break;
                }
            }
        }
    return 0;
}

/* counts that differ between ranks so that some take the mailbox and some
 * the RDMA path: everyone returns (no hang), the ranks that see more data
 * than they expect say so, nobody calls it a dead process, and the next
 * call with agreeing counts is right */
static int direct_mismatch(glex_tctx_t *c)
{
    static const struct {
        glex_coll_kind_t kind;
        uint64_t root_count, other_count;
        const char *what;
    } cases[] = {
        { GLEX_COLL_BCAST, 8192, 1000, "bcast: root 32 KiB (RDMA), receivers 4000 B (mailbox)" },
        { GLEX_COLL_BCAST, 1000, 8192, "bcast: root 4000 B (mailbox), receivers 32 KiB (RDMA)" },
        { GLEX_COLL_ALLREDUCE, 8192, 1000, "allreduce: rank 0 32 KiB, the others 4000 B" },
        { GLEX_COLL_REDUCE, 1000, 8192, "reduce: root 4000 B, the others 32 KiB" },
    };
    static int32_t buf[2][8192];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int id = glex_case(c, "direct count mismatch, %s: no hang, no EDEAD, then a right call",
                           cases[k].what);
        int root = c->rank == 0;
        glex_coll_args_t a = { .kind = cases[k].kind, .algo = GLEX_ALGO_DIRECT,
                               .type = GLEX_INT32, .op = GLEX_OP_SUM,
                               .count = root ? cases[k].root_count : cases[k].other_count,
                               .sendbuf = buf[0], .recvbuf = buf[1] };
        if (a.kind == GLEX_COLL_BCAST)
            a.sendbuf = NULL;
        int rc = glex_coll_run(c->g, &a);
        int more = a.kind == GLEX_COLL_BCAST ? !root && cases[k].root_count > a.count
                                               : cases[k].root_count > a.count;
        if (rc == GLEX_EDEAD)
            glex_case_fail(c, id, "rank %d: EDEAD for a count mismatch: %s", c->rank,
                           glex_last_error());
        else if (more && rc != GLEX_ETRUNC && rc != GLEX_ESIZE)
            glex_case_fail(c, id, "rank %d with %llu of %llu elements: rc %d, expected ETRUNC "
                           "or ESIZE", c->rank, (unsigned long long)a.count,
                           (unsigned long long)cases[k].root_count, rc);
        glex_coll_args_t b = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_DIRECT,
                               .type = GLEX_INT32, .op = GLEX_OP_SUM, .count = 5000 };
        const char *e = check_call(c, &b, 700 + k);
        if (e)
            glex_case_fail(c, id, "rank %d: the next allreduce: %s", c->rank, e);
    }
    return 0;
}

static int huge(glex_tctx_t *c)
{
    for (int algo = 1; algo < GLEX_ALGO_COUNT; algo++) {
        if (!glex_algo_valid(GLEX_COLL_ALLREDUCE, (glex_algo_t)algo))
            continue;
        glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = (glex_algo_t)algo,
                               .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                               .count = (64u << 20) / sizeof(double) };
        int id = glex_case(c, "64 MiB double allreduce %s through a 512 KB buffer",
                           glex_algo_name(a.algo));
        double t0 = glex_test_now_us();
        const char *e = check_call(c, &a, 100 + (uint64_t)algo);
        if (e)
            glex_case_fail(c, id, "%s", e);
        else if (c->rank == 0)
            fprintf(stderr, "# 64 MiB allreduce %s: %.1f ms including checks\n",
                    glex_algo_name(a.algo), (glex_test_now_us() - t0) / 1000);
    }
    int id = glex_case(c, "unit RAM high water stayed within 512 KB");
    for (uint32_t u = 0; u < 8; u++) {
        glex_unit_counters_t uc;
        glex_unit_counters(c->f, (uint32_t)c->rank, u, &uc);
        if (uc.ram_high_water_kb > 512)
            glex_case_fail(c, id, "unit %u high water %llu KB", u,
                           (unsigned long long)uc.ram_high_water_kb);
    }
    return 0;
}

/* Copies of 1 MiB and more between processes of one host: the root's plain
 * sends offer their buffer and the NIC of each of its children that is a
 * leaf reads the second half itself (doc/nic-model.md).  Sizes on and off
 * the 256 KiB pulse, every rank's data checked, the pulses read counted.
 * Run with GLEX_COLL_SEGMENT_KB=4096 (main): whole messages whatever this
 * machine's DMA read costs (auto cuts 64 KiB segments where it is dear). */
static int offered_half(glex_tctx_t *c)
{
    static const uint64_t bytes[] = { 1u << 20, (3u << 20) + 8, 4u << 20, (1u << 20) - 8 };
    int id = glex_case(c, "bcast binomial 1-4 MiB: the root's children read the offered "
                          "second half by DMA, every byte right");
    uint64_t before = units_sum(c, offsetof(glex_unit_counters_t, dma_reads));
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_BINOMIAL,
                               .type = GLEX_INT64, .count = bytes[i] / 8 };
        const char *e = check_call(c, &a, 300 + i);
        if (e)
            glex_case_fail(c, id, "rank %d, %llu bytes: %s", c->rank,
                           (unsigned long long)bytes[i], e);
    }
    uint64_t after = units_sum(c, offsetof(glex_unit_counters_t, dma_reads));
    /* the root's leaf children (a power of two with no child of its own)
     * read; an inner node's receive forwards in the same descriptor (no
     * offer taken), the root receives nothing */
    int leaf = c->rank && !(c->rank & (c->rank - 1)) && (c->rank == 1 || c->rank + 1 >= c->n);
    if (leaf ? after == before : after != before)
        glex_case_fail(c, id, "rank %d read %llu pulses itself, expected %s", c->rank,
                       (unsigned long long)(after - before), leaf ? "some" : "none");
    return 0;
}

/* The NIC's send stage (doc/nic-model.md): a flat_read bcast's root copies
 * its data once into memory registered for its NIC, which every reader's
 * NIC reads in place.  To a single reader (2 ranks) the root offers its
 * own buffer (unit counter dma_staged unchanged); 8 KiB, 16 KiB, 128 KiB +
 * 8, 1 MiB + 8 (streamed into the stage) and 3 MiB (the stage grows) are
 * staged, every byte right on every rank.  Then two nonblocking
 * ones in flight at once from the same root: the second finds the stage
 * taken and offers its own buffer; both right. */
static int bcast_staged(glex_tctx_t *c)
{
    static const uint64_t bytes[] = { 8u << 10, 16u << 10, (128u << 10) + 8, (1u << 20) + 8,
                                      3u << 20 };
    int id = glex_case(c, "bcast flat_read, %d ranks: the root stages its data for several "
                          "readers, every byte right", c->n);
    uint64_t before = units_sum(c, offsetof(glex_unit_counters_t, dma_staged));
    uint64_t staged = 0;
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_FLAT_READ,
                               .type = GLEX_INT64, .count = bytes[i] / 8, .root = 1 };
        const char *e = check_call(c, &a, 500 + i);
        if (e)
            glex_case_fail(c, id, "rank %d, %llu bytes: %s", c->rank,
                           (unsigned long long)bytes[i], e);
        staged++;
    }
    uint64_t got = units_sum(c, offsetof(glex_unit_counters_t, dma_staged)) - before;
    uint64_t want = c->rank == 1 && c->n > 2 ? staged : 0;
    if (got != want)
        glex_case_fail(c, id, "rank %d of %d: %llu sends staged, expected %llu", c->rank, c->n,
                       (unsigned long long)got, (unsigned long long)want);
    id = glex_case(c, "two flat_read ibcasts of 256 KiB in flight from one root, %d ranks: "
                      "both right", c->n);
    enum { N2 = (256u << 10) / 8 };
    int64_t *buf[2], *exp[2];
    glex_req_t *req[2] = { NULL, NULL };
    for (int k = 0; k < 2; k++) {
        buf[k] = malloc(N2 * 8);
        exp[k] = malloc(N2 * 8);
        for (uint32_t i = 0; i < N2; i++)
            exp[k][i] = (int64_t)i * 7 + k * 1000003;
        if (c->rank == 0)
            memcpy(buf[k], exp[k], N2 * 8);
        else
            memset(buf[k], 0, N2 * 8);
        glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_FLAT_READ,
                               .type = GLEX_INT64, .count = N2, .root = 0,
                               .sendbuf = buf[k], .recvbuf = buf[k] };
        if (glex_coll_start(c->g, &a, &req[k]))
            glex_case_fail(c, id, "rank %d: start %d: %s", c->rank, k, glex_last_error());
    }
    for (int k = 0; k < 2; k++) {
        if (req[k] && glex_coll_wait(req[k]))
            glex_case_fail(c, id, "rank %d: wait %d: %s", c->rank, k, glex_last_error());
        if (req[k])
            glex_coll_req_free(req[k]);
        if (memcmp(buf[k], exp[k], N2 * 8))
            glex_case_fail(c, id, "rank %d: bcast %d wrong", c->rank, k);
        free(buf[k]);
        free(exp[k]);
    }
    return 0;
}

/* Auto segments of a 4 MiB binomial bcast: between two processes nothing is
 * forwarded, so one descriptor on each side, but where this machine's DMA
 * read is dear 64 KiB segments (64 descriptors: copies of the eager size,
 * through unit RAM); with three the root pipelines 1 MiB segments (the
 * descriptors this rank posts, glex_coll_plan_size); every byte right */
static int bcast_segments(glex_tctx_t *c)
{
    int id = glex_case(c, "bcast binomial 4 MiB, auto segments: one descriptor between two, "
                          "pipelined segments among more, every byte right");
    uint8_t *send = malloc(4u << 20), *recv = malloc(4u << 20);
    glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_BINOMIAL,
                           .type = GLEX_INT64, .count = (4u << 20) / 8, .sendbuf = send,
                           .recvbuf = recv };
    int n = glex_coll_plan_size(c->g, &a);
    free(send);
    free(recv);
    int two = c->n == 2 ? (glex_dma_read_cheap(c->f) ? 1 : 64) : 0;
    if (c->n == 2 ? n != two : c->rank == 0 && n < 4)
        glex_case_fail(c, id, "rank %d of %d: %d descriptors, expected %s (DMA read %.2fx a copy)",
                       c->rank, c->n, n,
                       c->n == 2 ? (two == 1 ? "1" : "64 (64 KiB segments)")
                                 : "at least 4 (1 MiB segments)",
                       glex_dma_read_cost(c->f) / 100.0);
    const char *e = check_call(c, &a, 400);
    if (e)
        glex_case_fail(c, id, "rank %d of %d: %s", c->rank, c->n, e);
    return 0;
}

/* element k of a buffer of type t (GLEX_INT32 or GLEX_DOUBLE) */
static void elem_set(glex_type_t t, void *b, int k, double v)
{
    if (t == GLEX_INT32)
        ((int32_t *)b)[k] = (int32_t)v;
    else
        ((double *)b)[k] = v;
}

static double elem_get(glex_type_t t, const void *b, int k)
{
    return t == GLEX_INT32 ? ((const int32_t *)b)[k] : ((const double *)b)[k];
}

/* Two flat allreduces (sum) of cnt elements of type t in flight at once on
 * c's group, waited for in order or (reverse) the second first: every
 * element of both right, or the case fails */
static void two_in_flight(glex_tctx_t *c, int id, glex_type_t t, int cnt, int reverse)
{
    size_t es = glex_type_size(t);
    uint8_t *s0 = malloc(cnt * es), *s1 = malloc(cnt * es), *r0 = malloc(cnt * es),
            *r1 = malloc(cnt * es);
    for (int k = 0; k < cnt; k++) {
        elem_set(t, s0, k, c->rank + k);
        elem_set(t, s1, k, 2 * c->rank - k);
    }
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_FLAT, .type = t,
                           .op = GLEX_OP_SUM, .count = (uint64_t)cnt, .sendbuf = s0,
                           .recvbuf = r0 };
    glex_coll_args_t b = a;
    b.sendbuf = s1;
    b.recvbuf = r1;
    glex_req_t *q0 = NULL, *q1 = NULL;
    int rc = glex_coll_start(c->g, &a, &q0);
    if (!rc)
        rc = glex_coll_start(c->g, &b, &q1);
    if (!rc)
        rc = glex_coll_wait(reverse ? q1 : q0);
    if (!rc)
        rc = glex_coll_wait(reverse ? q0 : q1);
    glex_coll_req_free(q0);
    glex_coll_req_free(q1);
    double tri = c->n * (c->n - 1) / 2.0;
    for (int k = 0; !rc && k < cnt; k++) {
        double v0 = elem_get(t, r0, k), v1 = elem_get(t, r1, k);
        if (v0 != tri + c->n * k || v1 != 2 * tri - c->n * k) {
            glex_case_fail(c, id, "two in flight: element %d is %g and %g, expected %g and %g",
                           k, v0, v1, tri + c->n * k, 2 * tri - c->n * k);
            break;
        }
    }
    if (rc)
        glex_case_fail(c, id, "two in flight: rc %d: %s", rc, glex_last_error());
    free(s0), free(s1), free(r0), free(r1);
}

/* Flat above an inline packet, with more data than the receiving units'
 * eager pages hold: senders wait for credit, which must not hold up any
 * member's combines (the allreduce's sends are a sequence of their own).
 * Every kind, offload and host-based, in place and not, and two
 * nonblocking allreduces in flight at once: every result right, no hang,
 * and some sender did ask for credit (the wait was exercised). */
static int flat_beyond_eager(glex_tctx_t *c)
{
    static const uint64_t counts[] = { 2048, 8192, 16384 }; /* int32: 8-64 KiB */
    int id = glex_case(c, "flat beyond the eager pages (%d members): every result right, "
                          "senders asked for credit", c->n);
    size_t asked_at = offsetof(glex_unit_counters_t, eager_asked);
    uint64_t seed = 500, asked = units_sum(c, asked_at);
    for (int kind = 0; kind < GLEX_COLL_BARRIER; kind++)
        for (int host = 0; host < 2; host++)
            for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
                glex_coll_args_t a = { .kind = (glex_coll_kind_t)kind, .algo = GLEX_ALGO_FLAT,
                                       .host_mode = host, .type = GLEX_INT32,
                                       .op = GLEX_OP_SUM, .count = counts[i],
                                       .root = (uint32_t)(i % c->n) };
                const char *e = kind == GLEX_COLL_ALLREDUCE && (i & 1)
                                    ? check_inplace(c, &a, seed++)
                                    : check_call(c, &a, seed++);
                if (e)
                    glex_case_fail(c, id, "%s %s count %llu: %s", glex_coll_kind_name(a.kind),
                                   host ? "host" : "offload", (unsigned long long)a.count, e);
            }
    two_in_flight(c, id, GLEX_INT32, 8192, 0);
    if (units_sum(c, asked_at) == asked && c->rank == 0)
        glex_case_fail(c, id, "rank 0's units: no sender asked for credit");
    return 0;
}

/* Flat allreduce above 64 KiB (doc/algorithms.md): a reduce-scatter and an
 * allgather by read transfers, each member's vector and reduced block
 * offered from its NIC's send stage.  Counts on and off a multiple of the
 * group's size, float / double / int32, offload and host-based, in place
 * and not: every element right; 'auto' takes it with processes sharing the
 * CPUs; each offload call staged both offers (unit counter dma_staged);
 * two nonblocking ones in flight at once (the second finds the stage
 * taken) both right. */
static int flat_reads(glex_tctx_t *c)
{
    static const uint64_t counts[] = { 16385, 65536, 100003, (3u << 20) / 4 + 1 };
    static const glex_type_t types[] = { GLEX_FLOAT, GLEX_DOUBLE, GLEX_INT32, GLEX_FLOAT };
    int id = glex_case(c, "flat allreduce by reads (%d members): every result right, both "
                          "offers staged", c->n);
    size_t staged_at = offsetof(glex_unit_counters_t, dma_staged);
    uint64_t seed = 700, offload_calls = 0, before = units_sum(c, staged_at);
    for (int host = 0; host < 2; host++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_FLAT,
                                   .host_mode = host, .type = types[i], .op = GLEX_OP_SUM,
                                   .count = counts[i] };
            glex_algo_t auto_pick = GLEX_ALGO_AUTO, ran = GLEX_ALGO_AUTO;
            static char dummy[8];
            glex_coll_args_t q = a;
            q.sendbuf = q.recvbuf = dummy; /* looked at for null only */
            glex_coll_resolve(c->g, &q, &ran);
            q.algo = GLEX_ALGO_AUTO;
            glex_coll_resolve(c->g, &q, &auto_pick);
            if (ran != GLEX_ALGO_FLAT || auto_pick != GLEX_ALGO_FLAT)
                glex_case_fail(c, id, "count %llu resolves to %s, auto to %s",
                               (unsigned long long)a.count, glex_algo_name(ran),
                               glex_algo_name(auto_pick));
            const char *e = (i & 1) ? check_inplace(c, &a, seed++) : check_call(c, &a, seed++);
            if (e)
                glex_case_fail(c, id, "%s %s count %llu%s: %s", glex_type_name(a.type),
                               host ? "host" : "offload", (unsigned long long)a.count,
                               (i & 1) ? " in place" : "", e);
            offload_calls += !host;
        }
    uint64_t staged = units_sum(c, staged_at) - before;
    if (staged < 2 * offload_calls)
        glex_case_fail(c, id, "rank %d: %llu offers staged in %llu offload calls, expected at "
                       "least two a call", c->rank, (unsigned long long)staged,
                       (unsigned long long)offload_calls);
    id = glex_case(c, "two flat allreduces by reads in flight (%d members): both right", c->n);
    two_in_flight(c, id, GLEX_DOUBLE, 40000, 1);
    return 0;
}

/* The direct path's policy differs between ranks (rank 0 GLEX_STAGE_MAP=0,
 * the others 1): every rank's first direct call is refused with
 * GLEX_EMISMATCH naming the variables, none hangs; the engine algorithms
 * still run on that group. */
static int direct_policy_mismatch(glex_tctx_t *c)
{
    int id = glex_case(c, "direct path: GLEX_STAGE_MAP differs between ranks -> EMISMATCH on "
                          "every rank, then an engine allreduce is right");
    glex_coll_policy_t pol;
    glex_coll_policy_default(&pol);
    pol.stage_map = c->rank == 0 ? 0 : 1;
    uint32_t nodes[16];
    uint16_t vps[16];
    for (int r = 0; r < c->n; r++) {
        nodes[r] = (uint32_t)r;
        vps[r] = 0;
    }
    glex_group_t *g;
    int rc = glex_group_create_policy(c->vp, 77, (uint32_t)c->n, (uint32_t)c->rank, nodes, vps,
                                      &pol, &g);
    if (rc) {
        glex_case_fail(c, id, "rank %d: group_create_policy: %s", c->rank, glex_last_error());
        return 0;
    }
    int32_t in = c->rank + 1, out = 0;
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_DIRECT,
                           .type = GLEX_INT32, .op = GLEX_OP_SUM, .count = 1, .sendbuf = &in,
                           .recvbuf = &out };
    rc = glex_coll_run(g, &a);
    if (rc != GLEX_EMISMATCH || !strstr(glex_last_error(), "GLEX_STAGE_MAP"))
        glex_case_fail(c, id, "rank %d: rc %d (%s), expected EMISMATCH naming GLEX_STAGE_MAP",
                       c->rank, rc, glex_last_error());
    a.algo = GLEX_ALGO_BINOMIAL;
    out = 0;
    rc = glex_coll_run(g, &a);
    if (rc || out != c->n * (c->n + 1) / 2)
        glex_case_fail(c, id, "rank %d: binomial allreduce after it: rc %d, sum %d", c->rank, rc,
                       out);
    glex_group_free(g);
    return 0;
}

/* the policy's variables: a bad value is refused naming it and its range;
 * good ones land in the policy */
static void policy_env(void)
{
    static const struct { const char *var, *val, *want; } bad[] = {
        { "GLEX_COLL_SEGMENT_KB", "0", "auto or 1..65536" },
        { "GLEX_COLL_SEGMENT_KB", "65537", "auto or 1..65536" },
        { "GLEX_COLL_PLAN_CACHE", "0", "range 1..1000000" },
        { "GLEX_RDMA_KB", "1025", "auto or 0..1024" },
        { "GLEX_STAGE_KB", "-1", "auto or 0..4194304" },
        { "GLEX_STAGE_MAP", "2", "range 0..1" },
        { "GLEX_READ_KB", "65537", "auto or 0..65536" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        glex_coll_policy_t p;
        glex_coll_policy_default(&p);
        setenv(bad[i].var, bad[i].val, 1);
        int rc = glex_coll_policy_from_env(&p);
        unsetenv(bad[i].var);
        tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), bad[i].var) &&
                   strstr(glex_last_error(), bad[i].want),
               "%s=%s refused: %s", bad[i].var, bad[i].val, glex_last_error());
    }
    glex_coll_policy_t p;
    glex_coll_policy_default(&p);
    setenv("GLEX_COLL_SEGMENT_KB", "512", 1);
    setenv("GLEX_RDMA_KB", "auto", 1);
    setenv("GLEX_STAGE_KB", "0", 1);
    setenv("GLEX_READ_KB", "32", 1);
    int rc = glex_coll_policy_from_env(&p);
    unsetenv("GLEX_COLL_SEGMENT_KB");
    unsetenv("GLEX_RDMA_KB");
    unsetenv("GLEX_STAGE_KB");
    unsetenv("GLEX_READ_KB");
    tap_ok(rc == 0 && p.segment_kb == 512 && p.rdma_kb == -1 && p.stage_kb == 0 &&
               p.stage_map == 1 && p.plan_cache == 256 && p.read_kb == 32,
           "policy from the environment: segment 512 KiB, RDMA auto, no staging, read in "
           "place from 32 KiB, defaults kept");
    p.stage_map = 2;
    tap_ok(glex_coll_policy_check(&p) == GLEX_EINVAL &&
               strstr(glex_last_error(), "GLEX_STAGE_MAP=2"),
           "policy check refuses stage_map 2: %s", glex_last_error());
}

/* value NULL: unset */
static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

int main(int argc, char **argv)
{
    int sizes[16] = { 2, 3, 5, 8 }, ns = 4;
    if (argc > 1) {
        ns = argc - 1 < 16 ? argc - 1 : 16;
        for (int i = 0; i < ns; i++)
            sizes[i] = atoi(argv[i + 1]);
    }
    policy_env();
    for (int i = 0; i < ns; i++)
        glex_run_group(sizes[i], NULL, around_buffer, NULL, 1200, "big");
    glex_run_group(3, NULL, huge, NULL, 1200, "huge");
    setenv("GLEX_COLL_SEGMENT_KB", "4096", 1);
    glex_run_group(2, NULL, offered_half, NULL, 600, "offered half");
    glex_run_group(5, NULL, offered_half, NULL, 600, "offered half");
    unsetenv("GLEX_COLL_SEGMENT_KB");
    glex_run_group(2, NULL, bcast_staged, NULL, 600, "staged");
    glex_run_group(4, NULL, bcast_staged, NULL, 600, "staged");
    glex_run_group(2, NULL, bcast_segments, NULL, 600, "segments");
    glex_run_group(3, NULL, bcast_segments, NULL, 600, "segments");
    glex_run_group(3, NULL, flat_reads, NULL, 600, "flat reads");
    glex_run_group(5, NULL, flat_reads, NULL, 600, "flat reads");
    glex_run_group(9, NULL, flat_beyond_eager, NULL, 600, "flat beyond eager");
    glex_run_group(17, NULL, flat_beyond_eager, NULL, 600, "flat beyond eager");
    /* the direct path's threshold: default (auto), everything by RDMA, and
     * 16 KiB, at 2, 3 and 5 processes; its policy comes from the
     * environment every rank inherits (glex_coll_policy_from_env) */
    static const char *const rdma_kb[3] = { NULL, "0", "16" };
    for (int k = 0; k < 3; k++) {
        set_env("GLEX_RDMA_KB", rdma_kb[k]);
        for (int n = 2; n <= 5; n += n == 3 ? 2 : 1)
            glex_run_group(n, NULL, direct_sizes, NULL, 600, k == 0 ? "direct auto" :
                           k == 1 ? "direct GLEX_RDMA_KB=0" : "direct GLEX_RDMA_KB=16");
    }
    set_env("GLEX_RDMA_KB", "16");
    glex_run_group(3, NULL, direct_mismatch, NULL, 600, "direct GLEX_RDMA_KB=16");
    /* large reduce with the senders copying out (GLEX_STAGE_KB) and not */
    /* (stages the root maps, stages it reads by RDMA) */
    static const struct {
        const char *stage_kb, *map, *what, *mismatch;
    } staging[3] = {
        { "1024", "1", "direct RDMA, GLEX_STAGE_KB=1024", "direct GLEX_RDMA_KB=16 GLEX_STAGE_KB=1024" },
        { "1024", "0", "direct RDMA, GLEX_STAGE_KB=1024 GLEX_STAGE_MAP=0",
          "direct GLEX_RDMA_KB=16 GLEX_STAGE_KB=1024 GLEX_STAGE_MAP=0" },
        { "0", "1", "direct RDMA, GLEX_STAGE_KB=0", "direct GLEX_RDMA_KB=16 GLEX_STAGE_KB=0" },
    };
    for (int k = 0; k < 3; k++) {
        set_env("GLEX_RDMA_KB", "0");
        set_env("GLEX_STAGE_KB", staging[k].stage_kb);
        set_env("GLEX_STAGE_MAP", staging[k].map);
        for (int n = 2; n <= 5; n += n == 3 ? 2 : 1)
            glex_run_group(n, NULL, direct_sizes, NULL, 600, staging[k].what);
        set_env("GLEX_RDMA_KB", "16");
        glex_run_group(3, NULL, direct_mismatch, NULL, 600, staging[k].mismatch);
    }
    set_env("GLEX_RDMA_KB", NULL);
    set_env("GLEX_STAGE_KB", NULL);
    set_env("GLEX_STAGE_MAP", NULL);
    glex_run_group(3, NULL, direct_policy_mismatch, NULL, 120, "direct policy");
    return tap_done();
}
