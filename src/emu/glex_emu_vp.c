/* glex_emu_vp.c - virtual ports: open/close, descriptor posting, CQ/RQ polling,
 * counters. */
#include "glex_emu_internal.h"

#include <string.h>

int glex_vp_open(glex_fabric_t *f, uint32_t vp, glex_vp_t **out)
{
    *out = NULL;
    if (vp >= f->p.vps_per_node)
        return glex_error(GLEX_EINVAL, "vp=%u is out of range 0..%u (GLEX_VPS_PER_NODE=%u)", vp,
                          f->p.vps_per_node - 1, f->p.vps_per_node);
    glex_vp_shm_t *s = glex_vp_shm(f, f->node, vp);
    uint32_t z = 0;
    if (!atomic_compare_exchange_strong(&s->open, &z, 1))
        return glex_error(GLEX_EBUSY, "vp %u of node %u is already open", vp, f->node);
    uint8_t *ring = glex_vp_ring(f, f->node, vp);
    glex_vp_t *h = &f->vps[vp];
    h->f = f;
    h->index = vp;
    h->dq = (glex_desc_t *)ring;
    h->cq = (glex_cqe_t *)(ring + (size_t)f->p.dq_depth * sizeof(glex_desc_t));
    h->rq = glex_rq_ring(f, f->node, vp);
    h->dq_vt = (uint64_t *)(void *)(h->rq + f->p.cq_depth);
    atomic_store(&s->dq_head, 0);
    atomic_store(&s->dq_tail, 0);
    atomic_store(&s->cq_head, 0);
    atomic_store(&s->cq_tail, 0);
    atomic_store(&s->rq_head, 0);
    atomic_store(&s->rq_tail, 0);
    for (uint32_t i = 0; i < f->p.cq_depth; i++) /* not published: seq != position + 1 */
        atomic_store_explicit(&h->rq[i].seq, i, memory_order_relaxed);
    /* the DQ, CQ and RQ are used round and round: their pages' first
     * accesses here, not in the first thousand calls (an 8-byte allreduce
     * at 2 processes took 2-2.5 us until its DQ had wrapped once, then 0.9) */
    glex_touch_pages(ring, f->hdr->vp_ring_stride);
    atomic_store_explicit(&s->rq_ready, 1, memory_order_release); /* after the slots */
    h->shm = s;
    *out = h;
    return GLEX_OK;
}

int glex_vp_close(glex_vp_t *vp)
{
    if (!vp || !vp->shm)
        return GLEX_OK;
    glex_vp_shm_t *s = vp->shm;
    vp->shm = NULL;
    atomic_store(&s->rq_ready, 0);
    atomic_store(&s->open, 0);
    return GLEX_OK;
}

uint32_t glex_vp_index(const glex_vp_t *vp) { return vp->index; }
glex_fabric_t *glex_vp_fabric(const glex_vp_t *vp) { return vp->f; }

int glex_desc_check(const glex_vp_t *vp, const glex_desc_t *d)
{
    if (!vp || !d)
        return glex_error(GLEX_EINVAL, "null %s", vp ? "descriptor" : "VP");
    return glex_desc_validate(vp->f, vp->index, d, 0);
}

/* descriptors d[0..n) checked as whole sequences (CH..CT, one JobID each) */
static int check_seqs(const glex_vp_t *vp, const glex_desc_t *d, size_t n)
{
    glex_fabric_t *f = vp->f;
    int in_seq = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = glex_desc_validate(f, vp->index, &d[i], i);
        if (rc)
            return rc;
        if (d[i].ch == in_seq)
            return glex_error(GLEX_EINVAL,
                              "descriptor %zu: ch=%u but a sequence is %s (allowed %u)", i,
                              d[i].ch, in_seq ? "open" : "not open", !in_seq);
        if (in_seq && d[i].job_id != d[i - 1].job_id)
            return glex_error(GLEX_EINVAL,
                              "descriptor %zu: job_id=%u differs from its sequence's %u", i,
                              d[i].job_id, d[i - 1].job_id);
        in_seq = !d[i].ct;
    }
    if (in_seq)
        return glex_error(GLEX_EINVAL, "descriptor %zu: last of the post has ct=0 (allowed 1)",
                          n - 1);
    return GLEX_OK;
}

