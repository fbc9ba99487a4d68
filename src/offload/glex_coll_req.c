/* glex_coll_req.c - starting collectives and completing them: argument
 * checks, JobID agreement, posting a cached plan with this call's buffers,
 * offload mode (one sequence, the NIC runs every step) and host-based mode
 * (each step is its own sequence; the host posts the next after the CQE). */
#include "glex_coll_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { REQ_NEED_JOB, REQ_NEED_POST, REQ_RUNNING, REQ_DONE };

struct glex_req {
    glex_group_t *g;
    glex_plan_t *plan;
    glex_algo_t algo;
    int host;
    int state;
    int status;
    int job;
    uint32_t step;       /* host mode: next descriptor to post */
    uint32_t pending;    /* sequences posted whose CQE has not come */
    uint64_t key;
    uint64_t bases[4];
    void *tmp;
    int leased;          /* runs under the group's leased JobID ... */
    uint16_t gen_add;    /* ... with keys of its own: the lease's call count */
    struct glex_req *lnext; /* next in the group's queue of calls under the lease */
    glex_coll_kind_t kind;
    glex_type_t type;     /* of its elements (host-based: the host's combine) */
    glex_coll_stats_t st; /* summed from the CQEs of its tasks */
    int direct;          /* a direct-path call (dc), no plan */
    struct glex_req *dnext; /* next direct call in flight on the group */
    glex_dcall_t dc;
};

/* r at the tail of the list (head, tail) linked through r->link */
#define REQ_APPEND(head, tail, link, r)                                                            \
    do {                                                                                           \
        (r)->link = NULL;                                                                          \
        if (tail)                                                                                  \
            (tail)->link = (r);                                                                    \
        else                                                                                       \
            (head) = (r);                                                                          \
        (tail) = (r);                                                                              \
    } while (0)

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int check_args(const glex_group_t *g, const glex_coll_args_t *a)
{
    if (!g || !a)
        return glex_error(GLEX_EINVAL, "null %s", g ? "arguments" : "group");
    if ((unsigned)a->kind >= GLEX_COLL_KIND_COUNT)
        return glex_error(GLEX_EINVAL, "collective kind %d is out of range 0..%d", (int)a->kind,
                          GLEX_COLL_KIND_COUNT - 1);
    if (!glex_algo_valid(a->kind, a->algo))
        return glex_algo_parse(a->kind, glex_algo_name(a->algo), &(glex_algo_t){ 0 });
    if (a->kind == GLEX_COLL_BARRIER)
        return GLEX_OK;
    if ((unsigned)a->type >= GLEX_TYPE_COUNT)
        return glex_error(GLEX_EINVAL, "type %d is out of range 0..%d", (int)a->type,
                          GLEX_TYPE_COUNT - 1);
    if (a->count > (1ull << 40) / glex_type_size(a->type))
        return glex_error(GLEX_EINVAL, "count %llu is out of range 0..%llu",
                          (unsigned long long)a->count,
                          (unsigned long long)((1ull << 40) / glex_type_size(a->type)));
    if ((a->kind == GLEX_COLL_BCAST || a->kind == GLEX_COLL_REDUCE) && a->root >= g->size)
        return glex_error(GLEX_EINVAL, "root %u is out of range 0..%u", a->root, g->size - 1);
    bool reducing = a->kind != GLEX_COLL_BCAST;
    if (reducing && !glex_alu_supported(a->op, a->type))
        return glex_error(GLEX_ENOTSUP, "op %s (%d) on type %s (%d) is not offloadable",
                          glex_op_name(a->op), (int)a->op, glex_type_name(a->type), (int)a->type);
    bool inplace = a->sendbuf == GLEX_IN_PLACE || a->sendbuf == a->recvbuf;
    bool root = g->rank == a->root;
    if (a->kind == GLEX_COLL_REDUCE && inplace && !root && a->sendbuf == GLEX_IN_PLACE)
        return glex_error(GLEX_EINVAL, "in-place reduce at non-root rank %u (root is %u)", g->rank,
                          a->root);
    if (a->count == 0)
        return GLEX_OK;
    bool need_recv = a->kind != GLEX_COLL_REDUCE || root;
    bool need_send = a->kind != GLEX_COLL_BCAST && !(inplace && need_recv);
    if (need_recv && !a->recvbuf)
        return glex_error(GLEX_EINVAL, "%s: recvbuf is null with count %llu",
                          glex_coll_kind_name(a->kind), (unsigned long long)a->count);
    if (need_send && !a->sendbuf)
        return glex_error(GLEX_EINVAL, "%s: sendbuf is null with count %llu",
                          glex_coll_kind_name(a->kind), (unsigned long long)a->count);
    return GLEX_OK;
}

