/* glex_emu_engine.c - the offload engine of one node: fetches descriptor
 * sequences from its VPs' DQs, fires each descriptor when the packets it
 * expects are in the hash buffer (in schedule order), moves data with inline
 * packets or pulsed credits, runs the ALU and writes CQEs.  It is driven by an
 * engine thread, or inline by a host thread that is waiting anyway. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct { uint64_t end, vt; } glex_vt_ev_t;

/* a multicast send's view of one member: its route, packets delivered to
 * it, packets it acknowledged (its credits) and the credits taken */
typedef struct glex_mc_state {
    glex_mc_dest_t d;
    uint32_t next, acked, credits;
    uint64_t extra_ps; /* GLEX_VTIME: its route on the tree beyond the unicast route */
    uint64_t cvt;      /* GLEX_VTIME: when its last credit arrived */
} glex_mc_state_t;

typedef struct glex_task {
    struct glex_task *next;
    glex_vp_t *vp;
    uint32_t job, unit, n, cur;
    uint32_t tag;                     /* job | generation << 8: the keys' JobID part */
    const glex_desc_t *list;          /* the sequence: the host's list, or own */
    int rel;                          /* posted by reference: regs apply */
    glex_post_regs_t regs;
    int32_t status;
    uint64_t last_progress;
    uint64_t now;        /* clock of the current engine pass */
    uint64_t next_check; /* stalled past GLEX_TIMEOUT: next look at the peers */
    int warned;
    /* state of the current descriptor */
    int started, parked, send_done, recv_done;
    uint64_t started_ns;              /* when this descriptor started */
    int announced, s_abort;           /* size mismatch: announced / must tell the receiver */
    uint64_t bytes, sbytes;           /* received / sent */
    uint32_t pulse;                   /* recv pulse bytes */
    uint64_t r_done, r_granted;       /* bytes applied / credited */
    uint32_t r_frag, r_grant_frag;    /* next READY expected / next CREDIT to issue */
    glex_area_t area;
    int has_area;
    uint64_t s_done;                  /* bytes sent */
    uint32_t s_frag;
    int s_have_credit;
    glex_ctrl_t s_credit;
    int s_asked, r_credit;            /* eager size: the send asked for credit / the receive
                                         grants credit (no eager data comes) */
    /* a receive placed by DMA: the sender writes [0, r_split); below bytes
     * until its first READY says whether it offers its buffer (r_src), then
     * this NIC reads [r_split, bytes) from there (r_pulled so far, r_told
     * the sender so), else r_split becomes bytes */
    int r_told;
    uint64_t r_split, r_src, r_pulled;
    uint32_t fo_sent, rd_read;        /* destinations sent to (a read send: offered) / that
                                         read it (bit i: destination i) */
    uint64_t rd_src;                  /* a read send: the buffer offered (its own, or the
                                         NIC's send stage: staged) */
    int staged;
    uint32_t n_sent, n_recv, n_alu;   /* the task's data packets and ALU operations */
    uint32_t n_alu_elems;             /* elements those ALU operations combined */
    uint64_t vt;                      /* GLEX_VTIME: the task's virtual clock (ps) */
    uint64_t vd, vs, vr;              /* ... the descriptor's start, send and receive sides */
    uint32_t nrev, nsev;              /* ... events noted for the current descriptor */
    int host_alu;                     /* GLEX_POST_HOST_ALU: the host combines, not the ALU */
    uint32_t mc_n, mc_frags, mc_injected; /* multicast send: members, packets, injected */
    int mc_inited;
    int get_ticket, get_busy;         /* an RDMA get from another host in flight */
    /* kept when the task is reused (everything above is cleared) */
    struct glex_mc_state *mc;         /* multicast send: per member reached */
    uint64_t *mc_vt;                  /* ... GLEX_VTIME: each packet's injection */
    uint32_t mc_cap, mc_vt_cap;
    glex_desc_t *own;                 /* a copy of a sequence posted whole */
    uint32_t owncap;
    glex_desc_t cd;                   /* the current descriptor, relocated (rel) */
    glex_vt_ev_t *rev, *sev;          /* GLEX_VTIME: receive side's pulses applied, send
                                         side's sent: (bytes through, virtual time) */
    uint32_t rev_cap, sev_cap;
} glex_task_t;

/* The engine's lock, between this process's host threads and its engine
 * thread: a word taken by exchange and given back by a plain store.  A
 * pthread mutex's unlock is a locked instruction, which waits until every
 * store before it has left the core: after a packet or a ring message
 * that is the wait for the lines of the data just written to the peer's
 * memory (each owned by the peer's core), which a NIC's DMA would not make
 * its host wait for; a plain store lets them drain while the host goes on
 * (it completes in order all the same).  A thread that finds it taken
 * spins a little, then yields: holders keep it for one engine pass. */
typedef struct {
    _Atomic uint32_t held;
} engine_lock_t;

static int engine_trylock(engine_lock_t *l)
{
    return atomic_load_explicit(&l->held, memory_order_relaxed) ||
           atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

static void engine_lock(engine_lock_t *l)
{
    for (unsigned i = 0; engine_trylock(l); i++) {
        if (i < 128)
            glex_cpu_relax();
        else
            sched_yield();
    }
}

static void engine_unlock(engine_lock_t *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

struct glex_engine {
    engine_lock_t mu;
    glex_task_t *head, *tail;
    glex_task_t *spare;      /* finished tasks kept for reuse: no allocation per task */
    _Atomic uint32_t ntasks; /* written under mu (mu_add) */
    pthread_t th;
    int have_thread;
    _Atomic uint32_t stop;
    _Atomic uint32_t host_waiting;
    /* the engine thread's own bell: it sleeps on it while a host drives
     * progress, and while it has no task (a packet for a task not posted yet
     * needs nobody: it waits in the hash buffer).  Rung by a post the host
     * will not drive itself, and when a host stops waiting with tasks left. */
    _Atomic uint32_t bell;
    _Atomic uint32_t on_bell; /* the engine thread sleeps on bell */
    _Atomic uint32_t running; /* the engine thread has started */
    /* bumped by every host pass (glex_progress): a host that polls drives
     * the engine itself (MPI_Wait's loop); the engine thread stands back */
    _Atomic uint32_t host_polls;
    uint32_t seen_polls; /* the engine thread's: host_polls at its last look */
    uint64_t rng;
    uint8_t *p2p_blocked; /* per VP, this pass: an MP/RDMA task could not finish */
    _Atomic uint32_t *vp_tasks; /* per VP, its tasks in the list (written under mu) */
    /* per (JobID, VP), the CP packets this node's engine took (under mu):
     * the senders count arrivals in the segment, the engine what it took in
     * its own memory, so the counter's line is written by senders alone */
    uint32_t *cp_taken;
    uint8_t *bounce;      /* cma_step's buffer (under mu), made at first need */
    glex_region_t stage;  /* the send stage (stage_take), registered; under mu */
    int stage_busy;       /* a read send's readers read it now */
    int stage_failed;     /* it could not be made or registered: not tried again */
};

/* set on the engine thread (engine_main): the CQEs it writes wake the host */
static _Thread_local int on_engine_thread;

/* A CQE this thread wrote for its own node's host.  The engine thread rings
 * the node as a packet does.  A host that ran the engine inline wakes only
 * a thread of its process asleep on the host bell (glex_notify: a fence and
 * a read of the sleeper count): its own wait looks at its CQ after the
 * pass, and an unconditional ring would take the doorbell's line from the
 * peers that ring it on every packet. */
static void ring_own(glex_fabric_t *f)
{
    if (on_engine_thread)
        glex_ring(f, f->node);
    else
        glex_notify(f, f->node);
}

/* An MP written into node's receive queue: only the host takes it, so only
 * a host asleep there is woken (no doorbell for its engine thread), and the
 * look at its sleeper count costs the sender no fence of its own where the
 * sleeper pays for it (glex_waker_fence): a stream of small messages never
 * waits for its last packet's line to leave the core. */
static void ring_rq(glex_fabric_t *f, uint32_t node)
{
    if (!glex_remote(f, node))
        glex_notify(f, node);
}

/* ---- virtual time (GLEX_VTIME) ----
 * A descriptor's send side and receive side keep clocks of their own (vs,
 * vr), both from its start (vd); it ends at the later.  What one side waits
 * for of the other (a forwarded pulse its receipt, an exchange in place a
 * range's sending, a credit the consumption of an earlier pulse) is looked
 * up in that side's event list by byte offset, so a modeled time never
 * depends on the order the emulator happened to run the two sides in.
 * Tasks do not queue for their offload unit or a link (doc/vtime.md: what
 * the model leaves out). */

static inline uint64_t vmax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* append (end, vt) to an event list, grown as needed and kept with the task */
static void vt_note(glex_vt_ev_t **ev, uint32_t *n, uint32_t *cap, uint64_t end, uint64_t vt)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 64;
        glex_vt_ev_t *p = realloc(*ev, sizeof *p * c);
        if (!p)
            return; /* out of memory: lookups fall back on the last event noted */
        *ev = p;
        *cap = c;
    }
    (*ev)[(*n)++] = (glex_vt_ev_t){ end, vt };
}

/* when the list first reached byte end (the last event when it never did) */
static uint64_t vt_when(const glex_vt_ev_t *ev, uint32_t n, uint64_t end)
{
    if (!n)
        return 0;
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ev[mid].end >= end)
            hi = mid;
        else
            lo = mid + 1;
    }
    return ev[lo].vt;
}

/* a packet sent by node src at virtual time sent arrives here */
static inline uint64_t vt_arrival(const glex_fabric_t *f, uint32_t src, uint64_t sent)
{
    return sent + glex_vt_route_ps(f, src, f->node);
}

/* the receive side took a packet node src sent at virtual time sent, once
 * ready as well (an exchange in place: its own send); the first packet of a
 * receive also fires the trigger */
static inline void vt_took(glex_fabric_t *f, glex_task_t *t, uint32_t src, uint64_t sent,
                           uint64_t ready, int first)
{
    if (f->p.vtime)
        t->vr = vmax(vmax(t->vr, vt_arrival(f, src, sent)), ready) +
                (first ? glex_vt(f, GLEX_VT_NIC_TRIGGER) : 0) + glex_vt(f, GLEX_VT_NIC_RX);
}

/* the send side injects bytes once ready: its virtual send time */
static inline uint64_t vt_inject(const glex_fabric_t *f, uint64_t side, uint64_t ready,
                                 uint64_t bytes)
{
    return vmax(side, ready) + glex_vt(f, GLEX_VT_NIC_TX) + glex_vt_wire_ps(f, bytes);
}

/* ---------------------------------------------------------------- helpers */

static int ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

static void jitter(glex_fabric_t *f)
{
    if (!f->jitter_max_us)
        return;
    f->jitter_seed = f->jitter_seed * 1103515245u + 12345u;
    usleep((f->jitter_seed >> 8) % (f->jitter_max_us + 1));
}

/* copy, or combine in the ALU (one ALU operation, counted) */
static int apply(glex_task_t *t, const glex_desc_t *d, void *dst, const void *a, const void *src,
                 uint64_t bytes)
{
    if (!bytes)
        return GLEX_OK;
    if (!d->reduce_flag) {
        glex_move(dst, src, bytes);
        return GLEX_OK;
    }
    uint64_t n = bytes / glex_type_size((glex_type_t)d->type);
    glex_fabric_t *f = t->vp->f;
    t->n_alu++;
    t->n_alu_elems = n > UINT32_MAX - t->n_alu_elems ? UINT32_MAX : t->n_alu_elems + (uint32_t)n;
    atomic_fetch_add_explicit(&t->vp->shm->alu_ops, 1, memory_order_relaxed);
    if (f->p.vtime && !t->host_alu) /* host-based: the host's combine is charged to it */
        t->vr += glex_vt_alu_ps(f, (glex_type_t)d->type, n);
    return a == dst ? glex_alu_combine((glex_op_t)d->op, (glex_type_t)d->type, dst, src, n)
                    : glex_alu_combine_into((glex_op_t)d->op, (glex_type_t)d->type, dst, a, src, n);
}

/* received bytes [off, off+bytes) of a receive into recv_addr; with
 * swap_local_data a packet that is the node's first for these bytes (own:
 * each pulse of one stream, a counter trigger's first source) combines with
 * operand_addr's data instead of recv_addr's */
static int apply_recv(glex_task_t *t, const glex_desc_t *d, uint64_t off, const void *src,
                      uint64_t bytes, int own)
{
    uint8_t *dst = (uint8_t *)(uintptr_t)d->recv_addr + off;
    const uint8_t *a = own && d->swap_local_data ? (const uint8_t *)(uintptr_t)d->operand_addr + off
                                                  : dst;
    return apply(t, d, dst, a, src, bytes);
}

static void reset_desc_state(glex_task_t *t)
{
    t->nrev = t->nsev = 0;
    t->started = t->parked = t->send_done = t->recv_done = 0;
    t->announced = t->s_abort = 0;
    t->r_done = t->r_granted = t->s_done = 0;
    t->r_frag = t->r_grant_frag = t->s_frag = 0;
    t->s_have_credit = 0;
    t->s_asked = t->r_credit = 0;
    t->r_told = 0;
    t->r_split = t->r_src = t->r_pulled = 0;
    t->fo_sent = t->rd_read = 0;
    t->rd_src = 0;
    t->staged = 0;
    t->pulse = 0;
    t->mc_n = t->mc_frags = t->mc_injected = 0;
    t->mc_inited = 0;
}

static void park(glex_task_t *t, glex_unit_shm_t *u, int credit)
{
    if (t->parked)
        return;
    t->parked = 1;
    glex_vp_shm_t *v = t->vp->shm;
    if (credit) {
        atomic_fetch_add_explicit(&v->credit_stalls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&u->credit_stalls, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&v->trigger_waits, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&u->trigger_waits, 1, memory_order_relaxed);
    }
}

static void count_send(glex_task_t *t, uint64_t bytes)
{
    t->n_sent++;
    glex_counter_add(&t->vp->shm->packets_sent, 1); /* the engine's own counters */
    glex_counter_add(&t->vp->shm->bytes_sent, bytes);
}

static void count_recv(glex_task_t *t, uint64_t bytes)
{
    t->n_recv++;
    atomic_fetch_add_explicit(&t->vp->shm->packets_received, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->vp->shm->bytes_received, bytes, memory_order_relaxed);
}

/* --------------------------------------------------- collective descriptor */

/* A size mismatch between the two ends of a transfer ends the task with an
 * error on each end that can tell, instead of a hang: ETRUNC where more data
 * comes than the descriptor expects, ESIZE elsewhere. */
static int size_error(const glex_task_t *t, int receiving, uint64_t theirs, uint64_t mine)
{
    return glex_error(receiving && theirs > mine ? GLEX_ETRUNC : GLEX_ESIZE,
                      "job %u: the %s has %llu bytes, this %s %llu (counts differ between ranks)",
                      t->job, receiving ? "sender" : "receiver", (unsigned long long)theirs,
                      receiving ? "receive expects" : "send has", (unsigned long long)mine);
}

/* the unit RAM a task holds (credit area), given back once it is done with it */
static void release_area(glex_fabric_t *f, glex_task_t *t)
{
    if (t->has_area)
        glex_ram_release(f, t->unit, &t->area);
    t->has_area = 0;
}

/* pulses of a copy placed in the receiver's buffer (no unit RAM): large, as
 * each is one DMA (a system call here) and one credit round trip */
#define DIRECT_PULSE_MIN (256u * 1024u)
#define DIRECT_PULSE_MAX (1024u * 1024u)
/* below this a copy still goes through unit RAM: a memcpy into shared memory
 * (eager, up to 64 KiB) costs less than a DMA by system call and a credit */
