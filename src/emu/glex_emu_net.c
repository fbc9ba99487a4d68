/* glex_emu_net.c - the modeled network: the routers of a k-ary n-tree fat
 * tree (k = radix/2), their multicast forwarding tables, per-link counters,
 * and the multicast service (group creation, dispatch to the routers,
 * deletion, refresh, aging; a multicast's flood along its tree).
 *
 * Router (l, s, r): level l = 1 (leaf) .. levels, subtree s of k^l nodes,
 * replica r < k^(l-1).  Ports 0..k-1 go down (at a leaf: to node s*k + port),
 * k..2k-1 up: up port j of (l, s, r) is down port s%k of (l+1, s/k,
 * r + j*k^(l-1)).  A unicast route from a to b goes up by the source's
 * digits (up port (a / k^(l-1)) % k at level l) to the lowest level whose
 * subtree holds both, then down by b's digits.  Going up by the source's
 * digits makes one source's routes a tree: a group's multicast tree is the
 * union of its creator's routes to the members (doc/multicast.md). */
#include "glex_emu_internal.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN(x, a) (((x) + (a)-1) / (a) * (a))

typedef struct {
    uint32_t k, levels, nnodes;
    uint64_t pw[GLEX_NET_MAX_LEVELS + 1]; /* k^i */
} topo_t;

static void topo_of(const glex_shm_header_t *h, uint32_t nnodes, topo_t *t)
{
    t->k = h->net_k;
    t->levels = h->net_levels;
    t->nnodes = nnodes;
    t->pw[0] = 1;
    for (uint32_t i = 1; i <= GLEX_NET_MAX_LEVELS; i++)
        t->pw[i] = t->pw[i - 1] * t->k;
}

/* routers of level l: a subtree of k^l nodes holding any node has k^(l-1) */
static uint64_t level_routers(const topo_t *t, uint32_t l)
{
    return (t->nnodes + t->pw[l] - 1) / t->pw[l] * t->pw[l - 1];
}

uint64_t glex_net_layout(glex_shm_header_t *h, const glex_params_t *p, uint32_t nnodes,
                         uint32_t k, uint32_t levels, uint64_t off)
{
    topo_t t;
    h->net_k = k;
    h->net_levels = levels > GLEX_NET_MAX_LEVELS ? GLEX_NET_MAX_LEVELS : levels;
    topo_of(h, nnodes, &t);
    uint32_t n = 0;
    for (uint32_t l = 1; l <= h->net_levels; l++) {
        h->net_level_base[l - 1] = n;
        n += (uint32_t)level_routers(&t, l);
    }
    h->net_level_base[h->net_levels] = n;
    h->net_routers = n;
    h->net_mask_words = (2 * k + 63) / 64;
    h->mc_entry_size = (uint32_t)(sizeof(glex_mc_entry_t) + 8u * h->net_mask_words);
    h->router_stride =
        ALIGN(sizeof(glex_router_shm_t) + (uint64_t)p->mcast_entries * h->mc_entry_size, 64);
    uint64_t start = off;
    h->off_routers = off;
    off += (uint64_t)n * h->router_stride;
    h->off_links = off = ALIGN(off, 64);
    off += (uint64_t)n * 2u * k * 2u * sizeof(glex_link_shm_t);
    h->off_groups = off = ALIGN(off, 64);
    off += GLEX_MCAST_GROUPS * sizeof(glex_group_rec_t);
    return ALIGN(off, 4096) - start;
}

static inline uint32_t rid(const glex_fabric_t *f, const topo_t *t, uint32_t l, uint64_t s,
                           uint64_t r)
{
    return f->hdr->net_level_base[l - 1] + (uint32_t)(s * t->pw[l - 1] + r);
}

static inline glex_router_shm_t *router(const glex_fabric_t *f, uint32_t id)
{
    return (glex_router_shm_t *)(f->base + f->hdr->off_routers + f->hdr->router_stride * id);
}

static inline glex_mc_entry_t *entry(const glex_fabric_t *f, uint32_t id, uint32_t i)
{
    return (glex_mc_entry_t *)((uint8_t *)(router(f, id) + 1) + (size_t)f->hdr->mc_entry_size * i);
}

