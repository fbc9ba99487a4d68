/* glex_coll_mcast.c - the multicast algorithm: bcast as one multicast from
 * the root down the group's tree in the modeled routers (allreduce: a
 * binomial reduce to rank 0, then its multicast), and the group's tree:
 * its GID, refresh while in use, deletion with the group.  Created by rank
 * 0 at the first multicast call, all members agreeing on the outcome
 * (glex_coll_req.c, beside the direct path's set-up; doc/multicast.md). */
#include "glex_coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* the group's GID, the same on every member: rank 0's node and a sequence
 * number from the group's key */
glex_gid_t glex_mcast_gid(const glex_group_t *g)
{
    uint64_t h = g->key * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    uint32_t seq = (uint32_t)h ? (uint32_t)h : 1u;
    return GLEX_GID(g->nodes[0], seq);
}

bool glex_mcast_shape(const glex_group_t *g)
{
    if (g->size < 2)
        return false;
    uint32_t nn = glex_fabric_nnodes(g->f);
    uint8_t *seen = calloc(nn, 1);
    bool ok = seen != NULL;
    for (uint32_t i = 0; ok && i < g->size; i++)
        ok = g->vps[i] == g->vps[0] && !seen[g->nodes[i]]++;
    free(seen);
    return ok;
}

void glex_bcast_mcast(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt)
{
    const glex_group_t *g = s->g;
    uint64_t per = glex_sel_mcast_elems(g, s->es), nseg = cnt ? (cnt + per - 1) / per : 1;
    for (uint64_t j = 0; j < nseg; j++) {
        uint64_t off = j * per, c = cnt - off < per ? cnt - off : per;
        if (g->rank == root)
            glex_sc_send(s, (root + 1) % g->size, (uint32_t)j, buf + off * s->es, c);
        else
            glex_sc_recv(s, root, (uint32_t)j, buf + off * s->es, c, false);
        if (s->err)
            return;
        glex_desc_t *d = &s->d[s->n - 1];
        d->mcast = 1;
        if (d->cp)
            d->remote_addr = glex_mcast_gid(g);
    }
}

void glex_mcast_touch(glex_group_t *g)
{
    if (g->rank != 0 || g->mcast_state <= 0)
        return;
    uint64_t now = glex_coarse_ns();
    uint64_t quarter = (uint64_t)glex_fabric_params(g->f)->mcast_age_s * 250000000ull;
    if (now - g->mcast_refreshed > quarter) {
        glex_mcast_refresh(g->f, glex_mcast_gid(g));
        g->mcast_refreshed = now;
    }
}

void glex_mcast_free(glex_group_t *g)
{
    if (g->rank == 0 && g->mcast_state > 0)
        glex_mcast_delete(g->f, glex_mcast_gid(g));
    g->mcast_state = 0;
}