#define DIRECT_MIN_BYTES (64u * 1024u + 1u)
/* ... from this size the receiver reads the second half itself, the sender's
 * pulses the smallest (its first READY, the offer, comes early); below, the
 * half costs more than it saves (glex-bench, 2 ranks: 512 KiB the same, 1
 * MiB 64 against 69 us, 4 MiB 221-244 against 277-401) */
#define PULL_MIN_BYTES (1024u * 1024u)
/* in virtual time the modeled NIC keeps the pulsed protocol it was
 * calibrated with: copies placed by DMA from 16 KiB, pulses from 16 KiB */
#define VT_DIRECT_PULSE_MIN (16u * 1024u)
#define VT_DIRECT_MIN_BYTES (16u * 1024u)

/* waited this long for the first packet of a transfer: look for a size mismatch */
#define MISMATCH_PROBE_NS 10000000ull

/* a packet into node's hash buffer: its own process puts it there when the
 * node is on another host (glex_emu_wire_ops.c) */
static int send_pkt(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t k, const void *p,
                    uint32_t len, uint64_t vt)
{
    if (glex_remote(f, node))
        return glex_wire_insert(f, node, unit, k, p, len, vt, 0, 0, 0);
    return glex_table_insert_vt(f, node, unit, k, p, len, vt);
}

/* a CP packet (inline data) into node's hash buffer, counted on its (JobID,
 * VP) CP counter there once it is in */
static int send_cp(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t k, const void *p,
                   uint32_t len, uint64_t vt, uint32_t job, uint32_t dvp)
{
    if (glex_remote(f, node))
        return glex_wire_insert(f, node, unit, k, p, len, vt, 1, job, dvp);
    int rc = glex_table_insert_vt(f, node, unit, k, p, len, vt);
    if (rc == GLEX_OK)
        atomic_fetch_add_explicit(glex_cp_counter(f, node, job, dvp), 1, memory_order_release);
    return rc;
}

/* Eager size: above an inline packet, below the copies placed in the
 * receiver's buffer (so the receive goes through unit RAM whatever it does
 * with the data), and not in virtual time (whose model is the paper's pulsed
 * protocol): the sender writes the data into the receiving unit's eager
 * pages with one READY, no credit awaited.  Between hosts, up to the size of
 * the sender's partition of those pages at the receiver (the receiver's
 * node decides it: both ends agree).  A receive of this size waits for that
 * READY, or for the sender's ASK (no eager pages were free) and then grants
 * credit as for a larger message. */
static int eager_size(const glex_fabric_t *f, uint64_t bytes, uint32_t peer, uint32_t receiver)
{
    return bytes > f->p.inline_max && bytes < DIRECT_MIN_BYTES && !f->p.vtime &&
           (!glex_remote(f, peer) || bytes <= glex_wire_eager_max(f, receiver));
}

static int eager_sent(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    count_send(t, t->sbytes);
    glex_ring(f, d->dest_id);
    t->s_done = t->sbytes;
    t->s_frag = 1;
    t->send_done = 1;
    return 1;
}

/* an eager send: 1 sent, 0 not now (a forward's data is not produced yet, the
 * table is full, or the send asked for credit: t->s_asked), < 0 an error */
static int eager_send(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    uint32_t me = f->node, myvp = t->vp->index, dunit = glex_job_unit(f, t->job);
    if (d->swap_remote_data && d->branch && !t->recv_done)
        return 0; /* a forward sends what its receive produced */
    glex_key_t k;
    int rc;
    int64_t at = -1;
    if (glex_remote(f, d->dest_id)) { /* into this node's pages there, with its READY: one message */
        k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_READY, 0);
        jitter(f);
        rc = glex_wire_eager(f, d->dest_id, dunit, k, (const void *)(uintptr_t)d->local_addr,
                             (uint32_t)t->sbytes);
        if (rc == GLEX_OK)
            return eager_sent(f, t, d);
        if (rc == GLEX_EAGAIN)
            park(t, u, 1);
        if (rc != GLEX_ENOSPC) /* ENOSPC: no pages of its partition free, ask below */
            return rc == GLEX_EAGAIN ? 0 : rc;
    } else {
        at = glex_eager_acquire(f, d->dest_id, dunit, (uint32_t)t->sbytes);
    }
    if (at < 0) { /* no eager pages free there: ask for credit */
        glex_ctrl_t a = { .total = t->sbytes };
        k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_DATA, GLEX_FRAG_ASK);
        rc = send_pkt(f, d->dest_id, dunit, k, &a, sizeof a, 0);
        if (rc == GLEX_EAGAIN)
            park(t, u, 1);
        if (rc)
            return rc == GLEX_EAGAIN ? 0 : rc;
        glex_ring(f, d->dest_id);
        t->s_asked = 1;
        return 0;
    }
    jitter(f);
    glex_copy(glex_unit_ram(f, d->dest_id, dunit) + at, (const void *)(uintptr_t)d->local_addr,
              t->sbytes);
    glex_ctrl_t r = { .ram_off = (uint32_t)at, .len = (uint32_t)t->sbytes, .total = t->sbytes };
    k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_READY, 0);
    rc = send_pkt(f, d->dest_id, dunit, k, &r, sizeof r, 0);
    if (rc) {
        glex_eager_release(f, d->dest_id, dunit, (uint32_t)at, (uint32_t)t->sbytes);
        if (rc == GLEX_EAGAIN)
            park(t, u, 1);
        return rc == GLEX_EAGAIN ? 0 : rc;
    }
    return eager_sent(f, t, d);
}

/* Both DMA engines at once: between processes of one host a receive placed
 * by DMA may read the second half of a large message from the sender's
 * buffer itself while the sender's DMA writes the first half (in real time
 * only; virtual time keeps the calibrated pulsed protocol).  The sender
 * offers its buffer when nothing else changes it meanwhile (a plain send,
 * no receive in the same descriptor). */
static int pull_possible(const glex_fabric_t *f, uint64_t bytes, uint32_t peer)
{
    return !f->p.vtime && bytes >= DIRECT_MIN_BYTES && !glex_remote(f, peer);
}

static int offers_buffer(const glex_fabric_t *f, const glex_task_t *t, const glex_desc_t *d)
{
    return !d->branch && pull_possible(f, t->sbytes, d->dest_id);
}

/* a send's destinations: dest_id/dest_vp/seq_id, or with fanout = 2..32 (an
 * inline send or a read transfer's offer) those listed in the inline area */
static uint32_t desc_fanout(const glex_desc_t *d) { return d->fanout > 1 ? d->fanout : 1u; }

static glex_src_t desc_dest(const glex_desc_t *d, uint32_t i)
{
    if (d->fanout > 1)
        return glex_desc_srcs_c(d)[i];
    return (glex_src_t){ .node = d->dest_id, .vp = d->dest_vp, .seq = d->seq_id };
}

static uint32_t desc_all(const glex_desc_t *d)
{
    uint32_t k = desc_fanout(d);
    return k == 32 ? ~0u : (1u << k) - 1u;
}

/* an inline send: one CP packet to each destination, each once */
static int inline_send(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    uint32_t me = f->node, myvp = t->vp->index, dunit = glex_job_unit(f, t->job);
    int work = 0;
    if (d->swap_remote_data && d->branch && !t->recv_done)
        return 0;
    for (uint32_t i = 0; i < desc_fanout(d); i++) {
        glex_src_t p = desc_dest(d, i);
        if (t->fo_sent >> i & 1u)
            continue;
        jitter(f);
        glex_key_t k = glex_make_key(t->tag, me, myvp, p.seq, p.vp, GLEX_PKT_DATA, 0);
        /* a forward sends what its receive produced: after it */
        uint64_t vt = f->p.vtime ? vt_inject(f, t->vs, d->swap_remote_data ? t->vr : 0, t->sbytes)
                                 : 0;
        int rc = send_cp(f, p.node, dunit, k, (const void *)(uintptr_t)d->local_addr,
                         (uint32_t)t->sbytes, vt, t->job, p.vp);
        if (rc == GLEX_EAGAIN) {
            park(t, u, 1);
            continue;
        }
        if (rc)
            return rc;
        if (f->p.vtime) {
            t->vs = vt;
            vt_note(&t->sev, &t->nsev, &t->sev_cap, t->sbytes, vt);
        }
        count_send(t, t->sbytes);
        glex_ring(f, p.node);
        t->fo_sent |= 1u << i;
        work = 1;
    }
    if (t->fo_sent == desc_all(d))
        t->send_done = 1;
    return work;
}

/* send side of a COLL descriptor; returns 1 if it progressed */
static int coll_send(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    int work = 0;
    uint32_t me = f->node, myvp = t->vp->index;
    uint32_t dunit = glex_job_unit(f, t->job);
    if (t->sbytes <= f->p.inline_max)
        return inline_send(f, t, d, u);
    if (!t->s_asked && !t->s_done && eager_size(f, t->sbytes, d->dest_id, d->dest_id)) {
        int rc = eager_send(f, t, d, u);
        if (rc || !t->s_asked)
            return rc;
        work = 1; /* asked: credits come as for a larger message */
    }
    while (t->s_done < t->sbytes) {
        if (!t->s_have_credit) {
            glex_key_t k = glex_make_key(t->tag, d->dest_id, d->dest_vp, d->seq_id, myvp,
                                         GLEX_PKT_CREDIT, t->s_frag);
            uint64_t cvt;
            int got = glex_table_take_vt(f, me, t->unit, k, &t->s_credit, sizeof t->s_credit, &cvt);
            if (got >= 0 && glex_ctrl_check(f, &t->s_credit, got))
                return GLEX_EINVAL;
            if (got >= 0 && f->p.vtime) /* the credit taken */
                t->vs = vmax(t->vs, vt_arrival(f, d->dest_id, cvt)) + glex_vt(f, GLEX_VT_NIC_RX);
            if (got < 0) {
                park(t, u, 1);
                if (t->s_frag == 0 && !t->announced &&
                    t->now - t->started_ns > MISMATCH_PROBE_NS) {
                    /* a receiver expecting an inline packet never sends credit:
                     * tell it the size, it answers with a credit carrying its own */
                    glex_ctrl_t a = { .total = t->sbytes };
                    k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_DATA,
                                      GLEX_FRAG_ANNOUNCE);
                    if (send_pkt(f, d->dest_id, dunit, k, &a, sizeof a, 0) == GLEX_OK) {
                        t->announced = 1;
                        glex_ring(f, d->dest_id);
                    }
                }
                break;
            }
            t->s_have_credit = 1;
            work = 1;
        }
        glex_ctrl_t *c = &t->s_credit;
        if (c->total != t->sbytes || t->s_abort) {
            /* tell the receiver with a READY of the sender's size, then fail */
            glex_ctrl_t r = { .off = c->off, .total = t->sbytes };
            glex_key_t k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_READY,
                                         t->s_frag);
            t->s_abort = 1;
            if (c->len && send_pkt(f, d->dest_id, dunit, k, &r, sizeof r, 0) == GLEX_EAGAIN)
                return work;
            /* an exchange whose pulsed receive has granted nothing yet: the
             * peer's send waits for our credit (and its receive, in place,
             * for that send) - a credit of our size lets it fail too */
            if (d->branch == 1 && !t->recv_done && !t->r_grant_frag && t->bytes > f->p.inline_max) {
                glex_ctrl_t g = { .total = t->bytes };
                k = glex_make_key(t->tag, me, myvp, d->cp_count, d->recv_vp, GLEX_PKT_CREDIT, 0);
                if (send_pkt(f, d->recv_id, glex_job_unit(f, t->job), k, &g, sizeof g, 0) ==
                    GLEX_OK)
                    glex_ring(f, d->recv_id);
            }
            glex_ring(f, d->dest_id);
            return size_error(t, 0, c->total, t->sbytes);
        }
        if (c->off != t->s_done || c->off + c->len > t->sbytes)
            return glex_error(GLEX_EINVAL,
                              "job %u: credit for bytes %llu+%u does not match send at %llu of %llu",
                              t->job, (unsigned long long)c->off, c->len,
                              (unsigned long long)t->s_done, (unsigned long long)t->sbytes);
        if (!c->len && !c->src) /* sizes agree: only a read receive answers so */
            return glex_error(GLEX_EINVAL, "job %u: node %u reads its data with its own DMA "
                              "where this send writes it (swap_remote_addr on the receive side "
                              "only)", t->job, d->dest_id);
        if (!c->len && c->src) { /* the receiver's NIC read [off, total) from our buffer */
            if (!offers_buffer(f, t, d) || c->src != d->local_addr)
                return glex_error(GLEX_EINVAL, "job %u: credit says bytes %llu.. were read "
                                  "from %#llx: this send offered %#llx",
                                  t->job, (unsigned long long)c->off, (unsigned long long)c->src,
                                  (unsigned long long)(offers_buffer(f, t, d) ? d->local_addr : 0));
            t->s_done = t->sbytes;
            t->s_have_credit = 0;
            work = 1;
            break;
        }
        if (d->swap_remote_data && d->branch && t->r_done < c->off + c->len)
            break; /* forward: this pulse is not produced yet */
        jitter(f);
        const uint8_t *src = (const uint8_t *)(uintptr_t)d->local_addr + c->off;
        if (c->dst) { /* DMA into the receiving host's buffer, in place */
            int rc = glex_remote(f, d->dest_id)
                         ? glex_wire_put(f, d->dest_id, c->dst, src, c->len)
                         : glex_rdma_write(f, d->dest_id, c->dst, src, c->len);
            if (rc)
                return rc;
        } else {
            int rc = glex_remote(f, d->dest_id)
                         ? glex_wire_ram(f, d->dest_id, dunit, c->ram_off, src, c->len)
                         : (glex_copy(glex_unit_ram(f, d->dest_id, dunit) + c->ram_off, src,
                                      c->len),
                            GLEX_OK);
            if (rc)
                return rc;
        }
        glex_ctrl_t r = *c;
        r.total = t->sbytes;
        r.src = c->dst && offers_buffer(f, t, d) ? d->local_addr : 0;
        glex_key_t k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_READY,
                                     t->s_frag);
        /* the pulse's bytes, then its READY; a forward's once received */
        uint64_t vt = 0;
        if (f->p.vtime)
            vt = vt_inject(f, t->vs,
                           d->swap_remote_data && d->branch
                               ? vt_when(t->rev, t->nrev, c->off + c->len) : 0,
                           c->len);
        int rc = send_pkt(f, d->dest_id, dunit, k, &r, sizeof r, vt);
        if (rc == GLEX_EAGAIN) {
            park(t, u, 1);
            break;
        }
        if (rc)
            return rc;
        if (f->p.vtime) {
            t->vs = vt;
            vt_note(&t->sev, &t->nsev, &t->sev_cap, c->off + c->len, vt);
        }
        count_send(t, c->len);
        glex_ring(f, d->dest_id);
        t->s_done += c->len;
        t->s_frag++;
        t->s_have_credit = 0;
        work = 1;
    }
    if (t->s_done == t->sbytes)
        t->send_done = 1;
    return work;
}

/* may received bytes [off, off+len) be written yet?  In an exchange whose
 * send and receive regions overlap, not before they have been sent. */
static int recv_may_apply(const glex_task_t *t, const glex_desc_t *d, uint64_t off, uint64_t len)
{
    if (!d->cp || d->swap_remote_data || t->send_done)
        return 1;
    if (!ranges_overlap(d->local_addr, t->sbytes, d->recv_addr + off, len))
        return 1;
    return t->s_done >= off + len && d->local_addr == d->recv_addr;
}

/* GLEX_VTIME: when an exchange in place may write received bytes [off,
 * off+len): once its send side sent them (recv_may_apply's rule, in virtual
 * time); 0 when nothing holds it */
