/* glex_emu_internal.h - shared-memory layout and internal helpers of the NIC model. */
#ifndef GLEX_EMU_INTERNAL_H
#define GLEX_EMU_INTERNAL_H

#include "glex_emu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define GLEX_MAGIC 0x58454c4721454d55ull /* "UME!GLEX" */
#define GLEX_PAGE 1024u                  /* unit RAM allocation granule */
#define GLEX_TABLE_RESERVE_PCT 10u       /* hash slots kept free for collisions */
#define GLEX_CTRL_BYTES 40u              /* payload of credit/data-ready packets */

#define glex_error glex_set_error

/* ---- process-shared futex lock and waits ---- */
typedef struct {
    _Atomic uint32_t v;
    _Atomic int32_t owner; /* pid of the holder: a lock whose holder died is taken over */
} glex_lock_t;
void glex_lock(glex_lock_t *l);
void glex_unlock(glex_lock_t *l);
/* a spinning thread's pause between two looks */
#if defined(__x86_64__) || defined(__i386__)
#define glex_cpu_relax() __builtin_ia32_pause()
#else
#define glex_cpu_relax() sched_yield()
#endif
/* ask for the cache line at p in a state to write (prefetchw where the CPU
 * has it; a NOP on x86 CPUs that do not), without waiting for it */
#if defined(__x86_64__) || defined(__i386__)
#define glex_prefetch_write(p) __asm__ volatile("prefetchw %0" ::"m"(*(const char *)(p)))
#else
#define glex_prefetch_write(p) __builtin_prefetch((p), 1, 3)
#endif
/* move the cache line at p from this core's caches to the shared last
 * level (cldemote; its encoding is a NOP on x86 CPUs without it) */
#if defined(__x86_64__) || defined(__i386__)
#define glex_line_demote(p) __asm__ volatile(".byte 0x0f, 0x1c, 0x07" ::"D"(p) : "memory")
#else
#define glex_line_demote(p) ((void)(p))
#endif
/* futex on a shared word: wait while *w == val (timeout_ms < 0: forever) */
void glex_futex_wait(_Atomic uint32_t *w, uint32_t val, int timeout_ms, bool shared);
void glex_futex_wake(_Atomic uint32_t *w, int n, bool shared);
/* a process-private condition variable, waited for ms at most (m held) */
void glex_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int ms);

/* a DQ entry that names a descriptor list posted by reference (glex_vp_post_list):
 * local_addr = the list, count = its length, data = the glex_post_regs_t */
#define GLEX_DQ_LIST 0x80u

/* ---- packets in the hash buffer ---- */
enum { GLEX_PKT_DATA = 0, GLEX_PKT_CREDIT = 1, GLEX_PKT_READY = 2 };

typedef struct glex_key {
    uint64_t hi; /* generation 16 | JobID 8 | src NodeID 24 | src VP 11 | SeqID 5 */
    uint32_t lo; /* dest VP 11 | kind 2 | fragment 16 (emulation extension)      */
} glex_key_t;

/* jobgen: JobID in bits 0..7, the JobID's generation (glex_job_slot_t.gen)
 * above: a packet left behind by a failed task of an earlier use of the
 * JobID never matches a later task's key. */
static inline glex_key_t glex_make_key(uint32_t jobgen, uint32_t node, uint32_t vp, uint32_t seq,
                                       uint32_t dvp, uint32_t kind, uint32_t frag)
{
    glex_key_t k;
    k.hi = ((uint64_t)(jobgen >> 8 & 0xffffu) << 48) | ((uint64_t)(jobgen & 0xffu) << 40) |
           ((uint64_t)node << 16) | ((uint64_t)vp << 5) | seq;
    k.lo = dvp | (kind << 11) | ((frag & 0xffffu) << 16);
    return k;
}

enum { GLEX_SLOT_EMPTY = 0, GLEX_SLOT_BUSY = 1, GLEX_SLOT_FULL = 2 };
#define GLEX_BUCKET 8u /* hash-buffer slots a bucket */
#define GLEX_REACH 8u  /* buckets a packet may go to: its home and the next 7 */

typedef struct glex_pkt_hdr {
    glex_key_t key;
    uint16_t len;
    _Atomic uint8_t state; /* GLEX_SLOT_*: claimed by CAS, published with release */
    _Atomic uint8_t waiter; /* a sender waits to insert this key again: ring it at take */
    uint8_t probes;         /* the slots its sender looked at to place it (counted as it leaves) */
} glex_pkt_hdr_t; /* 24 bytes; payload follows */
_Static_assert(sizeof(glex_pkt_hdr_t) == 24, "a slot's header");

/* a DATA packet with this fragment number announces a pulsed send's size
 * to a receiver that waits for an inline packet (sizes differ) */
#define GLEX_FRAG_ANNOUNCE 0xffffu
/* ... with this one a sender of eager size found no eager pages free at the
 * receiver: it asks for credit (the pulsed protocol) */
#define GLEX_FRAG_ASK 0xfffeu

/* payload of CREDIT (receiver->sender) and READY (sender->receiver) packets */
typedef struct glex_ctrl {
    uint32_t ram_off; /* byte offset in the receiver unit's RAM */
    uint32_t len;     /* bytes of this pulse */
    uint64_t off;     /* byte offset of the pulse in the message */
    uint64_t total;   /* the message size as its sender (READY) or receiver (CREDIT) has it */
    uint64_t dst;     /* 0: the pulse goes to unit RAM at ram_off; else the receiving host's
                       * address where the sender's DMA places it (a copy, no ALU) */
    uint64_t src;     /* READY placed by DMA: the sender's buffer (the whole message) when the
                       * receiver's NIC may read the rest of it itself, else 0; CREDIT of no
                       * bytes: the receiver read [off, total) from there (doc/nic-model.md) */
} glex_ctrl_t;
_Static_assert(sizeof(glex_ctrl_t) == GLEX_CTRL_BYTES, "control payload size");