int glex_list_check(const glex_vp_t *vp, const glex_desc_t *d, size_t n)
{
    if (!vp || !vp->shm)
        return glex_error(GLEX_EINVAL, "list check on a VP that is not open");
    if (!d || n == 0)
        return glex_error(GLEX_EINVAL, "list of %zu descriptors%s: allowed a non-empty list", n,
                          d ? "" : " at null");
    int rc = check_seqs(vp, d, n);
    if (rc)
        return rc;
    for (size_t i = 0; i + 1 < n; i++)
        if (d[i].ct)
            return glex_error(GLEX_EINVAL,
                              "descriptor %zu: ct=1 before the end of a list of %zu (a list is "
                              "one sequence)", i, n);
    return GLEX_OK;
}

/* room for n more entries in the DQ, or GLEX_EAGAIN */
static int dq_room(const glex_vp_t *vp, size_t n, uint32_t *tail)
{
    const glex_vp_shm_t *s = vp->shm;
    uint32_t head = atomic_load_explicit(&s->dq_head, memory_order_acquire);
    *tail = atomic_load_explicit(&s->dq_tail, memory_order_relaxed);
    if ((uint64_t)(*tail - head) + n > vp->f->p.dq_depth)
        return glex_error(GLEX_EAGAIN, "DQ of vp %u full: %u queued + %zu > depth %u", vp->index,
                          *tail - head, n, vp->f->p.dq_depth);
    return GLEX_OK;
}

int glex_vp_post_list(glex_vp_t *vp, const glex_desc_t *d, uint32_t n,
                      const glex_post_regs_t *regs)
{
    if (!vp || !vp->shm)
        return glex_error(GLEX_EINVAL, "post on a VP that is not open");
    if (!d || !n || !regs)
        return glex_error(GLEX_EINVAL, "list post of %u descriptors%s%s: allowed a non-empty list",
                          n, d ? "" : " at null", regs ? "" : " without registers");
    uint32_t tail;
    int rc = dq_room(vp, 1, &tail);
    if (rc)
        return rc;
    glex_desc_t *q = &vp->dq[tail % vp->f->p.dq_depth];
    q->kind = GLEX_DQ_LIST;
    q->ch = q->ct = 1;
    if (vp->f->p.vtime) /* the host's post: GLEX_VTIME charges it, the NIC sees it after */
        vp->dq_vt[tail % vp->f->p.dq_depth] =
            (vp->f->vt_host = glex_vt_host_now(vp->f) + glex_vt(vp->f, GLEX_VT_HOST_POST));
    q->local_addr = (uint64_t)(uintptr_t)d;
    q->count = n;
    memcpy(q->data, regs, sizeof *regs);
    atomic_store_explicit(&vp->shm->dq_tail, tail + 1, memory_order_release);
    glex_counter_add(&vp->shm->desc_posted, n); /* the VP's one posting host */
    /* the lines the next list post writes are asked for now: on the ring's
     * first lap they come from memory, and this call has its wait ahead
     * (2 ranks, 8 B: calls 50-500 of a run 0.80-0.93 us a pair with the
     * barrier, 0.72 from the ring's second lap; NOTES 2026-12-03) */
    glex_desc_t *next = &vp->dq[(tail + 1) % vp->f->p.dq_depth];
    glex_prefetch_write(next);
    glex_prefetch_write(&next->local_addr);
    glex_prefetch_write(&next->count);
    glex_prefetch_write(next->data);
    glex_prefetch_write(next->data + sizeof *regs - 1);
    glex_engine_kick(vp->f);
    return GLEX_OK;
}

