/* glex_coll_direct.c - the direct path: collectives through the members'
 * mailboxes (small messages: the data itself, written once, read by each
 * consumer straight from the writer's slot) and RDMA (large messages: every
 * rank reduces its block reading the others' buffers in place, one copy per
 * byte, and writes the result block into the others' buffers).  No engine
 * hand-off, no packets: the calling thread does the work, so it serves
 * blocking calls.
 *
 * Results are reproducible and equal on every rank: each element is
 * combined in rank order 0, 1, ..., n-1 by exactly one rank.
 *
 * Protocol, per call number c (all members number direct calls alike), slot
 * s = c mod 2 of each member's mailbox:
 *   enter:  the writer waits until the readers of the call that last wrote
 *           its slot s have completed it, writes data (small) or its buffer
 *           addresses (large), then publishes seq = c;
 *   small:  readers wait for seq == c and combine/copy; done = c;
 *   large reduce/allreduce: each rank reduces its block by RDMA reads and
 *           (allreduce) writes it into every peer's result, done = c, and
 *           every rank waits until all are done (a peer may still read or
 *           write its buffers before that);
 *   large reduce, staged (up to GLEX_STAGE_KB): each non-root publishes
 *           the address of private memory (its stage, one per slot), copies
 *           its data there chunk by chunk saying how far it got (its "out"
 *           word), and is done; the root reads and combines each chunk as
 *           soon as every stage holds it.  A stage is a region the root
 *           maps (GLEX_STAGE_MAP) and combines from with no copy, else the
 *           root reads it by RDMA.  A non-root that cannot get the
 *           memory publishes its own buffer and waits for the root's done;
 *   staged allreduce (GLEX_STAGE_MAP, up to GLEX_STAGE_KB): every rank
 *           copies its data into its stage as above; chunk k is reduced by
 *           rank k mod n, reading the stages in place, into its result and
 *           its own stage (where only it read its data), said in its "red"
 *           word; then every rank copies the others' chunks out of their
 *           stages as they are said, done = c.  Nobody reads user buffers;
 *   staged bcast (GLEX_STAGE_MAP, up to GLEX_STAGE_KB; with a core per
 *           process up to 128 KiB): the root copies into its stage and is
 *           done; the receivers copy out of it as it fills.  A rank that
 *           cannot get a stage is read in place and waits for its readers;
 *   large bcast: the root writes the first 1/n into every receiver, phase =
 *           c, done = c, and waits until all are done; each receiver reads
 *           the rest from the root, waits for phase, done = c.  When
 *           processes share cores the root writes nothing (and so waits for
 *           nobody's address): each receiver reads it all. */
#define _POSIX_C_SOURCE 200809L
#include "glex_coll_direct.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup and teardown ---- */

/* direct_free's wait: every peer has completed the last call (or failed
 * it, or is gone) */
typedef struct {
    glex_group_t *g;
    uint32_t q;
    uint64_t next_check;
} free_wait_t;

static int done_reached(glex_group_t *g, uint32_t q, uint32_t c);

static int peers_through(void *arg)
{
    free_wait_t *w = arg;
    glex_group_t *g = w->g;
    glex_direct_t *d = g->direct;
    for (; w->q < g->size; w->q++) {
        if (w->q == g->rank || done_reached(g, w->q, d->seq) ||
            after_eq(atomic_load(&line_of(d, w->q)->failed), d->seq))
            continue;
        uint64_t now = glex_now_ns();
        if (now < w->next_check)
            return 0;
        w->next_check = now + 100000000ull; /* reads /proc: ten times a second */
        char why[128];
        if (!glex_peer_failed(g->f, g->nodes[w->q], why, sizeof why))
            return 0;
    }
    return 1;
}