/* ---- virtual time (glex_emu_vtime.c) ---- */
enum {
    GLEX_VT_HOST_POST, GLEX_VT_HOST_POLL, GLEX_VT_HOST_REDUCE_STARTUP, GLEX_VT_HOST_REDUCE_ELEM,
    GLEX_VT_IO, GLEX_VT_NIC_TASK, GLEX_VT_NIC_DESC, GLEX_VT_NIC_TX, GLEX_VT_NIC_RX,
    GLEX_VT_NIC_TRIGGER, GLEX_VT_ALU_INT, GLEX_VT_ALU_FLOAT, GLEX_VT_ALU_DOUBLE, GLEX_VT_ALU_PAIR,
    GLEX_VT_LINK, GLEX_VT_ROUTER, GLEX_VT_LINK_GBPS, GLEX_VT_RADIX,
    GLEX_VT_NPARAMS
};
/* the job's model, in the segment (the creator's GLEX_VTIME_PARAMS) */
typedef struct glex_vtime_model {
    double v[GLEX_VT_NPARAMS]; /* as given: ns, GB/s, ports */
    uint64_t ps[GLEX_VT_NPARAMS]; /* the times in picoseconds */
    uint32_t k, levels;        /* the fat tree: k = radix / 2, k^levels >= nodes */
    uint32_t pad;
} glex_vtime_model_t;
void glex_vtime_model_default(glex_vtime_model_t *m);
/* overlay GLEX_VTIME_PARAMS (a file of "name = value" lines) */
int glex_vtime_model_load(glex_vtime_model_t *m);
void glex_vtime_model_shape(glex_vtime_model_t *m, uint32_t nnodes);

/* ---- shared memory structures ---- */
/* Three lines: the first is written by the nodes that send packets or
 * eager data into the unit, the second by the owner's engine alone, so a
 * task's start does not take a sender's line, and the third counts packets
 * as they leave the buffer (the owner's takes and purges, a full buffer's
 * sweep).  The slots in use are claimed - packets_left: a sender's insert
 * writes the first line once (its claim) and reads the third only when the
 * last count of it seen makes the buffer look full (glex_fabric_t
 * table_left_seen), so with one sender the first line stays with it and
 * the third with the owner. */
typedef struct glex_unit_shm {
    _Alignas(64) _Atomic uint32_t claimed; /* slots claimed by inserts, ever (mod 2^32) */
    _Atomic uint64_t probes_failed;     /* hash probes of inserts that found no room */
    _Atomic uint64_t table_high_water;
    _Atomic uint64_t eager_bits; /* eager pages taken (bit i: eager_first_page + i) */
    _Atomic uint64_t eager_taken, eager_asked; /* eager messages, and those that found no room */
    _Atomic uint64_t stale_dropped; /* packets of failed tasks swept from a full table */
    /* eager pages in use at most (the local senders' taken bits plus those
     * another host's senders landed, eager_remote), and those landed */
    _Atomic uint16_t eager_high_water, eager_remote;
    _Alignas(64) glex_lock_t lock; /* the RAM pool (the packet buffer takes no lock) */
    uint32_t pool_used;   /* borrowed pool pages */
    _Atomic uint64_t ram_high_water, credit_stalls, trigger_waits, tasks_admitted;
    _Atomic uint64_t ram_used; /* bytes of RAM lent to tasks (guaranteed, pool), for high water */
    _Atomic uint64_t dma_reads; /* pulses of offered halves this NIC read itself */
    /* packets gone out of the buffer, and the hash probes their senders
     * made to place them (carried in the slot): packets buffered = these
     * + the slots in use */
    _Alignas(64) _Atomic uint64_t packets_left;
    _Atomic uint64_t probes_left;
    /* eager pages read and not yet given back (glex_eager_release: a few
     * at a time; a sender that finds no room takes them back itself) */
    _Atomic uint64_t eager_held;
    _Atomic uint64_t dma_staged; /* read sends whose data this NIC copied into its send stage */
} glex_unit_shm_t;
_Static_assert(sizeof(glex_unit_shm_t) == 192, "a unit's three lines");

/* The bells have a line each, apart from what peers read (pid, state): the
 * nodes that ring write them on every packet (only while someone is
 * counted on them where processes share CPUs: glex_ring); the owner reads them only
 * when it goes to sleep, so while it spins they stay with the ringers.  The
 * sleeper counts have a line of their own, written only around a sleep:
 * every ringer reads them, and the owner after each CQE it writes. */
typedef struct glex_node_shm {
    _Alignas(64) _Atomic uint32_t doorbell; /* bumped on every packet for this node */
    _Alignas(64) _Atomic uint32_t hostbell; /* hosts sleep on it: rung with the doorbell and alone */
    _Alignas(64) _Atomic uint32_t sleepers; /* asleep on the doorbell (glex_wait) */
    _Atomic uint32_t host_sleepers; /* hosts asleep in glex_wait_until (glex_notify) */
    _Atomic uint32_t watchers; /* its engine thread polls the doorbell (glex_doorbell_watch) */
    _Alignas(64) _Atomic int32_t pid; /* owner process, 0 when free */
    _Atomic uint32_t state;    /* glex_node_state_t: FREE, ALIVE (attached) or LEFT */
    _Atomic uint64_t start;    /* owner's start time (glex_proc_start) */
    /* its traffic with other hosts (glex_emu_wire.c): messages and bytes each
     * way, messages waiting here for room (now, ever) */
    _Atomic uint64_t wire_msgs_sent, wire_bytes_sent, wire_msgs_received, wire_bytes_received;
    _Atomic uint64_t wire_held, wire_held_total;
    _Atomic uint64_t wire_writes; /* of wire_msgs_sent: RDMA writes (FI_RMA) */
    /* host memory the node registered for the NIC's DMA (glex_region_publish):
     * id 0 = free; id is written last (release), after fd, base and bytes */
    struct {
        _Atomic uint64_t id;
        int32_t fd;
        uint32_t pad;
        uint64_t base, bytes;
    } pub[GLEX_PUBLISH_MAX];
} glex_node_shm_t;

typedef enum {
    GLEX_NODE_FREE = 0,  /* never attached */
    GLEX_NODE_ALIVE = 1, /* attached and its process exists */
    GLEX_NODE_LEFT = 2,  /* closed the fabric */
    GLEX_NODE_DEAD = 3   /* attached, but its process is gone (computed, never stored) */
} glex_node_state_t;