int glex_vp_post(glex_vp_t *vp, const glex_desc_t *d, size_t n)
{
    if (!vp || !vp->shm)
        return glex_error(GLEX_EINVAL, "post on a VP that is not open");
    if (n == 0)
        return GLEX_OK;
    if (!d)
        return glex_error(GLEX_EINVAL, "null descriptor array with n=%zu", n);
    glex_fabric_t *f = vp->f;
    int rc = check_seqs(vp, d, n);
    if (rc)
        return rc;
    glex_vp_shm_t *s = vp->shm;
    uint32_t tail;
    if ((rc = dq_room(vp, n, &tail)))
        return rc;
    /* MP and RDMA descriptors to an idle VP go as the doorbell is written */
    if (d->kind != GLEX_DESC_COLL) {
        uint32_t done = glex_engine_post_now(vp, d, (uint32_t)n);
        if (done == n)
            return GLEX_OK;
        d += done, n -= done; /* the rest queues behind them */
    }
    /* GLEX_VTIME: a post (its descriptors written, the doorbell rung) costs
     * the host host_post once */
    uint64_t vt = f->p.vtime ? (f->vt_host = glex_vt_host_now(f) + glex_vt(f, GLEX_VT_HOST_POST))
                             : 0;
    for (size_t i = 0; i < n; i++) { /* the bytes that mean anything (validated above) */
        memcpy(&vp->dq[(tail + i) % f->p.dq_depth], &d[i], glex_desc_used(&d[i]));
        if (f->p.vtime)
            vp->dq_vt[(tail + i) % f->p.dq_depth] = vt;
    }
    atomic_store_explicit(&s->dq_tail, tail + (uint32_t)n, memory_order_release);
    glex_counter_add(&s->desc_posted, n);
    glex_engine_kick(f);
    return GLEX_OK;
}

/* the checks of an MP of n pieces from vp to (dest_id, dest_vp): GLEX_OK
 * with *len its payload bytes, or the error naming what was wrong */
static int mp_check(const glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                    const glex_piece_t *p, uint32_t n, uint32_t cap, unsigned flags,
                    uint32_t *len)
{
    if (flags & ~GLEX_MP_QUIET)
        return glex_error(GLEX_EINVAL, "MP flags 0x%x: allowed 0 or GLEX_MP_QUIET (0x%x)", flags,
                          GLEX_MP_QUIET);
    if (!vp || !vp->shm)
        return glex_error(GLEX_EINVAL, "post on a VP that is not open");
    if (n && !p)
        return glex_error(GLEX_EINVAL, "null piece array with n=%u", n);
    const glex_fabric_t *f = vp->f;
    size_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (p[i].len && !p[i].base)
            return glex_error(GLEX_EINVAL, "MP piece %u of %zu bytes at null", i, p[i].len);
        sum += p[i].len;
    }
    if (dest_id >= f->nnodes || dest_vp >= f->p.vps_per_node || sum > cap)
        return glex_error(GLEX_EINVAL,
                          "MP to node %u vp %u of %zu bytes: allowed node 0..%u, vp 0..%u, "
                          "0..%u bytes",
                          dest_id, dest_vp, sum, f->nnodes - 1, f->p.vps_per_node - 1, cap);
    *len = (uint32_t)sum;
    return GLEX_OK;
}

/* the MP descriptor of glex_vp_post_mp's arguments, for the DQ */
static void mp_desc(glex_desc_t *d, const glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                    const glex_piece_t *p, uint32_t n, uint32_t len, int quiet)
{
    memset(d, 0, offsetof(glex_desc_t, data));
    d->kind = GLEX_DESC_MP;
    d->ch = d->ct = 1;
    d->quiet = (uint8_t)quiet;
    d->source_vp = (uint16_t)vp->index;
    d->dest_vp = (uint16_t)dest_vp;
    d->dest_id = dest_id;
    d->inline_len = (uint16_t)len;
    glex_pieces_copy(d->data, p, n);
}

/* An MP of at most cap bytes checked, then run at its post if the engine
 * can (1); 0: it could not, *len its bytes; < 0: the error */
static int mp_now(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp, const glex_piece_t *p,
                  uint32_t n, uint32_t cap, unsigned flags, uint32_t *len)
{
    int rc = mp_check(vp, dest_id, dest_vp, p, n, cap, flags, len);
    if (rc)
        return rc;
    return glex_engine_post_mp_now(vp, dest_id, dest_vp, p, n, *len, (flags & GLEX_MP_QUIET) != 0)
               ? 1 : 0;
}

int glex_vp_post_mp_flags(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                          const glex_piece_t *p, uint32_t n, unsigned flags)
{
    uint32_t len;
    int rc = mp_now(vp, dest_id, dest_vp, p, n, GLEX_MP_CAP, flags, &len);
    if (rc)
        return rc > 0 ? GLEX_OK : rc;
    glex_desc_t d;
    mp_desc(&d, vp, dest_id, dest_vp, p, n, len, (flags & GLEX_MP_QUIET) != 0);
    return glex_vp_post(vp, &d, 1);
}