void glex_direct_free(glex_group_t *g)
{
    glex_direct_t *d = g->direct;
    if (!d)
        return;
    if (d->mine && d->seq && d->area) {
        /* peers may still read this rank's slot or stage of the last call
         * (a staged reduce's root may come to it much later): wait until
         * they have all completed it, failed it, or died, before the
         * mailbox and the stages go */
        free_wait_t w = { g, 0, 0 };
        glex_wait_until_flags(g->f, peers_through, &w, -1, GLEX_WAIT_NO_ENGINE);
    }
    glex_mbox_release(g->f, d->mine);
    free(d->area);
    free(d->acc);
    free(d->tmp);
    glex_stage_drop(d, 0);
    glex_stage_drop(d, 1);
    for (uint32_t i = 0; d->rmap && i < 2 * g->size; i++)
        glex_rmap_drop(&d->rmap[i]);
    free(d->rmap);
    free(d);
    g->direct = NULL;
}

/* First direct call of a group, before the members agree (glex_coll_req.c):
 * claim this rank's mailbox.  1: have one, 0: not (no memory, no mailbox
 * left, or GLEX_MAILBOXES=0). */
int glex_direct_claim(glex_group_t *g)
{
    glex_direct_t *d = calloc(1, sizeof *d);
    g->direct = d; /* NULL before: a failed set-up freed its claim */
    if (!d || glex_fabric_params(g->f)->mailboxes == 0)
        return 0;
    for (uint32_t q = 0; q < g->size; q++) /* mailboxes and cross-memory attach: one host */
        if (!glex_fabric_same_host(g->f, g->nodes[q]))
            return 0;
    d->area = calloc(g->size, sizeof *d->area);
    d->acc = malloc(CHUNK_BYTES);
    d->tmp = malloc(CHUNK_BYTES);
    return d->area && d->acc && d->tmp && glex_mbox_claim(g->f, g->key, g->rank, &d->mine) == 0;
}

/* ... and after: all = 1 when every member has one (the path is on: 1),
 * else the claim is given back and the path is off for good (0). */
int glex_direct_open(glex_group_t *g, int all)
{
    glex_direct_t *d = g->direct;
    for (uint32_t q = 0; q < g->size && all == 1; q++) {
        glex_mbox_t *m = q == g->rank ? d->mine : glex_mbox_find(g->f, g->nodes[q], g->key, q);
        if (!m)
            all = 0; /* cannot happen: every member claimed before agreeing */
        else
            d->area[q] = glex_mbox_area(m);
    }
    if (all != 1) {
        glex_direct_free(g);
        g->direct_state = -1;
        return 0;
    }
    d->slot_stride = (glex_mbox_bytes(g->f) - LINE) / 2 / LINE * LINE;
    d->cap = d->slot_stride - SLOT_HDR;
    d->wreaders[0] = d->wreaders[1] = -1;
    g->direct_state = 1;
    return 1;
}

/* ---- one call ---- */

static uint64_t call_bytes(const glex_coll_args_t *a)
{
    return a->kind == GLEX_COLL_BARRIER ? 0 : a->count * glex_type_size(a->type);
}

int glex_direct_start(glex_group_t *g, const glex_coll_args_t *a, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    memset(c, 0, sizeof *c);
    c->a = *a;
    if (c->a.kind == GLEX_COLL_BCAST)
        c->a.sendbuf = c->a.recvbuf;
    c->bytes = call_bytes(a);
    c->large = c->bytes > d->cap || c->bytes > glex_sel_rdma_bytes(g);
    c->staged = c->large && glex_sel_staged(g, c->a.kind, c->bytes);
    c->c = ++d->seq;
    if (c->c == 0) /* 0 means 'never': skip it when the counter wraps */
        c->c = ++d->seq;
    c->st = ST_ENTER;
    return GLEX_OK;
}

/* rank q's slot holds this call: do the sizes agree?  (counts that differ
 * between ranks: ETRUNC where more comes than expected, else ESIZE) */