static inline glex_link_shm_t *link_of(const glex_fabric_t *f, uint32_t id, uint32_t port, int dir)
{
    return (glex_link_shm_t *)(f->base + f->hdr->off_links) +
           ((size_t)id * 2u * f->hdr->net_k + port) * 2u + (unsigned)dir;
}

static inline glex_group_rec_t *groups(const glex_fabric_t *f)
{
    return (glex_group_rec_t *)(f->base + f->hdr->off_groups);
}

static void count_link(glex_fabric_t *f, uint32_t id, uint32_t port, int dir, uint64_t pkts,
                       uint64_t bytes)
{
    glex_link_shm_t *l = link_of(f, id, port, dir);
    atomic_fetch_add_explicit(&l->packets, pkts, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->bytes, bytes, memory_order_relaxed);
}

/* ---- routes ---- */

typedef struct {
    uint32_t id, in, out; /* router, port in, port out */
} hop_t;

/* the unicast route a -> b (a != b): its hops; returns how many */
static uint32_t route(const glex_fabric_t *f, const topo_t *t, uint32_t a, uint32_t b, hop_t *h)
{
    uint32_t k = t->k, top = 1, n = 0;
    while (a / t->pw[top] != b / t->pw[top])
        top++;
    uint64_t s = a / k, r = 0;
    uint32_t in = a % k;
    for (uint32_t l = 1; l < top; l++) { /* up by the source's digits */
        uint32_t j = (uint32_t)((a / t->pw[l - 1]) % k);
        h[n++] = (hop_t){ rid(f, t, l, s, r), in, k + j };
        in = (uint32_t)(s % k);
        r += j * t->pw[l - 1];
        s /= k;
    }
    for (uint32_t l = top; l >= 1; l--) { /* down by the destination's digits */
        uint32_t c = (uint32_t)((b / t->pw[l - 1]) % k);
        h[n++] = (hop_t){ rid(f, t, l, s, r), in, c };
        if (l == 1)
            break;
        in = k + (uint32_t)(r / t->pw[l - 2]);
        r %= t->pw[l - 2];
        s = s * k + c;
    }
    return n;
}

/* ---- tables ---- */

static int entry_expired(const glex_fabric_t *f, glex_mc_entry_t *e, uint64_t now)
{
    uint64_t seen = atomic_load_explicit(&e->refreshed_ns, memory_order_relaxed);
    return now > seen && now - seen > (uint64_t)f->p.mcast_age_s * 1000000000ull;
}

/* the entry of gid in router id, or NULL */
static glex_mc_entry_t *lookup(const glex_fabric_t *f, uint32_t id, glex_gid_t gid)
{
    for (uint32_t i = 0; i < f->p.mcast_entries; i++) {
        glex_mc_entry_t *e = entry(f, id, i);
        if (atomic_load_explicit(&e->gid, memory_order_acquire) == gid)
            return e;
    }
    return NULL;
}

static glex_group_rec_t *record(const glex_fabric_t *f, glex_gid_t gid)
{
    glex_group_rec_t *g = groups(f);
    for (uint32_t i = 0; i < GLEX_MCAST_GROUPS; i++)
        if (atomic_load_explicit(&g[i].gid, memory_order_acquire) == gid)
            return &g[i];
    return NULL;
}

/* the routers of a tree and their port sets, gathered before installing */
typedef struct {
    uint32_t n, cap, words;
    uint32_t *id;
    uint64_t *mask; /* words per router */
} tree_t;

static uint64_t *tree_mask(tree_t *tr, uint32_t id)
{
    for (uint32_t i = 0; i < tr->n; i++)
        if (tr->id[i] == id)
            return tr->mask + (size_t)i * tr->words;
    if (tr->n == tr->cap) {
        uint32_t cap = tr->cap ? tr->cap * 2 : 64;
        uint32_t *ni = realloc(tr->id, cap * sizeof *ni);
        if (ni)
            tr->id = ni;
        uint64_t *nm = realloc(tr->mask, (size_t)cap * tr->words * 8u);
        if (nm)
            tr->mask = nm;
        if (!ni || !nm)
            return NULL;
        tr->cap = cap;
    }
    tr->id[tr->n] = id;
    uint64_t *m = tr->mask + (size_t)tr->n * tr->words;
    memset(m, 0, tr->words * 8u);
    tr->n++;
    return m;
}