/* Who writes what decides the cache lines: the owner's host and engine
 * (DQ, CQ, counters), the other nodes' engines that deliver messages (the
 * RQ's tail and slots) and the owner's host taking them (the RQ's head) each
 * write a line of their own, so a message moves no line but the ones it
 * must. */
typedef struct glex_vp_shm {
    _Alignas(64) _Atomic uint32_t open;
    _Atomic uint32_t dq_head, dq_tail; /* host writes tail, engine advances head */
    _Atomic uint32_t cq_head, cq_tail; /* engine writes tail, host advances head */
    _Alignas(64) _Atomic uint32_t rq_tail; /* claimed by the delivering engines (CAS) */
    _Atomic uint32_t rq_ready;             /* 1 once the RQ's slots are set up (open) */
    _Alignas(64) _Atomic uint32_t rq_head; /* the owner's host */
    _Alignas(64) _Atomic uint64_t desc_posted, desc_executed, tasks_completed, tasks_failed;
    _Atomic uint64_t packets_sent, packets_received, bytes_sent, bytes_received;
    _Atomic uint64_t trigger_waits, credit_stalls;
    _Atomic uint64_t alu_ops;
    /* per unit, the tasks of this VP executed at their post (counted here,
     * by the VP's host alone, not with a locked add on the unit's line:
     * glex_unit_counters adds them to the unit's tasks_admitted) */
    _Atomic uint64_t tasks_now[GLEX_MAX_UNITS];
    /* per JobID, the generation of the collective task this VP's engine
     * started last (one task of a JobID per VP at a time): a packet of
     * another generation is early, for a call the receiver has not reached
     * (glex_table_insert keeps part of the buffer from those) */
    _Alignas(64) _Atomic uint16_t coll_gen[GLEX_MAX_JOBS];
} glex_vp_shm_t;

typedef struct glex_job_slot {
    uint64_t key;
    uint32_t members, joined, left;
    uint32_t used;
    _Atomic uint32_t gen; /* 16 bits used: bumped each time the JobID is taken anew */
    uint32_t lease;       /* held by a group for its life (glex_job_lease) */
} glex_job_slot_t;

#define GLEX_JOB_INDEX (2u * GLEX_MAX_JOBS)
typedef struct glex_job_index {
    uint64_t key;
    uint32_t job1; /* JobID + 1; 0 = empty entry; GLEX_JOB_NOLEASE: a lease refused */
    uint32_t seen; /* GLEX_JOB_NOLEASE: members that have read the refusal */
} glex_job_index_t;
#define GLEX_JOB_NOLEASE (GLEX_MAX_JOBS + 1u)
#define GLEX_MAX_LEASES (GLEX_MAX_JOBS / 2u) /* the other half serves per-call tasks */

/* ---- the network (glex_emu_net.c) ---- */
#define GLEX_NET_MAX_LEVELS 24u
#define GLEX_MCAST_GROUPS 1024u /* group records of a job */
typedef struct glex_router_shm {
    glex_lock_t lock; /* its table's writers (creation, deletion, aging) */
    uint32_t used;
    uint32_t pad;
    /* mcast_entries entries of mc_entry_size bytes follow */
} glex_router_shm_t;
typedef struct glex_mc_entry {
    _Atomic uint64_t gid; /* 0: free */
    _Atomic uint64_t refreshed_ns;
    uint64_t mask[];      /* net_mask_words words: the ports on the group's tree */
} glex_mc_entry_t;
typedef struct glex_link_shm {
    _Atomic uint64_t packets, bytes; /* head flits: one a packet (the GID, not the members) */
} glex_link_shm_t;
typedef struct glex_group_rec {
    _Atomic uint64_t gid; /* 0: free */
    _Atomic uint64_t refreshed_ns;
    uint32_t creator, members;
    _Atomic uint32_t state; /* 0 being set up, 1 created */
    uint32_t pad;
} glex_group_rec_t;
/* a member a multicast from some node reaches, and the route to it */
typedef struct glex_mc_dest {
    uint32_t node, links, routers;
} glex_mc_dest_t;
/* flood one multicast of gid from src along its tree: the members reached
 * (all but src) into out[0..*n), up to cap; pkts/bytes are added to every
 * link crossed and the entries crossed are refreshed.  GLEX_ENOENT when the
 * group or an entry on its tree is gone */
int glex_mcast_flood(glex_fabric_t *f, glex_gid_t gid, uint32_t src, uint64_t pkts,
                     uint64_t bytes, glex_mc_dest_t *out, uint32_t cap, uint32_t *n);

/* the DMA read's costs (x100; read_x100 0: the read is refused) and the
 * size from which reading in place pays (0: never up to 64 KiB) */
typedef struct {
    uint32_t read_x100;    /* against the host's copy of 64 KiB */
    uint32_t pair_x100;    /* against the copy pair across CPUs, 64 KiB; 0: not measured */
    uint32_t read_from_kb; /* 8, 16, 32, 64 or 0 */
    uint32_t loop_max;     /* glex_copy's loop up to this many bytes (512: none, 1024-4096) */
} glex_dma_calib_t;
/* glex_copy's loop for copies of 513 B up to max bytes (GLEX_COPY_LOOP_MAX
 * at most; until set: that), memcpy above; and the loop itself */
#define GLEX_COPY_LOOP_MAX 4096u
void glex_copy_set_loop_max(uint32_t max);
void glex_copy_loop(void *dst, const void *src, size_t n);