static int size_ok(glex_group_t *g, glex_dcall_t *c, uint32_t q)
{
    uint64_t theirs = slot_of(g->direct, q, c->c & 1u)->bytes;
    if (q == g->rank || theirs == c->bytes)
        return 1;
    int receiving = c->a.kind == GLEX_COLL_BCAST || c->a.kind == GLEX_COLL_ALLREDUCE ||
                    g->rank == c->a.root;
    glex_direct_fail(g, c,
                     glex_set_error(receiving && theirs > c->bytes ? GLEX_ETRUNC : GLEX_ESIZE,
                                    "%s (direct): rank %u has %llu bytes, rank %u %llu (counts "
                                    "differ between ranks)", glex_coll_kind_name(c->a.kind), q,
                                    (unsigned long long)theirs, g->rank,
                                    (unsigned long long)c->bytes));
    return 0;
}

/* is *w at (exact) or past call c?  If not, this rank waits for rank q:
 * say so first (then look once more: a writer that looked at wait_for
 * before it changed has written already) */
static int reached(glex_group_t *g, const _Atomic uint32_t *w, uint32_t c, int exact, uint32_t q)
{
    uint32_t v = atomic_load_explicit(w, memory_order_acquire);
    if (exact ? v == c : after_eq(v, c))
        return 1;
    if (!glex_direct_say_waiting(g, q))
        return 0;
    v = atomic_load(w);
    return exact ? v == c : after_eq(v, c);
}

/* has rank q completed call c?  Also when it has freed the group since (its
 * mailbox released, perhaps zeroed for another group already): a rank
 * frees a group only after it completed every call on it */
static int done_reached(glex_group_t *g, uint32_t q, uint32_t c)
{
    glex_direct_t *d = g->direct;
    return reached(g, &line_of(d, q)->done, c, 0, q) ||
           !glex_mbox_holds(d->area[q], g->key, q);
}

/* a small or staged bcast's receivers write nothing; a large one's give
 * their buffer's address */
static int writes_slot(const glex_group_t *g, const glex_dcall_t *c)
{
    return c->a.kind != GLEX_COLL_BCAST || (c->large && !c->staged) || g->rank == c->a.root;
}

/* readers of this rank's slot in this call: -1 every rank, else the root */
static int64_t readers(const glex_group_t *g, const glex_dcall_t *c)
{
    if (c->a.kind == GLEX_COLL_REDUCE && (!c->large || c->staged))
        return (int64_t)c->a.root;
    if (c->a.kind == GLEX_COLL_BCAST && g->rank != c->a.root)
        return (int64_t)c->a.root;
    return -1;
}

/* large bcast: bytes [0, share) the root writes into each receiver, the
 * rest each receiver reads: 1/n of the buffer (whole pages), so the root
 * copies about as much as each receiver */
static uint64_t bcast_share(const glex_group_t *g, const glex_dcall_t *c)
{
    if (c->staged)
        return 0; /* the receivers copy it all from the root's stage */
    if (glex_procs_per_cpu(g->f) > 1)
        return 0; /* processes share cores: the split would only add a wait (the
                   * root for every receiver's address): receivers read it all */
    return c->bytes / g->size / 4096u * 4096u;
}