int glex_vp_try_mp_long(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                        const glex_piece_t *p, uint32_t n, unsigned flags)
{
    uint32_t len;
    return mp_now(vp, dest_id, dest_vp, p, n, GLEX_MP_LONG_CAP, flags, &len);
}

int glex_vp_post_mp(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp, const glex_piece_t *p,
                    uint32_t n)
{
    return glex_vp_post_mp_flags(vp, dest_id, dest_vp, p, n, 0);
}

int glex_vp_post_put_mp(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp, const void *src,
                        uint64_t remote_addr, uint64_t len, const glex_piece_t *p, uint32_t n,
                        uint64_t cookie)
{
    uint32_t plen;
    int rc = mp_check(vp, dest_id, dest_vp, p, n, GLEX_MP_CAP, 0, &plen);
    if (rc)
        return rc;
    if (len && (!src || !remote_addr || len > GLEX_MAX_BYTES))
        return glex_error(GLEX_EINVAL,
                          "RDMA put of %llu bytes from %p to 0x%llx: allowed 0..%llu bytes, "
                          "both addresses non-null when bytes > 0",
                          (unsigned long long)len, src, (unsigned long long)remote_addr,
                          (unsigned long long)GLEX_MAX_BYTES);
    if (glex_engine_post_put_mp_now(vp, dest_id, dest_vp, src, remote_addr, len, p, n, plen,
                                    cookie))
        return GLEX_OK;
    glex_desc_t d[2];
    memset(&d[0], 0, offsetof(glex_desc_t, data));
    d[0].kind = GLEX_DESC_RDMA;
    d[0].ch = d[0].ct = 1;
    d[0].source_vp = (uint16_t)vp->index;
    d[0].dest_vp = (uint16_t)dest_vp;
    d[0].dest_id = dest_id;
    d[0].length = len;
    d[0].local_addr = (uint64_t)(uintptr_t)src;
    d[0].remote_addr = remote_addr;
    mp_desc(&d[1], vp, dest_id, dest_vp, p, n, plen, 0);
    d[1].coll_end_flag = 1;
    d[1].cookie = cookie;
    return glex_vp_post(vp, d, 2);
}

int glex_vp_atomic_cas(glex_vp_t *vp, uint32_t dest_id, uint64_t remote_addr, uint64_t expect,
                       uint64_t desire, uint64_t *old)
{
    if (!vp || !old || dest_id >= vp->f->nnodes || !remote_addr || remote_addr % 8u)
        return glex_error(GLEX_EINVAL,
                          "atomic compare-and-swap at node %u address 0x%llx: allowed nodes "
                          "0..%u, a non-null 8-byte aligned address",
                          dest_id, (unsigned long long)remote_addr,
                          vp ? vp->f->nnodes - 1 : 0);
    if (vp->f->p.vtime || glex_remote(vp->f, dest_id) ||
        !glex_engine_atomic_cas(vp, dest_id, remote_addr, expect, desire, old))
        return glex_error(GLEX_ENOTSUP,
                          "atomic compare-and-swap at node %u address 0x%llx: only in "
                          "memory a node of this host registered, in real time",
                          dest_id, (unsigned long long)remote_addr);
    return GLEX_OK;
}

int glex_vp_get_sgl(glex_vp_t *vp, uint32_t dest_id, const struct iovec *remote, uint32_t nr,
                    uint64_t skip, const struct iovec *local, uint32_t nl, uint64_t *moved)
{
    if (!vp || !remote || !local || !moved || !nr || !nl || nr > GLEX_SGL_MAX ||
        nl > GLEX_SGL_MAX || dest_id >= vp->f->nnodes)
        return glex_error(GLEX_EINVAL,
                          "scatter-gather get from node %u, %u remote and %u local pieces: "
                          "allowed nodes 0..%u, 1..%u pieces a side", dest_id, nr, nl,
                          vp ? vp->f->nnodes - 1 : 0, GLEX_SGL_MAX);
    if (vp->f->p.vtime || glex_remote(vp->f, dest_id) || dest_id == vp->f->node)
        return glex_error(GLEX_ENOTSUP,
                          "scatter-gather get from node %u: only from another node of this "
                          "host, in real time", dest_id);
    return glex_engine_get_sgl(vp, dest_id, remote, nr, skip, local, nl, moved);
}

