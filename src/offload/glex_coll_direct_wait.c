/* glex_coll_direct_wait.c - the direct path's waiting and failing: saying
 * which rank this one waits for, waking the peers that wait for it, ending
 * a call that failed here or at a peer, and asking after GLEX_TIMEOUT
 * whether the awaited rank died.  Used by the call protocol
 * (glex_coll_direct.c) and the stages (glex_coll_stage.c); calls neither. */
#define _POSIX_C_SOURCE 200809L
#include "glex_coll_direct.h"

#include <stdatomic.h>

int glex_direct_fail(glex_group_t *g, glex_dcall_t *c, int rc)
{
    glex_direct_t *d = g->direct;
    atomic_store(&line_of(d, g->rank)->failed_rc, rc);
    atomic_store(&line_of(d, g->rank)->failed, c->c);
    /* the call is over here: this rank reads no peer buffer any more (said
     * in call order, like every done) */
    if (c->c == next_call(d->finished)) {
        d->finished = c->c;
        atomic_store(&line_of(d, g->rank)->done, c->c);
    }
    for (uint32_t q = 0; q < g->size; q++)
        if (q != g->rank)
            glex_notify(g->f, g->nodes[q]);
    c->status = rc;
    c->st = ST_DONE;
    return rc;
}

/* a peer failed this call: so does this rank (<0), else 0 */
int glex_direct_peer_failed(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    for (uint32_t p = 0; p < g->size; p++) {
        if (p == g->rank || atomic_load(&line_of(d, p)->failed) != c->c)
            continue;
        int why = atomic_load(&line_of(d, p)->failed_rc);
        if (why == GLEX_ESIZE || why == GLEX_ETRUNC) /* not a dead process */
            return glex_direct_fail(g, c,
                                    glex_set_error(GLEX_ESIZE, "%s: rank %u failed this call: "
                                                   "its count differs from another rank's",
                                                   glex_coll_kind_name(c->a.kind), p));
        return glex_direct_fail(g, c, glex_set_error(GLEX_EDEAD, "%s: rank %u failed this call",
                                                     glex_coll_kind_name(c->a.kind), p));
    }
    return 0;
}

/* blocked on rank q: after GLEX_TIMEOUT ask whether it (or any rank) died;
 * a peer that failed this call ends it here too.  0 keep waiting, <0 error */
int glex_direct_blocked(glex_group_t *g, glex_dcall_t *c, uint32_t q)
{
    if (c->notify) { /* about to wait: peers waiting for this rank's slot first */
        c->notify = 0;
        glex_direct_notify_all(g);
    }
    if (++c->polls & 63u) /* the clock only now and then */
        return 0;
    uint64_t now = glex_now_ns();
    if (!c->wait_since) {
        c->wait_since = now;
        c->next_check = now + 1000000ull;
        return 0;
    }
    if (now < c->next_check)
        return 0;
    uint64_t tmo = (uint64_t)glex_fabric_params(g->f)->timeout_ms * 1000000ull;
    c->next_check = now + (tmo < 1000000000ull ? tmo : 1000000000ull);
    int rc = glex_direct_peer_failed(g, c);
    if (rc)
        return rc;
    if (now - c->wait_since < tmo)
        return 0;
    char why[256];
    if (glex_peer_failed(g->f, g->nodes[q], why, sizeof why))
        return glex_direct_fail(g, c,
                                glex_set_error(GLEX_EDEAD, "%s (direct): waiting for rank %u: %s",
                                               glex_coll_kind_name(c->a.kind), q, why));
    return 0;
}

/* wake rank q if it sleeps waiting for this rank (its wait_for) */
void glex_direct_wake(glex_group_t *g, uint32_t q)
{
    if (glex_host_asleep(g->f, g->nodes[q]) &&
        atomic_load(&line_of(g->direct, q)->wait_for) == g->rank + 1)
        glex_wake_host(g->f, g->nodes[q]);
}

/* ... every peer that does */
void glex_direct_notify_all(glex_group_t *g)
{
    for (uint32_t q = 0; q < g->size; q++)
        if (q != g->rank)
            glex_direct_wake(g, q);
}

/* this rank is about to wait for rank q: say so (wait_for), so that q's
 * next write wakes it.  1 when newly said: the caller must look at its
 * condition once more (q may have looked at wait_for before it changed);
 * 0 when said before, at a look that came after it */
int glex_direct_say_waiting(glex_group_t *g, uint32_t q)
{
    _Atomic uint32_t *mine = &line_of(g->direct, g->rank)->wait_for;
    if (atomic_load_explicit(mine, memory_order_relaxed) == q + 1)
        return 0;
    atomic_store(mine, q + 1);
    return 1;
}