int glex_coll_resolve(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t *out)
{
    int rc = check_args(g, a);
    if (rc)
        return rc;
    *out = glex_algo_fits(g, a, a->algo) ? a->algo : glex_algo_auto(g, a);
    return GLEX_OK;
}

/* A plan split in two (glex_plan_t.split): its first sequence's CQE
 * carries the request with this bit set (requests are aligned) */
#define COOKIE_SPLIT 1u

/* post descriptors [from, from+n) of the plan by reference (one sequence,
 * no copy); GLEX_EAGAIN when the DQ is full */
static int post_range(glex_req_t *r, uint32_t from, uint32_t n)
{
    glex_post_regs_t regs;
    memcpy(regs.base, r->bases, sizeof regs.base);
    regs.cookie = (uint64_t)(uintptr_t)r | (from < r->plan->split ? COOKIE_SPLIT : 0u);
    regs.job_id = (uint8_t)r->job;
    regs.flags = r->host ? GLEX_POST_HOST_ALU : 0; /* host-based: the host combines */
    regs.gen_add = r->gen_add;
    return glex_vp_post_list(r->g->vp, &r->plan->d[from], n, &regs);
}

static void finish(glex_req_t *r, int status)
{
    r->status = status;
    r->state = REQ_DONE;
    glex_coll_stats_t *g = &r->g->stats[r->kind][r->algo][r->host];
    g->calls++;
    g->tasks += r->st.tasks;
    g->descriptors += r->st.descriptors;
    g->sent += r->st.sent;
    g->received += r->st.received;
    g->alu_ops += r->st.alu_ops;
    if (r->job >= 0 && !r->leased)
        glex_job_release(r->g->f, r->job);
    if (r->leased)
        r->g->lease_done++;
    r->job = -1;
    glex_plan_t *p = r->plan;
    if (r->tmp) {
        if (p->ntmp == p->captmp) {
            uint32_t cap = p->captmp ? p->captmp * 2 : 2;
            void **v = realloc(p->tmp_free, sizeof *v * cap);
            if (v)
                p->tmp_free = v, p->captmp = cap;
        }
        if (p->ntmp < p->captmp)
            p->tmp_free[p->ntmp++] = r->tmp;
        else
            free(r->tmp);
        r->tmp = NULL;
    }
}

/* a call under the lease posts after the one before it finished (one task
 * of a JobID per VP at a time) */
static int lease_next(const glex_req_t *r)
{
    return !r->leased || (uint16_t)(r->g->lease_done + 1u) == r->gen_add;
}

static void advance(glex_req_t *r)
{
    if (r->state == REQ_NEED_POST && r->step == 0 && !lease_next(r))
        return;
    if (r->state == REQ_NEED_JOB) {
        int job = glex_job_acquire(r->g->f, r->key, r->g->size);
        if (job < 0)
            return; /* all JobIDs busy: back-pressure, retried on the next poll */
        r->job = job;
        r->state = REQ_NEED_POST;
    }
    if (r->state == REQ_NEED_POST) {
        uint32_t split = r->plan->split;
        int rc = GLEX_OK;
        /* a split plan: its first sequence whole (in host mode too: sends,
         * no combine), then the rest as usual */
        if (split && r->step == 0 && !(rc = post_range(r, 0, split)))
            r->step = split, r->pending++;
        if (!rc)
            rc = post_range(r, r->step, r->host ? 1 : r->plan->n - r->step);
        if (rc == GLEX_EAGAIN)
            return;
        if (rc) { /* a first sequence posted ends first */
            if (r->pending)
                r->status = rc, r->state = REQ_RUNNING;
            else
                finish(r, rc);
            return;
        }
        r->step = r->host ? r->step + 1 : r->plan->n;
        r->pending++;
        r->state = REQ_RUNNING;
    }
}

/* post the group's queued calls under its lease, in call order, each once
 * the one before it finished (from every poll on the group: the call waited
 * for may be a later one) */
static void lease_kick(glex_group_t *g)
{
    while (g->lq_head && lease_next(g->lq_head)) {
        glex_req_t *q = g->lq_head;
        advance(q);
        if (q->state == REQ_NEED_POST)
            return; /* the DQ is full: again at the next poll */
        if (!(g->lq_head = q->lnext))
            g->lq_tail = NULL;
    }
}