/* GLEX_VTIME: move the ring's entry with the earliest virtual time (a uint64
 * at vt_off) among [head, tail) to head, the ones before it up behind it in
 * their order (one sender's entries keep theirs: its virtual times only
 * grow), so that the host takes entries in the order they came in virtual
 * time, whatever order the emulator wrote them in.  Entries are esz bytes
 * at ent_off of each stride-byte slot (the rest of a slot stays put). */
static void earliest_first(void *ring, size_t stride, size_t ent_off, size_t esz, uint32_t head,
                           uint32_t tail, uint32_t depth, size_t vt_off)
{
    uint8_t *r = (uint8_t *)ring + ent_off;
    uint32_t first = head;
    uint64_t best, v;
    memcpy(&best, r + (size_t)(head % depth) * stride + vt_off, sizeof best);
    for (uint32_t i = head + 1; i != tail; i++) {
        memcpy(&v, r + (size_t)(i % depth) * stride + vt_off, sizeof v);
        if (v < best)
            best = v, first = i;
    }
    if (first == head)
        return;
    uint8_t keep[sizeof(glex_rqe_t) > sizeof(glex_cqe_t) ? sizeof(glex_rqe_t) : sizeof(glex_cqe_t)];
    memcpy(keep, r + (size_t)(first % depth) * stride, esz);
    for (uint32_t i = first; i != head; i--)
        memcpy(r + (size_t)(i % depth) * stride, r + (size_t)((i - 1) % depth) * stride, esz);
    memcpy(r + (size_t)(head % depth) * stride, keep, esz);
}

int glex_vp_poll_cq(glex_vp_t *vp, glex_cqe_t *e)
{
    glex_vp_shm_t *s = vp->shm;
    uint32_t head = atomic_load_explicit(&s->cq_head, memory_order_relaxed);
    if (head == atomic_load_explicit(&s->cq_tail, memory_order_acquire))
        return 0;
    uint32_t depth = vp->f->p.cq_depth;
    if (vp->f->p.vtime) /* the one written first in virtual time */
        earliest_first(vp->cq, sizeof *vp->cq, 0, sizeof *vp->cq, head,
                       atomic_load_explicit(&s->cq_tail, memory_order_acquire), depth,
                       offsetof(glex_cqe_t, vt));
    *e = vp->cq[head % depth];
    atomic_store_explicit(&s->cq_head, head + 1, memory_order_release);
    if (vp->f->p.vtime)
        glex_vt_host_took(vp->f, e->vt);
    return 1;
}

/* the receive-queue slots from position pos on, at most max, that hold
 * entries written in a row (a first slot's seq = position + 1; a long MP's
 * further slots are stepped over); *entries (when not NULL) gets how many
 * entries they hold */
static uint32_t rq_written(const glex_vp_t *vp, uint32_t pos, uint32_t max, uint32_t *entries)
{
    uint32_t depth = vp->f->p.cq_depth, n = 0, k = 0;
    while (n < max) {
        const glex_rq_slot_t *s = &vp->rq[(pos + n) % depth];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + n + 1)
            break;
        uint32_t m = glex_mp_slots(s->e.len);
        if (m > max - n)
            break;
        n += m;
        k++;
    }
    if (entries)
        *entries = k;
    return n;
}

/* the entry at the head of vp's receive queue, ready to be taken (its
 * position in *head); NULL when none (or one seen in place is not done) */
static glex_rq_slot_t *rq_ready(glex_vp_t *vp, uint32_t *head)
{
    glex_vp_shm_t *s = vp->shm;
    uint32_t h = atomic_load_explicit(&s->rq_head, memory_order_relaxed);
    uint32_t depth = vp->f->p.cq_depth;
    glex_rq_slot_t *slot = &vp->rq[h % depth];
    if (atomic_load_explicit(&slot->seq, memory_order_acquire) != h + 1 || vp->rq_viewed)
        return NULL;
    if (vp->f->p.vtime) { /* the one that arrived first in virtual time (no long MPs) */
        uint32_t end = h + 1 + rq_written(vp, h + 1, depth - 1, NULL);
        earliest_first(vp->rq, sizeof *vp->rq, offsetof(glex_rq_slot_t, e), sizeof(glex_rqe_t),
                       h, end, depth, offsetof(glex_rqe_t, vt));
        if (!glex_vt_host_may_take(vp->f, slot->e.vt))
            return NULL; /* after the host's collective, maybe (glex_vtime_hold_later) */
    }
    *head = h;
    return slot;
}