static void remove_entries(glex_fabric_t *f, const tree_t *tr, uint32_t upto, glex_gid_t gid)
{
    for (uint32_t i = 0; i < upto; i++) {
        glex_router_shm_t *r = router(f, tr->id[i]);
        glex_lock(&r->lock);
        glex_mc_entry_t *e = lookup(f, tr->id[i], gid);
        if (e) {
            atomic_store_explicit(&e->gid, 0, memory_order_release);
            r->used--;
        }
        glex_unlock(&r->lock);
    }
}

/* install gid's entry in router id: GLEX_EBUSY when the GID is there,
 * GLEX_ENOSPC when no entry is free or aged out */
static int install(glex_fabric_t *f, uint32_t id, glex_gid_t gid, const uint64_t *mask,
                   uint64_t now)
{
    glex_router_shm_t *r = router(f, id);
    glex_mc_entry_t *free_e = NULL;
    int rc = GLEX_OK;
    glex_lock(&r->lock);
    for (uint32_t i = 0; i < f->p.mcast_entries; i++) {
        glex_mc_entry_t *e = entry(f, id, i);
        uint64_t g = atomic_load_explicit(&e->gid, memory_order_relaxed);
        if (g == gid) {
            rc = GLEX_EBUSY;
            break;
        }
        if (!free_e && (g == 0 || entry_expired(f, e, now)))
            free_e = e;
    }
    if (!rc && !free_e)
        rc = GLEX_ENOSPC;
    if (!rc) {
        if (atomic_load_explicit(&free_e->gid, memory_order_relaxed) == 0)
            r->used++; /* else an aged-out entry is taken over */
        memcpy(free_e->mask, mask, 8u * f->hdr->net_mask_words);
        atomic_store_explicit(&free_e->refreshed_ns, now, memory_order_relaxed);
        atomic_store_explicit(&free_e->gid, gid, memory_order_release);
    }
    glex_unlock(&r->lock);
    return rc;
}

/* every router's entry of gid visited from src (a flood): out[] as for
 * glex_mcast_flood; with cnt the links are counted; with now the entries are
 * refreshed; with del the entries are freed after their ports are read */
static int flood(glex_fabric_t *f, glex_gid_t gid, uint32_t src, uint64_t pkts, uint64_t bytes,
                 int cnt, uint64_t now, int del, glex_mc_dest_t *out, uint32_t cap, uint32_t *nout)
{
    topo_t t;
    topo_of(f->hdr, f->nnodes, &t);
    uint32_t k = t.k, words = f->hdr->net_mask_words, n = 0;
    uint64_t mask[16];
    typedef struct { uint32_t l; uint64_t s, r; uint32_t in, links, routers; } at_t;
    uint32_t scap = 64, sp = 0;
    at_t *st = malloc(scap * sizeof *st);
    if (!st)
        return glex_error(GLEX_ENOMEM, "multicast: out of memory for the flood");
    if (cnt)
        count_link(f, rid(f, &t, 1, src / k, 0), src % k, 1, pkts, bytes);
    st[sp++] = (at_t){ 1, src / k, 0, src % k, 1, 0 };
    int rc = GLEX_OK;
    while (sp && !rc) {
        at_t a = st[--sp];
        uint32_t id = rid(f, &t, a.l, a.s, a.r);
        glex_router_shm_t *ro = router(f, id);
        if (del)
            glex_lock(&ro->lock);
        glex_mc_entry_t *e = lookup(f, id, gid);
        if (!e) {
            if (del)
                glex_unlock(&ro->lock);
            rc = glex_error(GLEX_ENOENT,
                            "multicast group %#llx has no entry in router %u (level %u): "
                            "deleted, or aged out after GLEX_MCAST_AGE_S=%u s unrefreshed",
                            (unsigned long long)gid, id, a.l, f->p.mcast_age_s);
            break;
        }
        memcpy(mask, e->mask, 8u * words);
        if (now)
            atomic_store_explicit(&e->refreshed_ns, now, memory_order_relaxed);
        if (del) {
            atomic_store_explicit(&e->gid, 0, memory_order_release);
            ro->used--;
            glex_unlock(&ro->lock);
        }
        for (uint32_t q = 0; q < 2 * k; q++) {
            if (!(mask[q / 64] >> (q % 64) & 1u) || q == a.in)
                continue;
            if (cnt)
                count_link(f, id, q, 0, pkts, bytes);
            if (a.l == 1 && q < k) { /* to a node */
                if (n < cap)
                    out[n] = (glex_mc_dest_t){ (uint32_t)(a.s * k + q), a.links + 1,
                                               a.routers + 1 };
                n++;
                continue;
            }
            if (sp == scap) {
                at_t *ns = realloc(st, 2 * scap * sizeof *st);
                if (!ns) {
                    rc = glex_error(GLEX_ENOMEM, "multicast: out of memory for the flood");
                    break;
                }
                st = ns, scap *= 2;
            }
            if (q < k) /* down */
                st[sp++] = (at_t){ a.l - 1, a.s * k + q, a.r % t.pw[a.l - 2],
                                   k + (uint32_t)(a.r / t.pw[a.l - 2]), a.links + 1,
                                   a.routers + 1 };
            else if (a.l < t.levels) /* up */
                st[sp++] = (at_t){ a.l + 1, a.s / k, a.r + (q - k) * t.pw[a.l - 1],
                                   (uint32_t)(a.s % k), a.links + 1, a.routers + 1 };
        }
    }
    free(st);
    *nout = n;
    return rc;
}

