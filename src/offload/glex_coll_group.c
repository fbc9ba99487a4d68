/* glex_coll_group.c - groups and their plan cache (compiling a call into
 * descriptor lists on first use).  The policy, names and the 'auto' table
 * are in glex_coll_select.c. */
#include "glex_coll_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- groups ---- */

int glex_group_create(glex_vp_t *vp, uint64_t group_key, uint32_t size, uint32_t rank,
                      const uint32_t *nodes, const uint16_t *vps, glex_group_t **out)
{
    return glex_group_create_policy(vp, group_key, size, rank, nodes, vps, NULL, out);
}

/* each member's host, numbered in the order of their first member (for
 * the two-level algorithm); NULL while the whole job is on one host */
static int group_hosts(glex_group_t *g)
{
    uint32_t nh = glex_fabric_nhosts(g->f);
    uint32_t *seen = malloc(sizeof *seen * nh);
    g->host = malloc(sizeof *g->host * g->size);
    if (!seen || !g->host) {
        free(seen);
        return GLEX_ENOMEM;
    }
    for (uint32_t h = 0; h < nh; h++)
        seen[h] = UINT32_MAX;
    g->nhosts = 0;
    for (uint32_t i = 0; i < g->size; i++) {
        uint32_t h = glex_fabric_host_of(g->f, g->nodes[i]);
        if (seen[h] == UINT32_MAX)
            seen[h] = g->nhosts++;
        g->host[i] = seen[h];
    }
    free(seen);
    return GLEX_OK;
}

int glex_group_create_policy(glex_vp_t *vp, uint64_t group_key, uint32_t size, uint32_t rank,
                             const uint32_t *nodes, const uint16_t *vps,
                             const glex_coll_policy_t *pol, glex_group_t **out)
{
    *out = NULL;
    if (!vp || !nodes || !vps)
        return glex_error(GLEX_EINVAL, "group_create: null %s", !vp ? "vp" : !nodes ? "nodes" : "vps");
    glex_fabric_t *f = glex_vp_fabric(vp);
    const glex_params_t *p = glex_fabric_params(f);
    if (size < 1 || size > glex_fabric_nnodes(f) * p->vps_per_node)
        return glex_error(GLEX_EINVAL, "group size %u is out of range 1..%u", size,
                          glex_fabric_nnodes(f) * p->vps_per_node);
    if (rank >= size)
        return glex_error(GLEX_EINVAL, "group rank %u is out of range 0..%u", rank, size - 1);
    for (uint32_t i = 0; i < size; i++) {
        if (nodes[i] >= glex_fabric_nnodes(f) || vps[i] >= p->vps_per_node)
            return glex_error(GLEX_EINVAL,
                              "group member %u at node %u vp %u: allowed node 0..%u vp 0..%u", i,
                              nodes[i], vps[i], glex_fabric_nnodes(f) - 1, p->vps_per_node - 1);
    }
    if (nodes[rank] != glex_fabric_node(f) || vps[rank] != glex_vp_index(vp))
        return glex_error(GLEX_EINVAL, "group rank %u is node %u vp %u, but this VP is node %u vp %u",
                          rank, nodes[rank], vps[rank], glex_fabric_node(f), glex_vp_index(vp));
    glex_coll_policy_t policy;
    int rc;
    if (pol) {
        policy = *pol;
        rc = glex_coll_policy_check(&policy);
    } else {
        glex_coll_policy_default(&policy);
        rc = glex_coll_policy_from_env(&policy);
    }
    if (rc)
        return rc;
    glex_group_t *g = calloc(1, sizeof *g);
    if (!g)
        return glex_error(GLEX_ENOMEM, "out of memory for a group");
    g->lease = -1;
    g->nodes = malloc(sizeof *g->nodes * size);
    g->vps = malloc(sizeof *g->vps * size);
    if (!g->nodes || !g->vps) {
        glex_group_free(g);
        return glex_error(GLEX_ENOMEM, "out of memory for a group of %u", size);
    }
    memcpy(g->nodes, nodes, sizeof *g->nodes * size);
    memcpy(g->vps, vps, sizeof *g->vps * size);
    g->vp = vp;
    g->f = f;
    g->key = group_key;
    g->size = size;
    g->rank = rank;
    if (glex_fabric_nhosts(f) > 1 && group_hosts(g)) {
        glex_group_free(g);
        return glex_error(GLEX_ENOMEM, "out of memory for a group of %u", size);
    }
    g->pol = policy;
    g->max_plans = (uint32_t)policy.plan_cache;
    g->mcast_shape = glex_mcast_shape(g);
    /* blocking calls never overlap on a member and never match nonblocking
     * ones: they share one JobID, agreed here once (not at every call) */
    g->lease = glex_job_lease(f, group_key * 0x9e3779b97f4a7c15ull ^ 0x6c65617365ull, size);
    *out = g;
    return GLEX_OK;
}

