/* glex_coll_group.c - groups, algorithm names and fitting, the 'auto'
 * selection table and the per-group plan cache. */
#include "glex_coll_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[GLEX_COLL_KIND_COUNT] = { "bcast", "reduce", "allreduce",
                                                              "barrier" };
static const char *const algo_names[GLEX_ALGO_COUNT] = { "auto", "binomial", "recursive_doubling",
                                                         "rabenseifner", "double_tree", "direct" };
/* which algorithms exist for each collective (bit per glex_algo_t) */
static const unsigned algo_mask[GLEX_COLL_KIND_COUNT] = {
    [GLEX_COLL_BCAST] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                        1u << GLEX_ALGO_DOUBLE_TREE | 1u << GLEX_ALGO_DIRECT,
    [GLEX_COLL_REDUCE] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                         1u << GLEX_ALGO_RABENSEIFNER | 1u << GLEX_ALGO_DOUBLE_TREE |
                         1u << GLEX_ALGO_DIRECT,
    [GLEX_COLL_ALLREDUCE] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                            1u << GLEX_ALGO_RECURSIVE_DOUBLING | 1u << GLEX_ALGO_RABENSEIFNER |
                            1u << GLEX_ALGO_DOUBLE_TREE | 1u << GLEX_ALGO_DIRECT,
    [GLEX_COLL_BARRIER] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL | 1u << GLEX_ALGO_DIRECT,
};

const char *glex_coll_kind_name(glex_coll_kind_t k)
{
    return (unsigned)k < GLEX_COLL_KIND_COUNT ? kind_names[k] : "?";
}

const char *glex_algo_name(glex_algo_t a)
{
    return (unsigned)a < GLEX_ALGO_COUNT ? algo_names[a] : "?";
}

int glex_algo_valid(glex_coll_kind_t k, glex_algo_t a)
{
    return (unsigned)k < GLEX_COLL_KIND_COUNT && (unsigned)a < GLEX_ALGO_COUNT &&
           (algo_mask[k] >> a & 1u);
}

int glex_algo_parse(glex_coll_kind_t k, const char *s, glex_algo_t *out)
{
    char list[160] = "";
    for (int a = 0; a < GLEX_ALGO_COUNT; a++) {
        if (!glex_algo_valid(k, (glex_algo_t)a))
            continue;
        if (s && !strcmp(s, algo_names[a])) {
            *out = (glex_algo_t)a;
            return GLEX_OK;
        }
        strcat(list, *list ? "|" : "");
        strcat(list, algo_names[a]);
    }
    return glex_error(GLEX_EINVAL, "%s algorithm '%s' is not valid: allowed %s",
                      glex_coll_kind_name(k), s ? s : "(null)", list);
}

/* ---- fitting and the auto table ---- */

bool glex_algo_fits(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo)
{
    uint32_t n = g->size;
    if (!glex_algo_valid(a->kind, algo) || algo == GLEX_ALGO_AUTO)
        return false;
    switch (algo) {
    case GLEX_ALGO_BINOMIAL:
    case GLEX_ALGO_RECURSIVE_DOUBLING:
        return true;
    case GLEX_ALGO_RABENSEIFNER:
        return n >= 2 && a->count >= pof2_floor(n);
    case GLEX_ALGO_DOUBLE_TREE:
        return n >= 2 && a->count >= 2;
    case GLEX_ALGO_DIRECT: /* a call waited for at once (one direct call in flight per
                              group), every member with a mailbox (agreed at the first) */
        return a->blocking && glex_fabric_params(g->f)->mailboxes > 0 && g->direct_state >= 0;
    default:
        return false;
    }
}

/* ---- 'auto': the one selection table of each collective (message size x
 * group size x processes per CPU -> algorithm), measured on this machine
 * with bench/auto-table.sh (doc/algorithms.md has the data behind it).  Rows
 * are read in order; the first that matches decides.  It never picks
 * 'direct', which runs outside the NIC model. ---- */

#define KIB 1024ull
#define ANY UINT64_MAX