static uint64_t vt_inplace(const glex_task_t *t, const glex_desc_t *d, uint64_t off, uint64_t len)
{
    if (!d->cp || d->swap_remote_data ||
        !ranges_overlap(d->local_addr, t->sbytes, d->recv_addr + off, len))
        return 0;
    return vt_when(t->sev, t->nsev, d->local_addr == d->recv_addr ? off + len : t->sbytes);
}

/* A credit of this receive's size, which it will not use: a pulsed sender
 * that announced another size, or a read send that offered its buffer (a
 * sender of another size took another algorithm: flat_read, a read-in-place
 * reduce), ends with its size error too instead of waiting for credit */
static void credit_refusal(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    glex_ctrl_t c = { .total = t->bytes };
    glex_key_t k = glex_make_key(t->tag, f->node, t->vp->index, d->cp_count, d->recv_vp,
                                 GLEX_PKT_CREDIT, 0);
    send_pkt(f, d->recv_id, glex_job_unit(f, t->job), k, &c, sizeof c, 0);
    glex_ring(f, d->recv_id);
}

/* a READY that is a read send's offer: its buffer, no data */
static int is_offer(const glex_ctrl_t *c) { return c->src && !c->len && !c->dst; }

/* an inline receive has waited long: did a larger, pulsed send announce
 * itself, an eager one send its data, or a read send offer its buffer? */
static int inline_recv_mismatch(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    uint32_t me = f->node, myvp = t->vp->index;
    if (t->now - t->started_ns <= MISMATCH_PROBE_NS)
        return 0;
    glex_ctrl_t a;
    glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp, GLEX_PKT_READY,
                                 0);
    int got = glex_table_take(f, me, t->unit, k, &a, sizeof a);
    if (got >= 0) {
        if (glex_ctrl_check(f, &a, got))
            return GLEX_EINVAL;
        if (is_offer(&a))
            credit_refusal(f, t, d);
        else
            glex_eager_return(f, f->node, t->unit, &a);
        return size_error(t, 1, a.total, t->bytes);
    }
    k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp, GLEX_PKT_DATA,
                      GLEX_FRAG_ANNOUNCE);
    if (glex_table_take(f, me, t->unit, k, &a, sizeof a) < 0)
        return 0;
    credit_refusal(f, t, d);
    return size_error(t, 1, a.total, t->bytes);
}

static uint32_t *cp_taken(glex_fabric_t *f, const glex_task_t *t)
{
    return &f->eng->cp_taken[(t->job & 0xffu) * f->p.vps_per_node + t->vp->index];
}

/* The counter trigger's count: CP packets of the task's (JobID, VP) that
 * arrived and were not taken yet.  A packet a one-packet receive took from
 * its slot before its sender's count reached the counter (coll_recv)
 * makes the difference negative for that moment: none pending. */
static uint32_t cp_pending(glex_fabric_t *f, const glex_task_t *t)
{
    uint32_t diff = atomic_load_explicit(glex_cp_counter(f, f->node, t->job, t->vp->index),
                                         memory_order_acquire) -
                    *cp_taken(f, t);
    return (int32_t)diff > 0 ? diff : 0;
}

/* take the CP packet (inline data) of key from this node's buffer: its
 * length, or -1; counted out of the (JobID, VP)'s pending ones.  counted:
 * the CP counter showed packets (or a late look for a size mismatch), so
 * the slots are asked for as holding a packet that is in; else a receive
 * polls for its one packet (coll_recv) */
static int take_cp(glex_fabric_t *f, glex_task_t *t, glex_key_t k, void *buf, uint64_t *vt,
                   int counted)
{
    int len = counted ? glex_table_take_present(f, f->node, t->unit, k, buf, GLEX_INLINE_CAP, vt)
                      : glex_table_take_vt(f, f->node, t->unit, k, buf, GLEX_INLINE_CAP, vt);
    if (len >= 0)
        ++*cp_taken(f, t);
    return len;
}

/* Counter trigger (branch > 1): the descriptor fires once its VP's CP counter
 * shows the packets it awaits, then applies them in the order of its source
 * list; a packet counted but not there yet (the counter also counts packets
 * of later steps) is waited for, in order. */
static int coll_recv_many(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d,
                          glex_unit_shm_t *u)
{
    const glex_src_t *src = glex_desc_srcs_c(d);
    uint32_t myvp = t->vp->index;
    int work = 0, rc;
    if (!recv_may_apply(t, d, 0, t->bytes))
        return 0;
    if (cp_pending(f, t) < d->branch - t->r_frag) { /* not triggered yet */
        park(t, u, 0);
        return 0;
    }
    while (t->r_frag < d->branch) {
        uint8_t buf[GLEX_INLINE_CAP];
        glex_src_t s = d->src_range ? (glex_src_t){ .node = d->recv_id + t->r_frag,
                                                    .vp = d->recv_vp, .seq = d->cp_count }
                                    : src[t->r_frag];
        glex_key_t k = glex_make_key(t->tag, s.node, s.vp, s.seq, myvp, GLEX_PKT_DATA, 0);
        uint64_t pvt;
        int len = take_cp(f, t, k, buf, &pvt, 1);
        if (len < 0) {
            park(t, u, 0);
            return work;
        }
        if ((uint64_t)len != t->bytes)
            return size_error(t, 1, (uint64_t)len, t->bytes);
        /* fired once its packets are in: the trigger once, each packet taken */
        vt_took(f, t, s.node, pvt, 0, t->r_frag == 0);
        if ((rc = apply_recv(t, d, 0, buf, t->bytes, t->r_frag == 0)))
            return rc;
        count_recv(t, t->bytes);
        t->r_frag++;
        work = 1;
    }
    t->recv_done = 1;
    return 1;
}

/* a receive of more than inline size: did a smaller sender send one inline
 * packet instead?  Its size error, or 0 */
static int inline_instead(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    uint8_t buf[GLEX_INLINE_CAP];
    glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, t->vp->index,
                                 GLEX_PKT_DATA, 0);
    int small = take_cp(f, t, k, buf, NULL, 1);
    return small >= 0 ? size_error(t, 1, (uint64_t)small, t->bytes) : 0;
}

/* the receive of an eager-size message: 1 done or asked for credit
 * (t->r_credit), 0 waiting, < 0 an error */
static int eager_recv(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    uint32_t me = f->node, myvp = t->vp->index;
    glex_ctrl_t c;
    glex_key_t k;
    int got;
    if (recv_may_apply(t, d, 0, t->bytes)) {
        k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp, GLEX_PKT_READY, 0);
        got = glex_table_take(f, me, t->unit, k, &c, sizeof c);
        if (got >= 0) {
            if (glex_ctrl_check(f, &c, got))
                return GLEX_EINVAL;
            if (is_offer(&c) && c.total != t->bytes) { /* a read send of another size */
                credit_refusal(f, t, d);
                return size_error(t, 1, c.total, t->bytes);
            }
            if (c.dst || !glex_eager_area(f, c.ram_off) || c.off || c.len != c.total) {
                glex_eager_return(f, f->node, t->unit, &c);
                return glex_error(GLEX_EINVAL,
                                  "job %u: data %llu+%u at RAM %u (dst %#llx) arrived, expected "
                                  "0+%llu in the eager pages",
                                  t->job, (unsigned long long)c.off, c.len, c.ram_off,
                                  (unsigned long long)c.dst, (unsigned long long)t->bytes);
            }
            if (c.total != t->bytes) {
                glex_eager_return(f, f->node, t->unit, &c);
                return size_error(t, 1, c.total, t->bytes);
            }
            int rc = apply_recv(t, d, 0, glex_unit_ram(f, me, t->unit) + c.ram_off, t->bytes, 1);
            glex_eager_return(f, f->node, t->unit, &c);
            if (rc)
                return rc;
            count_recv(t, t->bytes);
            t->r_done = t->bytes;
            t->r_frag = 1;
            t->recv_done = 1;
            return 1;
        }
    }
    /* no eager pages were free: the sender asked for credit */
    k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp, GLEX_PKT_DATA,
                      GLEX_FRAG_ASK);
    if (glex_table_take(f, me, t->unit, k, &c, sizeof c) >= 0) {
        if (glex_remote(f, d->recv_id)) /* its partition here was full (counted here) */
            atomic_fetch_add_explicit(&glex_unit_shm(f, me, t->unit)->eager_asked, 1,
                                      memory_order_relaxed);
        t->r_credit = 1;
        return 1;
    }
    park(t, u, 0);
    if (t->now - t->started_ns <= MISMATCH_PROBE_NS)
        return 0;
    /* waited long: a smaller sender's inline packet, or a larger one that
     * waits for credit (it announced its size: the credit tells it ours) */
    int rc = inline_instead(f, t, d);
    if (rc)
        return rc;
    k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp, GLEX_PKT_DATA,
                      GLEX_FRAG_ANNOUNCE);
    if (glex_table_take(f, me, t->unit, k, &c, sizeof c) >= 0) {
        t->r_credit = 1;
        return 1;
    }
    return 0;
}

/* Does another collective task of this engine use t's unit (and so may
 * want its pool)?  Only this node's engine borrows from its units' pools.
 * Alone, a receiving step may take the whole pool: each refill of its area
 * is a credit round trip, a context switch or two for processes that share
 * a core.  A task that comes while another holds it all falls back to its
 * guaranteed area for that step. */
static glex_ram_share_t unit_share(const glex_engine_t *e, const glex_task_t *t)
{
    for (const glex_task_t *o = e->head; o; o = o->next)
        if (o != t && o->unit == t->unit && o->list[0].kind == GLEX_DESC_COLL)
            return GLEX_RAM_SHARED;
    return GLEX_RAM_ALONE;
}

/* the receive's next CREDIT (its number r_grant_frag) to the sender: 1
 * sent, 0 no room there (parked), < 0 an error */
static int grant_credit(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u,
                        const void *c, uint32_t len, uint64_t vt)
{
    glex_key_t k = glex_make_key(t->tag, f->node, t->vp->index, d->cp_count, d->recv_vp,
                                 GLEX_PKT_CREDIT, t->r_grant_frag);
    int rc = send_pkt(f, d->recv_id, glex_job_unit(f, t->job), k, c, len, vt);
    if (rc == GLEX_EAGAIN) {
        park(t, u, 1);
        return 0;
    }
    if (rc)
        return rc;
    glex_ring(f, d->recv_id);
    t->r_grant_frag++;
    return 1;
}

/* this NIC's DMA reads up to max bytes at offset off of the sender's offered
 * buffer (t->r_src) into the receive buffer: one pulse of a read */
static int read_pulse(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u,
                      uint64_t off, uint64_t max)
{
    uint64_t n = t->bytes - off < max ? t->bytes - off : max;
    void *to = (uint8_t *)(uintptr_t)d->recv_addr + off;
    int rc = glex_rdma_read(f, d->recv_id, to, t->r_src + off, n);
    if (rc)
        return rc;
    glex_rdma_landed(to, n);
    count_recv(t, n);
    atomic_fetch_add_explicit(&u->dma_reads, 1, memory_order_relaxed);
    t->r_pulled += n;
    return GLEX_OK;
}