static void plan_free(glex_plan_t *p)
{
    for (uint32_t i = 0; i < p->ntmp; i++)
        free(p->tmp_free[i]);
    free(p->tmp_free);
    free(p->d);
    free(p);
}

void glex_group_free(glex_group_t *g)
{
    if (!g)
        return;
    for (uint32_t b = 0; b < GLEX_PLAN_BUCKETS; b++)
        while (g->buckets[b]) {
            glex_plan_t *p = g->buckets[b];
            g->buckets[b] = p->next;
            plan_free(p);
        }
    glex_direct_free(g);
    glex_mcast_free(g);
    if (g->lease >= 0)
        glex_job_release(g->f, g->lease);
    free(g->spare);
    free(g->host);
    free(g->nodes);
    free(g->vps);
    free(g);
}

int glex_group_stats(const glex_group_t *g, glex_coll_kind_t k, glex_algo_t a, int host,
                     glex_coll_stats_t *out)
{
    if (!g || !out || (unsigned)k >= GLEX_COLL_KIND_COUNT || (unsigned)a >= GLEX_ALGO_COUNT)
        return glex_error(GLEX_EINVAL, "group stats of kind %d algorithm %d: allowed kind 0..%d, "
                          "algorithm 0..%d", (int)k, (int)a, GLEX_COLL_KIND_COUNT - 1,
                          GLEX_ALGO_COUNT - 1);
    *out = g->stats[k][a][host != 0];
    return GLEX_OK;
}

uint32_t glex_group_size(const glex_group_t *g) { return g->size; }
uint32_t glex_group_rank(const glex_group_t *g) { return g->rank; }
uint32_t glex_group_hosts(const glex_group_t *g) { return g->nhosts; }
uint32_t glex_group_plans(const glex_group_t *g) { return g->nplans; }

/* ---- plan cache ---- */

static glex_plan_sig_t make_sig(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo)
{
    glex_plan_sig_t s;
    memset(&s, 0, sizeof s);
    s.kind = a->kind;
    s.algo = algo;
    s.host = a->host_mode ? 1 : 0;
    s.inplace = a->sendbuf == GLEX_IN_PLACE || a->sendbuf == a->recvbuf;
    if (a->kind == GLEX_COLL_REDUCE && g->rank != a->root)
        s.inplace = 0; /* only the root's in-place changes its schedule */
    if (a->kind == GLEX_COLL_BCAST || a->kind == GLEX_COLL_REDUCE)
        s.root = a->root;
    if (a->kind != GLEX_COLL_BARRIER) {
        s.count = a->count;
        s.type = a->type;
    }
    if (a->kind == GLEX_COLL_REDUCE || a->kind == GLEX_COLL_ALLREDUCE)
        s.op = a->op;
    return s;
}