typedef struct glex_shm_header {
    uint64_t magic;
    uint32_t abi;
    uint32_t header_size;
    uint64_t total_size;
    glex_params_t params;
    uint32_t nnodes;
    uint32_t owner_uid;
    int32_t creator_pid;       /* with creator_start: liveness of a segment nobody attached */
    uint64_t creator_start;
    _Atomic uint32_t refcount; /* attached processes; 0 = being destroyed */
    _Atomic uint32_t ready;
    /* layout (byte offsets from the segment base) */
    uint64_t off_nodes, off_units, off_bitmaps, off_tables, off_ram, off_vps, off_rings;
    uint64_t unit_stride_bitmap, unit_stride_table, unit_stride_ram;
    uint64_t vp_ring_stride;
    uint64_t off_mboxes, mbox_stride;
    uint64_t off_cp_counters; /* within a unit's bitmap area */
    uint32_t entry_size, table_words, ram_pages, pool_first_page, guar_pages;
    uint32_t jobs_per_unit;
    uint32_t eager_first_page, eager_pages; /* a unit's eager pages (glex_eager_acquire) */
    glex_lock_t job_lock;
    glex_job_slot_t jobs[GLEX_MAX_JOBS];
    /* under job_lock: which JobIDs are free (bit set), and an index from a
     * task's key to its JobID (open addressing, backward-shift deletion), so
     * that agreeing on a JobID costs a probe or two, not a scan */
    uint64_t job_free[GLEX_MAX_JOBS / 64];
    uint32_t leases; /* JobIDs held as leases */
    uint32_t lease_pad;
    glex_job_index_t job_index[GLEX_JOB_INDEX];
    glex_vtime_model_t vtm;   /* GLEX_VTIME: the model's parameters */
    /* the fat tree's routers, their multicast tables and link counters, and
     * the job's multicast group records (glex_emu_net.c) */
    uint64_t off_routers, router_stride, off_links, off_groups;
    uint32_t net_k, net_levels, net_routers, net_mask_words, mc_entry_size;
    uint32_t net_level_base[GLEX_NET_MAX_LEVELS + 1]; /* first router of each level */
    /* this machine's DMA read, measured by the creator (glex_emu_calib.c) */
    glex_dma_calib_t dma;
} glex_shm_header_t;

/* measure this machine's DMA read against a copy and against the copy pair
 * across CPUs it replaces (glex_emu_calib.c) */
void glex_calib_dma(glex_dma_calib_t *c);

/* the layout of the network part of the segment; returns its bytes */
uint64_t glex_net_layout(glex_shm_header_t *h, const glex_params_t *p, uint32_t nnodes,
                         uint32_t k, uint32_t levels, uint64_t off);


/* a mailbox: header line, then the owner's area (glex_emu_mbox.c) */
struct glex_mbox {
    _Atomic uint32_t state; /* 0 free, 1 being set up, 2 claimed */
    uint32_t index;
    uint64_t key;
    uint8_t pad[48];
    /* area follows, mailbox_kb KiB */
};
/* area: a 64-byte line of words, then two slots of GLEX_MAILBOX_KB plus a
 * 64-byte header each (the layout inside is the user's) */
static inline uint64_t glex_mbox_area_bytes(const glex_params_t *p)
{
    return 64u + 2u * ((uint64_t)p->mailbox_kb * 1024u + 64u);
}
static inline uint64_t glex_mbox_stride(const glex_params_t *p)
{
    return sizeof(struct glex_mbox) + glex_mbox_area_bytes(p);
}

/* add to a counter that has one writer at a time (the engine under its
 * mutex, a VP's one posting or polling host): a plain add, no locked
 * instruction on the message path (one would wait for the stores to the
 * peer's lines to drain) */
static inline void glex_counter_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* the bytes of a descriptor that mean anything (what a copy must take):
 * the header, then an MP's inline payload or a COLL step's source list */
static inline size_t glex_desc_used(const glex_desc_t *d)
{
    size_t extra = 0;
    if (d->kind == GLEX_DESC_MP)
        extra = d->inline_len;
    else if (d->kind == GLEX_DESC_COLL && d->branch > 1 && !d->src_range)
        extra = d->branch * sizeof(glex_src_t);
    else if (d->kind == GLEX_DESC_COLL && d->fanout > 1)
        extra = d->fanout * sizeof(glex_src_t);
    if (extra > sizeof d->data)
        extra = sizeof d->data;
    return offsetof(glex_desc_t, data) + extra;
}

/* A receive-queue slot.  The RQ is a lock-free ring of many producers (the
 * engines delivering MP messages) and one consumer (the VP's host): a
 * producer claims position pos by CAS on rq_tail while pos - rq_head <
 * depth, writes the entry and publishes it with seq = pos + 1; the host
 * takes it when seq = head + 1 and frees it by advancing rq_head (release,
 * after its copy).  The host polls the slot itself, the line the producer
 * writes along with the message's first bytes, and writes nothing into it,
 * so a small message costs the line it fills and no lock; a producer reads
 * the head's line only when the queue seems full by the head it saw last
 * (glex_fabric_t.rq_head_seen). */
typedef struct glex_rq_slot {
    _Alignas(64) _Atomic uint32_t seq;
    uint32_t pad;
    glex_rqe_t e;
} glex_rq_slot_t;
_Static_assert(sizeof(glex_rq_slot_t) == 5 * 64, "an MP's slot: five lines (GLEX_MP_CAP)");
_Static_assert(sizeof(glex_rq_slot_t) - sizeof(uint64_t) == GLEX_MP_SLOT_MORE,
               "a long MP's further slot: all but its sequence word");
_Static_assert(GLEX_MP_LONG_SLOTS <= 16, "a long MP fits the smallest queue (GLEX_CQ_DEPTH 16)");

/* the slots an MP of len bytes takes: one up to GLEX_MP_CAP, then one more
 * for each further GLEX_MP_SLOT_MORE (a long MP, glex_vp_try_mp_long) */
static inline uint32_t glex_mp_slots(uint32_t len)
{
    return len <= GLEX_MP_CAP ? 1u
                              : 1u + (len - GLEX_MP_CAP + GLEX_MP_SLOT_MORE - 1u) / GLEX_MP_SLOT_MORE;
}
/* the payload bytes slot k (0: the first) of an MP of len bytes holds */
static inline uint32_t glex_mp_slot_bytes(uint32_t len, uint32_t k)
{
    if (!k)
        return len < GLEX_MP_CAP ? len : GLEX_MP_CAP;
    uint32_t at = GLEX_MP_CAP + (k - 1u) * GLEX_MP_SLOT_MORE;
    return len - at < GLEX_MP_SLOT_MORE ? len - at : GLEX_MP_SLOT_MORE;
}
/* a further slot's payload: after its sequence word */
static inline uint8_t *glex_rq_slot_more(glex_rq_slot_t *s)
{
    return (uint8_t *)s + sizeof(uint64_t);
}