static int coll_recv(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    if (d->branch > 1)
        return coll_recv_many(f, t, d, u);
    int work = 0, rc;
    uint32_t me = f->node, myvp = t->vp->index;
    uint8_t *dst = (uint8_t *)(uintptr_t)d->recv_addr;
    if (t->bytes <= f->p.inline_max) {
        uint8_t buf[GLEX_INLINE_CAP];
        if (!recv_may_apply(t, d, 0, t->bytes))
            return 0;
        glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp,
                                     GLEX_PKT_DATA, 0);
        uint64_t pvt;
        /* a descriptor that waits for one CP packet looks at the slots its
         * key lands in (its home bucket, the next ones only while the
         * home's over count says so), never at the CP counter: the sender
         * publishes the slot first and counts it after, so waiting on the
         * counter put a second line transfer between the CPUs on the way
         * to the packet, and a receiver reading the counter took its line
         * from the sender, whose next count (a locked add) then waited for
         * it.  2 ranks, 8 B, roots taking turns, medians of 6 in turn (us):
         * bcast 0.53 -> 0.41, reduce 0.53 -> 0.41, barrier 0.41 -> 0.355,
         * allreduce 0.44 -> 0.38 (NOTES 2026-12-03) */
        int len = take_cp(f, t, k, buf, &pvt, 0);
        if (len < 0) {
            park(t, u, 0);
            return inline_recv_mismatch(f, t, d);
        }
        if ((uint64_t)len != t->bytes)
            return size_error(t, 1, (uint64_t)len, t->bytes);
        vt_took(f, t, d->recv_id, pvt, f->p.vtime ? vt_inplace(t, d, 0, t->bytes) : 0, 1);
        if ((rc = apply_recv(t, d, 0, buf, t->bytes, 1)))
            return rc;
        count_recv(t, t->bytes);
        t->recv_done = 1;
        return 1;
    }
    if (!t->r_credit && eager_size(f, t->bytes, d->recv_id, f->node)) {
        int rc = eager_recv(f, t, d, u);
        if (rc < 0 || !t->r_credit)
            return rc;
        work = 1; /* the sender asked for credit */
    }
    size_t es = glex_type_size((glex_type_t)d->type);
    /* a copy is placed by the sender's DMA in this host's buffer (the NIC
     * holds none of it); what the ALU combines passes through unit RAM */
    int in_place = !d->reduce_flag &&
                   t->bytes >= (f->p.vtime ? VT_DIRECT_MIN_BYTES : DIRECT_MIN_BYTES);
    if (!t->pulse && in_place) {
        uint64_t want = (t->bytes + f->p.pulses - 1) / f->p.pulses;
        uint64_t least = f->p.vtime ? VT_DIRECT_PULSE_MIN : DIRECT_PULSE_MIN;
        want = want < least ? least : want > DIRECT_PULSE_MAX ? DIRECT_PULSE_MAX : want;
        /* a half this NIC may read itself, into a plain receive (a send in
         * the same descriptor, a forward or an exchange, follows the pulses
         * in order): the sender's pulses small, so that its first READY
         * (the offer) comes early */
        int pull = !d->cp && pull_possible(f, t->bytes, d->recv_id) && t->bytes >= PULL_MIN_BYTES;
        if (pull)
            want = least;
        want = want / es * es;
        t->pulse = (uint32_t)(want ? want : es);
        t->r_split = t->bytes;
        if (pull) {
            uint64_t half = (t->bytes / 2 + t->pulse - 1) / t->pulse * t->pulse;
            t->r_split = half < t->bytes ? half : t->bytes;
        }
    } else if (!t->has_area && !in_place) {
        glex_ram_acquire(f, t->unit, t->job, myvp, t->bytes, unit_share(f->eng, t), &t->area);
        t->has_area = 1;
        uint64_t p = t->area.bytes / f->p.pulses;
        uint64_t want = (t->bytes + f->p.pulses - 1) / f->p.pulses;
        if (want < 512)
            want = 512;
        if (p > want)
            p = want;
        p = p / es * es;
        t->pulse = (uint32_t)(p ? p : es);
        t->r_split = t->bytes;
    }
    for (;;) {
        /* issue credits for up to k pulses in flight, of the sender's part */
        while (t->r_granted < t->r_split && t->r_grant_frag - t->r_frag < f->p.pulses) {
            glex_ctrl_t c;
            uint32_t slot = t->r_grant_frag % f->p.pulses;
            c.off = t->r_granted;
            c.len = (uint32_t)(t->bytes - t->r_granted < t->pulse ? t->bytes - t->r_granted
                                                                   : t->pulse);
            c.total = t->bytes;
            if (in_place) {
                /* the sender may write here only once this step's own send
                 * no longer needs these bytes (an exchange in place) */
                if (!recv_may_apply(t, d, c.off, c.len))
                    break;
                c.ram_off = 0;
                c.dst = d->recv_addr + c.off;
            } else {
                c.ram_off = t->area.off + slot * t->pulse;
                c.dst = 0;
            }
            c.src = 0;
            /* credit j goes once pulse j - k is applied (and, in place, its
             * range sent) */
            uint64_t vt = 0;
            if (f->p.vtime) {
                uint32_t j = t->r_grant_frag;
                uint64_t base = j >= f->p.pulses && j - f->p.pulses < t->nrev
                                    ? t->rev[j - f->p.pulses].vt : t->vd;
                vt = vt_inject(f, base, in_place ? vt_inplace(t, d, c.off, c.len) : 0, sizeof c);
            }
            if ((rc = grant_credit(f, t, d, u, &c, sizeof c, vt)) <= 0) {
                if (rc)
                    return rc;
                break;
            }
            t->r_granted += c.len;
            work = 1;
        }
        /* read a pulse of the offered half, one per pass of this loop */
        int pulled = 0;
        if (t->r_src && t->r_split + t->r_pulled < t->bytes) {
            if ((rc = read_pulse(f, t, d, u, t->r_split + t->r_pulled, t->pulse)))
                return rc;
            pulled = work = 1;
        }
        /* consume the next pulse, strictly in order */
        if (t->r_done >= t->r_split) {
            if (pulled)
                continue;
            break;
        }
        uint64_t len = t->bytes - t->r_done < t->pulse ? t->bytes - t->r_done : t->pulse;
        if (!recv_may_apply(t, d, t->r_done, len))
            break;
        glex_ctrl_t c;
        glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp,
                                     GLEX_PKT_READY, t->r_frag);
        uint64_t rvt;
        int got = glex_table_take_vt(f, me, t->unit, k, &c, sizeof c, &rvt);
        if (got >= 0 && glex_ctrl_check(f, &c, got))
            return GLEX_EINVAL;
        if (got >= 0 && f->p.vtime)
            vt_took(f, t, d->recv_id, rvt, vt_inplace(t, d, c.off, c.len), t->r_frag == 0);
        if (got >= 0 && glex_eager_return(f, me, t->unit, &c)) /* a smaller sender's eager data */
            return size_error(t, 1, c.total, t->bytes);
        if (got < 0) {
            if (pulled)
                continue;
            park(t, u, 0);
            if (t->r_frag == 0 && (rc = inline_instead(f, t, d)))
                return rc;
            break;
        }
        if (c.total != t->bytes)
            return size_error(t, 1, c.total, t->bytes);
        /* the first READY of a receive that may read half: an offer? */
        if (t->r_frag == 0 && t->r_split < t->bytes && !(t->r_src = c.src))
            t->r_split = t->bytes;
        if (c.off != t->r_done || c.len != len)
            return glex_error(GLEX_EINVAL, "job %u: pulse %llu+%u arrived, expected %llu+%llu",
                              t->job, (unsigned long long)c.off, c.len,
                              (unsigned long long)t->r_done, (unsigned long long)len);
        if (c.dst != (in_place ? d->recv_addr + c.off : 0))
            return glex_error(GLEX_EINVAL, "job %u: pulse %llu+%u placed at %#llx, expected %#llx",
                              t->job, (unsigned long long)c.off, c.len,
                              (unsigned long long)c.dst,
                              (unsigned long long)(in_place ? d->recv_addr + c.off : 0));
        if (in_place)
            glex_rdma_landed(dst + c.off, c.len); /* the sender's DMA wrote it */
        else if ((rc = apply_recv(t, d, c.off, glex_unit_ram(f, me, t->unit) + c.ram_off, c.len,
                                  1)))
            return rc;
        count_recv(t, c.len);
        t->r_done += c.len;
        t->r_frag++;
        if (f->p.vtime)
            vt_note(&t->rev, &t->nrev, &t->rev_cap, t->r_done, t->vr);
        work = 1;
    }
    /* all read: the sender's send ends with a credit of no bytes saying so
     * (after the credits of its own half: it takes them in order) */
    if (t->r_src && !t->r_told && t->r_split + t->r_pulled == t->bytes &&
        t->r_granted == t->r_split) {
        glex_ctrl_t c = { .off = t->r_split, .total = t->bytes, .src = t->r_src };
        if ((rc = grant_credit(f, t, d, u, &c, sizeof c, 0)) <= 0)
            return rc ? rc : work;
        t->r_told = work = 1;
    }
    if (t->r_done == t->r_split && (!t->r_src || t->r_told)) {
        t->recv_done = 1;
        release_area(f, t);
        /* a sender that waited long for the first credit announced its size */
        glex_ctrl_t a;
        glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp,
                                     GLEX_PKT_DATA, GLEX_FRAG_ANNOUNCE);
        glex_table_take(f, me, t->unit, k, &a, sizeof a);
    }
    return work;
}

/* ----------------------------------------------------------- read transfers
 * A COLL descriptor with swap_remote_addr (glex_emu.h): the send offers its
 * buffer to each destination with a READY of no bytes (src = local_addr,
 * total = its size), one packet each, and is done once each destination's
 * CREDIT of no bytes says it read [0, total) from there; the receive takes
 * the offer, reads the message into recv_addr with its own DMA in pulses of
 * DIRECT_PULSE_MAX, then returns that CREDIT.  The sender's host copies
 * nothing, and a sender with many destinations is read by all of them at
 * once (a flat bcast's root).  The DMA reaches only this host's memory, and
 * virtual time keeps the calibrated pushed protocol: both refused. */

static int read_refused(const glex_fabric_t *f, const glex_task_t *t, uint32_t peer)
{
    if (f->p.vtime)
        return glex_error(GLEX_EINVAL, "job %u: a read transfer (swap_remote_addr) with node %u "
                          "in virtual time: allowed in real time only", t->job, peer);
    if (glex_remote(f, peer))
        return glex_error(GLEX_EINVAL, "job %u: a read transfer (swap_remote_addr) with node %u "
                          "of another host: allowed between nodes of one host", t->job, peer);
    return GLEX_OK;
}

/* The NIC's send stage: host memory this node registered for its NIC
 * (glex_region_publish), into which a read send's NIC copies the data once
 * before it offers it, so that every reader's NIC reads it in place through
 * a mapping (glex_rdma_read, glex_dma_window) instead of by cross-memory
 * attach: a system call each, which moved 11-14 GB/s on the AMD VM against
 * 35-140 for a copy from mapped memory.  4 ranks on 2 CPUs, flat_read
 * bcast, medians of 5 in turn: 128 KiB 18.6 -> 8.4 us, 512 KiB 52 -> 24,
 * 4 MiB 390 -> 265; 8 ranks 128 KiB 20 -> 10, 64 B - 8 KiB 6.6 -> 3.0,
 * 16-64 KiB 1.1x slower (NOTES 2026-12-04).  Only a send to several
 * readers stages (one copy serves them all; for a single reader, a
 * reduce's sender, it cost what the read saved: 4 ranks 16-128 KiB 1.2-1.3x
 * slower).  One read send at a time holds the stage; another meanwhile, a
 * larger one than STAGE_MAX_BYTES or a system without memfd offers its
 * own buffer. */
#define STAGE_MAX_BYTES (16u * 1024u * 1024u)
/* above this the copy streams past the caches (glex_copy_stream) */
#define STAGE_STREAM_MIN (512u * 1024u)

static void stage_drop(glex_fabric_t *f, glex_engine_t *e)
{
    if (!e->stage.base)
        return;
    glex_region_withdraw(f, &e->stage);
    glex_region_free(&e->stage);
    e->stage = (glex_region_t){ .fd = -1 };
}

/* the stage for bytes, taken; 0 when the send offers its own buffer */
static uint64_t stage_take(glex_fabric_t *f, glex_engine_t *e, uint64_t bytes)
{
    if (e->stage_busy || e->stage_failed || !bytes || bytes > STAGE_MAX_BYTES)
        return 0;
    if (e->stage.bytes < bytes) { /* grown in powers of two: readers map it again */
        size_t want = 1u << 20;
        while (want < bytes)
            want *= 2;
        stage_drop(f, e);
        glex_region_t r;
        if (glex_region_alloc(&r, want) != GLEX_OK) {
            e->stage_failed = 1;
            return 0;
        }
        glex_region_prefault(&r);
        if (glex_region_publish(f, &r) != GLEX_OK) {
            glex_region_free(&r);
            e->stage_failed = 1;
            return 0;
        }
        e->stage = r;
    }
    e->stage_busy = 1;
    return (uint64_t)(uintptr_t)e->stage.base;
}

/* a read send's readers are through (or it failed: a reader may still read
 * the stage, which is then dropped, not reused) */
static void stage_release(glex_fabric_t *f, glex_task_t *t, int failed)
{
    if (!t->staged)
        return;
    t->staged = 0;
    f->eng->stage_busy = 0;
    if (failed)
        stage_drop(f, f->eng);
}

static int read_send(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    uint32_t me = f->node, myvp = t->vp->index, dunit = glex_job_unit(f, t->job);
    uint32_t k = desc_fanout(d);
    int work = 0;
    if (d->branch && !t->recv_done)
        return 0; /* a forward offers what its receive read */
    if (!t->rd_src) { /* the first pass: what the readers read */
        uint64_t st = k > 1 ? stage_take(f, f->eng, t->sbytes) : 0;
        if (st) {
            void *to = (void *)(uintptr_t)st;
            const void *from = (const void *)(uintptr_t)d->local_addr;
            if (t->sbytes > STAGE_STREAM_MIN) /* its readers read the last */
                glex_copy_stream(to, from, t->sbytes);
            else
                glex_copy(to, from, t->sbytes);
            t->staged = 1;
            atomic_fetch_add_explicit(&u->dma_staged, 1, memory_order_relaxed);
        }
        t->rd_src = st ? st : d->local_addr;
    }
    for (uint32_t i = 0; i < k; i++) {
        glex_src_t p = desc_dest(d, i);
        uint32_t bit = 1u << i;
        if (!(t->fo_sent & bit)) {
            int rc = read_refused(f, t, p.node);
            if (rc)
                return rc;
            glex_ctrl_t r = { .total = t->sbytes, .src = t->rd_src };
            glex_key_t key = glex_make_key(t->tag, me, myvp, p.seq, p.vp, GLEX_PKT_READY, 0);
            rc = send_pkt(f, p.node, dunit, key, &r, sizeof r, 0);
            if (rc == GLEX_EAGAIN) {
                park(t, u, 1);
                continue;
            }
            if (rc)
                return rc;
            count_send(t, 0);
            glex_ring(f, p.node);
            t->fo_sent |= bit;
            work = 1;
        }
        if (!(t->rd_read & bit)) {
            glex_ctrl_t c;
            glex_key_t key = glex_make_key(t->tag, p.node, p.vp, p.seq, myvp, GLEX_PKT_CREDIT, 0);
            int got = glex_table_take(f, me, t->unit, key, &c, sizeof c);
            if (got < 0) {
                park(t, u, 1);
                continue;
            }
            if (glex_ctrl_check(f, &c, got))
                return GLEX_EINVAL;
            if (c.total != t->sbytes)
                return size_error(t, 0, c.total, t->sbytes);
            if (c.src != t->rd_src || c.off || c.len)
                return glex_error(GLEX_EINVAL, "job %u: node %u says it read bytes %llu+%u from "
                                  "%#llx: this send offered %#llx+%llu", t->job, p.node,
                                  (unsigned long long)c.off, c.len, (unsigned long long)c.src,
                                  (unsigned long long)t->rd_src,
                                  (unsigned long long)t->sbytes);
            t->rd_read |= bit;
            work = 1;
        }
    }
    if (t->rd_read == desc_all(d)) {
        stage_release(f, t, 0);
        t->send_done = 1;
    }
    return work;
}

/* A read receive of part of an offer (length > 0: the offered message's
 * bytes): it reads its bytes from byte remote_addr of it */
static uint64_t read_total(const glex_task_t *t, const glex_desc_t *d)
{
    return d->length ? d->length : t->bytes;
}

static uint64_t read_at(const glex_desc_t *d)
{
    return d->length ? d->remote_addr : 0;
}

/* a read receive has waited long for its offer: did a sender that writes
 * (no swap_remote_addr) send an inline packet, or announce a pulsed send?
 * Fail, and fail a pulsed sender too (a credit of no bytes and no buffer) */
static int read_recv_mismatch(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d,
                              glex_unit_shm_t *u)
{
    if (t->now - t->started_ns <= MISMATCH_PROBE_NS)
        return 0;
    uint8_t buf[GLEX_INLINE_CAP];
    uint64_t theirs;
    glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, t->vp->index,
                                 GLEX_PKT_DATA, 0);
    int len = take_cp(f, t, k, buf, NULL, 1);
    if (len >= 0) {
        theirs = (uint64_t)len;
    } else {
        glex_ctrl_t a;
        k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, t->vp->index,
                          GLEX_PKT_DATA, GLEX_FRAG_ANNOUNCE);
        if (glex_table_take(f, f->node, t->unit, k, &a, sizeof a) < 0)
            return 0;
        glex_ctrl_t no = { .total = read_total(t, d) };
        grant_credit(f, t, d, u, &no, sizeof no, 0);
        theirs = a.total;
    }
    if (theirs != read_total(t, d))
        return size_error(t, 1, theirs, read_total(t, d));
    return glex_error(GLEX_EINVAL, "job %u: node %u writes its data where this receive reads it "
                      "(swap_remote_addr on the receive side only)", t->job, d->recv_id);
}

/* a read receive's one CREDIT (number 0): it read the whole; 1 sent (now
 * or before), 0 no room yet, < 0 an error */
static int read_credit(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    if (t->r_grant_frag)
        return 1;
    glex_ctrl_t done = { .total = read_total(t, d), .src = t->r_src - read_at(d) };
    return grant_credit(f, t, d, u, &done, sizeof done, 0);
}

/* A combining read receive (ReduceFlag): this NIC's DMA reads the next
 * pulse of the offered buffer into its unit RAM (a credit area: the data
 * the NIC holds) and its ALU combines it into recv_addr, the first source
 * with operand_addr's data (SwapLocalData).  The vector crosses the CPUs
 * once, in the reader's read, where the sender's copy into this unit's RAM
 * and the combine out of it cross twice. */
static int read_combine(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d,
                        glex_unit_shm_t *u)
{
    size_t es = glex_type_size((glex_type_t)d->type);
    if (!t->has_area) {
        glex_ram_acquire(f, t->unit, t->job, t->vp->index, t->bytes, unit_share(f->eng, t),
                         &t->area);
        t->has_area = 1;
        uint64_t p = t->area.bytes / es * es;
        t->pulse = (uint32_t)(p ? p : es);
    }
    uint64_t off = t->r_pulled, n = t->bytes - off < t->pulse ? t->bytes - off : t->pulse;
    uint8_t *ram = glex_unit_ram(f, f->node, t->unit) + t->area.off;
    int rc = glex_rdma_read(f, d->recv_id, ram, t->r_src + off, n);
    if (rc)
        return rc;
    glex_rdma_landed(ram, n);
    /* the last pulse is in unit RAM: the sender's buffer is read, and its
     * CREDIT leaves before the ALU combines, so the sender's call ends
     * while this NIC works (2 ranks, reduce, 3 runs in turn: 32 KiB 3.15 ->
     * 2.8 us, 64 KiB 5.4 -> 4.35, 128 KiB 9.5 -> 7.6; NOTES 2026-12-03);
     * a CREDIT that finds no room goes after the combine (read_recv) */
    if (off + n == t->bytes && (rc = read_credit(f, t, d, u)) < 0)
        return rc;
    if ((rc = apply_recv(t, d, off, ram, n, 1)))
        return rc;
    count_recv(t, n);
    atomic_fetch_add_explicit(&u->dma_reads, 1, memory_order_relaxed);
    t->r_pulled += n;
    return GLEX_OK;
}