static int compile(glex_group_t *g, const glex_coll_args_t *a, glex_plan_t *p)
{
    const glex_params_t *prm = glex_fabric_params(g->f);
    glex_sched_t s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.a = a;
    s.inplace = p->sig.inplace;
    s.es = a->kind == GLEX_COLL_BARRIER ? 4 : glex_type_size(a->type);
    s.seg_bytes = glex_sel_segment_bytes(g, a, s.es);
    switch (p->sig.algo == GLEX_ALGO_TWO_LEVEL ? GLEX_COLL_KIND_COUNT : a->kind) {
    case GLEX_COLL_KIND_COUNT: glex_build_two_level(&s); break; /* every kind */
    case GLEX_COLL_BCAST: glex_build_bcast(&s, (glex_algo_t)p->sig.algo); break;
    case GLEX_COLL_REDUCE: glex_build_reduce(&s, (glex_algo_t)p->sig.algo); break;
    default: glex_build_allreduce(&s, (glex_algo_t)p->sig.algo); break;
    }
    if (s.n == 0) /* nothing to move: one no-op step completes the task */
        glex_sc_local(&s, 0, 0, 0, false);
    if (!s.err && s.n > prm->dq_depth && !p->sig.host)
        s.err = glex_error(GLEX_EINVAL,
                           "%s %s of %llu elements needs %u descriptors: GLEX_DQ_DEPTH=%u is "
                           "too small (allowed up to 65536)",
                           glex_coll_kind_name(a->kind), glex_algo_name((glex_algo_t)p->sig.algo),
                           (unsigned long long)a->count, s.n, prm->dq_depth);
    if (s.err) {
        free(s.d);
        return s.err;
    }
    if (s.split >= s.n)
        s.split = 0;
    s.d[0].ch = 1;
    if (s.split) { /* two sequences */
        s.d[s.split - 1].ct = s.d[s.split - 1].coll_end_flag = 1;
        s.d[s.split].ch = 1;
    }
    s.d[s.n - 1].ct = 1;
    s.d[s.n - 1].coll_end_flag = 1;
    /* checked once here: every call posts the plan by reference */
    if ((s.split && (s.err = glex_list_check(g->vp, s.d, s.split))) ||
        (s.err = glex_list_check(g->vp, s.d + s.split, s.n - s.split))) {
        free(s.d);
        return s.err;
    }
    p->d = s.d;
    p->n = s.n;
    p->split = s.split;
    p->tmp_bytes = s.tmp_bytes;
    return GLEX_OK;
}

/* a word at a time (the signature is whole words, zeroed padding): this
 * runs on every call */
static uint64_t sig_hash(const glex_plan_sig_t *s)
{
    _Static_assert(sizeof *s % sizeof(uint64_t) == 0, "plan signature is whole words");
    uint64_t w[sizeof *s / sizeof(uint64_t)], h = 0x9e3779b97f4a7c15ull;
    memcpy(w, s, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

/* drop the least recently used plan no request holds */
static void evict_one(glex_group_t *g)
{
    glex_plan_t **victim = NULL;
    for (uint32_t b = 0; b < GLEX_PLAN_BUCKETS; b++)
        for (glex_plan_t **pp = &g->buckets[b]; *pp; pp = &(*pp)->next)
            if (!(*pp)->refs && (!victim || (*pp)->last_use < (*victim)->last_use))
                victim = pp;
    if (!victim)
        return;
    glex_plan_t *p = *victim;
    *victim = p->next;
    for (int k = 0; k < GLEX_COLL_KIND_COUNT; k++)
        for (uint32_t w = 0; w < GLEX_MEMO_WAYS; w++)
            if (g->memo[k][w].plan == p)
                g->memo[k][w].plan = NULL;
    plan_free(p);
    g->nplans--;
}

glex_plan_t *glex_plan_get(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo, int *err)
{
    glex_plan_sig_t sig = make_sig(g, a, algo);
    uint64_t h = sig_hash(&sig);
    glex_plan_t **head = &g->buckets[h % GLEX_PLAN_BUCKETS];
    for (glex_plan_t *p = *head; p; p = p->next) {
        if (p->hash == h && !memcmp(&p->sig, &sig, sizeof sig)) {
            p->last_use = ++g->use_clock;
            p->refs++;
            return p;
        }
    }
    glex_plan_t *p = calloc(1, sizeof *p);
    if (!p) {
        *err = glex_error(GLEX_ENOMEM, "out of memory for a plan");
        return NULL;
    }
    p->sig = sig;
    p->hash = h;
    if ((*err = compile(g, a, p))) {
        free(p);
        return NULL;
    }
    if (g->nplans >= g->max_plans)
        evict_one(g);
    p->next = *head;
    *head = p;
    g->nplans++;
    p->last_use = ++g->use_clock;
    p->refs = 1;
    return p;
}

void glex_plan_put(glex_plan_t *p)
{
    if (p && p->refs)
        p->refs--;
}