/* ---- per-process handles ---- */
typedef struct glex_engine glex_engine_t;

struct glex_vp {
    glex_fabric_t *f;
    uint32_t index;
    glex_vp_shm_t *shm;
    glex_desc_t *dq;
    glex_cqe_t *cq;
    glex_rq_slot_t *rq;
    uint64_t *dq_vt; /* GLEX_VTIME: per DQ entry, the host's virtual time at its post */
    char fail_text[320]; /* why the last failed task failed (written before its CQE) */
    int rq_viewed; /* a long MP seen in place (glex_vp_poll_rq_view) not yet done */
};

struct glex_fabric {
    char name[96];
    uint8_t *base;
    size_t size;
    glex_shm_header_t *hdr;
    glex_params_t p;
    uint32_t node;
    uint32_t nnodes;
    struct glex_vp *vps; /* this node's VPs, index = VP number */
    glex_engine_t *eng;
    uint32_t jitter_max_us, jitter_seed;
    int observer; /* mapped read-only by a tool */
    /* GLEX_VTIME: this host's virtual clock (ps), and the real time it has
     * spent outside the library since (scaled by GLEX_VTIME_COMPUTE) */
    uint64_t vt_host;
    uint64_t vt_real_last, vt_waited; /* ns of CLOCK_MONOTONIC */
    double vt_scale;
    /* glex_vtime_hold_later: on, and when it first held an entry back (ns) */
    int vt_hold;
    uint64_t vt_hold_since;
    /* across hosts (glex_emu_wire.c): NULL host_of = one host */
    uint32_t host, nhosts;
    _Atomic uint32_t machine_nodes; /* nodes on this machine (set at connect; 0: all) */
    _Atomic uint32_t job_per_cpu;   /* the busiest machine's processes per CPU (0: unset) */
    /* the host bell's fences (glex_bell_setup): sleepers pay a membarrier
     * (asym), and this process's wakers only a compiler barrier (light) */
    bool bell_asym, bell_light;
    uint32_t *host_of;
    struct glex_wire *wire;
    /* the engine's mappings of peers' published memory (nnodes x
     * GLEX_PUBLISH_MAX, made at the first DMA into each; under the engine's
     * mutex) */
    struct glex_rmap *dma_maps;
    /* per (node, VP) of the job, the last receive-queue head this process
     * read there (nnodes x GLEX_VPS_PER_NODE): a sender looks at the
     * receiver's head line only when the queue seems full by it */
    _Atomic uint32_t *rq_head_seen;
    /* per (node, unit) of the job, that unit's packets_left as this process
     * last read it (nnodes x units): a lower bound, so claimed minus it is
     * at least the slots in use (glex_emu_table.c) */
    _Atomic uint32_t *table_left_seen;
    /* receive-queue entries this process's hosts took, ever, and that count
     * at this process's last slot claim: equal, it sends a stream */
    _Atomic uint32_t rq_took, rq_took_claimed;
};

/* is node on another host (its packets travel over the fabric)? */
static inline int glex_remote(const glex_fabric_t *f, uint32_t node)
{
    return f->host_of && f->host_of[node] != f->host;
}

/* ---- the fabric between hosts (glex_emu_wire.c) ----
 * Each call hands one operation on a node of another host to the fabric;
 * that node's process applies it in its own segment and memory, in the
 * order sent.  A packet that does not fit the receiver's hash buffer (or an
 * MP message its receive queue) waits there, in order per key, instead of
 * pushing back on the sender.  All return GLEX_OK, or GLEX_EDEAD when the
 * node is known gone, GLEX_ESYS on a fabric error. */
struct glex_wire_rx; /* the receive side, given by the fabric: glex_wire_rx */
extern const struct glex_wire_rx glex_wire_rx;
int glex_wire_start(glex_fabric_t *f, const struct glex_wire_rx *rx);
void glex_wire_stop(glex_fabric_t *f);
/* a host that drives progress takes what arrived itself (no wake-up of the
 * progress thread on its way); > 0 when it applied something */
int glex_wire_poll(glex_fabric_t *f);
/* a thread that reads the fabric in glex_progress goes to sleep: the
 * progress thread watches it again (no-op on one host) */
void glex_wire_unwatched(glex_fabric_t *f);
/* a packet into node's hash buffer of unit; cp: count it on the (job, dvp)
 * CP counter there (an inline data packet) */
int glex_wire_insert(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                     const void *payload, uint32_t len, uint64_t vt, int cp, uint32_t job,
                     uint32_t dvp);
/* bytes into node's unit RAM at off */
int glex_wire_ram(glex_fabric_t *f, uint32_t node, uint32_t unit, uint64_t off, const void *src,
                  uint64_t len);
/* Eager data to a node of another host: the bytes into this node's
 * partition of the eager pages of node's unit, then a READY of key there (one
 * message, no credit awaited).  GLEX_ENOSPC: no pages of the partition are
 * free now, or none was given (the sender asks for credit instead) */
int glex_wire_eager(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                    const void *src, uint32_t len);
/* the largest eager message node takes from another host (0: none) */
uint32_t glex_wire_eager_max(const glex_fabric_t *f, uint32_t node);
/* this node read eager data that came from another host: its pages go back
 * to their sender with the next glex_wire_eager_flush */
void glex_wire_eager_freed(glex_fabric_t *f, uint32_t unit, uint32_t page, uint32_t n);
/* return the freed pages to their senders, a partition's once half of it is
 * freed (a sender whose partition is full asks for credit meanwhile) */
void glex_wire_eager_flush(glex_fabric_t *f);
/* bytes into node's process memory at addr (RDMA put): an RDMA write into
 * the region node exposed, else a message its process applies */
int glex_wire_put(glex_fabric_t *f, uint32_t node, uint64_t addr, const void *src, uint64_t len);
/* register [base, +len) of this process for other hosts' RDMA writes
 * (glex_fabric_expose) */