/* take every CQE of the group's VP and hand it to its request */
static void drain_cq(glex_vp_t *vp)
{
    glex_cqe_t e;
    while (glex_vp_poll_cq(vp, &e)) {
        glex_req_t *q = (glex_req_t *)(uintptr_t)(e.cookie & ~(uint64_t)COOKIE_SPLIT);
        if (!q || q->state == REQ_DONE || !q->pending)
            continue;
        q->pending--;
        q->st.tasks++;
        q->st.descriptors += e.ndesc;
        q->st.sent += e.sent;
        q->st.received += e.received;
        q->st.alu_ops += e.alu_ops;
        if (q->host) /* host-based: the host combined the step's data (GLEX_VTIME) */
            glex_vtime_host_reduce(q->g->f, q->type, e.alu_elems);
        if (e.status && !q->status) {
            glex_error(e.status, "%s", glex_vp_failure(vp));
            q->status = e.status;
        }
        if (q->status) { /* failed: done once no sequence of it runs */
            if (!q->pending)
                finish(q, q->status);
        } else if (!(e.cookie & COOKIE_SPLIT) && q->step < q->plan->n) {
            q->state = REQ_NEED_POST, advance(q);
        } else if (!q->pending && q->step == q->plan->n) {
            finish(q, GLEX_OK);
        }
        if (q->leased && q->state == REQ_DONE)
            lease_kick(q->g);
    }
}

static int req_poll(void *arg)
{
    glex_req_t *r = arg;
    if (r->direct) {
        /* direct calls in flight on a group advance oldest first, up to this
         * one: a later call may wait for an earlier one's slot */
        glex_req_t **pp = &r->g->dfirst, *prev = NULL;
        while (r->state != REQ_DONE && *pp) {
            glex_req_t *q = *pp;
            if (!glex_direct_poll(r->g, &q->dc)) {
                if (q == r)
                    break;
                prev = q;
                pp = &q->dnext;
                continue;
            }
            q->status = q->dc.status;
            q->state = REQ_DONE;
            q->g->stats[q->kind][GLEX_ALGO_DIRECT][0].calls++;
            *pp = q->dnext;
            if (r->g->dlast == q)
                r->g->dlast = prev;
            if (q == r)
                break;
        }
        return r->state == REQ_DONE;
    }
    advance(r);
    drain_cq(r->g->vp);
    lease_kick(r->g);
    return r->state == REQ_DONE;
}

/* checked arguments -> algorithm and plan (referenced), or NULL and *rc */
static glex_plan_t *plan_for(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t *algo, int *rc)
{
    *rc = glex_coll_resolve(g, a, algo);
    return *rc ? NULL : glex_plan_get(g, a, *algo, rc);
}

/* the members' agreement of a set-up: v[0..n) becomes the minimum over
 * the group (a blocking engine allreduce, binomial) */
static int agree_min(glex_group_t *g, int64_t *v, uint64_t n)
{
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_BINOMIAL, .count = n,
                           .type = GLEX_INT64, .op = GLEX_OP_MIN, .sendbuf = GLEX_IN_PLACE,
                           .recvbuf = v };
    return glex_coll_run(g, &a);
}

/* The direct path's set-up, at its first call on a group: every member
 * claims a mailbox, then all agree (an engine allreduce of the minimum)
 * whether all have one, and check that all run with the same direct-path
 * policy.  1: on; 0: off for good; < 0: error. */
static int direct_setup(glex_group_t *g)
{
    if (g->direct_state)
        return g->direct_state > 0;
    int64_t digest = glex_coll_policy_digest(&g->pol);
    int64_t all[3] = { glex_direct_claim(g), digest, -digest };
    int rc = agree_min(g, all, 3);
    if (!rc && all[1] != -all[2])
        rc = glex_error(GLEX_EMISMATCH, "the direct path's settings differ between the ranks of "
                        "a group: GLEX_RDMA_KB, GLEX_STAGE_KB and GLEX_STAGE_MAP must be the "
                        "same on every rank");
    if (rc) {
        glex_direct_free(g);
        return rc;
    }
    return glex_direct_open(g, (int)all[0]);
}

/* The multicast algorithm's set-up, at its first call on a group: rank 0
 * creates the group's tree in the modeled routers, and all members agree
 * (an engine allreduce of the minimum) whether it was created.  1: on; 0:
 * off for good (a full router table...: the group's calls take 'auto');
 * < 0: error. */
