/* glex_coll_direct.h - the direct path's shared state: the mailbox
 * layout every member reads (status line, two slots), the per-group state,
 * and what the call protocol (glex_coll_direct.c) and the stages
 * (glex_coll_stage.c) use of each other.  Internal to src/offload. */
#ifndef GLEX_COLL_DIRECT_H
#define GLEX_COLL_DIRECT_H

#include "glex_coll_internal.h"

#include <stdatomic.h>

#define CHUNK_BYTES (64u * 1024u) /* reduce-scatter chunk: stays in cache */
#define LINE 64u
#define SLOT_HDR 32u

typedef struct {
    _Atomic uint32_t done;   /* last call this rank completed */
    _Atomic uint32_t phase;  /* last large bcast whose share this root wrote */
    _Atomic uint32_t failed; /* a call this rank failed: its peers stop waiting */
    _Atomic uint32_t wait_for; /* rank + 1 this rank waits for: only that one wakes it */
    _Atomic int32_t failed_rc; /* why it failed that call (written before failed) */
    _Atomic uint64_t out[2]; /* staged calls, per slot: call << 32 | KiB copied into
                              * its stage (a rank may be a call ahead in the other) */
    _Atomic uint64_t red[2]; /* staged allreduce, per slot: call << 32 | how many of
                              * its chunks it has reduced (their results readable) */
} dline_t;
_Static_assert(sizeof(dline_t) <= LINE, "a mailbox's status words fit its first line");

typedef struct {
    _Atomic uint32_t seq; /* call whose data/addresses are in the slot */
    uint32_t len;         /* small: bytes in the slot; large: 0 send is the buffer,
                           * 1 a stage, 2 + fd a stage in region fd */
    uint64_t send, recv;  /* buffer addresses (large calls); a staged non-root's
                           * recv (it has no result): its region's id */
    uint64_t bytes;       /* the call's size as this rank has it */
    /* data at SLOT_HDR */
} dslot_t;

struct glex_direct {
    glex_mbox_t *mine;
    uint8_t **area;      /* per rank: its mailbox area */
    size_t slot_stride, cap;
    uint32_t seq;        /* last call number started */
    uint32_t entered;    /* last call number that entered (wrote its slot) */
    uint32_t finished;   /* last call number whose done this rank published */
    uint32_t sync;       /* every rank has completed the calls up to this one */
    uint32_t wseq[2];    /* last call that wrote my slot s */
    int64_t wreaders[2]; /* its readers: -1 all, else the root's rank */
    uint8_t *acc, *tmp;  /* CHUNK_BYTES each */
    uint8_t *stage[2];   /* staged reduce: this rank's data, per slot ... */
    size_t stage_cap[2];
    glex_region_t region[2]; /* ... in a region the root maps (base set), else malloc'd */
    glex_rmap_t *rmap;   /* the root: per rank and slot, that rank's stage mapped here */
    int nomap;           /* a stage could not be mapped: read them by RDMA from now on */
};

enum { ST_ENTER, ST_SMALL, ST_LARGE_WAIT, ST_LARGE_REDUCE, ST_GATHER, ST_LARGE_PHASE, ST_LARGE_DONE,
       ST_DONE };

static inline int after_eq(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }
/* the call number after c (0 means 'never' and is skipped) */
static inline uint32_t next_call(uint32_t c) { return c + 1 ? c + 1 : 1; }
static inline dline_t *line_of(const glex_direct_t *d, uint32_t q) { return (dline_t *)d->area[q]; }
static inline dslot_t *slot_of(const glex_direct_t *d, uint32_t q, uint32_t s)
{
    return (dslot_t *)(d->area[q] + LINE + s * d->slot_stride);
}
static inline uint8_t *slot_data(dslot_t *sl) { return (uint8_t *)sl + SLOT_HDR; }

/* the data this rank contributes (in place: its result buffer) */
static inline const uint8_t *send_ptr(const glex_coll_args_t *a)
{
    return (const uint8_t *)(a->sendbuf == GLEX_IN_PLACE ? a->recvbuf : a->sendbuf);
}

static inline void progressed(glex_dcall_t *c) { c->wait_since = 0; }

/* ---- waiting and failing (glex_coll_direct_wait.c) ---- */

/* this call failed here with rc: say so to the peers, end it; returns rc */
int glex_direct_fail(glex_group_t *g, glex_dcall_t *c, int rc);
/* a peer failed this call: so does this rank (<0), else 0 */
int glex_direct_peer_failed(glex_group_t *g, glex_dcall_t *c);
/* blocked on rank q: 0 keep waiting, <0 the call failed (a peer died or
 * failed it) */
int glex_direct_blocked(glex_group_t *g, glex_dcall_t *c, uint32_t q);
/* this rank is about to wait for rank q: 1 when newly said (look once more) */
int glex_direct_say_waiting(glex_group_t *g, uint32_t q);
/* wake rank q if it sleeps waiting for this rank */
void glex_direct_wake(glex_group_t *g, uint32_t q);
/* ... every rank that does */
void glex_direct_notify_all(glex_group_t *g);

/* ---- stages (glex_coll_stage.c) ---- */

/* does this rank copy its data into a stage in this staged call? */
int glex_stage_writer(const glex_group_t *g, const glex_dcall_t *c);
/* this slot's stage, big enough, nothing copied yet; 0: no memory */
int glex_stage_ready(glex_group_t *g, glex_dcall_t *c, uint32_t s);
/* copy this rank's data into its stage, saying each step */
void glex_stage_fill(glex_group_t *g, glex_dcall_t *c);
/* a progress word was written: wake the readers that sleep for it */
void glex_stage_said(glex_group_t *g, const glex_dcall_t *c, int last);
/* has rank q's stage the bytes below end? (else says this rank waits) */
int glex_stage_upto(glex_group_t *g, const glex_dcall_t *c, uint32_t q, uint64_t end);
/* rank q's published bytes [off, off + len) at address base: a pointer
 * into its mapped stage, else read by RDMA into `into`; NULL: failed */
const uint8_t *glex_stage_src(glex_group_t *g, glex_dcall_t *c, uint32_t q, uint64_t base,
                              uint64_t off, uint64_t len, uint8_t *into);
/* staged allreduce: its chunk size; whether this call is one */
uint64_t glex_stage_rr_chunk(const glex_group_t *g, const glex_dcall_t *c);
int glex_stage_round_robin(const glex_dcall_t *c);
/* staged allreduce/bcast: copy the others' results (the root's data) out */
int glex_stage_gather(glex_group_t *g, glex_dcall_t *c);
/* free slot s's stage */
void glex_stage_drop(glex_direct_t *d, uint32_t s);

#endif