int glex_wire_expose(glex_fabric_t *f, void *base, uint64_t len, uint64_t *key);
/* RDMA get: node's [remote, +len) into this process's local; returns a
 * ticket (>= 0) to poll with glex_wire_get_done, or < 0 */
int glex_wire_get(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, uint64_t len);
/* 0 while a get is in flight, 1 done (the ticket is freed), < 0 failed */
int glex_wire_get_done(glex_fabric_t *f, int ticket);
/* an MP message into node's VP dvp receive queue */
int glex_wire_mp(glex_fabric_t *f, uint32_t node, uint32_t dvp, uint32_t svp, const void *data,
                 uint32_t len, uint64_t vt);
/* JobID agreement at node 0 (the job's JobID authority) */
int glex_wire_job(glex_fabric_t *f, uint64_t key, uint32_t members, int lease);
void glex_wire_job_release(glex_fabric_t *f, int job_id);
/* a node of another host that a task waits on: 1 with *why when it is known
 * gone (a fabric error, or no answer to a probe within GLEX_TIMEOUT) */
int glex_wire_peer_failed(glex_fabric_t *f, uint32_t node, char *why, size_t len);
/* the JobID table of this host's segment (glex_emu_fabric.c): node 0's
 * process serves other hosts' requests with these */
int glex_job_agree_local(glex_fabric_t *f, uint64_t key, uint32_t members, int lease);
void glex_job_release_local(glex_fabric_t *f, int job_id);

/* layout accessors */
static inline glex_node_shm_t *glex_node_shm(const glex_fabric_t *f, uint32_t node)
{
    return (glex_node_shm_t *)(f->base + f->hdr->off_nodes) + node;
}
static inline uint32_t glex_unit_index(const glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return node * f->p.units + unit;
}
static inline glex_unit_shm_t *glex_unit_shm(const glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return (glex_unit_shm_t *)(f->base + f->hdr->off_units) + glex_unit_index(f, node, unit);
}
/* a unit's slots in use: claimed - packets gone, the gone count read first
 * (a packet leaves only after its claim, so never more than the claims);
 * *left, when asked, gets that count */
static inline uint32_t glex_unit_slots_used(glex_unit_shm_t *u, uint64_t *left)
{
    uint64_t gone = atomic_load_explicit(&u->packets_left, memory_order_acquire);
    if (left)
        *left = gone;
    return atomic_load_explicit(&u->claimed, memory_order_relaxed) - (uint32_t)gone;
}
static inline uint64_t *glex_unit_bitmap(const glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return (uint64_t *)(f->base + f->hdr->off_bitmaps +
                        f->hdr->unit_stride_bitmap * glex_unit_index(f, node, unit));
}
/* the CP counter of (JobID, VP) on a node: CP packets (inline data packets)
 * that arrived there, written by their senders; the node's engine counts
 * those it took in its own memory, and the counter trigger fires on the
 * difference (glex_emu_engine.c, cp_pending) */
static inline _Atomic uint32_t *glex_cp_counter(const glex_fabric_t *f, uint32_t node, uint32_t job,
                                                uint32_t vp)
{
    uint32_t unit = (job & 0xffu) % f->p.units, slot = (job & 0xffu) / f->p.units;
    return (_Atomic uint32_t *)((uint8_t *)glex_unit_bitmap(f, node, unit) +
                                f->hdr->off_cp_counters) +
           (size_t)slot * f->p.vps_per_node + vp;
}
static inline uint8_t *glex_unit_table(const glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return f->base + f->hdr->off_tables +
           f->hdr->unit_stride_table * glex_unit_index(f, node, unit);
}
static inline uint8_t *glex_unit_ram(const glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return f->base + f->hdr->off_ram + f->hdr->unit_stride_ram * glex_unit_index(f, node, unit);
}
static inline glex_vp_shm_t *glex_vp_shm(const glex_fabric_t *f, uint32_t node, uint32_t vp)
{
    return (glex_vp_shm_t *)(f->base + f->hdr->off_vps) + (size_t)node * f->p.vps_per_node + vp;
}
static inline uint32_t glex_job_unit(const glex_fabric_t *f, uint32_t job)
{
    return (job & 0xffu) % f->p.units;
}

uint32_t glex_jobs_per_unit(const glex_params_t *p);
/* every JobID free, the index empty (a new segment) */
void glex_jobs_init(glex_shm_header_t *h);

/* the host bell's fences (glex_emu_bell.c), chosen at open: with a CPU per
 * process a waker's side cheap and a sleeper's a membarrier, else both full */
void glex_bell_setup(glex_fabric_t *f);
void glex_waker_fence(const glex_fabric_t *f);
void glex_sleeper_fence(const glex_fabric_t *f);
/* doorbell: wake whoever waits on node (its engine thread and its host) */
void glex_ring(glex_fabric_t *f, uint32_t node);
/* the doorbell alone (an engine thread asleep on it), not the host bell */
void glex_ring_doorbell(glex_fabric_t *f, uint32_t node);
/* whether a packet's ring bumps the bells only for those counted on them
 * (processes share CPUs here: glex_ring); then the engine thread counts
 * itself on the doorbell while it watches it (on) and stops (off) */
int glex_bells_counted(const glex_fabric_t *f);
void glex_doorbell_watch(glex_fabric_t *f, int on);
/* the host bell, rung alone by glex_wake_host (mailbox writers); a host in
 * glex_wait_until sleeps on it: token = glex_host_token(f), look at the
 * condition, glex_host_sleep */
uint32_t glex_host_token(const glex_fabric_t *f);
void glex_host_sleep(glex_fabric_t *f, uint32_t token, int timeout_ms);

/* node's VP vp rings in the segment: its DQ (dq_depth descriptors), CQ
 * (cq_depth entries), then from the next cache line its RQ (cq_depth slots) */