static int mcast_setup(glex_group_t *g)
{
    if (g->mcast_state)
        return g->mcast_state > 0;
    if (!g->mcast_shape) { /* the same answer on every member, no agreement needed */
        g->mcast_state = -1;
        return 0;
    }
    glex_gid_t gid = glex_mcast_gid(g);
    int mine = 1;
    if (g->rank == 0) /* its members are distinct nodes (glex_mcast_shape) */
        mine = glex_mcast_create(g->f, (uint32_t)gid, g->nodes, g->size, &gid) == GLEX_OK;
    int64_t all = mine;
    int rc = agree_min(g, &all, 1);
    if (rc)
        return rc;
    if (!all && g->rank == 0 && mine)
        glex_mcast_delete(g->f, gid);
    g->mcast_refreshed = glex_coarse_ns();
    g->mcast_state = all ? 1 : -1;
    return all ? 1 : 0;
}

int glex_group_mcast_prepare(glex_group_t *g)
{
    return mcast_setup(g);
}

/* a direct-path call: the group's members agree at the first one whether
 * the path is available (else *algo falls back to what 'auto' picks) */
static int start_direct(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t *algo,
                        glex_req_t **out)
{
    int rc = direct_setup(g);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        *algo = glex_algo_auto(g, a);
        return 1;
    }
    glex_req_t *r = g->spare ? g->spare : malloc(sizeof *r);
    g->spare = NULL;
    if (!r)
        return glex_error(GLEX_ENOMEM, "out of memory for a request");
    memset(r, 0, offsetof(glex_req_t, dc));
    r->g = g;
    r->algo = GLEX_ALGO_DIRECT;
    r->kind = a->kind;
    r->job = -1;
    r->direct = 1;
    r->state = REQ_RUNNING;
    g->calls++;
    glex_direct_start(g, a, &r->dc);
    REQ_APPEND(g->dfirst, g->dlast, dnext, r);
    req_poll(r);
    *out = r;
    return GLEX_OK;
}

/* what of a call's buffers the checks and the plan depend on */
static uint32_t buf_flags(const glex_coll_args_t *a)
{
    return (uint32_t)(!a->sendbuf) | (uint32_t)!a->recvbuf << 1 |
           (uint32_t)(a->sendbuf == GLEX_IN_PLACE) << 2 | (uint32_t)(a->sendbuf == a->recvbuf) << 3;
}

static int memo_same(const glex_call_memo_t *m, const glex_coll_args_t *a, uint32_t bufs)
{
    return m->plan && m->asked == a->algo && m->host == a->host_mode &&
           m->blocking == a->blocking && m->count == a->count && m->type == (int)a->type &&
           m->op == (int)a->op && m->root == a->root && m->bufs == bufs;
}

/* the plan of one of the group's last calls of this kind whose arguments
 * are this call's (the checks passed then, the choice is the same),
 * referenced; else NULL */
static glex_plan_t *memo_hit(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t *algo)
{
    if (!g || !a || (unsigned)a->kind >= GLEX_COLL_KIND_COUNT)
        return NULL;
    uint32_t bufs = buf_flags(a);
    for (uint32_t w = 0; w < GLEX_MEMO_WAYS; w++) {
        const glex_call_memo_t *m = &g->memo[a->kind][w];
        if (!memo_same(m, a, bufs))
            continue;
        glex_plan_t *p = m->plan;
        p->last_use = ++g->use_clock;
        p->refs++;
        *algo = m->algo;
        return p;
    }
    return NULL;
}

/* kept in the kind's ways in turn (the oldest kept goes) */
static void memo_keep(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo, glex_plan_t *p)
{
    uint32_t w = g->memo_next[a->kind]++ % GLEX_MEMO_WAYS;
    g->memo[a->kind][w] = (glex_call_memo_t){ .plan = p, .algo = algo, .asked = a->algo,
                                              .host = a->host_mode, .blocking = a->blocking,
                                              .type = (int)a->type, .op = (int)a->op,
                                              .root = a->root, .bufs = buf_flags(a),
                                              .count = a->count };
}

