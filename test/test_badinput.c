/* test_badinput.c - bad arguments to the collective API get the documented
 * error and a message with the value and range; nothing is posted, and the
 * group and segment work normally afterwards.  Also what 'auto' resolves
 * to by processes per CPU where an all-to-all step stops paying. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <stdlib.h>

#include <string.h>

static int expect(glex_tctx_t *c, const char *what, glex_coll_args_t a, int code, const char *msg)
{
    int id = glex_case(c, "%s -> %s", what, glex_strerror(code));
    int rc = glex_coll_run(c->g, &a);
    if (rc != code || !strstr(glex_last_error(), msg))
        glex_case_fail(c, id, "rc %d, message '%s' (wanted %d with '%s')", rc, glex_last_error(),
                       code, msg);
    return id;
}

/* the tasks a group's calls ran, from their CQEs (one a call, but a flat
 * allreduce above an inline packet runs its sends as a task of their own:
 * doc/algorithms.md) */
static uint64_t group_tasks(const glex_group_t *g)
{
    uint64_t n = 0;
    for (int k = 0; g && k < GLEX_COLL_KIND_COUNT; k++)
        for (int al = 0; al < GLEX_ALGO_COUNT; al++)
            for (int h = 0; h < 2; h++) {
                glex_coll_stats_t st;
                if (!glex_group_stats(g, (glex_coll_kind_t)k, (glex_algo_t)al, h, &st))
                    n += st.tasks;
            }
    return n;
}