typedef struct {
    uint32_t min_ppc;   /* processes of the job per online CPU, at least */
    uint32_t min_n;     /* group size, at least */
    uint64_t below;     /* message bytes below this */
    glex_algo_t algo;
} sel_row_t;

/* allreduce: recursive doubling while it fits (fewest steps); oversubscribed,
 * a binomial reduce + bcast sends fewer messages (2(n-1) against n log n),
 * and each message costs a context switch; Rabenseifner for large vectors */
static const sel_row_t allreduce_rows[] = {
    { 3, 1, 64, GLEX_ALGO_RECURSIVE_DOUBLING },
    { 3, 1, 512 * KIB, GLEX_ALGO_BINOMIAL },
    { 1, 1, 512 * KIB, GLEX_ALGO_RECURSIVE_DOUBLING },
    { 1, 1, ANY, GLEX_ALGO_RABENSEIFNER },
};
/* reduce: binomial at every size (all children of a node in one
 * counter-triggered descriptor when inline).  glex-bench favoured double tree
 * from 16 KiB to 1 MiB, but through MPI it falls off at 512 KiB (2 processes:
 * 340 against 102 us) and Rabenseifner trails binomial at 2 and 4 processes
 * from 64 KiB to 4 MiB (bench/results/osu) */
static const sel_row_t reduce_rows[] = {
    { 1, 1, ANY, GLEX_ALGO_BINOMIAL },
};
/* bcast: binomial, except large messages in groups of 8 and more */
static const sel_row_t bcast_rows[] = {
    { 1, 8, 512 * KIB, GLEX_ALGO_BINOMIAL },
    { 1, 8, 4096 * KIB, GLEX_ALGO_DOUBLE_TREE },
    { 1, 1, ANY, GLEX_ALGO_BINOMIAL },
};

static glex_algo_t lookup(const sel_row_t *rows, size_t nrows, uint32_t ppc, uint32_t n,
                          uint64_t bytes)
{
    for (size_t i = 0; i < nrows; i++)
        if (ppc >= rows[i].min_ppc && n >= rows[i].min_n && bytes < rows[i].below)
            return rows[i].algo;
    return GLEX_ALGO_BINOMIAL;
}

#define LOOKUP(rows, ppc, n, bytes) lookup(rows, sizeof rows / sizeof rows[0], ppc, n, bytes)

glex_algo_t glex_algo_auto(const glex_group_t *g, const glex_coll_args_t *a)
{
    uint64_t bytes = a->count * glex_type_size(a->type);
    uint32_t n = g->size, ppc = glex_procs_per_cpu(g->f);
    glex_algo_t algo;
    switch (a->kind) {
    case GLEX_COLL_BCAST: algo = LOOKUP(bcast_rows, ppc, n, bytes); break;
    case GLEX_COLL_REDUCE: algo = LOOKUP(reduce_rows, ppc, n, bytes); break;
    case GLEX_COLL_ALLREDUCE: algo = LOOKUP(allreduce_rows, ppc, n, bytes); break;
    default: return GLEX_ALGO_BINOMIAL;
    }
    /* a choice that does not fit the call (too few elements) */
    if (!glex_algo_fits(g, a, algo))
        algo = a->kind == GLEX_COLL_ALLREDUCE ? GLEX_ALGO_RECURSIVE_DOUBLING : GLEX_ALGO_BINOMIAL;
    return algo;
}

/* ---- groups ---- */