int glex_mcast_flood(glex_fabric_t *f, glex_gid_t gid, uint32_t src, uint64_t pkts,
                     uint64_t bytes, glex_mc_dest_t *out, uint32_t cap, uint32_t *n)
{
    *n = 0;
    if (src >= f->nnodes)
        return glex_error(GLEX_EINVAL, "multicast from node %u: allowed 0..%u", src,
                          f->nnodes - 1);
    glex_group_rec_t *g = record(f, gid);
    if (!g || atomic_load_explicit(&g->state, memory_order_acquire) != 1)
        return glex_error(GLEX_ENOENT, "multicast group %#llx does not exist",
                          (unsigned long long)gid);
    if (g->members < 2)
        return GLEX_OK; /* nobody else: no tree */
    uint64_t now = glex_coarse_ns();
    atomic_store_explicit(&g->refreshed_ns, now, memory_order_relaxed);
    return flood(f, gid, src, pkts, bytes, 1, now, 0, out, cap, n);
}

/* ---- the service ---- */

/* a group record is reclaimed once it aged and its creator is gone */
static int creator_gone(const glex_fabric_t *f, uint32_t node)
{
    if (node >= f->nnodes)
        return 1;
    glex_node_state_t s = glex_node_state(f, node);
    return s == GLEX_NODE_DEAD || s == GLEX_NODE_LEFT;
}

