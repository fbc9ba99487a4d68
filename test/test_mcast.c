/* test_mcast.c - multicast in the modeled routers (doc/multicast.md): a
 * group's tree in the routers' tables (8 nodes on radix-4 routers: a
 * 3-level fat tree), bcast by multicast from every root at sizes that take
 * one packet, several, and more than a flow-control window, checked; the
 * link counters count exactly the tree's links per packet, one injection a
 * packet; allreduce as reduce + multicast; errors: more members than
 * allowed, a GID in use, a full router table (nothing installed, the
 * unicast algorithms still work, the multicast algorithm falls back);
 * deletion frees every entry; an entry left unrefreshed ages out and its
 * group then fails with a clear error. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 8

static char param_path[64];

static uint32_t entries_used(glex_fabric_t *f)
{
    glex_net_shape_t s;
    glex_net_shape(f, &s);
    uint32_t used = 0;
    for (uint32_t r = 0; r < s.routers; r++)
        used += glex_net_entries_used(f, r);
    return used;
}

static void barrier(glex_tctx_t *c)
{
    glex_coll_args_t b = { .kind = GLEX_COLL_BARRIER, .algo = GLEX_ALGO_BINOMIAL };
    glex_coll_run(c->g, &b);
}

static int bcast(glex_tctx_t *c, glex_algo_t algo, uint32_t root, uint8_t *buf, uint64_t n)
{
    glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = algo, .root = root, .count = n,
                           .type = GLEX_UINT8, .recvbuf = buf };
    return glex_coll_run(c->g, &a);
}

/* start, wait for and free a call: its status, and the algorithm it ran */
static int run_call(glex_tctx_t *c, const glex_coll_args_t *a, glex_algo_t *ran)
{
    glex_req_t *r = NULL;
    int rc = glex_coll_start(c->g, a, &r);
    *ran = r ? glex_coll_req_algo(r) : GLEX_ALGO_AUTO;
    if (!rc)
        rc = glex_coll_wait(r);
    glex_coll_req_free(r);
    return rc;
}

static uint8_t pattern(uint32_t root, uint64_t i) { return (uint8_t)(root * 31 + i * 7 + 1); }

/* the tree of all 8 nodes from node 0 on radix-4 routers has 14 links (8
 * node links, 4 leaf-level-2, 2 level-2-top); a multicast from any member
 * crosses each once: its injection and 13 more */
#define TREE_LINKS 14u

static int tree_and_bcast(glex_tctx_t *c)
{
    int id = glex_case(c, "radix 4, 8 nodes: 3 levels; every root's multicast bcast of 1 B - "
                          "100 KiB arrives intact");
    glex_net_shape_t s;
    glex_net_shape(c->f, &s);
    if (s.k != 2 || s.levels != 3 || s.routers != 4 + 4 + 4)
        glex_case_fail(c, id, "shape k %u levels %u routers %u: want 2, 3, 12", s.k, s.levels,
                       s.routers);
    static const uint64_t sizes[] = { 1, 48, 49, 1000, 100 * 1024 };
    uint8_t *buf = malloc(100 * 1024);
    for (uint32_t root = 0; root < N; root++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            uint64_t n = sizes[z];
            for (uint64_t i = 0; i < n; i++)
                buf[i] = c->rank == (int)root ? pattern(root, i) : 0;
            int rc = bcast(c, GLEX_ALGO_MULTICAST, root, buf, n);
            uint64_t bad = 0;
            for (uint64_t i = 0; i < n; i++)
                bad += buf[i] != pattern(root, i);
            if (rc || bad)
                glex_case_fail(c, id, "rank %d root %u %llu B: rc %d (%s), %llu bytes wrong",
                               c->rank, root, (unsigned long long)n, rc,
                               rc ? glex_last_error() : "", (unsigned long long)bad);
        }
    free(buf);
    id = glex_case(c, "the group's tree is in the routers (rank 0 created it at the first call)");
    if (entries_used(c->f) != 4 + 2 + 1)
        glex_case_fail(c, id, "%u entries in use: the tree has 7 routers", entries_used(c->f));

    id = glex_case(c, "link counters: a multicast of M packets injects M head flits and crosses "
                      "the tree's %u links once each", TREE_LINKS);
    for (uint32_t root = 0; root < N; root += 5) {
        barrier(c);
        glex_link_stats_t inj0, all0, inj1, all1;
        glex_net_totals(c->f, &inj0, &all0);
        barrier(c);
        uint8_t b[480]; /* 10 packets of 48 bytes */
        memset(b, (int)root, sizeof b);
        int rc = bcast(c, GLEX_ALGO_MULTICAST, root, b, sizeof b);
        barrier(c);
        glex_net_totals(c->f, &inj1, &all1);
        barrier(c);
        uint64_t m = 10;
        if (rc || inj1.head_flits - inj0.head_flits != m ||
            all1.head_flits - all0.head_flits != m * TREE_LINKS ||
            all1.packets - all0.packets != m * TREE_LINKS)
            glex_case_fail(c, id, "rank %d root %u: rc %d; injected %llu head flits (want %llu), "
                           "all links %llu head flits, %llu packets (want %llu)", c->rank, root, rc,
                           (unsigned long long)(inj1.head_flits - inj0.head_flits),
                           (unsigned long long)m,
                           (unsigned long long)(all1.head_flits - all0.head_flits),
                           (unsigned long long)(all1.packets - all0.packets),
                           (unsigned long long)(m * TREE_LINKS));
    }

    id = glex_case(c, "allreduce by multicast: a binomial reduce, then rank 0's multicast");
    double v[300], want = N * (N + 1) / 2.0;
    for (int i = 0; i < 300; i++)
        v[i] = c->rank + 1;
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_MULTICAST, .count = 300,
                           .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .sendbuf = GLEX_IN_PLACE,
                           .recvbuf = v };
    glex_algo_t ran;
    int rc = run_call(c, &a, &ran), bad = 0;
    for (int i = 0; i < 300; i++)
        bad += v[i] != want;
    if (rc || bad || ran != GLEX_ALGO_MULTICAST)
        glex_case_fail(c, id, "rank %d: rc %d, %d wrong, ran %s", c->rank, rc, bad,
                       glex_algo_name(ran));
    return 0;
}

