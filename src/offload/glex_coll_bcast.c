/* glex_coll_bcast.c - broadcast schedules: binomial tree and double binary
 * tree (two complementary in-order trees, each carrying half, pipelined in
 * segments); flat_read is in glex_coll_flat.c.  Also used as the second
 * phase of allreduce. */
#include "glex_coll_internal.h"

#define REAL(v) (((v) + root) % s->g->size)

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void glex_bcast_binomial(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt,
                         uint32_t seqbase)
{
    uint32_t n = s->g->size, v = (s->g->rank + n - root) % n, kids[32], bits[32];
    int64_t parent;
    int nk = glex_binomial(v, n, &parent, kids, bits);
    uint64_t nseg, seg;
    glex_segments(s, cnt, &nseg, &seg);
    for (uint64_t j = 0; j < nseg; j++) {
        uint64_t off = j * seg, c = min_u64(seg, cnt - off);
        uint64_t ref = buf + off * s->es;
        uint32_t seq = seqbase + (uint32_t)j;
        int i = nk - 1; /* largest subtree first */
        if (parent >= 0) {
            if (nk > 0)
                glex_sc_fwd(s, REAL((uint32_t)parent), seq, REAL(kids[i--]), seq, ref, c, false);
            else
                glex_sc_recv(s, REAL((uint32_t)parent), seq, ref, c, false);
        }
        for (; i >= 0; i--)
            glex_sc_send(s, REAL(kids[i]), seq, ref, c);
    }
}

/* position <-> virtual rank in tree t (t=1 is tree 0 shifted by one) */
static uint32_t pos_to_v(uint32_t t, uint32_t m, uint32_t p) { return t ? (p + 1) % m + 1 : p + 1; }
static uint32_t v_to_pos(uint32_t t, uint32_t m, uint32_t v) { return t ? (v + m - 2) % m : v - 1; }

/* links of virtual rank v (>= 1) in tree t: parent virtual rank, children */
static int dtree_links(uint32_t t, uint32_t m, uint32_t v, uint32_t *parent, uint32_t kids[2])
{
    int64_t pp, k[2];
    glex_inorder_tree(m, v_to_pos(t, m, v), &pp, k);
    *parent = pp < 0 ? 0 : pos_to_v(t, m, (uint32_t)pp);
    int nk = 0;
    for (int i = 0; i < 2; i++)
        if (k[i] >= 0)
            kids[nk++] = pos_to_v(t, m, (uint32_t)k[i]);
    return nk;
}

void glex_dtree_halves(uint64_t cnt, uint64_t off[2], uint64_t len[2])
{
    off[0] = 0;
    len[0] = cnt / 2;
    off[1] = cnt / 2;
    len[1] = cnt - cnt / 2;
}

/* One walk over both trees, segment by segment, for bcast (data flows from
 * the root down, forwarded to the first child as it arrives) and for reduce
 * (children combined, the last one forwarded up to the parent). */
static void dtree_walk(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt,
                       uint32_t seqbase, bool reduce)
{
    uint32_t n = s->g->size, v = (s->g->rank + n - root) % n;
    if (n < 2)
        return;
    uint32_t m = n - 1, rootpos = m / 2;
    uint64_t hoff[2], hcnt[2], nseg, seg;
    glex_dtree_halves(cnt, hoff, hcnt);
    glex_segments(s, hcnt[1], &nseg, &seg);
    for (uint64_t j = 0; j < nseg; j++) {
        for (uint32_t t = 0; t < 2; t++) {
            uint64_t at = min_u64(j * seg, hcnt[t]), c = min_u64(seg, hcnt[t] - at);
            uint64_t ref = buf + (hoff[t] + at) * s->es;
            uint32_t seq = seqbase + 2 * (uint32_t)j + t, parent, kids[2];
            if (v == 0) { /* the root feeds (or collects from) the tree's root */
                uint32_t top = REAL(pos_to_v(t, m, rootpos));
                if (reduce)
                    glex_sc_recv(s, top, seq, ref, c, true);
                else
                    glex_sc_send(s, top, seq, ref, c);
                continue;
            }
            int nk = dtree_links(t, m, v, &parent, kids);
            if (nk == 0) {
                if (reduce)
                    glex_sc_send(s, REAL(parent), seq, ref, c);
                else
                    glex_sc_recv(s, REAL(parent), seq, ref, c, false);
            } else if (reduce) {
                if (nk == 2)
                    glex_sc_recv(s, REAL(kids[0]), seq, ref, c, true);
                glex_sc_fwd(s, REAL(kids[nk - 1]), seq, REAL(parent), seq, ref, c, true);
            } else {
                glex_sc_fwd(s, REAL(parent), seq, REAL(kids[0]), seq, ref, c, false);
                if (nk == 2)
                    glex_sc_send(s, REAL(kids[1]), seq, ref, c);
            }
        }
    }
}

void glex_bcast_dtree(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt, uint32_t seqbase)
{
    dtree_walk(s, root, buf, cnt, seqbase, false);
}

void glex_reduce_dtree(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t cnt,
                       uint32_t seqbase)
{
    dtree_walk(s, root, acc, cnt, seqbase, true);
}

void glex_build_bcast(glex_sched_t *s, glex_algo_t algo)
{
    uint64_t buf = REF(BUF_RECV, 0);
    if (algo == GLEX_ALGO_MULTICAST)
        glex_bcast_mcast(s, s->a->root, buf, s->a->count);
    else if (algo == GLEX_ALGO_FLAT)
        glex_bcast_flat(s, s->a->root, buf, s->a->count);
    else if (algo == GLEX_ALGO_FLAT_READ)
        glex_bcast_flat_read(s, s->a->root, buf, s->a->count);
    else if (algo == GLEX_ALGO_DOUBLE_TREE)
        glex_bcast_dtree(s, s->a->root, buf, s->a->count, 0);
    else
        glex_bcast_binomial(s, s->a->root, buf, s->a->count, 0);
}