static int enter(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint32_t s = c->c & 1u;
    if (c->c != next_call(d->entered) && d->entered) /* calls in flight enter in order */
        return 0;
    if (!writes_slot(g, c)) {
        d->entered = c->c;
        return 1;
    }
    uint32_t w = d->wseq[s];
    if (w && !after_eq(d->sync, w)) { /* the slot's last readers (this rank too:
                                       * several calls may be in flight) must be through */
        for (uint32_t q = d->wreaders[s] < 0 ? 0 : (uint32_t)d->wreaders[s]; q < g->size; q++) {
            if (q == g->rank ? !after_eq(atomic_load(&line_of(d, q)->done), w)
                             : !done_reached(g, q, w))
                return q == g->rank ? 0 : glex_direct_blocked(g, c, q);
            if (d->wreaders[s] >= 0)
                break;
        }
    }
    progressed(c);
    dslot_t *sl = slot_of(d, g->rank, s);
    if (c->large) {
        sl->send = (uint64_t)(uintptr_t)send_ptr(&c->a);
        sl->recv = (uint64_t)(uintptr_t)c->a.recvbuf;
        if (c->staged && glex_stage_writer(g, c) && glex_stage_ready(g, c, s)) {
            sl->send = (uint64_t)(uintptr_t)d->stage[s];
            sl->recv = d->region[s].id;
        }
    } else if (c->bytes) {
        glex_copy(slot_data(sl), send_ptr(&c->a), c->bytes);
    }
    /* large: 0 the buffer itself, 1 a stage read by RDMA, 2 + fd a region */
    sl->len = (uint32_t)(!c->large ? c->bytes
                         : !c->out ? 0
                         : d->region[s].base ? 2u + (uint32_t)d->region[s].fd : 1u);
    sl->bytes = c->bytes;
    atomic_store_explicit(&sl->seq, c->c, memory_order_release);
    d->wseq[s] = c->c;
    d->wreaders[s] = readers(g, c);
    d->entered = c->c;
    c->notify = 1; /* wake sleeping readers before this rank waits, or at its end */
    if (c->out)
        glex_stage_fill(g, c); /* the readers follow it chunk by chunk */
    return 1;
}

/* not this call's turn yet (an earlier one in flight goes first): wake the
 * peers waiting for what this call wrote, then wait */
static int later(glex_group_t *g, glex_dcall_t *c)
{
    if (c->notify) {
        c->notify = 0;
        glex_direct_notify_all(g);
    }
    return 0;
}

static int finish_call(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    /* done words are read as 'completed every call up to this one': with
     * several calls in flight, publish them in call order */
    if (c->c != next_call(d->finished))
        return later(g, c);
    d->finished = c->c;
    atomic_store_explicit(&line_of(d, g->rank)->done, c->c, memory_order_release);
    glex_direct_notify_all(g); /* also for the slot written at enter (one look for both) */
    c->notify = 0;
    /* large: wait until nobody reads or writes this rank's buffers any more;
     * a bcast receiver is through (the root wrote its share before phase),
     * so is a staged reduce's root (nobody touches its buffers) and any
     * rank whose data went into its stage (readers take it from there) */
    int through = (c->a.kind == GLEX_COLL_BCAST && g->rank != c->a.root) ||
                  (c->staged && (c->out || (c->a.kind == GLEX_COLL_REDUCE &&
                                            g->rank == c->a.root)));
    c->st = c->large && !through ? ST_LARGE_DONE : ST_DONE;
    return 1;
}

static int combine(const glex_dcall_t *c, void *acc, const void *src, uint64_t bytes)
{
    return glex_alu_combine(c->a.op, c->a.type, acc, src, bytes / glex_type_size(c->a.type));
}

/* about to look at a slot whose data goes past its first line: ask for
 * the other lines too, so that when the writer's seq shows up they come
 * in the same round of transfers instead of after it (2 ranks, 64-512 B,
 * three A/B rounds: reduce 0.64-0.74 -> 0.42-0.51 us, bcast 0.63-1.0 ->
 * 0.38-0.48).  Only up to GLEX_SEL_PREFETCH_MAX: from 1 KiB the reader's fetches
 * took lines away from the writer in the middle of its copy (2 KiB: 0.8 ->
 * 1.4 us) */
static void fetch_data_lines(const glex_dcall_t *c, const dslot_t *sl)
{
    if (c->bytes <= LINE - SLOT_HDR || c->bytes > GLEX_SEL_PREFETCH_MAX)
        return;
    const uint8_t *end = (const uint8_t *)sl + SLOT_HDR + c->bytes;
    for (const uint8_t *p = (const uint8_t *)sl + LINE; p < end; p += LINE)
        __builtin_prefetch(p, 0, 3);
    /* GCC takes a function of prefetches alone for one without effect and
     * drops its calls: say it has one */
    __asm__ __volatile__("");
}