static int run(glex_tctx_t *c)
{
    double buf[16] = { 0 }, out[16];
    glex_coll_args_t ok = { .kind = GLEX_COLL_ALLREDUCE, .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                            .count = 16, .sendbuf = buf, .recvbuf = out };
    glex_coll_args_t a = ok;
    a.recvbuf = NULL;
    expect(c, "allreduce with null recvbuf and count 16", a, GLEX_EINVAL, "recvbuf is null");
    a = ok;
    a.sendbuf = NULL;
    expect(c, "allreduce with null sendbuf and count 16", a, GLEX_EINVAL, "sendbuf is null");
    a = ok;
    a.kind = GLEX_COLL_BCAST;
    a.root = (uint32_t)c->n;
    expect(c, "bcast root out of range", a, GLEX_EINVAL, "root");
    a = ok;
    a.op = GLEX_OP_BAND;
    expect(c, "bitwise and on double", a, GLEX_ENOTSUP, "not offloadable");
    a = ok;
    a.op = GLEX_OP_MAXLOC;
    a.type = GLEX_INT32;
    expect(c, "maxloc on a non-pair type", a, GLEX_ENOTSUP, "not offloadable");
    a = ok;
    a.type = (glex_type_t)99;
    expect(c, "type out of range", a, GLEX_EINVAL, "type 99");
    a = ok;
    a.kind = GLEX_COLL_BCAST;
    a.algo = GLEX_ALGO_RABENSEIFNER;
    expect(c, "rabenseifner for bcast", a, GLEX_EINVAL, "binomial|double_tree");
    a = ok;
    a.count = 1ull << 50;
    expect(c, "count beyond 2^40 bytes", a, GLEX_EINVAL, "count");
    a = ok;
    a.kind = GLEX_COLL_REDUCE;
    a.root = 0;
    a.sendbuf = GLEX_IN_PLACE;
    if (c->rank != 0)
        expect(c, "in-place reduce at a non-root rank", a, GLEX_EINVAL, "in-place");
    else
        glex_case(c, "in-place reduce at a non-root rank -> %s", glex_strerror(GLEX_EINVAL));
    int id = glex_case(c, "algorithm names are parsed with a list of the valid ones");
    glex_algo_t x;
    if (glex_algo_parse(GLEX_COLL_ALLREDUCE, "ring", &x) != GLEX_EINVAL ||
        !strstr(glex_last_error(),
                "auto|binomial|recursive_doubling|rabenseifner|double_tree"))
        glex_case_fail(c, id, "%s", glex_last_error());
    id = glex_case(c, "an algorithm that does not fit the call falls back to auto");
    a = ok;
    a.count = 1;
    a.algo = GLEX_ALGO_AUTO;
    glex_algo_t y = GLEX_ALGO_AUTO;
    glex_coll_resolve(c->g, &a, &y);
    a.algo = GLEX_ALGO_RABENSEIFNER;
    if (glex_coll_resolve(c->g, &a, &x) || x != y || x == GLEX_ALGO_RABENSEIFNER)
        glex_case_fail(c, id, "resolved to %s, auto to %s", glex_algo_name(x), glex_algo_name(y));
    id = glex_case(c, "the group still works after the errors");
    for (int i = 0; i < 16; i++)
        buf[i] = c->rank + i;
    if (glex_coll_run(c->g, &ok))
        glex_case_fail(c, id, "%s", glex_last_error());
    for (int i = 0; i < 16; i++)
        if (out[i] != c->n * (c->n - 1) / 2.0 + c->n * i)
            glex_case_fail(c, id, "element %d is %g", i, out[i]);
    id = glex_case(c, "a repeated call reuses its cached plan (no new compile)");
    uint32_t before = glex_group_plans(c->g);
    for (int i = 0; i < 5; i++)
        if (glex_coll_run(c->g, &ok))
            glex_case_fail(c, id, "%s", glex_last_error());
    if (glex_group_plans(c->g) != before)
        glex_case_fail(c, id, "plans %u -> %u", before, glex_group_plans(c->g));
    id = glex_case(c, "the plan cache is bounded by GLEX_COLL_PLAN_CACHE and stays correct");
    setenv("GLEX_COLL_PLAN_CACHE", "3", 1);
    uint32_t nodes[64];
    uint16_t vps[64] = { 0 };
    for (int r = 0; r < c->n; r++)
        nodes[r] = (uint32_t)r;
    glex_group_t *small;
    if (glex_group_create(c->vp, 77, (uint32_t)c->n, (uint32_t)c->rank, nodes, vps, &small))
        glex_case_fail(c, id, "%s", glex_last_error());
    unsetenv("GLEX_COLL_PLAN_CACHE");
    for (int k = 1; k <= 10 && small; k++) {
        glex_coll_args_t b = ok;
        b.count = (uint64_t)k;
        for (int i = 0; i < 16; i++)
            out[i] = -1;
        if (glex_coll_run(small, &b) || out[k - 1] != c->n * (c->n - 1) / 2.0 + c->n * (k - 1))
            glex_case_fail(c, id, "count %d wrong", k);
        if (glex_group_plans(small) > 3)
            glex_case_fail(c, id, "%u plans cached", glex_group_plans(small));
    }
    uint64_t tasks77 = group_tasks(small);
    glex_group_free(small);
    id = glex_case(c, "GLEX_COLL_PLAN_CACHE=0 is rejected with its range");
    setenv("GLEX_COLL_PLAN_CACHE", "0", 1);
    if (glex_group_create(c->vp, 78, (uint32_t)c->n, (uint32_t)c->rank, nodes, vps, &small) !=
            GLEX_EINVAL || !strstr(glex_last_error(), "1..1000000"))
        glex_case_fail(c, id, "%s", glex_last_error());
    unsetenv("GLEX_COLL_PLAN_CACHE");
    /* the group keeps each kind's last call (algorithm and plan): a call
     * that differs in any argument must not get it, and one whose plan the
     * cache evicted (1 plan, other kinds between) must not reuse it */
    id = glex_case(c, "calls alternating in op, count, in-place and root get their own plans");
    setenv("GLEX_COLL_PLAN_CACHE", "1", 1);
    if (glex_group_create(c->vp, 79, (uint32_t)c->n, (uint32_t)c->rank, nodes, vps, &small))
        glex_case_fail(c, id, "%s", glex_last_error()), small = NULL;
    unsetenv("GLEX_COLL_PLAN_CACHE");
    int extra = 0;
    for (int round = 0; round < 3 && small; round++) {
        glex_coll_args_t sum = ok, max = ok, inpl = ok, bc = ok;
        max.op = GLEX_OP_MAX;
        inpl.count = 7;
        inpl.sendbuf = GLEX_IN_PLACE;
        bc.kind = GLEX_COLL_BCAST;
        bc.root = (uint32_t)(round % c->n);
        bc.count = 5;
        bc.sendbuf = bc.recvbuf = out;
        for (int k = 0; k < 2; k++) { /* each twice: the second call is the kept one */
            for (int i = 0; i < 16; i++)
                buf[i] = c->rank + i, out[i] = -1;
            int rc = glex_coll_run(small, &sum);
            if (rc || out[15] != c->n * (c->n - 1) / 2.0 + c->n * 15)
                glex_case_fail(c, id, "round %d sum: rc %d, %g", round, rc, out[15]);
            rc = glex_coll_run(small, &max);
            if (rc || out[15] != c->n - 1 + 15)
                glex_case_fail(c, id, "round %d max: rc %d, %g", round, rc, out[15]);
            for (int i = 0; i < 16; i++)
                out[i] = c->rank + i;
            rc = glex_coll_run(small, &inpl);
            if (rc || out[6] != c->n * (c->n - 1) / 2.0 + c->n * 6 || out[7] != c->rank + 7)
                glex_case_fail(c, id, "round %d in place: rc %d, %g %g", round, rc, out[6], out[7]);
            for (int i = 0; i < 16; i++)
                out[i] = c->rank == (int)bc.root ? 100 + i : -1;
            rc = glex_coll_run(small, &bc);
            if (rc || out[4] != 104 || out[5] != (c->rank == (int)bc.root ? 105 : -1))
                glex_case_fail(c, id, "round %d bcast from %u: rc %d, %g %g", round, bc.root, rc,
                               out[4], out[5]);
        }
    }
    extra += (int)group_tasks(small);
    glex_group_free(small);
    id = glex_case(c, "no task failed and nothing was left posted");
    glex_vp_counters_t vc;
    glex_vp_counters(c->f, (uint32_t)c->rank, 0, &vc);
    uint64_t want = tasks77 + (uint64_t)extra + group_tasks(c->g);
    if (vc.tasks_failed || vc.tasks_completed != want || want < 16u + 24u)
        glex_case_fail(c, id, "completed %llu (the calls' CQEs say %llu) failed %llu",
                       (unsigned long long)vc.tasks_completed, (unsigned long long)want,
                       (unsigned long long)vc.tasks_failed);
    return 0;
}