/* the entry at head (slots slots, len payload bytes, arrived at virtual
 * time vt) taken: its slots handed back */
static void rq_free(glex_vp_t *vp, uint32_t head, uint32_t slots, uint32_t len, uint64_t vt)
{
    glex_vp_shm_t *s = vp->shm;
    /* free: the slots' lines stay as the sender wrote them (its next write
     * takes them back without fetching a line this host dirtied) */
    atomic_store_explicit(&s->rq_head, head + slots, memory_order_release);
    /* the receiver's own line: the delivering engine writes none of it */
    glex_counter_add(&s->packets_received, slots);
    atomic_store_explicit(&vp->f->rq_took,
                          atomic_load_explicit(&vp->f->rq_took, memory_order_relaxed) + 1,
                          memory_order_relaxed); /* a heuristic's: a lost count is harmless */
    glex_counter_add(&s->bytes_received, len);
    if (vp->f->p.vtime)
        glex_vt_host_took(vp->f, vt);
}

/* Take the entry at the head into *e, its payload (len bytes, of at most
 * cap) from e->data on (a glex_rqe_long_t's bytes when cap is above
 * GLEX_MP_CAP); 1, 0 when none, GLEX_EINVAL when it is longer than cap. */
static int rq_take(glex_vp_t *vp, glex_rqe_t *e, uint8_t *to, uint32_t cap)
{
    uint32_t head, depth = vp->f->p.cq_depth;
    glex_rq_slot_t *slot = rq_ready(vp, &head);
    if (!slot)
        return 0;
    uint32_t len = slot->e.len;
    if (len > cap)
        return glex_error(GLEX_EINVAL,
                          "receive-queue entry of %u bytes (a long MP) into room for %u: "
                          "take it with glex_vp_poll_rq_long", len, cap);
    /* the header and the bytes the message has, not the whole slot */
    uint32_t slots = glex_mp_slots(len);
    memcpy(to, &slot->e, offsetof(glex_rqe_t, data) + glex_mp_slot_bytes(len, 0));
    uint8_t *data = to + offsetof(glex_rqe_t, data) + GLEX_MP_CAP;
    for (uint32_t k = 1; k < slots; data += GLEX_MP_SLOT_MORE, k++)
        memcpy(data, glex_rq_slot_more(&vp->rq[(head + k) % depth]), glex_mp_slot_bytes(len, k));
    rq_free(vp, head, slots, len, e->vt);
    return 1;
}

int glex_vp_poll_rq_view(glex_vp_t *vp, glex_rqe_long_t *r, glex_rq_view_t *v)
{
    uint32_t head, depth = vp->f->p.cq_depth;
    glex_rq_slot_t *slot = rq_ready(vp, &head);
    if (!slot)
        return 0;
    uint32_t len = slot->e.len, slots = glex_mp_slots(len);
    if (slots == 1)
        return rq_take(vp, &r->e, r->bytes, GLEX_MP_LONG_CAP);
    /* A long MP: the host reads its payload where the NIC wrote it (2
     * ranks, osu_latency 2 KiB: one copy of it fewer) */
    v->e = &slot->e;
    v->head = head;
    v->slots = v->pieces = slots;
    v->piece[0] = slot->e.data;
    v->piece_len[0] = GLEX_MP_CAP;
    for (uint32_t k = 1; k < slots; k++) {
        v->piece[k] = glex_rq_slot_more(&vp->rq[(head + k) % depth]);
        v->piece_len[k] = glex_mp_slot_bytes(len, k);
    }
    vp->rq_viewed = 1;
    return 2;
}

void glex_rq_view_copy(const glex_rq_view_t *v, uint32_t off, void *to, uint32_t len)
{
    uint8_t *d = to;
    for (uint32_t k = 0; k < v->pieces && len; k++) {
        if (off >= v->piece_len[k]) {
            off -= v->piece_len[k];
            continue;
        }
        uint32_t n = v->piece_len[k] - off < len ? v->piece_len[k] - off : len;
        glex_copy(d, v->piece[k] + off, n);
        d += n;
        len -= n;
        off = 0;
    }
}

void glex_vp_rq_done(glex_vp_t *vp, const glex_rq_view_t *v)
{
    vp->rq_viewed = 0;
    rq_free(vp, v->head, v->slots, v->e->len, v->e->vt);
}