/* small: the data sits in the slots */
static int small_step(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint32_t s = c->c & 1u;
    glex_coll_kind_t k = c->a.kind;
    if (k == GLEX_COLL_BCAST) {
        if (g->rank != c->a.root) {
            dslot_t *sl = slot_of(d, c->a.root, s);
            fetch_data_lines(c, sl);
            if (!reached(g, &sl->seq, c->c, 1, c->a.root))
                return glex_direct_blocked(g, c, c->a.root);
            if (!size_ok(g, c, c->a.root))
                return c->status;
            glex_copy(c->a.recvbuf, slot_data(sl), c->bytes);
        }
        return finish_call(g, c);
    }
    if (k == GLEX_COLL_REDUCE && g->rank != c->a.root)
        return finish_call(g, c);
    /* allreduce, barrier, reduce at the root: combine in rank order */
    for (; c->q < g->size; c->q++) {
        dslot_t *sl = slot_of(d, c->q, s);
        if (c->q != g->rank)
            fetch_data_lines(c, sl);
        if (!reached(g, &sl->seq, c->c, 1, c->q))
            return glex_direct_blocked(g, c, c->q);
        progressed(c);
        if (!size_ok(g, c, c->q))
            return c->status;
        if (!c->bytes)
            continue;
        int rc = c->q == 0 ? (glex_copy(c->a.recvbuf, slot_data(sl), c->bytes), GLEX_OK)
                           : combine(c, c->a.recvbuf, slot_data(sl), c->bytes);
        if (rc)
            return glex_direct_fail(g, c, rc);
    }
    if (k != GLEX_COLL_REDUCE && after_eq(c->c - 1, d->sync))
        d->sync = c->c - 1; /* every rank entered this call: all finished the last */
    return finish_call(g, c);
}

/* chunk ci of this rank's share of a large reduce/allreduce: bytes
 * [*off, *off + *len); 0 past the last.  Its block's chunks (rank q's
 * block: elements count*q/n up to count*(q+1)/n; a staged reduce's root
 * has all, the others none), or a staged allreduce's chunks rank, rank +
 * n, ... */
static int my_chunk(const glex_group_t *g, const glex_dcall_t *c, uint64_t ci, uint64_t *off,
                    uint64_t *len)
{
    uint64_t lo, hi, step;
    if (glex_stage_round_robin(c)) {
        step = glex_stage_rr_chunk(g, c);
        lo = (g->rank + ci * g->size) * step;
        hi = c->bytes;
    } else {
        size_t es = glex_type_size(c->a.type);
        step = CHUNK_BYTES / es * es;
        if (c->staged) {
            lo = 0;
            hi = g->rank == c->a.root ? c->bytes : 0;
        } else {
            lo = c->a.count * g->rank / g->size * es;
            hi = c->a.count * (g->rank + 1) / g->size * es;
        }
        lo += ci * step;
    }
    if (lo >= hi)
        return 0;
    *off = lo;
    *len = hi - lo < step ? hi - lo : step;
    return 1;
}

/* large reduce/allreduce: this rank's chunks, combined from every rank's
 * buffer or stage in rank order; written where the result goes */