/* an unsigned environment variable in [lo, hi], or def when unset */
static int env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi, uint64_t *out)
{
    const char *s = getenv(name);
    *out = def;
    if (!s || !*s)
        return GLEX_OK;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || end == s || s[0] == '-' || v < lo || v > hi)
        return glex_error(GLEX_EINVAL, "%s=%s is invalid: allowed range %llu..%llu", name, s,
                          (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return GLEX_OK;
}

/* GLEX_COLL_SEGMENT_KB: auto (0) or 1..65536 */
static int env_seg_kb(uint64_t *out)
{
    const char *s = getenv("GLEX_COLL_SEGMENT_KB");
    if (s && !strcmp(s, "auto")) {
        *out = 0;
        return GLEX_OK;
    }
    int rc = env_u64("GLEX_COLL_SEGMENT_KB", 0, 1, 65536, out);
    if (rc)
        glex_error(rc, "GLEX_COLL_SEGMENT_KB=%s is invalid: allowed auto or 1..65536", s);
    return rc;
}

int glex_group_create(glex_vp_t *vp, uint64_t group_key, uint32_t size, uint32_t rank,
                      const uint32_t *nodes, const uint16_t *vps, glex_group_t **out)
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
    uint64_t seg_kb, max_plans;
    int rc;
    if ((rc = env_u64("GLEX_COLL_PLAN_CACHE", 256, 1, 1000000, &max_plans)) ||
        (rc = env_seg_kb(&seg_kb)))
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
    g->seg_bytes = seg_kb * 1024;
    g->max_plans = (uint32_t)max_plans;
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
    if (g->lease >= 0)
        glex_job_release(g->f, g->lease);
    free(g->spare);
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

#define SEG_AUTO_MIN (256u * 1024u)
#define SEG_AUTO_MAX (1024u * 1024u)

/* Pipelining segment: GLEX_COLL_SEGMENT_KB, made coarser for big messages so
 * that every rank's plan fits its DQ.  It depends only on the call and the
 * group size, never on the rank: all members must cut the same segments. */
static uint64_t segment_bytes(const glex_group_t *g, const glex_coll_args_t *a, size_t es)
{
    const glex_params_t *prm = glex_fabric_params(g->f);
    uint64_t bytes = a->count * es;
    /* descriptors per segment at the busiest rank: a binomial root sends to
     * log2(n) children; a double-tree node has 2 trees x 2 steps */
    uint64_t per_seg = log2u(g->size) + 4;
    int64_t room = (int64_t)prm->dq_depth - 2 * (int64_t)log2u(g->size) - 8;
    uint64_t max_segs = room > (int64_t)(2 * per_seg) ? (uint64_t)room / (2 * per_seg) : 1;
    uint64_t seg = g->seg_bytes;
    if (!seg) /* auto: half the message within [256 KiB, 1 MiB] (measured: fewer, larger
               * DMA pulses beat deeper pipelining on this machine, 2 and 8 ranks) */
        seg = bytes / 2 < SEG_AUTO_MIN ? SEG_AUTO_MIN : bytes / 2 > SEG_AUTO_MAX ? SEG_AUTO_MAX
                                                                                 : bytes / 2;
    if (bytes / seg >= max_segs)
        seg = (bytes + max_segs - 1) / max_segs;
    return seg;
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
    s.seg_bytes = segment_bytes(g, a, s.es);
    switch (a->kind) {
    case GLEX_COLL_BCAST: glex_build_bcast(&s, (glex_algo_t)p->sig.algo); break;
    case GLEX_COLL_REDUCE: glex_build_reduce(&s, (glex_algo_t)p->sig.algo); break;
    default: glex_build_allreduce(&s, (glex_algo_t)p->sig.algo); break;
    }
    if (s.n == 0) /* nothing to move: one no-op step completes the task */
        sc_local(&s, 0, 0, 0, false);
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
    s.d[0].ch = 1;
    s.d[s.n - 1].ct = 1;
    s.d[s.n - 1].coll_end_flag = 1;
    /* checked once here: every call posts the plan by reference */
    if ((s.err = glex_list_check(g->vp, s.d, s.n))) {
        free(s.d);
        return s.err;
    }
    p->d = s.d;
    p->n = s.n;
    p->tmp_bytes = s.tmp_bytes;
    return GLEX_OK;
}

static uint64_t sig_hash(const glex_plan_sig_t *s)
{
    const unsigned char *b = (const unsigned char *)s;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof *s; i++)
        h = (h ^ b[i]) * 1099511628211ull;
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