static int errors(glex_tctx_t *c)
{
    int id = glex_case(c, "errors: more members than GLEX_MCAST_MEMBERS, a GID in use, a full "
                          "router table (nothing installed)");
    barrier(c);
    if (c->rank == 0) {
        uint32_t all[N], two[2] = { 0, 7 };
        for (uint32_t i = 0; i < N; i++)
            all[i] = i;
        glex_gid_t g1 = 0, g2 = 0, g3 = 0;
        int rc = glex_mcast_create(c->f, 11, all, N, &g1);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "8 members: allowed 1..4"))
            glex_case_fail(c, id, "8 members with GLEX_MCAST_MEMBERS=4: rc %d (%s)", rc,
                           glex_last_error());
        rc = glex_mcast_create(c->f, 12, two, 2, &g1);
        int rc2 = glex_mcast_create(c->f, 12, two, 2, &g2);
        if (rc || rc2 != GLEX_EBUSY || !strstr(glex_last_error(), "in use"))
            glex_case_fail(c, id, "GID in use: first rc %d, second rc %d (%s)", rc, rc2,
                           glex_last_error());
        uint32_t before = entries_used(c->f);
        uint32_t three[3] = { 0, 3, 6 };
        rc = glex_mcast_create(c->f, 13, three, 3, &g2); /* the root router's second entry */
        uint32_t mid = entries_used(c->f);
        uint32_t four[2] = { 0, 5 };
        rc2 = glex_mcast_create(c->f, 14, four, 2, &g3);
        if (rc || rc2 != GLEX_ENOSPC || !strstr(glex_last_error(), "GLEX_MCAST_ENTRIES") ||
            entries_used(c->f) != mid || mid <= before)
            glex_case_fail(c, id, "table full: rc %d, then %d (%s); entries %u -> %u -> %u",
                           rc, rc2, glex_last_error(), before, mid, entries_used(c->f));
        if (glex_mcast_delete(c->f, g1) || glex_mcast_delete(c->f, g2) || entries_used(c->f))
            glex_case_fail(c, id, "delete: %s; %u entries left", glex_last_error(),
                           entries_used(c->f));
        if (glex_mcast_state(c->f, g1) != GLEX_ENOENT)
            glex_case_fail(c, id, "a deleted group still exists");
    }
    barrier(c);
    id = glex_case(c, "a full table: the group's multicast falls back to auto, unicast works");
    /* rank 0 fills its leaf router's table, then the group's first multicast
     * call cannot create its tree: every member agrees and falls back */
    glex_gid_t hog1 = 0, hog2 = 0;
    if (c->rank == 0) {
        uint32_t a1[2] = { 0, 1 }, a2[2] = { 0, 2 };
        glex_mcast_create(c->f, 21, a1, 2, &hog1);
        glex_mcast_create(c->f, 22, a2, 2, &hog2);
    }
    barrier(c);
    uint8_t b[100];
    for (int i = 0; i < 100; i++)
        b[i] = c->rank == 3 ? (uint8_t)i : 0;
    glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_MULTICAST, .root = 3,
                           .count = 100, .type = GLEX_UINT8, .recvbuf = b };
    glex_algo_t ran;
    int rc = run_call(c, &a, &ran), bad = 0;
    for (int i = 0; i < 100; i++)
        bad += b[i] != i;
    if (rc || bad || ran == GLEX_ALGO_MULTICAST)
        glex_case_fail(c, id, "rank %d: rc %d (%s), %d wrong, ran %s", c->rank, rc,
                       rc ? glex_last_error() : "", bad, glex_algo_name(ran));
    barrier(c);
    if (c->rank == 0) {
        glex_mcast_delete(c->f, hog1);
        glex_mcast_delete(c->f, hog2);
    }
    return 0;
}