int glex_mcast_create(glex_fabric_t *f, uint32_t seq, const uint32_t *nodes, uint32_t n,
                      glex_gid_t *out)
{
    glex_gid_t gid = GLEX_GID(f->node, seq);
    *out = 0;
    if (!nodes || n < 1 || n > f->p.mcast_members)
        return glex_error(GLEX_EINVAL,
                          "multicast group of %u members: allowed 1..%u (GLEX_MCAST_MEMBERS)", n,
                          f->p.mcast_members);
    if (gid == 0)
        return glex_error(GLEX_EINVAL, "multicast GID 0 (node 0, sequence 0) is reserved: "
                          "allowed sequence 1..4294967295 on node 0");
    uint8_t *seen = calloc(f->nnodes, 1);
    if (!seen)
        return glex_error(GLEX_ENOMEM, "multicast: out of memory");
    int rc = GLEX_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (nodes[i] >= f->nnodes)
            rc = glex_error(GLEX_EINVAL, "multicast group member %u: node %u, allowed 0..%u", i,
                            nodes[i], f->nnodes - 1);
        else if (seen[nodes[i]]++)
            rc = glex_error(GLEX_EINVAL, "multicast group member %u: node %u is listed twice",
                            i, nodes[i]);
    }
    if (!rc && !seen[f->node])
        rc = glex_error(GLEX_EINVAL, "multicast group: its creator, node %u, is not a member",
                        f->node);
    free(seen);
    for (uint32_t i = 0; i < n && !rc; i++)
        if (glex_remote(f, nodes[i]))
            rc = glex_error(GLEX_ENOTSUP, "multicast group member %u: node %u is on host %u, "
                            "its creator on host %u (the modeled routers span one host)", i,
                            nodes[i], f->host_of[nodes[i]], f->host);
    if (rc)
        return rc;
    /* a record: the GID must be free */
    glex_shm_header_t *h = f->hdr;
    glex_group_rec_t *g = NULL, *all = groups(f);
    uint64_t now = glex_coarse_ns();
    glex_lock(&h->job_lock);
    if (record(f, gid))
        rc = glex_error(GLEX_EBUSY, "multicast GID %#llx (node %u, sequence %u) is in use",
                        (unsigned long long)gid, f->node, seq);
    for (uint32_t i = 0; !rc && i < GLEX_MCAST_GROUPS; i++) {
        uint64_t o = atomic_load_explicit(&all[i].gid, memory_order_relaxed);
        uint64_t seen_ns = atomic_load_explicit(&all[i].refreshed_ns, memory_order_relaxed);
        if (o == 0 || (now > seen_ns && now - seen_ns > (uint64_t)f->p.mcast_age_s * 1000000000ull &&
                       creator_gone(f, all[i].creator))) {
            g = &all[i];
            break;
        }
    }
    if (!rc && !g)
        rc = glex_error(GLEX_ENOSPC, "multicast: all %u group records of the job are in use",
                        GLEX_MCAST_GROUPS);
    if (!rc) {
        atomic_store_explicit(&g->state, 0, memory_order_relaxed);
        g->creator = f->node;
        g->members = n;
        atomic_store_explicit(&g->refreshed_ns, now, memory_order_relaxed);
        atomic_store_explicit(&g->gid, gid, memory_order_release);
    }
    glex_unlock(&h->job_lock);
    if (rc)
        return rc;
    /* the tree: the union of the creator's routes, each router's ports */
    topo_t t;
    topo_of(h, f->nnodes, &t);
    tree_t tr = { .words = h->net_mask_words };
    hop_t hops[2 * GLEX_NET_MAX_LEVELS];
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (nodes[i] == f->node)
            continue;
        uint32_t nh = route(f, &t, f->node, nodes[i], hops);
        for (uint32_t j = 0; j < nh && !rc; j++) {
            uint64_t *m = tree_mask(&tr, hops[j].id);
            if (!m) {
                rc = glex_error(GLEX_ENOMEM, "multicast: out of memory for the tree");
                break;
            }
            m[hops[j].in / 64] |= 1ull << (hops[j].in % 64);
            m[hops[j].out / 64] |= 1ull << (hops[j].out % 64);
        }
    }
    uint32_t done = 0;
    for (; !rc && done < tr.n; done++) {
        rc = install(f, tr.id[done], gid, tr.mask + (size_t)done * tr.words, now);
        if (rc == GLEX_EBUSY)
            rc = glex_error(GLEX_EBUSY, "multicast GID %#llx is in use in router %u",
                            (unsigned long long)gid, tr.id[done]);
        else if (rc == GLEX_ENOSPC)
            rc = glex_error(GLEX_ENOSPC,
                            "multicast group %#llx: router %u (level %u) has all %u table "
                            "entries in use (GLEX_MCAST_ENTRIES); nothing was installed",
                            (unsigned long long)gid, tr.id[done],
                            glex_net_router_level(f, tr.id[done]), f->p.mcast_entries);
    }
    if (rc) {
        remove_entries(f, &tr, done, gid);
        atomic_store_explicit(&g->gid, 0, memory_order_release);
    } else {
        /* the creation packets: one down every link of the tree from the
         * creator, each carrying its router's port list; the last hop to
         * each member notifies it */
        uint32_t reached = 0;
        atomic_store_explicit(&g->state, 1, memory_order_release);
        if (n > 1)
            rc = flood(f, gid, f->node, 1, 8u * h->net_mask_words, 1, 0, 0, NULL, 0, &reached);
        *out = gid;
    }
    free(tr.id);
    free(tr.mask);
    return rc;
}

static glex_group_rec_t *own_record(glex_fabric_t *f, glex_gid_t gid, int *rc)
{
    glex_group_rec_t *g = record(f, gid);
    *rc = GLEX_OK;
    if (!g)
        *rc = glex_error(GLEX_ENOENT, "multicast group %#llx does not exist",
                         (unsigned long long)gid);
    else if (g->creator != f->node)
        *rc = glex_error(GLEX_EINVAL, "multicast group %#llx was created by node %u, not by "
                         "node %u", (unsigned long long)gid, g->creator, f->node);
    return *rc ? NULL : g;
}