static inline uint8_t *glex_vp_ring(const glex_fabric_t *f, uint32_t node, uint32_t vp)
{
    return f->base + f->hdr->off_rings +
           f->hdr->vp_ring_stride * ((uint64_t)node * f->p.vps_per_node + vp);
}
static inline glex_rq_slot_t *glex_rq_ring(const glex_fabric_t *f, uint32_t node, uint32_t vp)
{
    uint64_t off = (uint64_t)f->p.dq_depth * sizeof(glex_desc_t) +
                   (uint64_t)f->p.cq_depth * sizeof(glex_cqe_t);
    return (glex_rq_slot_t *)(void *)(glex_vp_ring(f, node, vp) + (off + 63u) / 64u * 64u);
}

/* the NIC's DMA into node's published memory (glex_emu_region.c): where
 * [addr, addr + len) of node's process lies inside a region it published,
 * that memory mapped here (read and write); NULL where it does not, or it
 * cannot be mapped (the caller then uses cross-memory attach).  Engine only. */
void *glex_dma_window(glex_fabric_t *f, uint32_t node, uint64_t addr, uint64_t len);
void glex_dma_unmap_all(glex_fabric_t *f);

/* Touch every page of [p, p+len) from this process, by an atomic OR of 0
 * into its first byte (safe while other processes use the memory).  Where
 * the first access of a page from a process is expensive even once the
 * kernel has it mapped (this project's 2-core VM: about 6 us a page after
 * MADV_POPULATE_WRITE, no page fault counted: below the guest kernel), this
 * pays it now instead of inside a call; elsewhere it costs a load a page. */
static inline void glex_touch_pages(void *p, uint64_t len)
{
    uint8_t *a = p;
    for (uint64_t at = 0; at < len; at += 4096u)
        (void)__atomic_fetch_or(a + at, (uint8_t)0, __ATOMIC_RELAXED);
}

/* an MP message into node's VP receive queue (glex_emu_engine.c): GLEX_EAGAIN
 * while that VP is not open or its queue is full */
int glex_rq_deliver(glex_fabric_t *f, uint32_t node, uint32_t vp, uint32_t src, uint32_t svp,
                    const void *data, uint32_t len, uint64_t vt);
/* the n pieces one after another from to (an MP's payload, gathered) */
static inline void glex_pieces_copy(uint8_t *to, const glex_piece_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (p[i].len)
            memcpy(to, p[i].base, p[i].len);
        to += p[i].len;
    }
}
/* the same, the payload gathered from n pieces of len bytes in all */
int glex_rq_deliver_pieces(glex_fabric_t *f, uint32_t node, uint32_t vp, uint32_t src,
                           uint32_t svp, const glex_piece_t *p, uint32_t n, uint32_t len,
                           uint64_t vt);

/* hash buffer (glex_emu_table.c); vt: the packet's virtual send time (ps,
 * kept only with GLEX_VTIME) */
int glex_table_insert_vt(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                         const void *payload, uint32_t len, uint64_t vt);
/* returns payload length and copies it out (and *vt when not NULL), or -1
 * when absent */
int glex_table_take_vt(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                       void *payload, uint32_t cap, uint64_t *vt);
static inline int glex_table_insert(glex_fabric_t *f, uint32_t node, uint32_t unit,
                                    glex_key_t key, const void *payload, uint32_t len)
{
    return glex_table_insert_vt(f, node, unit, key, payload, len, 0);
}
/* the same, for a packet the caller knows is in (its CP counter counted it) */
int glex_table_take_present(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                            void *payload, uint32_t cap, uint64_t *vt);
static inline int glex_table_take(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                                  void *payload, uint32_t cap)
{
    return glex_table_take_vt(f, node, unit, key, payload, cap, NULL);
}
/* drop every packet of one task (tag: JobID | generation << 8) addressed to
 * one VP (after it failed) */
void glex_table_purge(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t tag, uint32_t dvp);

/* unit RAM credit areas (glex_emu_table.c) */
typedef struct glex_area {
    uint32_t off;   /* byte offset in unit RAM */
    uint32_t bytes;
    uint32_t pool;  /* 1 if borrowed from the pool (pages), 0 guaranteed */
} glex_area_t;
/* how much of the pool a receiving step may borrow */
typedef enum {
    GLEX_RAM_ALONE,  /* no other task of this node uses the unit: all of it */
    GLEX_RAM_SHARED  /* another does (it may want the pool too): half */
} glex_ram_share_t;
void glex_ram_acquire(glex_fabric_t *f, uint32_t unit, uint32_t job, uint32_t vp,
                      uint64_t want, glex_ram_share_t share, glex_area_t *a);
void glex_ram_release(glex_fabric_t *f, uint32_t unit, const glex_area_t *a);
/* Eager data: a message of up to GLEX_EAGER_MAX bytes from a node of this
 * host is written into the receiving unit's eager pages before its receive
 * has granted credit (a packet that arrives early, held by the NIC).  The
 * pages (the unit RAM's last GLEX_EAGER_PAGES) are taken per message by CAS
 * on one bitmap word and given back by the receiver: no lock.  Acquire
 * returns the byte offset in node's unit RAM, or -1 when no run is free (the
 * sender then asks for credit). */
#define GLEX_EAGER_MAX GLEX_EAGER_BYTES
/* n consecutive pages (1..64) as a bitmap mask at bit at */
static inline uint64_t glex_page_mask(uint32_t n, uint32_t at)
{
    return (n >= 64 ? ~0ull : (1ull << n) - 1) << at;
}
/* claim a run of n free pages among the first `pages` bits of a page
 * bitmap, by CAS (no lock): the lowest free run, or with from_top the
 * highest; its first page, or -1 when none is free */
static inline int64_t glex_pages_claim(_Atomic uint64_t *bitmap, uint32_t n, uint32_t pages,
                                       int from_top)
{
    uint64_t bits = atomic_load_explicit(bitmap, memory_order_relaxed);
    if (!n || n > pages)
        return -1;
    for (;;) {
        int64_t at = from_top ? (int64_t)(pages - n) : 0, step = from_top ? -1 : 1;
        while (at >= 0 && at + n <= pages && (bits & glex_page_mask(n, (uint32_t)at)))
            at += step;
        if (at < 0 || at + n > pages)
            return -1;
        if (atomic_compare_exchange_weak_explicit(bitmap, &bits,
                                                  bits | glex_page_mask(n, (uint32_t)at),
                                                  memory_order_acquire, memory_order_relaxed))
            return at;
    }
}
#define GLEX_EAGER_PAGES 64u
int64_t glex_eager_acquire(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t bytes);
/* a job on several hosts: the first GLEX_EAGER_LOCAL(f) eager pages are the
 * host's own senders'; the rest is cut among the nodes of other hosts
 * (glex_wire_eager) */