static int aging(glex_tctx_t *c)
{
    int id = glex_case(c, "an entry unrefreshed for GLEX_MCAST_AGE_S=1 is taken over; its group "
                          "then fails naming the age");
    barrier(c);
    if (c->rank == 0) {
        uint32_t a1[2] = { 0, 1 }, a2[2] = { 0, 2 };
        glex_gid_t g1 = 0, g2 = 0;
        int rc1 = glex_mcast_create(c->f, 31, a1, 2, &g1);
        int rc2 = glex_mcast_create(c->f, 32, a2, 2, &g2); /* table of 1: full */
        usleep(2200 * 1000);
        int rc3 = glex_mcast_create(c->f, 32, a2, 2, &g2); /* takes the aged entry over */
        /* a multicast send on the old group: its task fails, naming the age */
        int job = glex_job_acquire(c->f, 0x6167696e67ull, 1);
        uint8_t byte = 1;
        glex_desc_t d = glex_test_coll_desc((uint8_t)job, GLEX_UINT8, GLEX_OP_SUM);
        d.ch = d.ct = d.coll_end_flag = 1;
        d.cp = d.mcast = 1;
        d.remote_addr = g1;
        d.local_addr = (uint64_t)(uintptr_t)&byte;
        d.send_count = 1;
        glex_cqe_t e = { 0 };
        int rc4 = job < 0 ? job : glex_vp_post(c->vp, &d, 1);
        int got = !rc4 && glex_test_wait_cqe(c->f, c->vp, &e, 10000);
        if (rc1 || rc2 != GLEX_ENOSPC || rc3 || !got || e.status != GLEX_ENOENT ||
            !strstr(glex_vp_failure(c->vp), "GLEX_MCAST_AGE_S=1"))
            glex_case_fail(c, id, "create %d, full %d, after the age %d, old group: post %d, "
                           "CQE %d status %d (%s)", rc1, rc2, rc3, rc4, got, e.status,
                           glex_vp_failure(c->vp));
        if (job >= 0)
            glex_job_release(c->f, job);
        glex_mcast_delete(c->f, g2);
        glex_mcast_delete(c->f, g1);
    }
    barrier(c);
    return 0;
}

int main(void)
{
    snprintf(param_path, sizeof param_path, "/tmp/glex-test-mcast-%d.params", (int)getpid());
    FILE *fp = fopen(param_path, "w");
    if (!fp || fputs("radix = 4\n", fp) < 0 || fclose(fp)) {
        perror(param_path);
        return 3;
    }
    setenv("GLEX_VTIME_PARAMS", param_path, 1);
    glex_params_t p;
    glex_params_default(&p);
    p.vps_per_node = 1;
    p.mailboxes = 0;
    glex_run_group(N, &p, tree_and_bcast, NULL, 120, "multicast bcast and counters");
    p.mcast_members = 4;
    p.mcast_entries = 2;
    glex_run_group(N, &p, errors, NULL, 120, "multicast errors");
    p.mcast_members = 4096;
    p.mcast_entries = 1;
    p.mcast_age_s = 1;
    glex_run_group(N, &p, aging, NULL, 120, "multicast aging");
    unlink(param_path);
    return tap_done();
}