static int read_recv(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    int work = 0, rc;
    if (!t->r_told) { /* r_told: the offer taken */
        if ((rc = read_refused(f, t, d->recv_id)))
            return rc;
        glex_ctrl_t c;
        glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, t->vp->index,
                                     GLEX_PKT_READY, 0);
        int got = glex_table_take(f, f->node, t->unit, k, &c, sizeof c);
        if (got < 0) {
            park(t, u, 0);
            return read_recv_mismatch(f, t, d, u);
        }
        if (glex_ctrl_check(f, &c, got))
            return GLEX_EINVAL;
        if (c.total != read_total(t, d) || (t->bytes && !c.src) || c.len || c.dst) {
            glex_ctrl_t no = { .total = read_total(t, d) };
            if (c.len)
                glex_eager_return(f, f->node, t->unit, &c); /* an eager sender's pages */
            grant_credit(f, t, d, u, &no, sizeof no, 0); /* the sender fails too, if it reads */
            if (c.total != read_total(t, d))
                return size_error(t, 1, c.total, read_total(t, d));
            return glex_error(GLEX_EINVAL, "job %u: node %u sent a pulse of %u bytes where this "
                              "receive reads its buffer (swap_remote_addr on one side only)",
                              t->job, d->recv_id, c.len);
        }
        t->r_src = c.src + read_at(d);
        t->r_told = 1;
        work = 1;
    }
    if (t->r_pulled < t->bytes) { /* one pulse a pass */
        rc = d->reduce_flag ? read_combine(f, t, d, u)
                            : read_pulse(f, t, d, u, t->r_pulled, DIRECT_PULSE_MAX);
        return rc ? rc : 1;
    }
    release_area(f, t);
    if ((rc = read_credit(f, t, d, u)) <= 0)
        return rc ? rc : work;
    t->recv_done = 1;
    return 1;
}

/* ---------------------------------------------------------------- multicast
 * A multicast send injects each packet once; the routers copy it down the
 * group's tree (glex_emu_net.c counts the links).  Each member's copies land
 * in its hash buffer in order; a member whose buffer is full holds its own
 * branch only (asynchronous replication: the packet waits in the router's
 * input buffer, here the sender's per-member position).  Flow control: a
 * member has at most a window of packets unconsumed and acknowledges every
 * half window with a credit packet to the sender. */

/* packets a member may hold unconsumed: a sixteenth of the usable hash
 * buffer, 2..64 */
static uint32_t mc_window(const glex_fabric_t *f)
{
    uint32_t w = glex_params_table_usable(&f->p) / 16u;
    w = w < 2 ? 2 : w > 64 ? 64 : w;
    return w & ~1u;
}

/* credits a member sends for a stream of frags packets */
static uint32_t mc_credits(const glex_fabric_t *f, uint32_t frags)
{
    return (frags - 1) / (mc_window(f) / 2);
}

static uint32_t mc_frags(const glex_fabric_t *f, uint64_t bytes)
{
    return bytes ? (uint32_t)((bytes + f->p.inline_max - 1) / f->p.inline_max) : 1u;
}

/* bytes of packet j of a multicast of bytes */
static uint32_t mc_len(const glex_fabric_t *f, uint64_t bytes, uint32_t j)
{
    uint64_t off = (uint64_t)j * f->p.inline_max;
    return (uint32_t)(bytes - off < f->p.inline_max ? bytes - off : f->p.inline_max);
}

static int mcast_start(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    if (t->mc_cap < f->nnodes) {
        glex_mc_state_t *m = realloc(t->mc, sizeof *m * f->nnodes);
        if (!m)
            return glex_error(GLEX_ENOMEM, "multicast: out of memory for %u members", f->nnodes);
        t->mc = m;
        t->mc_cap = f->nnodes;
    }
    t->mc_frags = mc_frags(f, t->sbytes);
    if (f->p.vtime && t->mc_vt_cap < t->mc_frags) {
        uint64_t *v = realloc(t->mc_vt, sizeof *v * t->mc_frags);
        if (!v)
            return glex_error(GLEX_ENOMEM, "multicast: out of memory for %u packets",
                              t->mc_frags);
        t->mc_vt = v;
        t->mc_vt_cap = t->mc_frags;
    }
    glex_mc_dest_t *dst = (glex_mc_dest_t *)(void *)t->mc; /* filled in place, then spread */
    uint32_t n = 0;
    int rc = glex_mcast_flood(f, d->remote_addr, f->node, t->mc_frags,
                              t->sbytes + (uint64_t)t->mc_frags * sizeof(glex_key_t), dst,
                              f->nnodes, &n);
    if (rc)
        return rc;
    for (uint32_t i = n; i-- > 0;) {
        glex_mc_dest_t x = dst[i];
        glex_mc_state_t *m = &t->mc[i];
        memset(m, 0, sizeof *m);
        m->d = x;
        if (f->p.vtime) {
            uint64_t tree = x.links * glex_vt(f, GLEX_VT_LINK) +
                            x.routers * glex_vt(f, GLEX_VT_ROUTER);
            uint64_t uni = glex_vt_route_ps(f, f->node, x.node);
            m->extra_ps = tree > uni ? tree - uni : 0;
            m->cvt = t->vs;
        }
    }
    t->mc_n = n;
    t->mc_inited = 1;
    return GLEX_OK;
}

static int mcast_send(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    int rc, work = 0;
    if (!t->mc_inited && (rc = mcast_start(f, t, d)))
        return rc;
    uint32_t me = f->node, myvp = t->vp->index, dunit = glex_job_unit(f, t->job);
    uint32_t w = mc_window(f), cap = f->p.inline_max, need = mc_credits(f, t->mc_frags);
    const uint8_t *src = (const uint8_t *)(uintptr_t)d->local_addr;
    uint32_t finished = 0;
    for (uint32_t i = 0; i < t->mc_n; i++) {
        glex_mc_state_t *m = &t->mc[i];
        while (m->credits < need) { /* its acknowledgements */
            uint32_t upto;
            uint64_t cvt;
            glex_key_t k = glex_make_key(t->tag, m->d.node, d->dest_vp, d->seq_id, myvp,
                                         GLEX_PKT_CREDIT, m->credits);
            int got = glex_table_take_vt(f, me, t->unit, k, &upto, sizeof upto, &cvt);
            if (got < 0)
                break;
            if (got != (int)sizeof upto || upto > t->mc_frags || upto < m->acked)
                return glex_error(GLEX_EINVAL,
                                  "job %u: multicast credit from node %u acknowledges %u of %u "
                                  "packets (had %u)", t->job, m->d.node, upto, t->mc_frags,
                                  m->acked);
            m->acked = upto;
            m->credits++;
            if (f->p.vtime)
                m->cvt = vmax(m->cvt, vt_arrival(f, m->d.node, cvt) + glex_vt(f, GLEX_VT_NIC_RX));
            work = 1;
        }
        int sent = 0;
        while (m->next < t->mc_frags && m->next < m->acked + w) {
            uint32_t j = m->next, len = mc_len(f, t->sbytes, j);
            uint64_t off = (uint64_t)j * cap;
            uint64_t vt = 0;
            if (f->p.vtime) {
                if (j == t->mc_injected) /* the NIC injects it once, when a branch takes it */
                    t->mc_vt[j] = t->vs = vt_inject(f, t->vs, m->cvt, len);
                vt = t->mc_vt[j] + m->extra_ps;
            }
            glex_key_t k = glex_make_key(t->tag, me, myvp, d->seq_id, d->dest_vp, GLEX_PKT_DATA, j);
            rc = send_pkt(f, m->d.node, dunit, k, src + off, len, vt);
            if (rc == GLEX_EAGAIN) { /* this branch waits; the others go on */
                park(t, u, 1);
                break;
            }
            if (rc)
                return rc;
            if (j == t->mc_injected) {
                t->mc_injected++;
                count_send(t, len);
            }
            m->next++;
            sent = work = 1;
        }
        if (sent)
            glex_ring(f, m->d.node);
        if (m->next == t->mc_frags && m->credits == need)
            finished++;
        else if (!sent)
            park(t, u, 1);
    }
    if (finished == t->mc_n) {
        if (!t->mc_n) /* nobody else in the group: the data went nowhere */
            count_send(t, t->sbytes);
        t->send_done = 1;
        return 1;
    }
    return work;
}

static int mcast_recv(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, glex_unit_shm_t *u)
{
    uint32_t me = f->node, myvp = t->vp->index, cap = f->p.inline_max;
    uint32_t frags = mc_frags(f, t->bytes), half = mc_window(f) / 2;
    uint8_t *dst = (uint8_t *)(uintptr_t)d->recv_addr;
    int work = 0, rc;
    for (;;) {
        /* a credit owed (every half window, not after the last packet) */
        uint32_t owed = t->r_frag / half;
        if (owed > mc_credits(f, frags))
            owed = mc_credits(f, frags);
        while (t->r_grant_frag < owed) {
            uint32_t upto = (t->r_grant_frag + 1) * half;
            if ((rc = grant_credit(f, t, d, u, &upto, sizeof upto, f->p.vtime ? t->vr : 0)) <= 0)
                return rc ? rc : work;
            work = 1;
        }
        if (t->r_frag == frags)
            break;
        uint8_t buf[GLEX_INLINE_CAP];
        uint64_t off = (uint64_t)t->r_frag * cap, pvt;
        uint32_t want = mc_len(f, t->bytes, t->r_frag);
        glex_key_t k = glex_make_key(t->tag, d->recv_id, d->recv_vp, d->cp_count, myvp,
                                     GLEX_PKT_DATA, t->r_frag);
        int len = glex_table_take_vt(f, me, t->unit, k, buf, sizeof buf, &pvt);
        if (len < 0) {
            park(t, u, 0);
            return work;
        }
        if ((uint32_t)len != want)
            return glex_error(len > (int)want ? GLEX_ETRUNC : GLEX_ESIZE,
                              "job %u: multicast packet %u from node %u has %d bytes, this "
                              "receive of %llu bytes expects %u (counts differ between ranks)",
                              t->job, t->r_frag, d->recv_id, len, (unsigned long long)t->bytes,
                              want);
        vt_took(f, t, d->recv_id, pvt, 0, t->r_frag == 0);
        if ((rc = apply(t, d, dst + off, dst + off, buf, (uint64_t)len)))
            return rc;
        count_recv(t, (uint64_t)len);
        t->r_frag++;
        work = 1;
    }
    t->recv_done = 1;
    return 1;
}

static int step_coll(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    glex_unit_shm_t *u = glex_unit_shm(f, f->node, t->unit);
    if (!t->started) {
        t->started = 1;
        t->started_ns = t->now;
        t->bytes = d->count * glex_type_size((glex_type_t)d->type);
        t->sbytes = d->send_count * glex_type_size((glex_type_t)d->type);
        t->send_done = !d->cp;
        t->recv_done = !d->branch;
        t->vd = t->vs = t->vr = t->vt + (f->p.vtime ? glex_vt(f, GLEX_VT_NIC_DESC) : 0);
        if (d->swap_local_data && ranges_overlap(d->operand_addr, t->bytes, d->recv_addr, t->bytes))
            return glex_error(GLEX_EINVAL,
                              "job %u: operand_addr %#llx+%llu overlaps recv_addr %#llx: allowed "
                              "disjoint ranges",
                              t->job, (unsigned long long)d->operand_addr,
                              (unsigned long long)t->bytes, (unsigned long long)d->recv_addr);
    }
    if (d->swap_local_vp) {
        void *dst = (void *)(uintptr_t)d->recv_addr;
        int rc = apply(t, d, dst, dst, (const void *)(uintptr_t)d->local_addr, t->bytes);
        t->vt = t->vr;
        return rc ? rc : 2; /* 2: descriptor done */
    }
    int work = 0, w;
    do {
        w = 0;
        if (!t->send_done) {
            int rc = d->mcast              ? mcast_send(f, t, d, u)
                     : d->swap_remote_addr ? read_send(f, t, d, u)
                                           : coll_send(f, t, d, u);
            if (rc < 0)
                return rc;
            w |= rc;
        }
        if (!t->recv_done) {
            int rc = d->mcast              ? mcast_recv(f, t, d, u)
                     : d->swap_remote_addr ? read_recv(f, t, d, u)
                                           : coll_recv(f, t, d, u);
            if (rc < 0)
                return rc;
            w |= rc;
        }
        work |= w;
        if (w)
            t->parked = 0;
    } while (w && !(t->send_done && t->recv_done));
    if (t->send_done && t->recv_done) {
        t->vt = vmax(t->vs, t->vr);
        return 2;
    }
    return work;
}

/* ------------------------------------------------------ point to point */

/* how far ahead a sender in a stream asks for receive-queue lines (rq_claim):
 * the next 4 messages of the size just claimed, at most 16 slots (80 lines;
 * 2 ranks, osu_bw 300 windows, in turn: better than 2 messages ahead, and
 * than 40 slots at 256 B - 2 KiB) */
#define RQ_AHEAD_MSGS 4u
#define RQ_AHEAD_SLOTS 16u

/* the next n slots of node's VP vp's receive queue, claimed (*pos the
 * first's position), or NULL when the queue is not open or lacks room;
 * *reply (set with a slot): 1 when this process's hosts took a
 * receive-queue entry since its last claim (a reply in a ping-pong: its
 * receiver is polling for it), 0 in a stream */
