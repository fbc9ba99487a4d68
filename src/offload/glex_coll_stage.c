/* glex_coll_stage.c - the direct path's stages: memory a rank copies its
 * data into so that it need not wait for its readers (a reduce's senders,
 * a bcast's root, every allreduce rank), each step said in its "out" word;
 * readers take the data as it arrives, mapped (a memfd region,
 * GLEX_STAGE_MAP) or by RDMA.  A staged allreduce's chunks are reduced
 * round robin from the stages and their results copied out of the
 * reducers' stages (glex_stage_gather).  The protocol around them is in
 * glex_coll_direct.c. */
#define _POSIX_C_SOURCE 200809L
#include "glex_coll_direct.h"

#include <stdlib.h>
#include <string.h>

/* slot s's stage goes (replaced by a larger one, or the group is freed) */
void glex_stage_drop(glex_direct_t *d, uint32_t s)
{
    if (d->region[s].base)
        glex_region_free(&d->region[s]);
    else
        free(d->stage[s]);
    d->stage[s] = NULL;
    d->stage_cap[s] = 0;
}

/* staged: does this rank copy its data into a stage?  A reduce's senders,
 * a bcast's root, every rank of an allreduce */
int glex_stage_writer(const glex_group_t *g, const glex_dcall_t *c)
{
    if (c->a.kind == GLEX_COLL_REDUCE)
        return g->rank != c->a.root;
    return c->a.kind == GLEX_COLL_ALLREDUCE || g->rank == c->a.root;
}

/* staged, a rank that stages: this slot's stage, big enough (its last
 * readers are through with it: enter waited for that), with nothing
 * copied yet.  0 when the memory is not to be had: the rank then is read
 * in place and waits for its readers */
int glex_stage_ready(glex_group_t *g, glex_dcall_t *c, uint32_t s)
{
    glex_direct_t *d = g->direct;
    if (d->stage_cap[s] < c->bytes) {
        glex_stage_drop(d, s);
        if (glex_sel_stage_map(g) &&
            glex_region_alloc(&d->region[s], c->bytes) == GLEX_OK)
            d->stage[s] = d->region[s].base;
        else
            d->stage[s] = malloc(c->bytes);
        d->stage_cap[s] = d->stage[s] ? c->bytes : 0;
        if (!d->stage[s])
            return 0;
    }
    atomic_store_explicit(&line_of(d, g->rank)->out[s], (uint64_t)c->c << 32,
                          memory_order_relaxed);
    c->out = 1;
    return 1;
}

/* a staged call's progress word was written: wake the readers that sleep
 * waiting for this rank (a reduce's root, else any rank).  When processes
 * share cores only at the last step: a sleeper woken at every step would
 * take the core from the writer for a chunk's worth of work, n - 1 of them
 * at each step for a bcast or an allreduce (16 processes on 2 cores: a 4
 * MiB bcast took 5 ms instead of 0.3) */
void glex_stage_said(glex_group_t *g, const glex_dcall_t *c, int last)
{
    if (!last && glex_procs_per_cpu(g->f) > 1)
        return;
    if (c->a.kind == GLEX_COLL_REDUCE)
        glex_direct_wake(g, c->a.root);
    else
        glex_direct_notify_all(g);
}

/* the data into the stage glex_stage_ready gave, 64 KiB at a time, each
 * step said ("out": KiB copied, rounded up at the end) */
void glex_stage_fill(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint8_t *dst = d->stage[c->c & 1u];
    const uint8_t *src = send_ptr(&c->a);
    for (uint64_t off = 0; off < c->bytes;) {
        uint64_t len = c->bytes - off < CHUNK_BYTES ? c->bytes - off : CHUNK_BYTES;
        glex_copy(dst + off, src + off, len);
        off += len;
        uint64_t kib = off == c->bytes ? (off + 1023) >> 10 : off >> 10;
        atomic_store_explicit(&line_of(d, g->rank)->out[c->c & 1u], (uint64_t)c->c << 32 | kib,
                              memory_order_release);
        glex_stage_said(g, c, off == c->bytes);
    }
}

/* has rank q's progress word w (call << 32 | count) reached count * unit
 * >= need in this call?  If not, this rank waits for q: says so */
static int word_upto(glex_group_t *g, const glex_dcall_t *c, const _Atomic uint64_t *w,
                     uint32_t q, uint64_t need, uint64_t unit)
{
    for (int look = 0; look < 2; look++) {
        uint64_t v = atomic_load_explicit(w, memory_order_acquire);
        if ((uint32_t)(v >> 32) == c->c && (v & 0xffffffffu) * unit >= need)
            return 1;
        if (look || !glex_direct_say_waiting(g, q)) /* said before, or said and looked again */
            break;
    }
    return 0;
}