static int reduce_block(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint32_t s = c->c & 1u, me = g->rank;
    size_t es = glex_type_size(c->a.type);
    const uint8_t *mine = send_ptr(&c->a);
    int inplace = mine == (const uint8_t *)c->a.recvbuf;
    int rc = GLEX_OK;
    int local_dest = c->a.kind == GLEX_COLL_ALLREDUCE || me == c->a.root;
    uint64_t off, len;
    for (; my_chunk(g, c, c->ci, &off, &len); c->ci++, c->rq = 0) {
        uint8_t *acc = (local_dest && !inplace) ? (uint8_t *)c->a.recvbuf + off : d->acc;
        for (; c->rq < g->size; c->rq++) {
            uint32_t q = c->rq;
            const uint8_t *src;
            if (q == me) {
                src = mine + off;
            } else {
                dslot_t *sl = slot_of(d, q, s);
                if (sl->len >= 1 && !glex_stage_upto(g, c, q, off + len))
                    return glex_direct_blocked(g, c, q); /* its stage does not hold the chunk yet */
                progressed(c);
                src = glex_stage_src(g, c, q, sl->send, off, len, q == 0 ? acc : d->tmp);
                if (!src)
                    return c->status;
            }
            /* rank 0's data is not copied: the first combine writes
             * rank0 op rank1 into acc (unless rank 0's is there already) */
            if (q == 0)
                c->first = src;
            else if (q == 1 && c->first != acc)
                rc = glex_alu_combine_into(c->a.op, c->a.type, acc, c->first, src, len / es);
            else
                rc = combine(c, acc, src, len);
            if (rc)
                return glex_direct_fail(g, c, rc);
        }
        if (g->size == 1 && c->first != acc)
            glex_copy(acc, c->first, len);
        if (glex_stage_round_robin(c)) {
            /* the chunk into this rank's result and, while in cache, its
             * stage (where the others copy it from; its own data there was
             * read by this rank alone), then said */
            if (acc != (uint8_t *)c->a.recvbuf + off)
                glex_copy((uint8_t *)c->a.recvbuf + off, acc, len);
            if (c->out)
                glex_copy(d->stage[s] + off, acc, len);
            atomic_store_explicit(&line_of(d, me)->red[s], (uint64_t)c->c << 32 | (c->ci + 1),
                                  memory_order_release);
            uint64_t next_off, next_len;
            glex_stage_said(g, c, !my_chunk(g, c, c->ci + 1, &next_off, &next_len));
        } else if (local_dest) {
            if (acc != (uint8_t *)c->a.recvbuf + off)
                glex_copy((uint8_t *)c->a.recvbuf + off, acc, len);
            /* allreduce: the chunk, still in cache, into every peer's result
             * (that region of a peer's buffer is read by this rank alone,
             * and it has read it) */
            for (uint32_t q = 0; q < g->size && !rc && c->a.kind == GLEX_COLL_ALLREDUCE; q++)
                if (q != me)
                    rc = glex_rdma_write(g->f, g->nodes[q], slot_of(d, q, s)->recv + off, acc,
                                         len);
        } else {
            rc = glex_rdma_write(g->f, g->nodes[c->a.root], slot_of(d, c->a.root, s)->recv + off,
                                 acc, len);
        }
        if (rc)
            return glex_direct_fail(g, c, rc);
    }
    return 1;
}

/* wait until every rank's done word reached this call (a staged reduce:
 * the root's, the only reader of this rank's buffer) */
static int wait_all_done(glex_group_t *g, glex_dcall_t *c)
{
    int root_only = c->staged && c->a.kind == GLEX_COLL_REDUCE;
    if (root_only && c->q < c->a.root)
        c->q = c->a.root;
    for (; c->q < (root_only ? c->a.root + 1 : g->size); c->q++) {
        if (!done_reached(g, c->q, c->c))
            return glex_direct_blocked(g, c, c->q);
        progressed(c);
    }
    c->q = 0;
    return 1;
}