/* 'auto' at 13 ranks: yielding (12 per CPU) the one-step flat allreduce of
 * an inline vector and flat barrier; sleeping (13 per CPU, past
 * GLEX_YIELD_MAX_PER_CPU) binomial for both, small and large (below 512
 * KiB), and the calls then run right; a 768 KiB and a 1 MiB allreduce
 * resolved at 1, 4 and 8 per CPU */
static int auto_per_cpu(glex_tctx_t *c)
{
    float in[1024], out[1024];
    for (int i = 0; i < 1024; i++)
        in[i] = (float)(c->rank + i);
    glex_coll_args_t ar = { .kind = GLEX_COLL_ALLREDUCE, .type = GLEX_FLOAT, .op = GLEX_OP_SUM,
                            .count = 2, .sendbuf = in, .recvbuf = out, .blocking = 1 };
    glex_coll_args_t big = ar, bar = { .kind = GLEX_COLL_BARRIER, .blocking = 1 };
    big.count = 1024;
    const struct {
        unsigned per_cpu;
        glex_algo_t small, large, barrier;
    } want[] = {
        { GLEX_YIELD_MAX_PER_CPU, GLEX_ALGO_FLAT, GLEX_ALGO_BINOMIAL, GLEX_ALGO_FLAT },
        { GLEX_YIELD_MAX_PER_CPU + 1, GLEX_ALGO_BINOMIAL, GLEX_ALGO_BINOMIAL, GLEX_ALGO_BINOMIAL },
    };
    for (int w = 0; w < 2; w++) {
        int id = glex_case(c, "auto at %d ranks, %u per CPU: allreduce 8 B %s, 4 KiB %s, barrier "
                              "%s, results right",
                           c->n, want[w].per_cpu, glex_algo_name(want[w].small),
                           glex_algo_name(want[w].large), glex_algo_name(want[w].barrier));
        glex_algo_t s = GLEX_ALGO_AUTO, l = GLEX_ALGO_AUTO, b = GLEX_ALGO_AUTO;
        if (glex_fabric_set_job_per_cpu(c->f, want[w].per_cpu) ||
            glex_coll_resolve(c->g, &ar, &s) || glex_coll_resolve(c->g, &big, &l) ||
            glex_coll_resolve(c->g, &bar, &b) || s != want[w].small || l != want[w].large ||
            b != want[w].barrier) {
            glex_case_fail(c, id, "allreduce 8 B %s, 4 KiB %s, barrier %s (%s)",
                           glex_algo_name(s), glex_algo_name(l), glex_algo_name(b),
                           glex_last_error());
            continue;
        }
        if (glex_coll_run(c->g, &ar) || glex_coll_run(c->g, &bar) || glex_coll_run(c->g, &big))
            glex_case_fail(c, id, "run: %s", glex_last_error());
        float sum0 = (float)(c->n * (c->n - 1) / 2);
        for (int i = 0; i < 1024; i++)
            if (out[i] != sum0 + (float)(c->n * i)) {
                glex_case_fail(c, id, "element %d is %g", i, out[i]);
                break;
            }
    }
    /* a 768 KiB allreduce: Rabenseifner with a CPU each, flat (a
     * reduce-scatter and an allgather by reads) at 4 and 8 per CPU, a 1 MiB
     * one flat at 8 (resolved only) */
    glex_coll_args_t mid = ar;
    const struct {
        unsigned per_cpu;
        uint64_t count;
        glex_algo_t algo;
    } rows[] = {
        { 1, 196608, GLEX_ALGO_RABENSEIFNER },
        { 4, 196608, GLEX_ALGO_FLAT },
        { 8, 262144, GLEX_ALGO_FLAT },
    };
    for (size_t w = 0; w < sizeof rows / sizeof rows[0]; w++) {
        mid.count = rows[w].count;
        int id = glex_case(c, "auto at %d ranks, %u per CPU: allreduce %llu KiB %s", c->n,
                           rows[w].per_cpu, (unsigned long long)rows[w].count * 4 / 1024,
                           glex_algo_name(rows[w].algo));
        glex_algo_t m = GLEX_ALGO_AUTO;
        if (glex_fabric_set_job_per_cpu(c->f, rows[w].per_cpu) ||
            glex_coll_resolve(c->g, &mid, &m) || m != rows[w].algo)
            glex_case_fail(c, id, "%s (%s)", glex_algo_name(m), glex_last_error());
    }
    return 0;
}

