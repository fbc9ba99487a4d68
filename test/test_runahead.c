/* test_runahead.c - members that run calls ahead of a slow one.  A leaf of
 * a reduce needs nobody, a bcast's root neither: while one member of the
 * group is held up, they go on with later calls, and their packets wait in
 * the receivers' hash buffers for calls the receivers have not reached.
 * The calls the receivers do run must still get their packets in (the
 * library before early packets were kept to a share of the buffer hung
 * here: the root waited for a slow child whose packet found no room).
 * Every call's result is checked: a packet taken by the wrong call shows. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CALLS 3000
#define SLOW_US 1000000 /* how long the slow member is held up first */

typedef struct {
    glex_coll_kind_t kind;
    int host;
    uint64_t count;
    int slow; /* the member held up: an inner node for a reduce, a leaf for a bcast */
} runahead_t;

static int run(glex_tctx_t *c)
{
    const runahead_t *ra = c->arg;
    int id = glex_case(c, "%s binomial %s count %llu: member %d held up %d ms, %d calls",
                       glex_coll_kind_name(ra->kind), ra->host ? "host" : "offload",
                       (unsigned long long)ra->count, ra->slow, SLOW_US / 1000, CALLS);
    int32_t *send = malloc(sizeof *send * ra->count), *recv = malloc(sizeof *recv * ra->count);
    if (!send || !recv) {
        glex_case_fail(c, id, "out of memory");
        return 1;
    }
    if (c->rank == ra->slow)
        usleep(SLOW_US);
    int32_t nsum = c->n * (c->n + 1) / 2;
    for (int i = 0; i < CALLS; i++) {
        for (uint64_t j = 0; j < ra->count; j++) {
            send[j] = (int32_t)((c->rank + 1) * (i + 1) + (int)j);
            recv[j] = -1;
        }
        glex_coll_args_t a;
        memset(&a, 0, sizeof a);
        a.kind = ra->kind;
        a.algo = GLEX_ALGO_BINOMIAL;
        a.host_mode = ra->host;
        a.type = GLEX_INT32;
        a.op = GLEX_OP_SUM;
        a.count = ra->count;
        a.root = 0;
        a.sendbuf = ra->kind == GLEX_COLL_BCAST ? NULL : send;
        a.recvbuf = ra->kind == GLEX_COLL_BCAST && c->rank == 0 ? send : recv;
        if (glex_coll_run(c->g, &a)) {
            glex_case_fail(c, id, "call %d: %s", i, glex_last_error());
            break;
        }
        int bad = -1;
        int32_t want = 0;
        for (uint64_t j = 0; j < ra->count && bad < 0; j++) {
            if (ra->kind == GLEX_COLL_BCAST) {
                want = (int32_t)((i + 1) + (int)j); /* the root's (rank 0) send */
                if (c->rank && recv[j] != want)
                    bad = (int)j;
            } else if (c->rank == 0) {
                want = nsum * (i + 1) + c->n * (int32_t)j;
                if (recv[j] != want)
                    bad = (int)j;
            }
        }
        if (bad >= 0) {
            glex_case_fail(c, id, "call %d element %d: %d, want %d", i, bad, (int)recv[bad],
                           (int)want);
            break;
        }
    }
    free(send);
    free(recv);
    return 0;
}

int main(void)
{
    /* 9 members: root 0's binomial children are 1, 2, 4 and 8; 4 has a
     * subtree of its own, 8 is a leaf */
    static const runahead_t cases[] = {
        { GLEX_COLL_REDUCE, 0, 1, 4 },  { GLEX_COLL_REDUCE, 1, 1, 4 },
        { GLEX_COLL_REDUCE, 0, 64, 4 }, { GLEX_COLL_REDUCE, 1, 64, 4 },
        { GLEX_COLL_BCAST, 0, 1, 8 },   { GLEX_COLL_BCAST, 1, 1, 8 },
        { GLEX_COLL_BCAST, 0, 64, 8 },  { GLEX_COLL_BCAST, 1, 64, 8 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        glex_run_group(9, NULL, run, (void *)&cases[i], 120, "runahead");
    return tap_done();
}