static glex_rq_slot_t *rq_claim(glex_fabric_t *f, uint32_t node, uint32_t vp, uint32_t n,
                                uint32_t *posp, int *reply)
{
    glex_vp_shm_t *dv = glex_vp_shm(f, node, vp);
    if (!atomic_load_explicit(&dv->rq_ready, memory_order_acquire))
        return NULL;
    uint32_t depth = f->p.cq_depth;
    /* the head last seen here: never ahead of the real one, which only
     * grows (one from an earlier opening of the VP looks full: read anew) */
    _Atomic uint32_t *seen = &f->rq_head_seen[(size_t)node * f->p.vps_per_node + vp];
    uint32_t pos = atomic_load_explicit(&dv->rq_tail, memory_order_relaxed);
    for (;;) { /* claim the slots (glex_rq_slot_t) */
        if (pos + n - atomic_load_explicit(seen, memory_order_acquire) > depth) {
            uint32_t head = atomic_load_explicit(&dv->rq_head, memory_order_acquire);
            atomic_store_explicit(seen, head, memory_order_release);
            if (pos + n - head > depth)
                return NULL; /* full: the host has not taken enough entries back */
        }
        /* pos + n - head <= depth stays true for as long as the tail is pos */
        if (atomic_compare_exchange_weak_explicit(&dv->rq_tail, &pos, pos + n,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *posp = pos;
            glex_rq_slot_t *rq = glex_rq_ring(f, node, vp);
            /* In a stream of messages (no entry taken by this process's
             * hosts since its last claim: OSU bw's window, not a ping-pong)
             * the slots of the next RQ_AHEAD_MSGS messages of this size (at
             * most RQ_AHEAD_SLOTS slots, never one the host may not have
             * read yet) are asked for now, every line, at every claim: the
             * receiver's copies go while this message is written, and the
             * next ones find their lines here rather than waiting for each
             * (a line the receiver's reads took back meanwhile is asked for
             * again).  2 ranks, 3 runs in turn against the next slot's
             * first two lines alone (which had taken osu_bw 8 B from 32-37
             * to 62-74 MB/s), MB/s: osu_bw 8 B 61-64 -> 82-94, 256 B
             * 812-889 -> 2383-2548, 1 KiB 1530-1577 -> 2596-2691; osu_bibw
             * 1 KiB 3359-3534 -> 5798-6245.  Between a reply and the next
             * request it costs a one-way trip 0.13 us (the receiver polls
             * that line next). */
            uint32_t took = atomic_load_explicit(&f->rq_took, memory_order_relaxed);
            *reply = took != atomic_load_explicit(&f->rq_took_claimed, memory_order_relaxed);
            if (!*reply) {
                uint32_t ahead = n * RQ_AHEAD_MSGS;
                uint32_t used = pos + n - atomic_load_explicit(seen, memory_order_relaxed);
                uint32_t room = used < depth ? depth - used : 0;
                if (ahead > RQ_AHEAD_SLOTS)
                    ahead = RQ_AHEAD_SLOTS;
                if (ahead > room)
                    ahead = room;
                for (uint32_t k = 0; k < ahead; k++) {
                    const char *at = (const char *)&rq[(pos + n + k) % depth];
                    for (size_t off = 0; off < sizeof(glex_rq_slot_t); off += 64)
                        glex_prefetch_write(at + off);
                }
            } else {
                atomic_store_explicit(&f->rq_took_claimed, took, memory_order_relaxed);
            }
            return rq;
        }
    }
}

/* where a gather of pieces has got to */
typedef struct {
    const glex_piece_t *p;
    uint32_t i;
    size_t off;
} gather_t;

/* the next len bytes of the gather to to */
static void gather_copy(gather_t *g, uint8_t *to, size_t len)
{
    while (len) {
        size_t k = g->p[g->i].len - g->off;
        if (k > len)
            k = len;
        if (k)
            memcpy(to, (const uint8_t *)g->p[g->i].base + g->off, k);
        to += k;
        len -= k;
        g->off += k;
        if (g->off == g->p[g->i].len) {
            g->i++;
            g->off = 0;
        }
    }
}

/* Write the claimed slots from pos on (glex_mp_slots(len) of them) and hand
 * the entry to the host: the header and the first GLEX_MP_CAP bytes in the
 * first slot, GLEX_MP_SLOT_MORE in each further one after its sequence
 * word, which stays as it was (only a first slot's is looked at: the host
 * steps over the others).  The first slot's sequence word is written last.
 * A reply's lines are then moved to the shared cache (cldemote): its
 * receiver, polling the first, finds the others there instead of asking
 * this core for each (2 ranks, OSU latency 64-256 B 0.45-0.59 -> 0.40-0.54
 * us, 7 runs in turn).  Not in a stream, where the receiver takes them
 * later and the demotions cost bandwidth (osu_bw 256 B 1.54 -> 0.96 GB/s). */
static void rq_fill(glex_rq_slot_t *rq, uint32_t depth, uint32_t pos, uint32_t src,
                    uint32_t svp, const glex_piece_t *p, uint32_t n, uint32_t len, uint64_t vt,
                    int reply)
{
    glex_rq_slot_t *slot = &rq[pos % depth];
    glex_rqe_t *e = &slot->e;
    e->src_id = src;
    e->src_vp = (uint16_t)svp;
    e->len = (uint16_t)len;
    e->vt = vt;
    uint32_t slots = glex_mp_slots(len);
    if (slots == 1) {
        glex_pieces_copy(e->data, p, n);
    } else {
        gather_t g = { p, 0, 0 };
        gather_copy(&g, e->data, GLEX_MP_CAP);
        for (uint32_t k = 1; k < slots; k++)
            gather_copy(&g, glex_rq_slot_more(&rq[(pos + k) % depth]), glex_mp_slot_bytes(len, k));
    }
    atomic_store_explicit(&slot->seq, pos + 1, memory_order_release);
    for (uint32_t k = 0; reply && k < slots; k++) {
        const char *at = (const char *)&rq[(pos + k) % depth];
        /* its lines up to its payload's end (a further slot's payload
         * follows its sequence word) */
        size_t head = k ? sizeof(uint64_t) : offsetof(glex_rq_slot_t, e) + offsetof(glex_rqe_t, data);
        size_t end = head + glex_mp_slot_bytes(len, k);
        for (size_t off = 0; off < end; off += 64)
            glex_line_demote(at + off);
    }
}

int glex_rq_deliver_pieces(glex_fabric_t *f, uint32_t node, uint32_t vp, uint32_t src,
                           uint32_t svp, const glex_piece_t *p, uint32_t n, uint32_t len,
                           uint64_t vt)
{
    uint32_t pos;
    int reply;
    glex_rq_slot_t *rq = rq_claim(f, node, vp, glex_mp_slots(len), &pos, &reply);
    if (!rq)
        return GLEX_EAGAIN;
    rq_fill(rq, f->p.cq_depth, pos, src, svp, p, n, len, vt, reply);
    return GLEX_OK;
}

int glex_rq_deliver(glex_fabric_t *f, uint32_t node, uint32_t vp, uint32_t src, uint32_t svp,
                    const void *data, uint32_t len, uint64_t vt)
{
    glex_piece_t one = { data, len };
    return glex_rq_deliver_pieces(f, node, vp, src, svp, &one, 1, len, vt);
}

static int step_mp(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    uint64_t sent = 0, vt = 0;
    if (f->p.vtime) { /* decoded, injected, routed, taken, written to the host */
        sent = vt_inject(f, t->vt + glex_vt(f, GLEX_VT_NIC_DESC), 0, d->inline_len);
        vt = sent + glex_vt_route_ps(f, f->node, d->dest_id) + glex_vt(f, GLEX_VT_NIC_RX) +
             glex_vt(f, GLEX_VT_IO);
    }
    int rc = glex_remote(f, d->dest_id)
                 ? glex_wire_mp(f, d->dest_id, d->dest_vp, t->vp->index, d->data, d->inline_len,
                                vt)
                 : glex_rq_deliver(f, d->dest_id, d->dest_vp, f->node, t->vp->index, d->data,
                                   d->inline_len, vt);
    if (rc == GLEX_EAGAIN) { /* not open yet, or full: wait, up to GLEX_TIMEOUT */
        park(t, glex_unit_shm(f, f->node, t->unit), 1);
        return 0;
    }
    if (rc)
        return rc;
    if (f->p.vtime)
        t->vt = sent;
    count_send(t, d->inline_len); /* received: counted by the host that takes it */
    if (!d->quiet) /* another host's: rung by its own process (glex_emu_wire.c) */
        ring_rq(f, d->dest_id);
    return 2;
}

/* the next CQE of vp's CQ to fill (*tail its position), or NULL when the
 * CQ is full; cq_publish hands it to the host */
static glex_cqe_t *cq_next(const glex_fabric_t *f, glex_vp_t *vp, uint32_t *tail)
{
    glex_vp_shm_t *s = vp->shm;
    *tail = atomic_load_explicit(&s->cq_tail, memory_order_relaxed);
    if (*tail - atomic_load_explicit(&s->cq_head, memory_order_acquire) >= f->p.cq_depth)
        return NULL;
    return &vp->cq[*tail % f->p.cq_depth];
}

static void cq_publish(glex_vp_t *vp, uint32_t tail)
{
    atomic_store_explicit(&vp->shm->cq_tail, tail + 1, memory_order_release);
    /* the next CQE's line, as the DQ's next slot (glex_vp_post_list) */
    glex_prefetch_write(&vp->cq[(tail + 1) % vp->f->p.cq_depth]);
}

/* Nothing of vp's is queued or running: its DQ is empty (every task fetched
 * from it counted in vp_tasks before dq_head moved) and no task of its is in
 * the engine (vp_tasks drops once a task has done all it does).  Only vp's
 * own host posts to it, so this stays true while that host posts. */
static int vp_idle(glex_engine_t *e, const glex_vp_t *vp)
{
    return atomic_load_explicit(&vp->shm->dq_head, memory_order_acquire) ==
               atomic_load_explicit(&vp->shm->dq_tail, memory_order_relaxed) &&
           !atomic_load_explicit(&e->vp_tasks[vp->index], memory_order_acquire);
}

/* the counts of a task of one descriptor executed at its post */
static void count_now(glex_fabric_t *f, glex_vp_shm_t *s, uint32_t job, uint64_t bytes,
                      uint32_t packets)
{
    glex_counter_add(&s->tasks_now[glex_job_unit(f, job)], 1); /* no locked add: see the VP's line */
    glex_counter_add(&s->desc_executed, 1);
    glex_counter_add(&s->packets_sent, packets);
    glex_counter_add(&s->bytes_sent, bytes);
    glex_counter_add(&s->tasks_completed, 1);
}

int glex_engine_post_mp_now(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                            const glex_piece_t *p, uint32_t n, uint32_t len, int quiet)
{
    glex_fabric_t *f = vp->f;
    /* no lock: an MP touches nothing of the engine's but the destination's
     * receive queue (claimed by CAS) and this VP's counters, which no task
     * writes while the VP is idle */
    if (f->p.vtime || glex_remote(f, dest_id) || !vp_idle(f->eng, vp) ||
        glex_rq_deliver_pieces(f, dest_id, dest_vp, f->node, vp->index, p, n, len, 0) != GLEX_OK)
        return 0;
    glex_counter_add(&vp->shm->desc_posted, 1);
    count_now(f, vp->shm, 0, len, glex_mp_slots(len)); /* a packet a slot */
    if (!quiet)
        ring_rq(f, dest_id);
    return 1;
}

/* the CQE of an MP executed at its post, as write_cqe writes a task's of
 * one descriptor */
static void cqe_one(glex_vp_t *vp, glex_cqe_t *e, uint32_t tail, uint64_t cookie, uint32_t job)
{
    memset(e, 0, sizeof *e);
    e->cookie = cookie;
    e->job_id = (uint16_t)job;
    e->vp = (uint16_t)vp->index;
    e->ndesc = 1;
    e->sent = 1;
    cq_publish(vp, tail);
}

/* the memory an RDMA put of len bytes to addr of node writes: this
 * process's own, or a region of the peer's mapped here; NULL when only
 * cross-memory attach reaches it (under the engine's mutex: the mappings
 * are the engine's) */
static void *put_target(glex_fabric_t *f, uint32_t node, uint64_t addr, uint64_t len)
{
    if (node == f->node)
        return (void *)(uintptr_t)addr;
    return glex_dma_window(f, node, addr, len);
}

/* the put itself, into put_target's memory (this process's own may overlap) */
static void put_copy(const glex_fabric_t *f, uint32_t node, void *to, const void *from,
                     uint64_t len)
{
    if (!len)
        return;
    if (node == f->node)
        glex_move(to, from, len);
    else
        glex_copy(to, from, len);
}

int glex_engine_post_put_mp_now(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                                const void *src, uint64_t remote, uint64_t len,
                                const glex_piece_t *p, uint32_t n, uint32_t plen, uint64_t cookie)
{
    glex_fabric_t *f = vp->f;
    glex_engine_t *e = f->eng;
    if (f->p.vtime || glex_remote(f, dest_id) || engine_trylock(&e->mu))
        return 0;
    /* all or nothing: the put's target, a CQE and a receive-queue slot found
     * before either descriptor runs */
    uint32_t tail = 0, pos = 0;
    int reply = 0;
    glex_cqe_t *c = NULL;
    glex_rq_slot_t *slot = NULL;
    void *to = NULL;
    if (vp_idle(e, vp) && (!len || (to = put_target(f, dest_id, remote, len))) &&
        (c = cq_next(f, vp, &tail)) &&
        (slot = rq_claim(f, dest_id, dest_vp, 1, &pos, &reply))) {
        put_copy(f, dest_id, to, src, len);
        rq_fill(slot, f->p.cq_depth, pos, f->node, vp->index, p, n, plen, 0, reply);
        cqe_one(vp, c, tail, cookie, 0);
        glex_counter_add(&vp->shm->desc_posted, 2);
        count_now(f, vp->shm, 0, len, len != 0); /* as step_rdma: no bytes, no packet */
        count_now(f, vp->shm, 0, plen, 1);
    }
    engine_unlock(&e->mu);
    if (!slot)
        return 0;
    ring_rq(f, dest_id);
    ring_own(f); /* the CQE */
    return 1;
}

int glex_dma_prefault(glex_fabric_t *f, uint32_t node, uint64_t addr, uint64_t len)
{
    if (node == f->node || glex_remote(f, node) || !len)
        return 0;
    engine_lock(&f->eng->mu); /* the mappings are the engine's */
    void *w = put_target(f, node, addr, len);
    if (w)
        glex_touch_pages(w, len);
    engine_unlock(&f->eng->mu);
    return w != NULL;
}

int glex_engine_atomic_cas(glex_vp_t *vp, uint32_t dest_id, uint64_t addr, uint64_t expect,
                           uint64_t desire, uint64_t *old)
{
    glex_fabric_t *f = vp->f;
    engine_lock(&f->eng->mu); /* the mappings are the engine's */
    _Atomic uint64_t *w = put_target(f, dest_id, addr, sizeof *w);
    if (w) {
        uint64_t was = expect;
        atomic_compare_exchange_strong_explicit(w, &was, desire, memory_order_acq_rel,
                                                memory_order_acquire);
        *old = was;
        glex_counter_add(&vp->shm->desc_posted, 1);
        count_now(f, vp->shm, 0, sizeof *w, 1);
    }
    engine_unlock(&f->eng->mu);
    return w != NULL;
}

/* a list's next up to SGL_BATCH pieces from piece *i, *off bytes into it */
#define SGL_BATCH 1024u
static uint32_t sgl_batch(const struct iovec *v, uint32_t n, uint32_t i, size_t off,
                          struct iovec *out)
{
    uint32_t k = 0;
    for (; i < n && k < SGL_BATCH; i++, off = 0)
        if (v[i].iov_len > off)
            out[k++] = (struct iovec){ (uint8_t *)v[i].iov_base + off, v[i].iov_len - off };
    return k;
}

/* a list's cursor moved on by n bytes */
static void sgl_advance(const struct iovec *v, uint32_t nv, uint32_t *i, size_t *off, size_t n)
{
    while (*i < nv && n) {
        size_t left = v[*i].iov_len - *off;
        if (n < left) {
            *off += n;
            return;
        }
        n -= left;
        ++*i, *off = 0;
    }
    while (*i < nv && v[*i].iov_len == *off) /* empty pieces */
        ++*i, *off = 0;
}

/* the process of node, when it is attached and alive (cross-memory attach); else 0 */
static pid_t attached_pid(glex_fabric_t *f, uint32_t node)
{
    pid_t pid = atomic_load(&glex_node_shm(f, node)->pid);
    return pid > 0 && atomic_load(&glex_node_shm(f, node)->state) == GLEX_NODE_ALIVE ? pid : 0;
}

int glex_engine_get_sgl(glex_vp_t *vp, uint32_t dest_id, const struct iovec *r, uint32_t nr,
                        uint64_t skip, const struct iovec *l, uint32_t nl, uint64_t *moved)
{
    glex_fabric_t *f = vp->f;
    pid_t pid = attached_pid(f, dest_id);
    if (!pid)
        return glex_error(GLEX_ENOENT, "scatter-gather get from node %u: node is not attached",
                          dest_id);
    struct iovec rb[SGL_BATCH], lb[SGL_BATCH];
    uint32_t ri = 0, li = 0;
    size_t roff = 0, loff = 0;
    uint64_t total = 0;
    sgl_advance(r, nr, &ri, &roff, (size_t)skip);
    for (;;) {
        uint32_t rk = sgl_batch(r, nr, ri, roff, rb), lk = sgl_batch(l, nl, li, loff, lb);
        if (!rk || !lk)
            break;
        ssize_t n = process_vm_readv(pid, lb, lk, rb, rk, 0);
        if (n <= 0) {
            *moved = total;
            return glex_error(GLEX_ESYS, "scatter-gather get from node %u (pid %d) after %llu "
                              "bytes: %s", dest_id, (int)pid, (unsigned long long)total,
                              n < 0 ? strerror(errno) : "nothing read");
        }
        total += (uint64_t)n;
        sgl_advance(r, nr, &ri, &roff, (size_t)n);
        sgl_advance(l, nl, &li, &loff, (size_t)n);
    }
    *moved = total;
    engine_lock(&f->eng->mu); /* the VP's counters: a task of it may be running */
    glex_counter_add(&vp->shm->desc_posted, 1);
    count_now(f, vp->shm, 0, total, 1);
    engine_unlock(&f->eng->mu);
    return GLEX_OK;
}

/* One descriptor of glex_engine_post_now: 1 when executed, 0 when it must
 * queue (as a task would wait: the destination's receive queue or this
 * VP's CQ full, or memory only cross-memory attach reaches). */
static int post_now_one(glex_fabric_t *f, glex_vp_t *vp, const glex_desc_t *d)
{
    glex_vp_shm_t *s = vp->shm;
    if (!d->ch || !d->ct || glex_remote(f, d->dest_id))
        return 0;
    if (d->kind == GLEX_DESC_MP) {
        uint32_t tail = 0;
        glex_cqe_t *e = d->coll_end_flag ? cq_next(f, vp, &tail) : NULL;
        if ((d->coll_end_flag && !e) ||
            glex_rq_deliver(f, d->dest_id, d->dest_vp, f->node, vp->index, d->data,
                            d->inline_len, 0) != GLEX_OK)
            return 0;
        if (e)
            cqe_one(vp, e, tail, d->cookie, d->job_id);
    } else if (d->kind == GLEX_DESC_RDMA && !d->swap_remote_addr && !d->coll_end_flag) {
        /* this process's memory, or a registered region of the peer: DMA in place */
        void *to = d->length ? put_target(f, d->dest_id, d->remote_addr, d->length) : NULL;
        if (d->length && !to)
            return 0;
        put_copy(f, d->dest_id, to, (const void *)(uintptr_t)d->local_addr, d->length);
    } else {
        return 0;
    }
    count_now(f, s, d->job_id, d->kind == GLEX_DESC_MP ? d->inline_len : d->length,
              d->kind == GLEX_DESC_MP || d->length);
    return 1;
}

/* Descriptors posted while their VP has nothing queued or running, each a
 * sequence of its own (an MP, an RDMA put to this host): the NIC executes
 * them as the doorbell is written (descriptors carried with the doorbell,
 * as a programmed-I/O send is), without a trip through the DQ and a task;
 * counted as any descriptor and task.  Returns how many of d[0..n) it
 * executed, in order: the caller queues the rest.  None when another
 * thread runs the engine or the VP has work ahead of them. */
uint32_t glex_engine_post_now(glex_vp_t *vp, const glex_desc_t *d, uint32_t n)
{
    glex_fabric_t *f = vp->f;
    glex_engine_t *e = f->eng;
    glex_vp_shm_t *s = vp->shm;
    uint32_t done = 0;
    int cqe = 0;
    if (f->p.vtime || engine_trylock(&e->mu))
        return 0;
    if (vp_idle(e, vp)) {
        while (done < n && post_now_one(f, vp, &d[done]))
            cqe |= d[done++].coll_end_flag;
        glex_counter_add(&s->desc_posted, done);
    }
    engine_unlock(&e->mu);
    /* every MP's destination rung once all ran, a run of them to one
     * destination once */
    uint32_t rung = UINT32_MAX;
    for (uint32_t i = done; i-- > 0;)
        if (d[i].kind == GLEX_DESC_MP && !d[i].quiet && d[i].dest_id != rung)
            ring_rq(f, rung = d[i].dest_id);
    if (cqe)
        ring_own(f);
    return done;
}

/* One cross-memory copy (process_vm_readv for a get, writev for a put) of
 * up to len bytes; the count done.  The kernel copies with rep movsb too,
 * 5x slower when the destination lies 1-63 bytes past the source modulo 4
 * KiB (64 KiB: 83600 cycles against 16800 here; glex_emu_copy.c): such a
 * copy goes through a buffer at the remote side's offset in its page, the
 * kernel's part at distance 0 and ours by glex_copy, up to BOUNCE bytes at
 * a time. */
#define BOUNCE (64u << 10)
static ssize_t cma_step(glex_engine_t *e, pid_t pid, int get, uint8_t *local, uint8_t *remote,
                        size_t len)
{
    uint8_t *via = local;
    if (len >= 16384 &&
        glex_copy_slow_distance(get ? local : remote, get ? remote : local) &&
        (e->bounce || (e->bounce = aligned_alloc(4096, BOUNCE + 4096)))) {
        via = e->bounce + ((uintptr_t)remote & 4095u);
        len = len < BOUNCE ? len : BOUNCE;
        if (!get)
            glex_copy(via, local, len);
    }
    struct iovec l = { via, len }, r = { remote, len };
    ssize_t n = get ? process_vm_readv(pid, &l, 1, &r, 1, 0)
                    : process_vm_writev(pid, &l, 1, &r, 1, 0);
    if (get && via != local && n > 0)
        glex_copy(local, via, (size_t)n);
    return n;
}

static int step_rdma(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d)
{
    if (!d->length)
        return 2;
    void *local = (void *)(uintptr_t)d->local_addr, *remote = (void *)(uintptr_t)d->remote_addr;
    if (d->dest_id == f->node) {
        if (d->swap_remote_addr)
            glex_move(local, remote, d->length);
        else
            glex_move(remote, local, d->length);
        count_send(t, d->length);
        return 2;
    }
    if (glex_remote(f, d->dest_id)) { /* over the fabric: a get waits for its data */
        if (d->swap_remote_addr && !t->get_busy) {
            int tk = glex_wire_get(f, d->dest_id, local, d->remote_addr, d->length);
            if (tk == GLEX_EAGAIN) {
                park(t, glex_unit_shm(f, f->node, t->unit), 1);
                return 0;
            }
            if (tk < 0)
                return tk;
            t->get_ticket = tk;
            t->get_busy = 1;
        }
        if (d->swap_remote_addr) {
            int st = glex_wire_get_done(f, t->get_ticket);
            if (st == 0) {
                park(t, glex_unit_shm(f, f->node, t->unit), 1);
                return 0;
            }
            t->get_busy = 0;
            if (st < 0)
                return st;
        } else {
            int rc = glex_wire_put(f, d->dest_id, d->remote_addr, local, d->length);
            if (rc)
                return rc;
        }
        goto done;
    }
    /* registered memory of the peer (glex_region_publish): DMA in place */
    void *win = glex_dma_window(f, d->dest_id, d->remote_addr, d->length);
    if (win) {
        if (d->swap_remote_addr)
            glex_copy(local, win, d->length);
        else
            glex_copy(win, local, d->length);
        goto done;
    }
    pid_t pid = attached_pid(f, d->dest_id);
    if (!pid)
        return glex_error(GLEX_ENOENT, "RDMA to node %u: node is not attached", d->dest_id);
    uint64_t done = 0;
    while (done < d->length) {
        ssize_t n = cma_step(f->eng, pid, d->swap_remote_addr, (uint8_t *)local + done,
                             (uint8_t *)remote + done, d->length - done);
        if (n <= 0)
            return glex_error(GLEX_ESYS, "RDMA %s node %u (pid %d) %llu bytes: %s",
                              d->swap_remote_addr ? "get from" : "put to", d->dest_id, (int)pid,
                              (unsigned long long)d->length, n < 0 ? strerror(errno) : "short");
        done += (uint64_t)n;
    }
done:
    count_send(t, d->length);
    /* decoded, the bytes over the link, one way for a put, there and back
     * for a get */
    if (f->p.vtime)
        t->vt += glex_vt(f, GLEX_VT_NIC_DESC) + glex_vt(f, GLEX_VT_NIC_TX) +
                 glex_vt_wire_ps(f, d->length) +
                 glex_vt_route_ps(f, f->node, d->dest_id) * (d->swap_remote_addr ? 2u : 1u);
    return 2;
}

/* ---------------------------------------------------------- task driver */

static int write_cqe(glex_fabric_t *f, glex_task_t *t)
{
    uint32_t tail;
    glex_cqe_t *e = cq_next(f, t->vp, &tail);
    if (!e)
        return 0; /* CQ full: keep the task until the host drains it */
    e->cookie = t->rel ? t->regs.cookie : t->list[t->n - 1].cookie;
    e->status = t->status;
    e->job_id = (uint16_t)t->job;
    e->vp = (uint16_t)t->vp->index;
    e->ndesc = t->cur;
    e->sent = t->n_sent;
    e->received = t->n_recv;
    e->alu_ops = t->n_alu;
    e->alu_elems = t->n_alu_elems;
    e->vt = f->p.vtime ? t->vt + glex_vt(f, GLEX_VT_IO) : 0;
    cq_publish(t->vp, tail);
    return 1;
}

static void fail_task(glex_fabric_t *f, glex_task_t *t, int code)
{
    fprintf(stderr, "glex: node %u vp %u job %u descriptor %u: %s\n", f->node, t->vp->index,
            t->job, t->cur, glex_last_error());
    t->status = code;
    snprintf(t->vp->fail_text, sizeof t->vp->fail_text, "%s", glex_last_error());
    release_area(f, t);
    stage_release(f, t, 1);
    glex_table_purge(f, f->node, t->unit, t->tag, t->vp->index);
    *cp_taken(f, t) = atomic_load(glex_cp_counter(f, f->node, t->job, t->vp->index));
    t->cur = t->n; /* ends the task */
}

/* A task has waited longer than GLEX_TIMEOUT: it fails when the node it
 * waits on died or left, or any node of the job died (the job is broken and
 * would hang otherwise).  A live peer may just be late (load imbalance,
 * oversubscription): the task keeps waiting and says so once. */
static void stalled(glex_fabric_t *f, glex_task_t *t, const glex_desc_t *d, uint64_t now)
{
    uint64_t every = f->p.timeout_ms < 1000 ? f->p.timeout_ms : 1000;
    t->next_check = now + every * 1000000ull;
    int receiving = d->branch && !t->recv_done;
    uint32_t peer = receiving ? d->recv_id : d->dest_id;
    uint32_t pvp = receiving ? d->recv_vp : d->dest_vp;
    if (receiving && d->branch > 1 && d->src_range) { /* the source it waits for now */
        peer = d->recv_id + (t->r_frag < d->branch ? t->r_frag : 0);
    } else if (receiving && d->branch > 1) {
        const glex_src_t *src = &glex_desc_srcs_c(d)[t->r_frag < d->branch ? t->r_frag : 0];
        peer = src->node;
        pvp = src->vp;
    } else if (!receiving && d->kind == GLEX_DESC_COLL && d->fanout > 1) {
        uint32_t i = 0; /* the first destination not reached (that has not read the offer) */
        uint32_t done = d->swap_remote_addr ? t->rd_read : t->fo_sent;
        while (i + 1 < d->fanout && (done >> i & 1u))
            i++;
        peer = glex_desc_srcs_c(d)[i].node;
        pvp = glex_desc_srcs_c(d)[i].vp;
    }
    const char *what = d->kind == GLEX_DESC_MP ? "room in an open receive queue"
                       : receiving             ? "packet"
                                               : "credit";
    char why[160];
    /* a node of another host: probed over the fabric (no /proc to look at) */
    if ((glex_remote(f, peer) && glex_wire_peer_failed(f, peer, why, sizeof why)) ||
        glex_peer_failure(f, peer, why, sizeof why)) {
        glex_error(GLEX_EDEAD, "no %s within GLEX_TIMEOUT=%.3f s (job %u, waiting on node %u vp %u): %s",
                   what, f->p.timeout_ms / 1000.0, t->job, peer, pvp, why);
        fail_task(f, t, GLEX_EDEAD);
    } else if (!t->warned) {
        t->warned = 1;
        fprintf(stderr,
                "glex: node %u vp %u job %u: no %s from node %u vp %u for %.3f s (GLEX_TIMEOUT); "
                "it is alive, still waiting\n",
                f->node, t->vp->index, t->job, what, peer, pvp, (now - t->last_progress) / 1e9);
    }
}

/* an address of a descriptor posted by reference: relative to base register
 * b (GLEX_ADDR_REL) or absolute */
static uint64_t reloc(const glex_post_regs_t *r, uint64_t a)
{
    unsigned b = (unsigned)(a >> 56);
    return b && b < 4 ? r->base[b] + (a & GLEX_ADDR_OFF_MASK) : a;
}

/* The descriptor the task runs now.  One posted by reference is read from
 * the host's list when it starts (as a NIC fetches it by DMA) with this
 * post's JobID, base registers and cookie applied; its inline data is
 * copied only for an MP descriptor. */
static const glex_desc_t *cur_desc(glex_task_t *t)
{
    const glex_desc_t *d = &t->list[t->cur];
    if (!t->rel)
        return d;
    if (!t->started) {
        memcpy(&t->cd, d, glex_desc_used(d));
        t->cd.job_id = t->regs.job_id;
        t->cd.local_addr = reloc(&t->regs, d->local_addr);
        t->cd.recv_addr = reloc(&t->regs, d->recv_addr);
        t->cd.remote_addr = reloc(&t->regs, d->remote_addr);
        t->cd.operand_addr = reloc(&t->regs, d->operand_addr);
        t->cd.cookie = t->regs.cookie;
    }
    return &t->cd;
}

/* run one task as far as it goes: 1 if anything happened, 2 if it is finished */
static int run_task(glex_fabric_t *f, glex_task_t *t, uint64_t now)
{
    int work = 0;
    t->now = now;
    while (t->cur < t->n) {
        const glex_desc_t *d = cur_desc(t);
        int rc;
        switch (d->kind) {
        case GLEX_DESC_COLL: rc = step_coll(f, t, d); break;
        case GLEX_DESC_MP: rc = step_mp(f, t, d); break;
        default: rc = step_rdma(f, t, d); break;
        }
        if (rc < 0) {
            fail_task(f, t, rc);
            work = 1;
            break;
        }
        if (rc)
            t->last_progress = now, work = 1;
        if (rc != 2) {
            if (now - t->last_progress > (uint64_t)f->p.timeout_ms * 1000000ull &&
                now >= t->next_check)
                stalled(f, t, d, now);
            break;
        }
        glex_counter_add(&t->vp->shm->desc_executed, 1);
        t->cur++;
        reset_desc_state(t);
    }
    if (t->cur < t->n)
        return work;
    /* a list posted by reference always ends with a CQE */
    if (t->status || t->rel || t->list[t->n - 1].coll_end_flag) {
        if (!write_cqe(f, t))
            return work;
        ring_own(f);
    }
    glex_counter_add(t->status ? &t->vp->shm->tasks_failed : &t->vp->shm->tasks_completed, 1);
    return 2;
}

/* a count written only under the engine's mutex (read without it): a load
 * and a store, no locked instruction */
static inline void mu_add(_Atomic uint32_t *c, int32_t d, memory_order order)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint32_t)d, order);
}