/* DMA reads node 0's units counted */
static uint64_t node0_dma_reads(glex_tctx_t *c)
{
    uint64_t n = 0;
    glex_unit_counters_t uc;
    for (uint32_t u = 0; u < glex_fabric_params(c->f)->units; u++)
        if (!glex_unit_counters(c->f, 0, u, &uc))
            n += uc.dma_reads;
    return n;
}

/* 'auto' for a bcast of 3 ranks with a CPU each, by GLEX_READ_KB
 * (c->arg: its value, or NULL for auto): from that size every member's NIC
 * reads the root's buffer (flat_read) up to 1 MiB, below and above it
 * binomial; auto from the size the segment measured the DMA read to pay
 * from (glex_dma_read_from_kb), or never; a 16 KiB bcast then runs right */
static int bcast_read(glex_tctx_t *c)
{
    const char *setting = c->arg;
    uint32_t cost = glex_dma_read_cost(c->f);
    uint64_t from = setting ? (uint64_t)atoi(setting) * 1024u
                            : (uint64_t)glex_dma_read_from_kb(c->f) * 1024u;
    static uint8_t buf[65536];
    glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .type = GLEX_UINT8, .sendbuf = buf,
                           .recvbuf = buf, .blocking = 1 };
    if (glex_fabric_set_job_per_cpu(c->f, 1))
        return 1;
    static uint8_t big[1 << 20];
    const uint64_t sizes[] = { 4096, 8192, 16384, 65536, 1 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        a.count = sizes[i];
        a.sendbuf = a.recvbuf = sizes[i] > sizeof buf ? big : buf;
        glex_algo_t want = from && sizes[i] >= from && sizes[i] < (1u << 20) ? GLEX_ALGO_FLAT_READ
                                                                             : GLEX_ALGO_BINOMIAL;
        int id = glex_case(c, "auto at 3 ranks, a CPU each, GLEX_READ_KB=%s (DMA read "
                              "%.2fx a copy, pays from %u KiB): bcast %llu B %s",
                           setting ? setting : "auto", cost / 100.0, glex_dma_read_from_kb(c->f),
                           (unsigned long long)sizes[i], glex_algo_name(want));
        glex_algo_t got = GLEX_ALGO_AUTO;
        if (glex_coll_resolve(c->g, &a, &got) || got != want)
            glex_case_fail(c, id, "%s (%s)", glex_algo_name(got), glex_last_error());
    }
    a.count = 16384;
    a.sendbuf = a.recvbuf = buf;
    a.root = 1;
    for (size_t i = 0; i < a.count; i++)
        buf[i] = c->rank == 1 ? (uint8_t)(i * 7 + 3) : 0;
    int id = glex_case(c, "GLEX_READ_KB=%s: a 16 KiB bcast from rank 1 arrives whole",
                       setting ? setting : "auto");
    if (glex_coll_run(c->g, &a)) {
        glex_case_fail(c, id, "run: %s", glex_last_error());
        return 0;
    }
    for (size_t i = 0; i < a.count; i++)
        if (buf[i] != (uint8_t)(i * 7 + 3)) {
            glex_case_fail(c, id, "byte %zu is %u", i, buf[i]);
            break;
        }
    /* a 16 KiB reduce to rank 0 (binomial: both others its children), read
     * in place by rank 0's NIC where the setting says so: its units count
     * two DMA reads more, else none */
    static float in[4096], out[4096];
    for (int i = 0; i < 4096; i++)
        in[i] = (float)(c->rank * 1000 + i);
    glex_coll_args_t r = { .kind = GLEX_COLL_REDUCE, .type = GLEX_FLOAT, .op = GLEX_OP_SUM,
                           .count = 4096, .sendbuf = in, .recvbuf = out, .blocking = 1 };
    int reads = from && 16384 >= from;
    id = glex_case(c, "GLEX_READ_KB=%s: a 16 KiB reduce right, %s", setting ? setting : "auto",
                   reads ? "its children read in place by the root's NIC" : "pushed to the root");
    uint64_t before = node0_dma_reads(c);
    if (glex_coll_run(c->g, &r)) {
        glex_case_fail(c, id, "run: %s", glex_last_error());
        return 0;
    }
    uint64_t after = node0_dma_reads(c);
    for (int i = 0; c->rank == 0 && i < 4096; i++)
        if (out[i] != (float)(3000 + 3 * i)) {
            glex_case_fail(c, id, "element %d is %g", i, out[i]);
            break;
        }
    if (c->rank == 0 && after - before != (reads ? 2u : 0u))
        glex_case_fail(c, id, "%llu DMA reads at the root", (unsigned long long)(after - before));
    return 0;
}

int main(void)
{
    glex_run_group(3, NULL, run, NULL, 60, "badinput");
    glex_run_group(13, NULL, auto_per_cpu, NULL, 120, "auto per CPU");
    static const char *const reads[] = { NULL, "0", "16" };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        if (reads[i])
            setenv("GLEX_READ_KB", reads[i], 1);
        else
            unsetenv("GLEX_READ_KB");
        glex_run_group(3, NULL, bcast_read, (void *)reads[i], 60, "bcast read");
    }
    unsetenv("GLEX_READ_KB");
    return tap_done();
}