static int large_step(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint32_t s = c->c & 1u, me = g->rank;
    int rc;
    if (c->st == ST_LARGE_WAIT) { /* everyone's addresses (bcast: the root's) */
        if (c->c != next_call(d->finished)) /* earlier calls in flight first */
            return later(g, c);
        uint64_t share = c->a.kind == GLEX_COLL_BCAST ? bcast_share(g, c) : 0;
        if (c->staged && c->a.kind == GLEX_COLL_REDUCE && me != c->a.root)
            return finish_call(g, c); /* the root reads this rank's data (copied
                                       * into its stage at enter, or in place) */
        for (; c->q < g->size; c->q++) {
            if (c->a.kind == GLEX_COLL_BCAST && c->q != c->a.root && (me != c->a.root || !share))
                continue; /* bcast: receivers wait for the root, the root for all
                           * (only to write its share into them) */
            if (!reached(g, &slot_of(d, c->q, s)->seq, c->c, 1, c->q))
                return glex_direct_blocked(g, c, c->q);
            progressed(c);
            if (!size_ok(g, c, c->q))
                return c->status;
        }
        c->q = 0;
        if (c->a.kind == GLEX_COLL_BCAST) {
            /* the root writes the first share into every receiver while
             * they read the rest: the copy is spread over both sides */
            if (me == c->a.root) {
                for (uint32_t q = 0; q < g->size; q++)
                    if (q != me && share &&
                        (rc = glex_rdma_write(g->f, g->nodes[q], slot_of(d, q, s)->recv,
                                              c->a.recvbuf, share)))
                        return glex_direct_fail(g, c, rc);
                atomic_store_explicit(&line_of(d, me)->phase, c->c, memory_order_release);
                return finish_call(g, c);
            }
            if (c->staged) {
                c->st = ST_GATHER;
                c->ci = 0;
                return 1;
            }
            if ((rc = glex_rdma_read(g->f, g->nodes[c->a.root], (uint8_t *)c->a.recvbuf + share,
                                     slot_of(d, c->a.root, s)->send + share, c->bytes - share)))
                return glex_direct_fail(g, c, rc);
            if (!share)
                return finish_call(g, c);
            c->st = ST_LARGE_PHASE;
            return 1;
        }
        c->st = ST_LARGE_REDUCE;
        c->ci = 0;
        c->rq = 0;
    }
    if (c->st == ST_LARGE_REDUCE) { /* resumed where a stage did not hold a chunk yet */
        if ((rc = reduce_block(g, c)) <= 0)
            return rc;
        if (!glex_stage_round_robin(c))
            return finish_call(g, c);
        c->st = ST_GATHER;
        c->ci = 0;
    }
    if (c->st == ST_GATHER) { /* staged: the others' results (bcast: the root's data) */
        if ((rc = glex_stage_gather(g, c)) <= 0)
            return rc;
        return finish_call(g, c);
    }
    if (c->st == ST_LARGE_PHASE) { /* bcast, not the root: the root's share */
        if (!reached(g, &line_of(d, c->a.root)->phase, c->c, 0, c->a.root))
            return glex_direct_blocked(g, c, c->a.root);
        progressed(c);
        glex_rdma_landed(c->a.recvbuf, bcast_share(g, c));
        return finish_call(g, c);
    }
    /* ST_LARGE_DONE: nobody reads this rank's buffers any more */
    if ((rc = wait_all_done(g, c)) <= 0)
        return rc;
    if ((rc = glex_direct_peer_failed(g, c))) /* e.g. a bcast receiver whose count differs */
        return rc;
    if (c->a.kind == GLEX_COLL_ALLREDUCE || (c->a.kind == GLEX_COLL_REDUCE && me == c->a.root))
        glex_rdma_landed(c->a.recvbuf, c->bytes); /* the peers' blocks */
    if (!c->staged)
        d->sync = c->c;
    c->st = ST_DONE;
    return 1;
}

/* advance the call; 1 when complete (status in c->status), 0 not yet */
int glex_direct_poll(glex_group_t *g, glex_dcall_t *c)
{
    int rc = 1;
    while (rc > 0 && c->st != ST_DONE) {
        if (c->st == ST_ENTER) {
            rc = enter(g, c);
            if (rc > 0)
                c->st = c->large ? ST_LARGE_WAIT : ST_SMALL;
        } else if (c->st == ST_SMALL) {
            rc = small_step(g, c);
        } else {
            rc = large_step(g, c);
        }
    }
    if (rc < 0 && c->st != ST_DONE) {
        c->status = rc;
        c->st = ST_DONE;
    }
    return c->st == ST_DONE;
}