/* a task from the spare list, or a new one */
static glex_task_t *task_get(glex_engine_t *e)
{
    glex_task_t *t = e->spare;
    if (!t)
        return calloc(1, sizeof *t);
    e->spare = t->next;
    memset(t, 0, offsetof(glex_task_t, own));
    return t;
}

static void task_put(glex_engine_t *e, glex_task_t *t)
{
    t->next = e->spare;
    e->spare = t;
}

static void task_free_all(glex_task_t *t)
{
    while (t) {
        glex_task_t *next = t->next;
        free(t->own);
        free(t->rev);
        free(t->sev);
        free(t->mc);
        free(t->mc_vt);
        free(t);
        t = next;
    }
}

/* move whole sequences from a VP's DQ into tasks: a list posted by
 * reference is not copied; a sequence posted whole is copied once into
 * the task's own array (reused with the task) */
static int fetch(glex_fabric_t *f, glex_engine_t *e, glex_vp_t *vp)
{
    glex_vp_shm_t *s = vp->shm;
    uint32_t head = atomic_load_explicit(&s->dq_head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&s->dq_tail, memory_order_acquire);
    int work = 0;
    while (head != tail) {
        const glex_desc_t *q = &vp->dq[head % f->p.dq_depth];
        uint32_t n = 1;
        glex_task_t *t = task_get(e);
        if (!t)
            break; /* leave it queued; try again later */
        if (q->kind == GLEX_DQ_LIST) {
            t->list = (const glex_desc_t *)(uintptr_t)q->local_addr;
            t->n = (uint32_t)q->count;
            t->rel = 1;
            memcpy(&t->regs, q->data, sizeof t->regs);
            t->job = t->regs.job_id;
        } else {
            while (!vp->dq[(head + n - 1) % f->p.dq_depth].ct)
                n++;
            if (n > t->owncap) {
                glex_desc_t *d = realloc(t->own, sizeof *d * n);
                if (!d) {
                    task_put(e, t);
                    break;
                }
                t->own = d;
                t->owncap = n;
            }
            for (uint32_t i = 0; i < n; i++) { /* the bytes that mean anything */
                const glex_desc_t *qd = &vp->dq[(head + i) % f->p.dq_depth];
                memcpy(&t->own[i], qd, glex_desc_used(qd));
            }
            t->list = t->own;
            t->n = n;
            t->job = t->own[0].job_id;
        }
        t->vp = vp;
        if (f->p.vtime) { /* fetched over PCIe after the host's post; a collective
                           * task also starts its offload unit */
            t->vt = vp->dq_vt[head % f->p.dq_depth] + glex_vt(f, GLEX_VT_IO) +
                    (t->list[0].kind == GLEX_DESC_COLL ? glex_vt(f, GLEX_VT_NIC_TASK) : 0);
            t->host_alu = t->rel && (t->regs.flags & GLEX_POST_HOST_ALU);
        }
        t->tag = t->job | ((atomic_load(&f->hdr->jobs[t->job].gen) +
                            (t->rel ? t->regs.gen_add : 0u)) & 0xffffu) << 8;
        if (t->list[0].kind == GLEX_DESC_COLL) /* its packets are no longer early */
            atomic_store_explicit(&vp->shm->coll_gen[t->job & 0xffu], (uint16_t)(t->tag >> 8),
                                  memory_order_release);
        t->unit = glex_job_unit(f, t->job);
        t->last_progress = glex_coarse_ns();
        atomic_fetch_add_explicit(&glex_unit_shm(f, f->node, t->unit)->tasks_admitted, 1,
                                  memory_order_relaxed);
        if (e->tail)
            e->tail->next = t;
        else
            e->head = t;
        e->tail = t;
        mu_add(&e->ntasks, 1, memory_order_relaxed);
        mu_add(&e->vp_tasks[vp->index], 1, memory_order_relaxed);
        head += n;
        work = 1;
    }
    atomic_store_explicit(&s->dq_head, head, memory_order_release);
    return work;
}