int glex_mcast_delete(glex_fabric_t *f, glex_gid_t gid)
{
    int rc;
    glex_group_rec_t *g = own_record(f, gid, &rc);
    if (!g)
        return rc;
    uint32_t n = 0;
    /* deletion packets: down the tree, each router frees its entry (one
     * aged out already is skipped) */
    if (g->members > 1) {
        rc = flood(f, gid, f->node, 1, 8, 1, 0, 1, NULL, 0, &n);
        if (rc == GLEX_ENOENT)
            rc = GLEX_OK;
    }
    atomic_store_explicit(&g->state, 0, memory_order_release);
    atomic_store_explicit(&g->gid, 0, memory_order_release);
    return rc;
}

int glex_mcast_refresh(glex_fabric_t *f, glex_gid_t gid)
{
    int rc;
    glex_group_rec_t *g = own_record(f, gid, &rc);
    if (!g)
        return rc;
    uint64_t now = glex_coarse_ns();
    atomic_store_explicit(&g->refreshed_ns, now, memory_order_relaxed);
    uint32_t n = 0;
    return g->members > 1 ? flood(f, gid, f->node, 0, 0, 0, now, 0, NULL, 0, &n) : GLEX_OK;
}

int glex_mcast_state(const glex_fabric_t *f, glex_gid_t gid)
{
    glex_group_rec_t *g = record(f, gid);
    return g && atomic_load_explicit(&g->state, memory_order_acquire) == 1 ? GLEX_OK
                                                                            : GLEX_ENOENT;
}

/* ---- counters and shape ---- */

void glex_net_shape(const glex_fabric_t *f, glex_net_shape_t *o)
{
    o->k = f->hdr->net_k;
    o->radix = 2 * o->k;
    o->levels = f->hdr->net_levels;
    o->routers = f->hdr->net_routers;
    o->entries = f->hdr->params.mcast_entries;
}

uint32_t glex_net_router_level(const glex_fabric_t *f, uint32_t id)
{
    uint32_t l = 1;
    while (l < f->hdr->net_levels && id >= f->hdr->net_level_base[l])
        l++;
    return l;
}

int glex_net_link(const glex_fabric_t *f, uint32_t id, uint32_t port, int dir,
                  glex_link_stats_t *o)
{
    if (id >= f->hdr->net_routers || port >= 2 * f->hdr->net_k || dir < 0 || dir > 1)
        return glex_error(GLEX_EINVAL, "link of router %u port %u dir %d: allowed router "
                          "0..%u, port 0..%u, dir 0..1", id, port, dir, f->hdr->net_routers - 1,
                          2 * f->hdr->net_k - 1);
    glex_link_shm_t *l = link_of(f, id, port, dir);
    o->packets = atomic_load_explicit(&l->packets, memory_order_relaxed);
    o->head_flits = o->packets; /* a multicast packet has one head flit: its GID */
    o->bytes = atomic_load_explicit(&l->bytes, memory_order_relaxed);
    return GLEX_OK;
}

void glex_net_totals(const glex_fabric_t *f, glex_link_stats_t *inj, glex_link_stats_t *all)
{
    memset(inj, 0, sizeof *inj);
    memset(all, 0, sizeof *all);
    uint32_t k = f->hdr->net_k;
    for (uint32_t id = 0; id < f->hdr->net_routers; id++)
        for (uint32_t q = 0; q < 2 * k; q++)
            for (int d = 0; d < 2; d++) {
                glex_link_stats_t s;
                glex_net_link(f, id, q, d, &s);
                all->packets += s.packets, all->head_flits += s.head_flits;
                all->bytes += s.bytes;
                if (d == 1) /* only node -> leaf links count "into" a router */
                    inj->packets += s.packets, inj->head_flits += s.head_flits,
                        inj->bytes += s.bytes;
            }
}

uint32_t glex_net_entries_used(const glex_fabric_t *f, uint32_t id)
{
    return id < f->hdr->net_routers ? router(f, id)->used : 0;
}
