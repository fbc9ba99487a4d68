/* glex_coll_hier.c - the node-aware ("two_level") schedules of a group whose
 * members span hosts (doc/multinode.md): within each host to its leader
 * (packets through the host's shared memory), among the leaders only
 * across hosts (one message per host and step through the fabric), then
 * within each host again.  Each phase is an existing algorithm run on a
 * view of the group: its members on this host, or the hosts' leaders.  On
 * one host it is the binomial trees. */
#include "glex_coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* a view of g holding the members listed (group ranks), this rank at me */
typedef struct view {
    glex_group_t g;
    bool in; /* this rank is one of them */
} view_t;

static void view_free(view_t *v)
{
    free(v->g.nodes);
    free(v->g.vps);
}

static int view_make(glex_sched_t *s, const uint32_t *members, uint32_t n, view_t *v)
{
    const glex_group_t *g = s->g;
    memcpy(&v->g, g, sizeof *g);
    v->g.nodes = malloc(sizeof *v->g.nodes * (n ? n : 1));
    v->g.vps = malloc(sizeof *v->g.vps * (n ? n : 1));
    if (!v->g.nodes || !v->g.vps) {
        view_free(v);
        return s->err = glex_error(GLEX_ENOMEM, "out of memory compiling a schedule");
    }
    v->in = false;
    for (uint32_t i = 0; i < n; i++) {
        v->g.nodes[i] = g->nodes[members[i]];
        v->g.vps[i] = g->vps[members[i]];
        if (members[i] == g->rank) {
            v->g.rank = i;
            v->in = true;
        }
    }
    v->g.size = n;
    return GLEX_OK;
}

/* run one phase's builder on a view */
#define ON(view, call)                                                                             \
    do {                                                                                           \
        const glex_group_t *whole_ = s->g;                                                         \
        s->g = &(view)->g;                                                                         \
        call;                                                                                      \
        s->g = whole_;                                                                             \
    } while (0)

void glex_build_two_level(glex_sched_t *s)
{
    const glex_group_t *g = s->g;
    const glex_coll_args_t *a = s->a;
    uint32_t n = g->size, nh = g->nhosts ? g->nhosts : 1;
    const uint32_t *host = g->host;
    bool rooted = a->kind == GLEX_COLL_BCAST || a->kind == GLEX_COLL_REDUCE;
    uint32_t root = rooted ? a->root : 0, my = host ? host[g->rank] : 0;
    uint32_t *local = malloc(sizeof *local * n), *leaders = malloc(sizeof *leaders * nh);
    if (!local || !leaders) {
        free(local);
        free(leaders);
        s->err = glex_error(GLEX_ENOMEM, "out of memory compiling a schedule");
        return;
    }
    /* each host's leader: the root on its host, else its first member */
    for (uint32_t h = 0; h < nh; h++)
        leaders[h] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t h = host ? host[r] : 0;
        if (leaders[h] == UINT32_MAX || r == root)
            leaders[h] = r;
    }
    uint32_t nl = 0, lead = 0; /* this host's members; the leader's place among them */
    for (uint32_t r = 0; r < n; r++)
        if ((host ? host[r] : 0) == my) {
            if (r == leaders[my])
                lead = nl;
            local[nl++] = r;
        }
    view_t lv, hv;
    if (view_make(s, local, nl, &lv)) {
        free(local);
        free(leaders);
        return;
    }
    if (view_make(s, leaders, nh, &hv)) {
        view_free(&lv);
        free(local);
        free(leaders);
        return;
    }
    uint32_t rh = host ? host[root] : 0; /* the root's host: its place among the leaders */
    uint64_t bytes = a->count * s->es;
    switch (a->kind) {
    case GLEX_COLL_BCAST: {
        uint64_t buf = REF(BUF_RECV, 0);
        if (hv.in)
            ON(&hv, glex_bcast_binomial(s, rh, buf, a->count, 0));
        ON(&lv, glex_bcast_binomial(s, lead, buf, a->count, 0));
        break;
    }
    case GLEX_COLL_REDUCE: {
        bool am_root = g->rank == root;
        uint64_t acc = am_root ? REF(BUF_RECV, 0) : REF(BUF_TMP, 0);
        uint64_t src = (am_root && s->inplace) ? REF(BUF_RECV, 0) : REF(BUF_SEND, 0);
        if (!am_root)
            glex_sc_need_tmp(s, bytes);
        ON(&lv, glex_reduce_binomial(s, lead, acc, src, a->count));
        if (hv.in)
            ON(&hv, glex_reduce_binomial(s, rh, acc, acc, a->count));
        break;
    }
    default: { /* allreduce; barrier: the same with empty packets */
        uint64_t acc = REF(BUF_RECV, 0), cnt = a->count;
        uint64_t src = s->inplace ? acc : REF(BUF_SEND, 0);
        if (a->kind == GLEX_COLL_BARRIER)
            acc = src = 0, cnt = 0;
        ON(&lv, glex_reduce_binomial(s, lead, acc, src, cnt));
        if (hv.in)
            ON(&hv, glex_allreduce_rd(s, acc, acc, cnt));
        ON(&lv, glex_bcast_binomial(s, lead, acc, cnt, 0));
    }
    }
    view_free(&lv);
    view_free(&hv);
    free(local);
    free(leaders);
}