static int progress_locked(glex_fabric_t *f, glex_engine_t *e)
{
    int work = 0;
    if (f->wire) /* eager pages read in the passes before: back to other hosts' senders */
        glex_wire_eager_flush(f);
    for (uint32_t v = 0; v < f->p.vps_per_node; v++)
        if (f->vps[v].shm)
            work |= fetch(f, e, &f->vps[v]);
    if (!e->head)
        return work;
    uint64_t now = glex_coarse_ns();
    glex_task_t **pp = &e->head, *prev = NULL;
    memset(e->p2p_blocked, 0, f->p.vps_per_node);
    while (*pp) {
        glex_task_t *t = *pp;
        /* a VP's point-to-point descriptors execute in posting order: once
         * one waits (receive queue full), later ones from that VP wait too */
        int p2p = t->cur < t->n && t->list[t->cur].kind != GLEX_DESC_COLL;
        if (p2p && e->p2p_blocked[t->vp->index]) {
            prev = t;
            pp = &t->next;
            continue;
        }
        int rc = run_task(f, t, now);
        if (p2p && rc != 2)
            e->p2p_blocked[t->vp->index] = 1;
        if (rc == 2) {
            *pp = t->next;
            if (e->tail == t)
                e->tail = prev;
            mu_add(&e->ntasks, -1, memory_order_relaxed);
            mu_add(&e->vp_tasks[t->vp->index], -1, memory_order_release);
            task_put(e, t);
            work = 1;
            continue;
        }
        work |= rc;
        prev = t;
        pp = &t->next;
    }
    return work;
}

static int engine_has_work(glex_fabric_t *f);

int glex_progress(glex_fabric_t *f)
{
    glex_engine_t *e = f->eng;
    /* nothing queued, no task, no other host: a pass would find nothing
     * (a host polling its queues between messages pays no lock for it) */
    if (!f->wire && !engine_has_work(f))
        return 0;
    int got = f->wire ? glex_wire_poll(f) : 0; /* what came from other hosts, on this core */
    atomic_store_explicit(&e->host_polls,
                          atomic_load_explicit(&e->host_polls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    engine_lock(&e->mu);
    int work = progress_locked(f, e) | (got > 0);
    engine_unlock(&e->mu);
    return work;
}

/* ring the engine thread's own bell: a system call only when it sleeps on it */
static void ring_engine(glex_engine_t *e)
{
    atomic_fetch_add(&e->bell, 1);
    if (atomic_load(&e->on_bell))
        glex_futex_wake(&e->bell, INT_MAX, false);
}

void glex_host_wait_begin(glex_fabric_t *f)
{
    atomic_fetch_add(&f->eng->host_waiting, 1);
}

/* Work the engine thread must take up once no host drives progress: tasks,
 * or sequences still in a DQ. */
static int engine_has_work(glex_fabric_t *f)
{
    if (atomic_load_explicit(&f->eng->ntasks, memory_order_relaxed))
        return 1;
    for (uint32_t v = 0; v < f->p.vps_per_node; v++) {
        const glex_vp_shm_t *s = f->vps[v].shm;
        if (s && atomic_load_explicit(&s->dq_head, memory_order_relaxed) !=
                     atomic_load_explicit(&s->dq_tail, memory_order_relaxed))
            return 1;
    }
    return 0;
}

void glex_host_wait_end(glex_fabric_t *f)
{
    /* the engine thread is woken only when there is work left for it: a
     * blocking call that completed leaves none, and costs no system call */
    if (atomic_fetch_sub(&f->eng->host_waiting, 1) == 1 && engine_has_work(f))
        ring_engine(f->eng);
}

int glex_engine_has_thread(const glex_fabric_t *f) { return f->eng->have_thread; }

void glex_vtime_reset(glex_fabric_t *f)
{
    if (!f->p.vtime)
        return;
    glex_engine_t *e = f->eng;
    engine_lock(&e->mu);
    for (glex_task_t *t = e->head; t; t = t->next)
        t->vt = 0;
    engine_unlock(&e->mu);
    glex_vt_host_zero(f);
}

/* After a post that no waiting host drives: the host runs the engine once
 * inline, as a NIC starts a descriptor when its doorbell is written (a
 * message leaves without waking anyone); the engine thread is woken only
 * for what is left (a task waiting for packets). */
void glex_engine_kick(glex_fabric_t *f)
{
    glex_engine_t *e = f->eng;
    if (atomic_load(&e->host_waiting))
        return;
    if (engine_trylock(&e->mu) == 0) {
        progress_locked(f, e);
        engine_unlock(&e->mu);
        if (!engine_has_work(f))
            return;
    }
    ring_engine(e);
    glex_ring_doorbell(f, f->node); /* an engine thread asleep on the doorbell */
}

/* how long the engine thread stands back from a host that drives the
 * engine itself before it looks whether the host still does */
#define HOST_POLL_MS 1

/* How long the engine thread stands back from a host that drove the
 * engine since its last look.  A host in a blocking wait rings it when it
 * stops with work left (glex_host_wait_end), so the thread sleeps until
 * then: looking every HOST_POLL_MS would cost a timer wake-up and a
 * context switch a millisecond per process, which with more processes than
 * cores the others pay for (16 ranks on 2 cores: an 8-byte allreduce 10-15%
 * slower, bench/results/2026-11-29/NOTES.md).  A host that polls without
 * waiting (MPI_Test's loop) may stop at any time without a ring: the
 * thread looks again after HOST_POLL_MS while there is work. */
static int stand_back_ms(glex_fabric_t *f, glex_engine_t *e)
{
    if (atomic_load(&e->host_waiting) || !engine_has_work(f))
        return 1000;
    return HOST_POLL_MS;
}

/* The engine thread's sleep on its bell (read as bell) for up to
 * timeout_ms, after saying so and looking once more: a ring in between is
 * seen; idle_only: only while a host waits or there is no work left. */
static void sleep_on_bell(glex_fabric_t *f, glex_engine_t *e, uint32_t bell, int idle_only,
                          int timeout_ms)
{
    atomic_store(&e->on_bell, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&e->bell) == bell && !atomic_load(&e->stop) &&
        (!idle_only || atomic_load(&e->host_waiting) || !engine_has_work(f)))
        glex_futex_wait(&e->bell, bell, timeout_ms, false);
    atomic_store(&e->on_bell, 0);
}

/* the engine thread's poll of the doorbell for up to ns while no host
 * drives the engine: 1 when it rang */
static int poll_doorbell(glex_fabric_t *f, glex_engine_t *e, uint32_t token, uint64_t ns)
{
    uint64_t t0 = glex_now_ns();
    do {
        for (int i = 0; i < 64; i++)
            glex_cpu_relax();
        if (glex_wait_token(f) != token)
            return 1;
    } while (!atomic_load_explicit(&e->host_waiting, memory_order_relaxed) &&
             atomic_load_explicit(&e->host_polls, memory_order_relaxed) == e->seen_polls &&
             !atomic_load_explicit(&e->stop, memory_order_relaxed) && glex_now_ns() - t0 < ns);
    return 0;
}

/* the engine thread counted on its node's doorbell (on) or not */
static void watch_doorbell(glex_fabric_t *f, int *watching, int on)
{
    if (*watching != on) {
        *watching = on;
        glex_doorbell_watch(f, on);
    }
}

/* The engine thread: it runs the engine while no host drives it and there
 * is a task; it sleeps on the node's doorbell (packets, credits) while its
 * tasks wait, after polling it for the spin budget, and on its own bell
 * while a host drives progress (a blocking call's wait, or a host that has
 * polled since the thread last looked: MPI_Wait's loop) or there is no
 * task at all. */
static void *engine_main(void *arg)
{
    glex_fabric_t *f = arg;
    glex_engine_t *e = f->eng;
    on_engine_thread = 1;
    /* while its tasks wait for packets and no host drives the engine, it
     * polls the doorbell for the host's spin budget before it sleeps: a
     * wake-up from another core costs the ringing peer tens of us here */
    uint64_t spin_ns = (uint64_t)glex_spin_us(f) * 1000ull;
    atomic_store(&e->running, 1);
    glex_futex_wake(&e->running, 1, false);
    /* where a ring bumps the doorbell only for those counted on it
     * (glex_ring), the thread counts itself while it polls or sleeps there,
     * from before the pass whose token it keeps until it stands back */
    int counted = glex_bells_counted(f), watching = 0;
    while (!atomic_load(&e->stop)) {
        uint32_t bell = atomic_load(&e->bell);
        int busy = 1, work = 0;
        uint32_t polls = atomic_load_explicit(&e->host_polls, memory_order_relaxed);
        if (polls != e->seen_polls) {
            /* a host drove the engine since the last look: it is waiting
             * (a blocking call, MPI_Wait's loop) or polls between pieces
             * of its work, and this thread stands back (stand_back_ms)
             * until rung or its time is up */
            e->seen_polls = polls;
            watch_doorbell(f, &watching, 0);
            sleep_on_bell(f, e, bell, 0, stand_back_ms(f, e));
            continue;
        }
        if (!atomic_load(&e->host_waiting)) {
            uint32_t token = glex_wait_token(f);
            if (engine_trylock(&e->mu) == 0) {
                work = progress_locked(f, e);
                busy = atomic_load(&e->ntasks) != 0;
                engine_unlock(&e->mu);
            }
            if (work)
                continue;
            if (busy) {
                if (counted && !watching) { /* counted now: look once more */
                    watch_doorbell(f, &watching, 1);
                    continue;
                }
                glex_wire_unwatched(f); /* it read the fabric in glex_progress */
                if (spin_ns && poll_doorbell(f, e, token, spin_ns))
                    continue;
                glex_eager_give_back(f);
                glex_wait(f, token, 20);
                continue;
            }
        }
        /* a host drives progress, or nothing to do */
        watch_doorbell(f, &watching, 0);
        if (!atomic_load(&e->host_waiting))
            glex_eager_give_back(f);
        sleep_on_bell(f, e, bell, 1, 1000);
    }
    watch_doorbell(f, &watching, 0);
    return NULL;
}

int glex_engine_start(glex_fabric_t *f)
{
    glex_engine_t *e = calloc(1, sizeof *e);
    if (!e)
        return glex_error(GLEX_ENOMEM, "out of memory for the engine");
    e->p2p_blocked = calloc(f->p.vps_per_node, 1);
    e->vp_tasks = calloc(f->p.vps_per_node, sizeof *e->vp_tasks);
    e->cp_taken = calloc((size_t)GLEX_MAX_JOBS * f->p.vps_per_node, sizeof *e->cp_taken);
    if (!e->p2p_blocked || !e->vp_tasks || !e->cp_taken) {
        free(e->p2p_blocked);
        free(e->vp_tasks);
        free(e->cp_taken);
        free(e);
        return glex_error(GLEX_ENOMEM, "out of memory for the engine");
    }
    f->eng = e;
    static const char *const thread_words[] = { "0", "1", NULL };
    int want_thread = 1;
    int rc = glex_env_word("GLEX_ENGINE_THREAD", thread_words, &want_thread);
    if (rc || !want_thread)
        return rc;
    rc = glex_place_check_env();
    if (rc)
        return rc;
    rc = pthread_create(&e->th, NULL, engine_main, f);
    if (rc)
        return glex_error(GLEX_ESYS, "cannot start the engine thread: %s", strerror(rc));
    e->have_thread = 1;
    rc = glex_place_engine_thread(f, e->th);
    /* the thread's first run happens here, in the job's set-up, not in the
     * middle of its first calls (on a busy machine it waits for a core) */
    while (!atomic_load(&e->running))
        glex_futex_wait(&e->running, 0, 100, false);
    return rc;
}

void glex_engine_stop(glex_fabric_t *f)
{
    glex_engine_t *e = f->eng;
    if (!e)
        return;
    atomic_store(&e->stop, 1);
    if (e->have_thread) {
        glex_ring(f, f->node);
        ring_engine(e);
        pthread_join(e->th, NULL);
    }
    glex_eager_give_back(f);
    task_free_all(e->head);
    task_free_all(e->spare);
    free(e->p2p_blocked);
    free(e->vp_tasks);
    free(e->cp_taken);
    free(e->bounce);
    stage_drop(f, e);
    free(e);
    f->eng = NULL;
}