#define GLEX_EAGER_LOCAL(f) ((f)->host_of ? (f)->hdr->eager_pages / 2 : (f)->hdr->eager_pages)
/* eager data of another host written into this node's unit: its pages counted */
void glex_eager_landed(glex_fabric_t *f, uint32_t unit, uint32_t bytes);
void glex_eager_release(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t ram_off,
                        uint32_t bytes);
/* the eager pages of this node's units read and held back, given back */
void glex_eager_give_back(glex_fabric_t *f);
/* 1 when byte offset ram_off of a unit's RAM lies in its eager pages */
int glex_eager_area(const glex_fabric_t *f, uint32_t ram_off);
/* a READY taken from node's unit: if its data lies in the eager pages, give
 * them back; 1 if it did */
int glex_eager_return(glex_fabric_t *f, uint32_t node, uint32_t unit, const glex_ctrl_t *c);

/* packet validation (glex_emu_desc.c): a CREDIT or READY control payload of
 * len bytes; 0 or GLEX_EINVAL naming the field (the message size it carries
 * is compared with the descriptor's by the engine: a size mismatch) */
int glex_ctrl_check(const glex_fabric_t *f, const glex_ctrl_t *c, int len);

/* descriptor validation (glex_emu_desc.c) */
int glex_desc_validate(const glex_fabric_t *f, uint32_t vp, const glex_desc_t *d, size_t idx);

/* virtual time of the host and the network (glex_emu_vtime.c) */
/* the host's clock after counting its time outside the library (ps) */
uint64_t glex_vt_host_now(glex_fabric_t *f);
/* a host wait loop spent ns of real time waiting (not counted as compute) */
static inline void glex_vt_waited(glex_fabric_t *f, uint64_t ns) { f->vt_waited += ns; }
/* a completion or receive entry written at virtual time vt is taken */
void glex_vt_host_took(glex_fabric_t *f, uint64_t vt);
/* may the host take a receive entry that arrived at vt now? (hold_later) */
int glex_vt_host_may_take(glex_fabric_t *f, uint64_t vt);
/* modeled latency of the route from node a to node b (ps), without the
 * sender's injection */
uint64_t glex_vt_route_ps(const glex_fabric_t *f, uint32_t a, uint32_t b);
/* injection of bytes at the link's bandwidth (ps) */
uint64_t glex_vt_wire_ps(const glex_fabric_t *f, uint64_t bytes);
/* the ALU combining count elements of type (ps) */
uint64_t glex_vt_alu_ps(const glex_fabric_t *f, glex_type_t type, uint64_t count);
static inline uint64_t glex_vt(const glex_fabric_t *f, int param) { return f->hdr->vtm.ps[param]; }
/* the host's clock at 0 and GLEX_VTIME_COMPUTE read (fabric open) */
int glex_vt_host_init(glex_fabric_t *f);
/* the host's clock at 0, its real time counted from now */
void glex_vt_host_zero(glex_fabric_t *f);

/* the most bytes a descriptor moves or combines (a checked bound) */
#define GLEX_MAX_BYTES (1ull << 40)

/* engine (glex_emu_engine.c) */
int glex_engine_start(glex_fabric_t *f);
void glex_engine_stop(glex_fabric_t *f);
void glex_engine_kick(glex_fabric_t *f);
/* descriptors executed at their post (glex_vp_post): how many of d[0..n),
 * in order; the caller queues the rest */
uint32_t glex_engine_post_now(glex_vp_t *vp, const glex_desc_t *d, uint32_t n);
/* glex_vp_post_mp's MP executed at its post: 1, or 0 when it must queue */
int glex_engine_post_mp_now(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                            const glex_piece_t *p, uint32_t n, uint32_t len, int quiet);
/* glex_vp_post_put_mp's put and MP executed at their post, both (1) or
 * neither (0: they must queue) */
int glex_engine_post_put_mp_now(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                                const void *src, uint64_t remote, uint64_t len,
                                const glex_piece_t *p, uint32_t n, uint32_t plen, uint64_t cookie);
/* glex_vp_get_sgl once its arguments are checked */
int glex_engine_get_sgl(glex_vp_t *vp, uint32_t dest_id, const struct iovec *remote, uint32_t nr,
                        uint64_t skip, const struct iovec *local, uint32_t nl, uint64_t *moved);
/* glex_vp_atomic_cas on a node of this host: 1 done (*old set), 0 when the
 * word is not in registered memory */
int glex_engine_atomic_cas(glex_vp_t *vp, uint32_t dest_id, uint64_t addr, uint64_t expect,
                           uint64_t desire, uint64_t *old);
/* 1 when this process runs an engine thread (GLEX_ENGINE_THREAD=1) */
int glex_engine_has_thread(const glex_fabric_t *f);

/* liveness (glex_emu_live.c): a process is its pid plus start time */
uint64_t glex_proc_start(int32_t pid); /* 0 when gone or a zombie */
int glex_proc_alive(int32_t pid, uint64_t start);
void glex_proc_self(int32_t *pid, uint64_t *start);
glex_node_state_t glex_node_state(const glex_fabric_t *f, uint32_t node);
/* 1 with *why filled when node awaited died or left, or any node died */
int glex_peer_failure(const glex_fabric_t *f, uint32_t awaited, char *why, size_t len);

/* stale segments (glex_emu_cleanup.c), each removal reported on stderr:
 * unlink name if stale (1 when removed); remove all of this user's */
int glex_segment_remove_if_stale(const char *name);
void glex_sweep_stale(void);

/* hwloc placement (glex_emu_place.c) */
int glex_place_engine_thread(glex_fabric_t *f, pthread_t th);
int glex_place_check_env(void);

#endif