int glex_vp_poll_rq(glex_vp_t *vp, glex_rqe_t *e)
{
    return rq_take(vp, e, (uint8_t *)e, GLEX_MP_CAP);
}

int glex_vp_poll_rq_long(glex_vp_t *vp, glex_rqe_long_t *r)
{
    return rq_take(vp, &r->e, r->bytes, GLEX_MP_LONG_CAP);
}

int glex_vp_is_open(glex_fabric_t *f, uint32_t node, uint32_t vp)
{
    if (node >= f->nnodes || vp >= f->p.vps_per_node)
        return 0;
    return atomic_load(&glex_vp_shm(f, node, vp)->open) != 0;
}

int glex_vp_counters(glex_fabric_t *f, uint32_t node, uint32_t vp, glex_vp_counters_t *c)
{
    if (node >= f->nnodes || vp >= f->p.vps_per_node)
        return glex_error(GLEX_EINVAL, "counters of node %u vp %u: allowed node 0..%u vp 0..%u",
                          node, vp, f->nnodes - 1, f->p.vps_per_node - 1);
    glex_vp_shm_t *s = glex_vp_shm(f, node, vp);
    c->desc_posted = atomic_load(&s->desc_posted);
    c->desc_executed = atomic_load(&s->desc_executed);
    c->tasks_completed = atomic_load(&s->tasks_completed);
    c->tasks_failed = atomic_load(&s->tasks_failed);
    c->packets_sent = atomic_load(&s->packets_sent);
    c->packets_received = atomic_load(&s->packets_received);
    c->bytes_sent = atomic_load(&s->bytes_sent);
    c->bytes_received = atomic_load(&s->bytes_received);
    c->trigger_waits = atomic_load(&s->trigger_waits);
    c->credit_stalls = atomic_load(&s->credit_stalls);
    c->alu_ops = atomic_load(&s->alu_ops);
    return GLEX_OK;
}

int glex_unit_counters(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_unit_counters_t *c)
{
    if (node >= f->nnodes || unit >= f->p.units)
        return glex_error(GLEX_EINVAL, "counters of node %u unit %u: allowed node 0..%u unit 0..%u",
                          node, unit, f->nnodes - 1, f->p.units - 1);
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    /* counted as packets leave (glex_unit_shm_t): those still in the
     * buffer count as buffered, their probes once they leave */
    uint64_t left;
    c->table_used = glex_unit_slots_used(u, &left);
    c->packets_buffered = left + c->table_used;
    c->hash_probes = atomic_load(&u->probes_left) + atomic_load(&u->probes_failed);
    c->table_high_water = atomic_load(&u->table_high_water);
    c->ram_high_water_kb = atomic_load(&u->ram_high_water) / 1024;
    c->credit_stalls = atomic_load(&u->credit_stalls);
    c->trigger_waits = atomic_load(&u->trigger_waits);
    c->tasks_admitted = atomic_load(&u->tasks_admitted);
    for (uint32_t v = 0; v < f->p.vps_per_node; v++)
        c->tasks_admitted += atomic_load(&glex_vp_shm(f, node, v)->tasks_now[unit]);
    c->stale_dropped = atomic_load(&u->stale_dropped);
    c->eager_taken = atomic_load(&u->eager_taken);
    c->eager_asked = atomic_load(&u->eager_asked);
    c->dma_reads = atomic_load(&u->dma_reads);
    c->dma_staged = atomic_load(&u->dma_staged);
    c->eager_high_water_kb = (uint64_t)atomic_load(&u->eager_high_water) * GLEX_PAGE / 1024;
    return GLEX_OK;
}

const char *glex_vp_failure(const glex_vp_t *vp)
{
    return vp->fail_text;
}

uint32_t glex_vp_rq_pending(const glex_vp_t *vp)
{
    /* the written ones from the head on: a slot a sender has claimed (the
     * tail is past it) but not yet filled cannot be taken yet, and neither
     * can those behind it */
    uint32_t head = atomic_load_explicit(&vp->shm->rq_head, memory_order_relaxed);
    uint32_t entries;
    rq_written(vp, head, atomic_load_explicit(&vp->shm->rq_tail, memory_order_acquire) - head,
               &entries);
    return entries;
}
