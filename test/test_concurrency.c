#define _GNU_SOURCE
/* test_concurrency.c - 32 collectives on distinct JobIDs in flight at once
 * (one rank joins late, so none can finish before all are started), half of
 * them on split sub-groups (even/odd ranks) used concurrently with the full
 * group; every result is checked. */
#include "glex_test.h"
#include "glex_test_ref.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NREQ 32

static int run(glex_tctx_t *c)
{
    uint32_t color = (uint32_t)c->rank % 2, sub_n = 0, sub_rank = 0;
    uint32_t nodes[64];
    uint16_t vps[64] = { 0 };
    for (int r = 0; r < c->n; r++)
        if ((uint32_t)r % 2 == color) {
            if (r == c->rank)
                sub_rank = sub_n;
            nodes[sub_n++] = (uint32_t)r;
        }
    glex_group_t *sub;
    int id = glex_case(c, "split sub-group created");
    if (glex_group_create(c->vp, 100 + color, sub_n, sub_rank, nodes, vps, &sub)) {
        glex_case_fail(c, id, "%s", glex_last_error());
        return 1;
    }
    glex_req_t *req[NREQ];
    double *in[NREQ], *out[NREQ];
    glex_coll_args_t a[NREQ];
    int jobs[NREQ];
    id = glex_case(c, "%d nonblocking allreduces started (mixed algorithms and sizes)", NREQ);
    if (c->rank == 0)
        usleep(200000); /* the others have all 32 in flight before rank 0 starts */
    for (int i = 0; i < NREQ; i++) {
        int on_sub = i % 2;
        uint64_t count = (uint64_t)(i % 4 == 3 ? 40000 : 1 + i * 3);
        in[i] = malloc(count * 8);
        out[i] = malloc(count * 8);
        ref_fill(GLEX_DOUBLE, GLEX_OP_SUM, on_sub ? (int)sub_rank : c->rank, 500 + (uint64_t)i,
                 in[i], count);
        a[i] = (glex_coll_args_t){ .kind = GLEX_COLL_ALLREDUCE, .algo = (glex_algo_t)(1 + i % 4),
                                   .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .count = count,
                                   .sendbuf = in[i], .recvbuf = out[i] };
        if (glex_coll_start(on_sub ? sub : c->g, &a[i], &req[i])) {
            glex_case_fail(c, id, "start %d: %s", i, glex_last_error());
            return 1;
        }
        jobs[i] = glex_coll_req_job(req[i]);
    }
    /* across hosts a group's calls all run under its leased JobID (no round
     * trip to node 0 per call), one at a time */
    int shared = glex_group_hosts(c->g) > 1;
    id = glex_case(c, shared ? "all %d run under their group's leased JobID"
                             : "all %d hold distinct JobIDs while in flight", NREQ);
    if (c->rank != 0)
        for (int i = 0; i < NREQ; i++)
            for (int j = 0; j < i; j++) {
                int leased = i % 2 == j % 2 && glex_group_hosts(i % 2 ? sub : c->g) > 1;
                if (jobs[i] < 0 || (jobs[i] == jobs[j]) != leased)
                    glex_case_fail(c, id, "request %d JobID %d, request %d JobID %d", i, jobs[i],
                                   j, jobs[j]);
            }
    id = glex_case(c, "all %d complete with correct results (waited in reverse order)", NREQ);
    for (int i = NREQ - 1; i >= 0; i--) {
        int rc = glex_coll_wait(req[i]);
        glex_coll_req_free(req[i]);
        double *exp = malloc(a[i].count * 8);
        ref_expected(GLEX_DOUBLE, GLEX_OP_SUM, i % 2 ? (int)sub_n : c->n, 500 + (uint64_t)i, exp,
                     a[i].count);
        if (rc || ref_compare(GLEX_DOUBLE, out[i], exp, a[i].count) >= 0)
            glex_case_fail(c, id, "request %d (%s, %llu doubles): rc %d %s", i,
                           glex_algo_name(a[i].algo), (unsigned long long)a[i].count, rc,
                           rc ? glex_last_error() : "wrong result");
        free(exp);
        free(in[i]);
        free(out[i]);
    }
    glex_group_free(sub);

    /* nonblocking calls that name the direct path run the engine instead
     * (the direct path serves calls waited for at once): several in flight
     * on one group, waited in reverse order, all right */
    enum { ND = 8 };
    id = glex_case(c, "%d nonblocking allreduces naming direct in flight on one group run the "
                      "engine, waited in reverse order", ND);
    for (int i = 0; i < ND; i++) {
        uint64_t count = (uint64_t)(i % 3 == 2 ? 40000 : 1 + i * 5);
        in[i] = malloc(count * 8);
        out[i] = malloc(count * 8);
        ref_fill(GLEX_DOUBLE, GLEX_OP_SUM, c->rank, 900 + (uint64_t)i, in[i], count);
        a[i] = (glex_coll_args_t){ .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_DIRECT,
                                   .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .count = count,
                                   .sendbuf = in[i], .recvbuf = out[i] };
        if (glex_coll_start(c->g, &a[i], &req[i])) {
            glex_case_fail(c, id, "start %d: %s", i, glex_last_error());
            return 1;
        }
    }
    for (int i = ND - 1; i >= 0; i--) {
        int rc = glex_coll_wait(req[i]);
        glex_algo_t ran = glex_coll_req_algo(req[i]);
        glex_coll_req_free(req[i]);
        double *exp = malloc(a[i].count * 8);
        ref_expected(GLEX_DOUBLE, GLEX_OP_SUM, c->n, 900 + (uint64_t)i, exp, a[i].count);
        if (rc || ran == GLEX_ALGO_DIRECT || ref_compare(GLEX_DOUBLE, out[i], exp, a[i].count) >= 0)
            glex_case_fail(c, id, "request %d (%s, %llu doubles): rc %d %s", i,
                           glex_algo_name(ran), (unsigned long long)a[i].count, rc,
                           rc ? glex_last_error() : "wrong result");
        free(exp);
        free(in[i]);
        free(out[i]);
    }
    return 0;
}

int main(void)
{
    glex_run_group(4, NULL, run, NULL, 300, "concurrency");
    glex_run_group(7, NULL, run, NULL, 300, "concurrency");
    return tap_done();
}