/* a staged call's reader: has rank q's stage the bytes below end? */
int glex_stage_upto(glex_group_t *g, const glex_dcall_t *c, uint32_t q, uint64_t end)
{
    return word_upto(g, c, &line_of(g->direct, q)->out[c->c & 1u], q, end, 1024u);
}

/* a staged allreduce's chunk, bytes: chunk k is reduced by rank k mod n
 * (spread over every rank also when the message has few chunks) */
uint64_t glex_stage_rr_chunk(const glex_group_t *g, const glex_dcall_t *c)
{
    size_t es = glex_type_size(c->a.type);
    uint64_t per_rank = (c->a.count + g->size - 1) / g->size;
    uint64_t most = CHUNK_BYTES / es;
    return (per_rank < most ? per_rank : most) * es;
}

int glex_stage_round_robin(const glex_dcall_t *c)
{
    return c->staged && c->a.kind == GLEX_COLL_ALLREDUCE;
}

/* a staged call's reader: rank q's stage is a region: map it (once;
 * again when rank q replaced it).  *out NULL: it cannot be mapped here (no
 * permission, say): read by RDMA from now on */
static int stage_map(glex_group_t *g, const glex_dcall_t *c, uint32_t q, const dslot_t *sl,
                     const uint8_t **out)
{
    glex_direct_t *d = g->direct;
    *out = NULL;
    if (d->nomap)
        return GLEX_OK;
    if (!d->rmap && !(d->rmap = calloc(2u * g->size, sizeof *d->rmap))) {
        d->nomap = 1;
        return GLEX_OK;
    }
    glex_rmap_t *m = &d->rmap[2u * q + (c->c & 1u)];
    int rc = glex_rmap_get(g->f, g->nodes[q], (int32_t)(sl->len - 2u), sl->recv, c->bytes, m);
    if (rc == GLEX_EDEAD)
        return rc;
    if (rc) {
        d->nomap = 1;
        return GLEX_OK;
    }
    *out = m->base;
    return GLEX_OK;
}

/* rank q's bytes [off, off + len) of what it published at address base (its
 * stage, or its buffer when it has none), as a pointer here: into its
 * mapped stage, else read by RDMA into `into`.  NULL: the call failed */
const uint8_t *glex_stage_src(glex_group_t *g, glex_dcall_t *c, uint32_t q, uint64_t base,
                              uint64_t off, uint64_t len, uint8_t *into)
{
    const dslot_t *sl = slot_of(g->direct, q, c->c & 1u);
    const uint8_t *mapped = NULL;
    int rc = sl->len >= 2 ? stage_map(g, c, q, sl, &mapped) : GLEX_OK;
    if (!rc && mapped)
        return mapped + off;
    if (!rc)
        rc = glex_rdma_read(g->f, g->nodes[q], into, base + off, len);
    if (rc) {
        glex_direct_fail(g, c, rc);
        return NULL;
    }
    return into;
}

/* staged allreduce: the chunks the other ranks reduced, each copied from
 * its reducer's stage once the reducer said it (from its result buffer by
 * RDMA when it has no stage); staged bcast, a receiver: the root's stage
 * as the root fills it (the root's buffer when it has none) */
int glex_stage_gather(glex_group_t *g, glex_dcall_t *c)
{
    glex_direct_t *d = g->direct;
    uint32_t s = c->c & 1u;
    int bcast = c->a.kind == GLEX_COLL_BCAST;
    uint64_t step = bcast ? CHUNK_BYTES : glex_stage_rr_chunk(g, c);
    for (; c->ci * step < c->bytes; c->ci++) {
        uint64_t off = c->ci * step;
        uint64_t len = c->bytes - off < step ? c->bytes - off : step;
        uint32_t q = bcast ? c->a.root : (uint32_t)(c->ci % g->size);
        if (q == g->rank)
            continue;
        dslot_t *sl = slot_of(d, q, s);
        if (bcast ? sl->len >= 1 && !glex_stage_upto(g, c, q, off + len)
                  : !word_upto(g, c, &line_of(d, q)->red[s], q, c->ci / g->size + 1, 1))
            return glex_direct_blocked(g, c, q);
        progressed(c);
        uint8_t *dst = (uint8_t *)c->a.recvbuf + off;
        const uint8_t *src = glex_stage_src(g, c, q, bcast || sl->len >= 1 ? sl->send : sl->recv,
                                            off, len, dst);
        if (!src)
            return c->status;
        if (src != dst)
            glex_copy(dst, src, len);
    }
    return 1;
}