int glex_coll_start(glex_group_t *g, const glex_coll_args_t *a, glex_req_t **out)
{
    glex_algo_t algo;
    int rc;
    *out = NULL;
    glex_plan_t *p = memo_hit(g, a, &algo);
    if (!p) {
        if ((rc = glex_coll_resolve(g, a, &algo)))
            return rc;
        /* the direct path and multicast decide per call (set-up, the tree's
         * refresh): never kept */
        int keep = algo != GLEX_ALGO_DIRECT && algo != GLEX_ALGO_MULTICAST;
        if (algo == GLEX_ALGO_DIRECT && (rc = start_direct(g, a, &algo, out)) <= 0)
            return rc;
        if (algo == GLEX_ALGO_MULTICAST) {
            if ((rc = mcast_setup(g)) < 0)
                return rc;
            if (rc == 0) /* the group has no tree: what 'auto' picks */
                algo = glex_algo_auto(g, a);
            else
                glex_mcast_touch(g);
        }
        if (!(p = glex_plan_get(g, a, algo, &rc)))
            return rc;
        if (keep)
            memo_keep(g, a, algo, p);
    }
    glex_req_t *r = g->spare ? g->spare : malloc(sizeof *r); /* no allocation per call */
    g->spare = NULL;
    if (!r) {
        glex_plan_put(p);
        return glex_error(GLEX_ENOMEM, "out of memory for a request");
    }
    memset(r, 0, offsetof(glex_req_t, dc));
    r->g = g;
    r->plan = p;
    r->algo = algo;
    r->kind = a->kind;
    r->type = a->type;
    r->host = a->host_mode != 0;
    r->job = -1;
    r->key = mix64(g->key ^ mix64(g->calls++));
    /* no agreement per call: blocking calls, and across hosts (where an
     * agreement is a round trip to node 0) nonblocking calls too */
    if (g->lease >= 0 && (a->blocking || g->nhosts > 1)) {
        r->job = g->lease;
        r->leased = 1;
        r->gen_add = (uint16_t)++g->lease_calls;
        r->state = REQ_NEED_POST;
    }
    r->bases[BUF_SEND] = a->sendbuf == GLEX_IN_PLACE ? 0 : (uint64_t)(uintptr_t)a->sendbuf;
    r->bases[BUF_RECV] = (uint64_t)(uintptr_t)a->recvbuf;
    if (p->tmp_bytes) {
        r->tmp = p->ntmp ? p->tmp_free[--p->ntmp] : malloc(p->tmp_bytes);
        if (!r->tmp) {
            glex_plan_put(p);
            free(r);
            return glex_error(GLEX_ENOMEM, "out of memory for %llu bytes of scratch",
                              (unsigned long long)p->tmp_bytes);
        }
    }
    r->bases[BUF_TMP] = (uint64_t)(uintptr_t)r->tmp;
    if (r->leased) { /* queued behind the group's earlier calls under the lease */
        REQ_APPEND(g->lq_head, g->lq_tail, lnext, r);
        lease_kick(g);
    } else {
        advance(r);
    }
    *out = r;
    return GLEX_OK;
}

int glex_coll_test(glex_req_t *r, int *done)
{
    if (r->state != REQ_DONE) {
        if (!r->direct)
            glex_progress(r->g->f);
        req_poll(r);
    }
    *done = r->state == REQ_DONE;
    return *done ? r->status : GLEX_OK;
}

int glex_coll_wait(glex_req_t *r)
{
    if (r->state != REQ_DONE && !req_poll(r))
        glex_wait_until_flags(r->g->f, req_poll, r, -1, r->direct ? GLEX_WAIT_NO_ENGINE : 0);
    return r->status;
}

void glex_coll_req_free(glex_req_t *r)
{
    if (!r)
        return;
    if (r->state != REQ_DONE)
        glex_coll_wait(r);
    glex_plan_put(r->plan);
    if (!r->g->spare) { /* kept for the group's next call */
        r->g->spare = r;
        return;
    }
    free(r);
}

glex_algo_t glex_coll_req_algo(const glex_req_t *r) { return r->algo; }
int glex_coll_req_job(const glex_req_t *r) { return r->job; }

int glex_coll_run(glex_group_t *g, const glex_coll_args_t *a)
{
    glex_req_t *r;
    glex_coll_args_t b = *a;
    b.blocking = 1; /* waited for at once */
    /* this thread drives the call from its post on: the post does not wake
     * the engine thread */
    glex_host_wait_begin(g->f);
    int rc = glex_coll_start(g, &b, &r);
    int direct = !rc && r->direct;
    if (rc || direct) /* the direct path leaves the engine thread alone */
        glex_host_wait_end(g->f);
    if (rc)
        return rc;
    rc = glex_coll_wait(r);
    glex_coll_req_free(r);
    if (!direct)
        glex_host_wait_end(g->f);
    return rc;
}

int glex_coll_plan_size(glex_group_t *g, const glex_coll_args_t *a)
{
    glex_algo_t algo;
    int rc;
    if ((rc = glex_coll_resolve(g, a, &algo)))
        return rc;
    if (algo == GLEX_ALGO_DIRECT) /* no descriptors: mailboxes and RDMA */
        return 0;
    glex_plan_t *p = plan_for(g, a, &algo, &rc);
    if (!p)
        return rc;
    glex_plan_put(p);
    return (int)p->n;
}
