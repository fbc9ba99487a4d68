/* glex_emu.h - public API of the emulated GLEX NIC (collective offload model).
 *
 * The NIC model knows nothing of collectives or MPI: it offers a shared-memory
 * fabric, virtual ports (VP) with descriptor queues (DQ), completion queues (CQ)
 * and receive queues (RQ), a trigger unit with a hash-table packet buffer per
 * offload unit, pulsed credit flow control and an ALU.  See doc/nic-model.md.
 */
#ifndef GLEX_EMU_H
#define GLEX_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GLEX_ABI_VERSION 22u

/* ---- error codes (all negative; 0 is success) ---- */
enum {
    GLEX_OK = 0,
    GLEX_EINVAL = -1,     /* a field or argument is out of range */
    GLEX_ENOTSUP = -2,    /* op x type combination the ALU lacks: not offloadable */
    GLEX_EAGAIN = -3,     /* queue or table full: retry after progress */
    GLEX_ETIMEDOUT = -4,  /* a packet or credit did not come within the timeout */
    GLEX_ENOMEM = -5,
    GLEX_ESYS = -6,       /* a system call failed (message has errno text) */
    GLEX_EMISMATCH = -7,  /* segment magic/ABI/size/parameters differ */
    GLEX_EBUSY = -8,      /* resource in use (VP already open, ...) */
    GLEX_ENOENT = -9,
    GLEX_EDEAD = -10,     /* a peer's process died or left the job while needed */
    GLEX_ESIZE = -11,     /* sender and receiver disagree on a message's size */
    GLEX_ETRUNC = -12,    /* more data arrived than the receiving descriptor expects */
    GLEX_ENOSPC = -13     /* a table is full (a router's multicast table, group records) */
};

/* Text of the last error raised by this thread (names field, value, range). */
const char *glex_last_error(void);
const char *glex_strerror(int code);
/* Record a formatted message for glex_last_error(); returns code. */
int glex_set_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- copying: memcpy/memmove as the NIC's DMA moves bytes, without
 * memcpy's slow case (a destination 1-63 bytes past the source modulo
 * 4 KiB: glex_emu_copy.c) ---- */
void glex_copy(void *dst, const void *src, size_t n);
void glex_move(void *dst, const void *src, size_t n);
/* a large copy into memory that other cores read next, by streaming stores */
void glex_copy_stream(void *dst, const void *src, size_t n);
/* 1: dst lies 1-63 bytes past src modulo 4 KiB, where memcpy (and the
 * kernel's copy behind cross-memory attach) runs slow */
int glex_copy_slow_distance(const void *dst, const void *src);

/* ---- clock and environment: the one clock and the one GLEX_* parser of
 * every layer ---- */
/* CLOCK_MONOTONIC in nanoseconds */
uint64_t glex_now_ns(void);
/* a cheap clock of a few ms resolution, for timeouts */
uint64_t glex_coarse_ns(void);
/* the variable's text, or NULL when it is unset or empty */
const char *glex_env(const char *name);
/* An unsigned integer in lo..hi into *out, left alone when the variable is
 * unset or empty.  On a bad value GLEX_EINVAL, and glex_last_error() says
 * "NAME=VALUE is invalid: allowed range LO..HI". */
int glex_env_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t *out);
/* the same, also taking the word "auto" (*out = -1): "allowed auto or LO..HI" */
int glex_env_uint_auto(const char *name, uint64_t lo, uint64_t hi, int64_t *out);
/* one of the NULL-terminated words: *out = its index ("allowed a, b or c") */
int glex_env_word(const char *name, const char *const *words, int *out);

/* ---- NIC parameters ---- */
typedef struct glex_params {
    uint32_t units;          /* offload units per node              GLEX_UNITS */
    uint32_t unit_buffer_kb; /* pulse RAM per unit, KiB             GLEX_UNIT_BUFFER_KB */
    uint32_t table_slots;    /* hash-buffer packet slots per unit   GLEX_TABLE_SLOTS */
    uint32_t inline_max;     /* inline payload bytes (MP, packets)  GLEX_INLINE_MAX */
    uint32_t vps_per_node;   /* virtual ports per node              GLEX_VPS_PER_NODE */
    uint32_t dq_depth;       /* descriptors per DQ                  GLEX_DQ_DEPTH */
    uint32_t cq_depth;       /* entries per CQ and RQ               GLEX_CQ_DEPTH */
    uint32_t pulses;         /* k: pulses in flight per transfer    GLEX_PULSES */
    uint32_t timeout_ms;     /* credit/packet wait bound            GLEX_TIMEOUT (s) */
    int32_t spin_us;         /* poll before blocking, -1 = auto     GLEX_SPIN_US */
    int32_t yield_us;        /* then poll + sched_yield, -1 = auto  GLEX_YIELD_US */
    uint32_t mailboxes;      /* mailboxes per node                  GLEX_MAILBOXES */
    uint32_t mailbox_kb;     /* each of a mailbox's 2 slots, KiB    GLEX_MAILBOX_KB */
    uint32_t vtime;          /* virtual time: 1 on, 0 off           GLEX_VTIME */
    uint32_t mcast_entries;  /* multicast table entries per router  GLEX_MCAST_ENTRIES */
    uint32_t mcast_members;  /* largest multicast group             GLEX_MCAST_MEMBERS */
    uint32_t mcast_age_s;    /* unrefreshed table entries age out   GLEX_MCAST_AGE_S */
} glex_params_t;

#define GLEX_INLINE_CAP 256u       /* largest inline_max accepted */
/* an MP's payload at most: its receive-queue slot is five cache lines (the
 * sequence word, the entry's 16-byte header and this), so a 256-byte
 * message with the netmod's 24 header bytes goes in one MP */
#define GLEX_MP_CAP 296u
/* A long MP (glex_vp_try_mp_long) takes up to GLEX_MP_LONG_SLOTS slots in
 * a row: GLEX_MP_CAP bytes in the first, GLEX_MP_SLOT_MORE (a slot but its
 * sequence word) in each further one */
#define GLEX_MP_SLOT_MORE 312u
#define GLEX_MP_LONG_SLOTS 8u
#define GLEX_MP_LONG_CAP (GLEX_MP_CAP + (GLEX_MP_LONG_SLOTS - 1u) * GLEX_MP_SLOT_MORE)
/* the largest copy between processes of one host written by the sender
 * into the receiving unit's eager pages (a memcpy, no credit awaited);
 * larger ones are placed by DMA in the receiver's buffer (doc/nic-model.md) */
#define GLEX_EAGER_BYTES (64u * 1024u)
#define GLEX_MAX_JOBS 256u         /* JobID is 8 bits */
#define GLEX_MAX_NODES (1u << 24)  /* NodeID is 24 bits */
#define GLEX_MAX_VPS 2048u         /* VP is 11 bits */
#define GLEX_MAX_UNITS 64u         /* offload units of a node (GLEX_UNITS) */
#define GLEX_MAX_SEQ 32u           /* SeqID is 5 bits */

void glex_params_default(glex_params_t *p);
/* Overlay GLEX_* environment variables; on a bad value returns GLEX_EINVAL and
 * glex_last_error() names the variable, the value and the allowed range. */
int glex_params_from_env(glex_params_t *p);
int glex_params_check(const glex_params_t *p);
/* hash-buffer slots a unit fills before senders are pushed back (10% reserve) */
uint32_t glex_params_table_usable(const glex_params_t *p);

/* ---- ALU ---- */
typedef enum {
    GLEX_OP_SUM, GLEX_OP_PROD, GLEX_OP_MAX, GLEX_OP_MIN, GLEX_OP_MAXLOC, GLEX_OP_MINLOC,
    GLEX_OP_LAND, GLEX_OP_LOR, GLEX_OP_LXOR, GLEX_OP_BAND, GLEX_OP_BOR, GLEX_OP_BXOR,
    GLEX_OP_COUNT
} glex_op_t;

typedef enum {
    GLEX_INT8, GLEX_UINT8, GLEX_INT16, GLEX_UINT16, GLEX_INT32, GLEX_UINT32,
    GLEX_INT64, GLEX_UINT64, GLEX_FLOAT, GLEX_DOUBLE,
    /* value+index pairs laid out as MPI's C pair types */
    GLEX_FLOAT_INT, GLEX_DOUBLE_INT, GLEX_LONG_INT, GLEX_2INT, GLEX_SHORT_INT,
    GLEX_TYPE_COUNT
} glex_type_t;

typedef struct { float v; int i; } glex_float_int_t;
typedef struct { double v; int i; } glex_double_int_t;
typedef struct { long v; int i; } glex_long_int_t;
typedef struct { int v; int i; } glex_2int_t;
typedef struct { short v; int i; } glex_short_int_t;

size_t glex_type_size(glex_type_t t);
const char *glex_type_name(glex_type_t t);
const char *glex_op_name(glex_op_t op);
/* 1 when the ALU has the kernel, 0 when not (GLEX_ENOTSUP on use). */
int glex_alu_supported(glex_op_t op, glex_type_t type);
/* 1 when the combination is in the paper's hardware set (not an extension). */
int glex_alu_native(glex_op_t op, glex_type_t type);
/* inout[i] = inout[i] (op) in[i]; GLEX_ENOTSUP when unsupported. */
int glex_alu_combine(glex_op_t op, glex_type_t type, void *inout, const void *in, size_t count);
/* out[i] = a[i] op b[i] (a's element first, as in combine); out overlaps neither */
int glex_alu_combine_into(glex_op_t op, glex_type_t type, void *out, const void *a,
                          const void *b, size_t count);

/* ---- descriptors ---- */
typedef enum { GLEX_DESC_MP = 1, GLEX_DESC_RDMA = 2, GLEX_DESC_COLL = 3 } glex_desc_kind_t;

/* One descriptor.  Every field is range-checked by glex_vp_post().
 * Flags are one-bit fields (0 or 1), named as in the paper.  Meanings for
 * GLEX_DESC_COLL (see doc/nic-model.md for the full semantics):
 *   branch=1: wait for the packet (JobID, recv_id, recv_vp, SeqID=cp_count)
 *             addressed to this VP, and copy it to recv_addr, or combine it
 *             into recv_addr with the ALU when reduce_flag=1.
 *   swap_local_vp=1: local step, no network: recv_addr (op)= local_addr.
 *   swap_local_data=1 (a receive with reduce_flag=1): the ALU's other operand
 *             is this host's data at operand_addr, not recv_addr's content:
 *             recv_addr = operand_addr op packet for every packet or pulse (of
 *             a counter trigger: the first listed source's; the others then
 *             combine into recv_addr), so a node's own contribution needs no
 *             local copy step first.  operand_addr's range must not overlap
 *             recv_addr's (it may be the send's range of an exchange).
 *   cp=1:     send send_count elements from local_addr to (dest_id, dest_vp) with
 *             SeqID=seq_id; the packet triggers the destination.
 *   swap_remote_data=1: the data sent is this step's result (sent pulse by
 *             pulse as it is produced: pipelined forward); 0: the data sent is
 *             the pre-step content (exchange).
 *   coll_end_flag=1: the task ends here; a CQE carrying cookie is written.
 * MP:   send inline data[0..inline_len) to (dest_id, dest_vp)'s RQ.
 * RDMA: copy length bytes local_addr -> remote_addr of dest_id (put), or
 *       remote -> local with swap_remote_addr=1 (get), by cross-memory attach.
 */
typedef struct glex_desc {
    uint8_t kind;
    uint8_t c, ch, ct, cp, reduce_flag, coll_end_flag;
    uint8_t swap_local_data, swap_local_vp, swap_remote_data, swap_remote_addr;
    uint8_t job_id;      /* 8 bits */
    uint8_t seq_id;      /* 5 bits: step tag of the packet sent */
    uint8_t cp_count;    /* 5 bits: step tag of the packet awaited */
    uint8_t branch;      /* packets awaited: 0, 1 (recv_id/recv_vp/cp_count), or 2..16
                            listed in data[] (counter trigger, glex_src_t), or with
                            src_range 2..255 from consecutive nodes */
    uint8_t op, type;
    uint8_t src_range;   /* counter trigger over a range: the branch packets come from
                            nodes recv_id .. recv_id + branch - 1, VP recv_vp, SeqID
                            cp_count, applied in node order (no list in data[]) */
    uint8_t mcast;       /* COLL, multicast (doc/multicast.md): with cp=1 the send goes
                            to every member of group remote_addr (a GID) but this node,
                            at VP dest_vp; with branch=1 the receive takes such a
                            stream from recv_id (packets of inline_max bytes) */
    uint8_t fanout;      /* COLL read send (swap_remote_addr, cp=1): destinations; 0 or 1:
                            dest_id/dest_vp/seq_id, 2..GLEX_MAX_FANOUT listed in data[]
                            (glex_src_t: node, VP, SeqID of the offer) */
    uint8_t quiet;       /* MP: no event for the destination's host (it is not woken
                            from a sleep for this message: a later one of the sender
                            wakes it, or it polls); a host on another host decides
                            for itself */
    uint16_t source_vp;  /* 11 bits: the VP that posts it */
    uint16_t dest_vp;    /* 11 bits */
    uint16_t recv_vp;    /* 11 bits: VP of the awaited packet's sender */
    uint16_t inline_len; /* MP payload bytes, <= inline_max */
    uint32_t dest_id;    /* 24 bits NodeID */
    uint32_t recv_id;    /* 24 bits NodeID of the awaited packet's sender */
    uint64_t count;      /* elements received/combined, or of a local step (COLL) */
    uint64_t send_count; /* elements sent when cp=1 (COLL) */
    uint64_t length;     /* bytes (RDMA) */
    uint64_t local_addr;
    uint64_t recv_addr;
    uint64_t remote_addr;
    uint64_t operand_addr; /* COLL with swap_local_data: the ALU's local operand */
    uint64_t cookie;     /* returned in the CQE */
    uint8_t data[GLEX_MP_CAP]; /* an MP's payload, or a collective's inline data */
} glex_desc_t;

/* Check one descriptor against the fabric's parameters without posting it. */
typedef struct glex_fabric glex_fabric_t;
typedef struct glex_vp glex_vp_t;
int glex_desc_check(const glex_vp_t *vp, const glex_desc_t *d);

/* A COLL receive with branch = k > 1 (the first paper's counter trigger, up to
 * GLEX_MAX_BRANCH streams): it fires once the CP counter of its (JobID, VP)
 * shows k packets arrived, then takes and applies them in the order its
 * sources are listed in data[] (so a reduction stays reproducible); each
 * packet is an inline one (count elements of at most GLEX_INLINE_MAX bytes). */
#define GLEX_MAX_BRANCH 16u
/* with src_range: sources need no list, up to 255 (a flat gather of 256 nodes) */
#define GLEX_MAX_RANGE_BRANCH 255u
typedef struct glex_src {
    uint32_t node;  /* 24 bits */
    uint16_t vp;    /* 11 bits */
    uint8_t seq;    /* SeqID of its packet, 5 bits */
    uint8_t pad;
} glex_src_t;
/* A COLL descriptor with swap_remote_addr moves its data by the receiver's
 * DMA read (an RDMA get) instead of the sender's writes: its send offers
 * local_addr to each destination with a packet and is done once each
 * destination's NIC said it read all of it; its receive (branch = 1) waits
 * for that offer, reads the message into recv_addr (with reduce_flag: into
 * unit RAM a pulse at a time, each combined into recv_addr by the ALU),
 * then says so.  Between nodes of one host, in real time (doc/nic-model.md). */
#define GLEX_MAX_FANOUT 32u
static inline glex_src_t *glex_desc_srcs(glex_desc_t *d) { return (glex_src_t *)(void *)d->data; }
static inline const glex_src_t *glex_desc_srcs_c(const glex_desc_t *d)
{
    return (const glex_src_t *)(const void *)d->data;
}

typedef struct glex_cqe {
    uint64_t cookie;
    int32_t status;   /* GLEX_OK or a negative code */
    uint16_t job_id;
    uint16_t vp;
    uint32_t ndesc;    /* descriptors executed in the task */
    uint32_t sent;     /* data packets (inline or pulses) the task sent */
    uint32_t received; /* data packets it took from the hash buffer and applied */
    uint32_t alu_ops;  /* of these, combined by the ALU (and local combine steps) */
    uint32_t alu_elems; /* elements those ALU operations combined (saturating) */
    uint64_t vt;       /* GLEX_VTIME: virtual time (ps) the NIC wrote it to host memory */
} glex_cqe_t;

typedef struct glex_rqe {
    uint32_t src_id;
    uint16_t src_vp;
    uint16_t len;
    uint64_t vt; /* GLEX_VTIME: virtual time (ps) the NIC wrote it to host memory */
    uint8_t data[GLEX_MP_CAP];
} glex_rqe_t;

/* ---- fabric and VPs ---- */
/* Create or attach the job's segment "/glex-<uid>-<job>" (mode 0600) as node
 * node_id of nnodes.  The last process to close unlinks it.  Starts this
 * process's engine thread (placement: GLEX_ENGINE_BIND, doc/user-guide.md). */
int glex_fabric_open(const char *job, uint32_t nnodes, uint32_t node_id,
                     const glex_params_t *params, glex_fabric_t **out);
int glex_fabric_close(glex_fabric_t *f);
/* ---- across hosts (glex_emu_wire.c, doc/multinode.md) ----
 * A job whose nodes live on several hosts: host_of[node] (nnodes entries,
 * each < nhosts) names every node's host.  Each host keeps its nodes in a
 * segment of its own ("/glex-<uid>-<job>.h<host>"); packets, credits,
 * receive-queue messages and RDMA to a node of another host travel over
 * libfabric (FI_EP_RDM; FI_PROVIDER, default "tcp;ofi_rxm").  After opening,
 * every process publishes glex_fabric_address and hands the job's
 * addresses, in node order, to glex_fabric_connect before it posts anything
 * for another host.  JobIDs are agreed at node 0 (a request over the fabric
 * from other hosts).  GLEX_ENOTSUP in a build without libfabric.
 * host_of == NULL or a single host: as glex_fabric_open. */
int glex_fabric_open_hosts(const char *job, uint32_t nnodes, uint32_t node_id,
                           const glex_params_t *params, uint32_t nhosts, const uint32_t *host_of,
                           glex_fabric_t **out);
#define GLEX_ADDR_MAX 96u /* bytes of one node's fabric address, at most */
/* this process's fabric address into buf (GLEX_ADDR_MAX bytes), *len its size */
int glex_fabric_address(glex_fabric_t *f, void *buf, size_t *len);
/* every node's address: addrs[i * stride .. + len[i]) for node i; a no-op on one host */
int glex_fabric_connect(glex_fabric_t *f, const void *addrs, size_t stride, const size_t *len);
/* 1 when node is on this process's host (always on one host) */
int glex_fabric_same_host(const glex_fabric_t *f, uint32_t node);
uint32_t glex_fabric_nhosts(const glex_fabric_t *f);
uint32_t glex_fabric_host(const glex_fabric_t *f);
/* the host of node (0 on one host) */
uint32_t glex_fabric_host_of(const glex_fabric_t *f, uint32_t node);
/* a node's traffic with other hosts: messages and bytes sent and received;
 * provider: this process's libfabric provider (empty for other nodes and
 * on one host).  Readable by an observer (glex-info) for the segment's nodes */
typedef struct glex_wire_stats {
    uint64_t msgs_sent, bytes_sent, msgs_received, bytes_received;
    uint64_t held, held_total; /* messages waiting for room here: now, and ever */
    uint64_t writes;           /* of msgs_sent: RDMA writes (FI_RMA) */
    char provider[64];
} glex_wire_stats_t;
int glex_fabric_wire_stats(const glex_fabric_t *f, uint32_t node, glex_wire_stats_t *s);
/* A job on several hosts, where the provider has RDMA writes (FI_RMA):
 * glex_fabric_expose registers this process's memory [base, base+bytes)
 * for writes from other hosts and gives the key they need (one region a
 * process; GLEX_ENOTSUP without FI_RMA or on one host);
 * glex_fabric_remote_region tells this process what node exposed: an RDMA
 * put into it then travels as an RDMA write (the provider placing the data
 * in that memory), any other put as a message its process applies. */
int glex_fabric_expose(glex_fabric_t *f, void *base, uint64_t bytes, uint64_t *key);
int glex_fabric_remote_region(glex_fabric_t *f, uint32_t node, uint64_t base, uint64_t bytes,
                              uint64_t key);
/* Map an existing job's segment read-only to look at its counters, without
 * taking a node or starting an engine (glex-info).  Close with fabric_close. */
int glex_fabric_observe(const char *job, glex_fabric_t **out);
const glex_params_t *glex_fabric_params(const glex_fabric_t *f);
uint32_t glex_fabric_node(const glex_fabric_t *f);
uint32_t glex_fabric_nnodes(const glex_fabric_t *f);
const char *glex_fabric_name(const glex_fabric_t *f);
/* GLEX_OK while every node that attached is alive or has closed cleanly;
 * GLEX_EDEAD naming the first node whose process is gone. */
int glex_fabric_check_peers(glex_fabric_t *f);
/* 1 with *why filled when node died or left the job, or any node died */
int glex_peer_failed(const glex_fabric_t *f, uint32_t node, char *why, size_t len);

/* Stale segments: this user's /dev/shm/glex-<uid>-* whose creator and
 * attached processes are all gone (pid + start time), or that were never
 * sized for a minute.  Removes them (or only reports with dry_run), calling
 * report once per stale segment; returns how many there were, or < 0.
 * glex_fabric_open runs it before creating a segment. */
typedef void (*glex_cleanup_report_t)(const char *segment, const char *why, int removed,
                                      void *arg);
int glex_cleanup_stale(int dry_run, glex_cleanup_report_t report, void *arg);

int glex_vp_open(glex_fabric_t *f, uint32_t vp, glex_vp_t **out);
int glex_vp_close(glex_vp_t *vp);
uint32_t glex_vp_index(const glex_vp_t *vp);
glex_fabric_t *glex_vp_fabric(const glex_vp_t *vp);

/* Post descriptors d[0..n) (one or more CH..CT sequences).  All are checked
 * first; on any error nothing is posted.  GLEX_EAGAIN if the DQ lacks room. */
int glex_vp_post(glex_vp_t *vp, const glex_desc_t *d, size_t n);
/* One MP descriptor (ch = ct = 1, no CQE) from vp to VP dest_vp of node
 * dest_id, its payload the n pieces one after another (GLEX_MP_CAP
 * bytes in all at most): what glex_vp_post of that descriptor does, the
 * payload gathered as the NIC reads it (no descriptor built first).
 * GLEX_EAGAIN if the DQ lacks room. */
typedef struct glex_piece {
    const void *base;
    size_t len;
} glex_piece_t;
int glex_vp_post_mp(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp, const glex_piece_t *p,
                    uint32_t n);
/* the same with flags: 0, or GLEX_MP_QUIET (the descriptor's quiet bit: a
 * message for a host that will be woken by a later one, e.g. the ACKs of a
 * batch but the last); others refused with the value */
#define GLEX_MP_QUIET 1u
int glex_vp_post_mp_flags(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                          const glex_piece_t *p, uint32_t n, unsigned flags);
/* An RDMA put of len bytes from src to remote_addr of node dest_id, then an
 * MP from vp to VP dest_vp of that node, its payload the n pieces, that asks
 * for a CQE carrying cookie (the put's data has left src by then): what
 * glex_vp_post of those two descriptors (a sequence each) does, without
 * building them - data into memory the receiver registered, then the
 * message that tells it where.  GLEX_EAGAIN if the DQ lacks room for both. */
int glex_vp_post_put_mp(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp, const void *src,
                        uint64_t remote_addr, uint64_t len, const glex_piece_t *p, uint32_t n,
                        uint64_t cookie);
/* A NIC atomic: compare-and-swap of the 8-byte word at remote_addr of node
 * dest_id (memory that node registered, glex_region_publish; 8-byte
 * aligned), executed as the call is made: *old gets the word as it was, and
 * it becomes desire if that was expect.  GLEX_OK; GLEX_ENOTSUP when dest_id
 * is on another host, in virtual time or for memory that is not registered
 * (nothing done); GLEX_EINVAL for bad arguments.  Counted as a descriptor
 * posted and executed. */
int glex_vp_atomic_cas(glex_vp_t *vp, uint32_t dest_id, uint64_t remote_addr, uint64_t expect,
                       uint64_t desire, uint64_t *old);
/* A scatter-gather RDMA get, executed as the call is made: the bytes of the
 * nr pieces remote[] of node dest_id's memory, in order, from byte skip of
 * them on, into the nl pieces local[] of this process, in order, up to the
 * shorter list's total (*moved gets the bytes) - a NIC's descriptor with a scatter-gather list on each
 * side; here one cross-memory read per up to 1024 pieces of each.  GLEX_OK;
 * GLEX_ENOTSUP when dest_id is this node or on another host, or in virtual
 * time (nothing done); GLEX_EINVAL for bad arguments (a list NULL or of 0
 * or over GLEX_SGL_MAX pieces); GLEX_ESYS when the read failed.  Counted as
 * a descriptor posted and executed. */
#define GLEX_SGL_MAX (1u << 20)
int glex_vp_get_sgl(glex_vp_t *vp, uint32_t dest_id, const struct iovec *remote, uint32_t nr,
                    uint64_t skip, const struct iovec *local, uint32_t nl, uint64_t *moved);
/* Posting a descriptor list by reference.  A NIC fetches descriptors from
 * host memory by DMA: the host writes one DQ entry naming the list and its
 * registers, and the engine reads each descriptor when it starts it.  The
 * list is the caller's and must stay unchanged until the task's CQE; it is
 * checked once, by glex_list_check, not at every post.  Its addresses may be
 * absolute or relative to base register b = 1..3 of the post,
 * GLEX_ADDR_REL(b, offset); the post's JobID and cookie replace the list's.
 * A list is one sequence (CH on its first descriptor, CT on its last). */
#define GLEX_ADDR_REL(b, off) (((uint64_t)(b) << 56) | (uint64_t)(off))
#define GLEX_ADDR_OFF_MASK ((1ull << 56) - 1)
#define GLEX_POST_HOST_ALU 1u
typedef struct glex_post_regs {
    uint64_t base[4]; /* base[0] unused: an address with top byte 0 is absolute */
    uint64_t cookie;
    uint8_t job_id;
    uint8_t flags;    /* GLEX_POST_HOST_ALU: the host combines this task's data in
                         software (host-based mode): GLEX_VTIME charges the host,
                         not the NIC's ALU (glex_vtime_host_reduce) */
    uint16_t gen_add; /* added to the JobID's generation in this task's packet keys:
                         a JobID held for many tasks (glex_job_lease) gives each its
                         own keys by counting its tasks here */
} glex_post_regs_t;
int glex_list_check(const glex_vp_t *vp, const glex_desc_t *d, size_t n);
/* GLEX_EAGAIN if the DQ is full; GLEX_EINVAL for a null list, n = 0 or a JobID
 * out of range */
int glex_vp_post_list(glex_vp_t *vp, const glex_desc_t *d, uint32_t n,
                      const glex_post_regs_t *regs);
/* Why the last task of this VP that ended with an error CQE failed (the
 * engine thread's message; glex_last_error() is per thread). */
const char *glex_vp_failure(const glex_vp_t *vp);
/* 1 and fills *e when a CQE was taken, 0 when none. */
int glex_vp_poll_cq(glex_vp_t *vp, glex_cqe_t *e);
/* 1 and fills *e when a receive entry was taken, 0 when none.  In virtual
 * time: the entry here that arrived first in virtual time.  GLEX_EINVAL
 * (nothing taken) when the next entry is a long MP: glex_vp_poll_rq_long. */
int glex_vp_poll_rq(glex_vp_t *vp, glex_rqe_t *e);
/* A long MP: as glex_vp_post_mp_flags, of up to GLEX_MP_LONG_CAP bytes,
 * but only executed at the post - its payload, which no descriptor holds,
 * read from the pieces as the call is made.  1 when sent (the pieces may be
 * reused at once); 0 when it cannot go now, nothing done: this VP has
 * descriptors queued or running (the message would pass them), dest_id is
 * on another host, in virtual time, or the destination's receive queue
 * lacks room for its slots (the caller sends otherwise, e.g. a put and an
 * MP); GLEX_EINVAL for bad arguments.  The receiver takes it with
 * glex_vp_poll_rq_long. */
int glex_vp_try_mp_long(glex_vp_t *vp, uint32_t dest_id, uint32_t dest_vp,
                        const glex_piece_t *p, uint32_t n, unsigned flags);
/* A receive entry with room for a long MP's payload: the header as in
 * glex_rqe_t, the payload from glex_rqe_long_data on. */
typedef union glex_rqe_long {
    glex_rqe_t e;
    uint8_t bytes[offsetof(glex_rqe_t, data) + GLEX_MP_LONG_CAP];
} glex_rqe_long_t;
static inline uint8_t *glex_rqe_long_data(glex_rqe_long_t *r)
{
    return r->bytes + offsetof(glex_rqe_t, data);
}
/* glex_vp_poll_rq into a long entry: takes MPs of any length */
int glex_vp_poll_rq_long(glex_vp_t *vp, glex_rqe_long_t *r);
/* A long MP read where it arrived, in the receive queue's slots, as a host
 * reads its NIC's ring: the entry's header (in place) and its payload as
 * up to GLEX_MP_LONG_SLOTS pieces, valid until glex_vp_rq_done, which
 * hands the slots back.  Nothing of the queue is taken past it meanwhile
 * (glex_vp_poll_rq* answer 0): give it back before waiting on anything
 * that needs this queue to move. */
typedef struct glex_rq_view {
    const glex_rqe_t *e;     /* src_id, src_vp, len; e->data: piece 0 */
    const uint8_t *piece[GLEX_MP_LONG_SLOTS];
    uint32_t piece_len[GLEX_MP_LONG_SLOTS];
    uint32_t pieces;
    uint32_t head, slots;    /* the queue's (glex_vp_rq_done) */
} glex_rq_view_t;
/* glex_vp_poll_rq_long, but a long MP is seen in place: 1 when an entry of
 * one slot was copied into *r, 2 when a long one is in *v (give it back
 * with glex_vp_rq_done), 0 when none */
int glex_vp_poll_rq_view(glex_vp_t *vp, glex_rqe_long_t *r, glex_rq_view_t *v);
/* len payload bytes of a viewed entry from byte off on, copied to to */
void glex_rq_view_copy(const glex_rq_view_t *v, uint32_t off, void *to, uint32_t len);
/* the viewed entry's slots handed back to the NIC */
void glex_vp_rq_done(glex_vp_t *vp, const glex_rq_view_t *v);
/* receive entries ready to be taken: written, in order from the head (an
 * entry whose sender has claimed its slot but not yet written it is not) */
uint32_t glex_vp_rq_pending(const glex_vp_t *vp);

/* Progress and blocking.  glex_progress runs the engine inline (returns the
 * amount of work done).  To wait without burning a core:
 *   t = glex_wait_token(f); if (!done) glex_progress(f); if (!done) glex_wait(f, t, ms);
 * glex_wait returns when a packet, a credit or a post reaches this node, or
 * its engine thread writes a CQE, after t was taken.  A CQE that a host
 * thread writes running the engine inline wakes only a host asleep in
 * glex_wait_until (the host bell). */
int glex_progress(glex_fabric_t *f);
uint32_t glex_wait_token(const glex_fabric_t *f);
int glex_wait(glex_fabric_t *f, uint32_t token, int timeout_ms);
/* Mark this host thread as waiting (the engine thread then stays asleep and
 * the host drives progress); pair each begin with an end. */
void glex_host_wait_begin(glex_fabric_t *f);
void glex_host_wait_end(glex_fabric_t *f);

/* Drive progress until done(arg) returns > 0: polls for up to
 * GLEX_SPIN_US, then blocks on the node's doorbell (futex).  GLEX_ETIMEDOUT
 * after timeout_ms (< 0: no limit).  done() returns GLEX_WAIT_MOVED when the
 * condition does not hold yet but done() itself did work (took messages
 * that had arrived): the wait looks again instead of sleeping, since what
 * is already here rings no bell. */
#define GLEX_WAIT_MOVED (-1)
int glex_wait_until(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms);
/* the same, with flags: GLEX_WAIT_NO_ENGINE = what done() waits for needs no
 * engine progress (a host polling memory, e.g. a mailbox): the engine thread, if there is one, is
 * left alone (it keeps serving other traffic) instead of being parked while
 * this host drives the engine */
#define GLEX_WAIT_NO_ENGINE 1u
int glex_wait_until_flags(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms,
                          unsigned flags);
/* For a host that waits in a loop of its own (the MPI netmod's progress):
 * one sleep on this node's host bell of at most timeout_ms (0..1000), as
 * glex_wait_until's last step, unless an engine pass finds work or one of
 * this process's VPs has a receive entry or a CQE waiting, or (if_spare
 * 0) a CPU of this machine would stand idle meanwhile (glex_cpu_to_spare).
 * 1 when it did not sleep, 0 after a sleep (a ring or the timeout ended
 * it), < 0 on a bad timeout. */
int glex_host_nap(glex_fabric_t *f, int timeout_ms, int if_spare);

/* ---- JobID allocation: members of a task agree on a JobID by a 64-bit key ---- */
/* Returns a JobID 0..255 (>= 0) or GLEX_EAGAIN when all 256 are in use. */
int glex_job_acquire(glex_fabric_t *f, uint64_t key, uint32_t members);
void glex_job_release(glex_fabric_t *f, int job_id);
/* A JobID held for a long-lived group of tasks that never overlap on a
 * member (a communicator's blocking collectives), agreed once by key like
 * glex_job_acquire: every member gets the same answer, a JobID (>= 0) or
 * GLEX_ENOENT when half of the 256 are leased already (the group then takes
 * a JobID per task).  Each member releases it with glex_job_release. */
int glex_job_lease(glex_fabric_t *f, uint64_t key, uint32_t members);

/* ---- counters ---- */
typedef struct glex_vp_counters {
    uint64_t desc_posted, desc_executed, tasks_completed, tasks_failed;
    uint64_t packets_sent, packets_received, bytes_sent, bytes_received;
    uint64_t trigger_waits, credit_stalls;
    uint64_t alu_ops; /* ALU operations: a packet or pulse combined, a local combine step */
} glex_vp_counters_t;

typedef struct glex_unit_counters {
    uint64_t packets_buffered, hash_probes, table_high_water, table_used;
    uint64_t ram_high_water_kb, credit_stalls, trigger_waits, tasks_admitted;
    uint64_t stale_dropped; /* packets of failed tasks swept out of a full buffer */
    uint64_t eager_taken;   /* messages written into its eager pages before their receive */
    uint64_t eager_asked;   /* eager-size messages that found them full and asked for credit */
    uint64_t dma_reads;     /* pulses of a sender's offered half its DMA read (doc/nic-model.md) */
    uint64_t eager_high_water_kb; /* its eager pages in use at most (ram_high_water_kb: the rest) */
    uint64_t dma_staged; /* read sends its NIC copied into its send stage for the readers */
} glex_unit_counters_t;

int glex_vp_counters(glex_fabric_t *f, uint32_t node, uint32_t vp, glex_vp_counters_t *c);
int glex_unit_counters(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_unit_counters_t *c);
/* 1 if the VP is open in the fabric */
int glex_vp_is_open(glex_fabric_t *f, uint32_t node, uint32_t vp);

/* hwloc topology summary for tools (returns snprintf's count) */
int glex_topology_summary(char *buf, size_t len);

/* ---- fault injection for tests: random delay (us) before every send ---- */
void glex_debug_set_send_jitter(glex_fabric_t *f, uint32_t max_us, uint32_t seed);

/* ---- virtual time (GLEX_VTIME=1, doc/vtime.md) ----
 * Every NIC keeps virtual clocks and every packet carries its virtual send
 * time; the model charges the host's posts and polls, the NIC's descriptor,
 * packet, trigger and ALU work, PCIe crossings and the links and routers of
 * a k-ary n-tree fat tree, from a parameter file (GLEX_VTIME_PARAMS; the
 * creator's file is the job's).  Off, all of these are no-ops. */
int glex_vtime_on(const glex_fabric_t *f);
/* this host's virtual clock in ns, after adding the real time it spent
 * outside the library since its last call, times GLEX_VTIME_COMPUTE */
double glex_vtime_host_ns(glex_fabric_t *f);
/* the host waits for its NIC's collective (on 1, off 0): meanwhile a
 * receive entry that arrives later in virtual time than the host's clock is
 * held back (glex_vp_poll_rq answers 0), since the collective's completion,
 * still running in real time, may come first in virtual time.  An entry the
 * collective needs (a peer's message to be answered before it can join)
 * passes after GLEX_VT_HOLD_MS of real time.  No-op without virtual time. */
#define GLEX_VT_HOLD_MS 100
void glex_vtime_hold_later(glex_fabric_t *f, int on);
/* the host combines count elements of type in software (host-based mode) */
void glex_vtime_host_reduce(glex_fabric_t *f, glex_type_t type, uint64_t count);
/* this process's clocks (host and NIC units) back to 0: every rank at once,
 * after a barrier (MPI_Init's end) */
void glex_vtime_reset(glex_fabric_t *f);
/* the modeled route between two nodes: links and routers crossed */
void glex_vtime_route(const glex_fabric_t *f, uint32_t a, uint32_t b, uint32_t *links,
                      uint32_t *routers);
/* the model's parameters in force, as a parameter file (snprintf's count) */
int glex_vtime_describe(const glex_fabric_t *f, char *buf, size_t len);
/* the same for the defaults overlaid with GLEX_VTIME_PARAMS, without a
 * fabric (glex-info); GLEX_EINVAL names the file, line and parameter */
int glex_vtime_describe_env(char *buf, size_t len);

/* ---- the network and multicast (glex_emu_net.c, doc/multicast.md) ----
 * The modeled fat tree (a k-ary n-tree of radix-port routers, k = radix/2,
 * nodes numbered as NodeIDs) is in the segment: each router has a multicast
 * forwarding table (GLEX_MCAST_ENTRIES entries: a GID and the set of its
 * ports on the group's tree) and every link counts the multicast and
 * set-up packets that crossed it.  A group's tree is the union of its
 * creator's unicast routes to the members (routes go up by the source's
 * digits, so one source's routes form a tree); a packet multicast by any
 * member is copied by each router to every port of the entry but the one
 * it came in on. */
typedef uint64_t glex_gid_t; /* creating NodeID << 32 | sequence number */
/* a multicast descriptor's packets (inline_max bytes each; 16-bit fragment) */
#define GLEX_MCAST_MAX_PACKETS 65536u
#define GLEX_GID(node, seq) (((uint64_t)(node) << 32) | (uint32_t)(seq))
/* Create group GLEX_GID(this node, seq) of nodes[0..n) (this node among
 * them, no node twice) and dispatch its tree to the routers: group-creation
 * packets down the tree install each router's entry, the members are
 * notified (glex_mcast_state).  Errors: GLEX_EINVAL for n outside
 * 1..GLEX_MCAST_MEMBERS, a node out of range or twice, this node missing;
 * GLEX_EBUSY when the GID is in use; GLEX_ENOSPC when a router on the
 * tree has no free entry (nothing is installed then) or the job's group
 * records are all in use. */
int glex_mcast_create(glex_fabric_t *f, uint32_t seq, const uint32_t *nodes, uint32_t n,
                      glex_gid_t *out);
/* delete a group this node created: group-deletion packets to the tree's
 * routers free their entries.  GLEX_ENOENT if there is no such group,
 * GLEX_EINVAL if another node created it */
int glex_mcast_delete(glex_fabric_t *f, glex_gid_t gid);
/* the creator refreshes its group's entries (they age out GLEX_MCAST_AGE_S
 * after the last refresh or packet when a router needs room) */
int glex_mcast_refresh(glex_fabric_t *f, glex_gid_t gid);
/* as a member sees it: GLEX_OK created (this node notified), GLEX_ENOENT
 * not (or no longer) */
int glex_mcast_state(const glex_fabric_t *f, glex_gid_t gid);
typedef struct glex_net_shape {
    uint32_t radix, k, levels, routers, entries;
} glex_net_shape_t;
void glex_net_shape(const glex_fabric_t *f, glex_net_shape_t *out);
/* one direction of a link: the router's port, out of the router (dir 0) or
 * into it (dir 1, a node injecting at its leaf router) */
typedef struct glex_link_stats {
    uint64_t packets, head_flits, bytes;
} glex_link_stats_t;
int glex_net_link(const glex_fabric_t *f, uint32_t router, uint32_t port, int dir,
                  glex_link_stats_t *out);
/* sums: what nodes injected (node -> leaf router links), and every link */
void glex_net_totals(const glex_fabric_t *f, glex_link_stats_t *injected,
                     glex_link_stats_t *all);
/* entries in use in a router's table */
uint32_t glex_net_entries_used(const glex_fabric_t *f, uint32_t router);
/* router r's level (1 = leaf) */
uint32_t glex_net_router_level(const glex_fabric_t *f, uint32_t router);

/* ---- mailboxes, RDMA and mapped regions (glex_emu_mbox.c, glex_emu_region.c):
 * the host-memory paths of the NIC (what the schedule compiler builds its
 * direct baseline on; the NIC model itself gives them no collective meaning) ----
 * Each node has GLEX_MAILBOXES mailboxes (two GLEX_MAILBOX_KB slots and a
 * few header lines each) in the segment:
 * a fixed slot area whose address every process of the job knows (the
 * pre-posted ring of a real NIC's small-message path).  A process claims one
 * of its node's mailboxes under a (key, index) pair; any process of the job
 * finds it by the same pair and reads its area; only the owner writes it.
 * RDMA read/write move bytes between this process's memory and a peer
 * node's process memory in one copy (cross-memory attach). */
typedef struct glex_mbox glex_mbox_t;
/* GLEX_EBUSY when every mailbox of this node is taken */
int glex_mbox_claim(glex_fabric_t *f, uint64_t key, uint32_t index, glex_mbox_t **out);
void glex_mbox_release(glex_fabric_t *f, glex_mbox_t *m);
/* a claimed mailbox of node, or NULL (not claimed yet, or released) */
glex_mbox_t *glex_mbox_find(glex_fabric_t *f, uint32_t node, uint64_t key, uint32_t index);
/* the mailbox's area (zeroed at claim) and its size in bytes */
void *glex_mbox_area(glex_mbox_t *m);
/* does the mailbox whose area this is still hold (key, index)?  0 once its
 * owner released it (it may serve another key since, its words zeroed) */
int glex_mbox_holds(const void *area, uint64_t key, uint32_t index);
size_t glex_mbox_bytes(const glex_fabric_t *f);
/* after writing to a mailbox: wake the host of node if it sleeps in
 * glex_wait_until (a spinning host sees the write by itself).  In two steps,
 * to wake only a host that waits for this writer: glex_host_asleep (orders
 * the caller's earlier writes before its look) then glex_wake_host. */
void glex_notify(glex_fabric_t *f, uint32_t node);
int glex_host_asleep(glex_fabric_t *f, uint32_t node);
void glex_wake_host(glex_fabric_t *f, uint32_t node);
/* one copy between this process's local and node's process memory at
 * remote; GLEX_EDEAD when that process is gone, GLEX_ESYS otherwise */
int glex_rdma_read(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, size_t len);
int glex_rdma_write(glex_fabric_t *f, uint32_t node, uint64_t remote, const void *local,
                    size_t len);
/* a peer's glex_rdma_write into [local, local+len) is known complete:
 * tells memory checkers (valgrind) that those bytes are now written, which
 * they cannot see themselves across processes */
void glex_rdma_landed(void *local, size_t len);
/* Host memory exported for peers to map (a memfd), so they read it by load
 * rather than by RDMA.  glex_region_alloc: GLEX_ENOTSUP where the system has
 * no memfd/pidfd_getfd, GLEX_ESYS/ENOMEM when the memory is not to be had. */
typedef struct glex_region {
    void *base;
    size_t bytes;
    int32_t fd;  /* what a peer names it by (-1: none) ... */
    uint64_t id; /* ... with this, never the same twice in a process */
} glex_region_t;
int glex_region_alloc(glex_region_t *r, size_t bytes);
void glex_region_free(glex_region_t *r);
/* every page of the region touched from this process now, not on its first
 * use: on this project's VM a page's first access from a process costs
 * about 6 us even once mapped (a ring's first pass paid it message by
 * message); glex_dma_prefault does the same for where this node's NIC will
 * write into a peer's published memory.  12 ms for 8 MiB here. */
void glex_region_prefault(glex_region_t *r);
int glex_dma_prefault(glex_fabric_t *f, uint32_t node, uint64_t addr, uint64_t len);
/* Register a region for the NIC's DMA (as a real NIC registers memory):
 * an RDMA put or get of a peer on this host whose remote address lies inside
 * it is done by the peer's NIC engine in place, by load and store through a
 * mapping, rather than by cross-memory attach.  At most GLEX_PUBLISH_MAX per
 * node (GLEX_EBUSY beyond); withdraw it before freeing it. */
#define GLEX_PUBLISH_MAX 4u
int glex_region_publish(glex_fabric_t *f, const glex_region_t *r);
void glex_region_withdraw(glex_fabric_t *f, const glex_region_t *r);
/* a region node published: its address in that process and its size, or
 * GLEX_ENOENT (none, or node on another host) */
int glex_region_published(glex_fabric_t *f, uint32_t node, uint32_t index, uint64_t *base,
                          uint64_t *bytes);
/* a peer's region mapped read-only here, kept for reuse */
typedef struct glex_rmap {
    const void *base;
    size_t bytes;
    uint32_t node;
    int32_t fd;
    int32_t pid;
    uint32_t failed; /* glex_dma_window: (node, fd, pid, id) could not be mapped */
    uint64_t id;
} glex_rmap_t;
/* map node's region (fd, id), at least bytes long, into *m; a no-op when
 * *m holds it already (else *m is remapped).  The owner must keep the
 * region until the caller is through with it.
 * GLEX_EDEAD when node's process is gone, GLEX_ESYS when it cannot be
 * mapped (no permission: the caller falls back to RDMA) */
int glex_rmap_get(glex_fabric_t *f, uint32_t node, int32_t fd, uint64_t id, size_t bytes,
                  glex_rmap_t *m);
void glex_rmap_drop(glex_rmap_t *m);
/* the spin budget GLEX_SPIN_US resolves to on this fabric (auto: 200 us when
 * this machine has no more of the job's processes than online CPUs, else 0),
 * and the budget of polling with sched_yield after it, GLEX_YIELD_US (auto:
 * 1000 us with 2 to GLEX_YIELD_MAX_PER_CPU processes per online CPU, else 0) */
#define GLEX_YIELD_MAX_PER_CPU 12u
int glex_spin_us(const glex_fabric_t *f);
int glex_yield_us(const glex_fabric_t *f);
/* processes per online CPU, rounded up (1: each has a core), the same on
 * every rank, for choices they must share (collective algorithms): on one
 * host the job's processes over this machine's CPUs; across hosts the
 * busiest machine's, once glex_fabric_set_job_per_cpu has told it */
unsigned glex_procs_per_cpu(const glex_fabric_t *f);
/* the busiest machine's processes per CPU (1..nnodes), agreed by the caller
 * across every process of the job (the max of glex_procs_per_cpu_here) */
int glex_fabric_set_job_per_cpu(glex_fabric_t *f, unsigned per_cpu);
/* the same with the job's processes on this machine only: how a process
 * waits (spinning, yielding, reading the fabric between hosts) */
unsigned glex_procs_per_cpu_here(const glex_fabric_t *f);
/* the job's nodes on this machine: all of them on one host, and for hosts
 * emulated on one machine (GLEX_SPLIT_HOSTS, network namespaces); on real
 * separate machines those of the hosts whose segment this process sees */
unsigned glex_nodes_on_machine(const glex_fabric_t *f);
/* 1 when the job's processes on this machine that are not asleep on their
 * host bell (glex_wait_until, glex_host_nap), leaving node except out, are
 * fewer than its online CPUs: a CPU that process could use without taking
 * one from another.  A snapshot (any may fall asleep or wake the next
 * moment), for choices of speed only; 0 without counting past 64 nodes on
 * this host; always 1 when the processes fit the CPUs. */
int glex_cpu_to_spare(glex_fabric_t *f, uint32_t except);
/* 1 when node, a process of this machine, is awake (not asleep on its host
 * bell) and the awake ones, it included, are at most the online CPUs: it
 * runs now, or will at once.  A snapshot as glex_cpu_to_spare's; always 1
 * when the processes fit the CPUs, 0 for a node of another host. */
int glex_node_has_cpu(glex_fabric_t *f, uint32_t node);
/* this machine's DMA read of another process's memory (cross-memory
 * attach) against the host's copy of the same bytes, x100 (64 KiB, the best
 * of 20 each), measured once per job when this host's segment was created:
 * the same for every process of the host; 0 when the read is refused */
uint32_t glex_dma_read_cost(const glex_fabric_t *f);
/* the same read of a buffer another CPU just wrote against the route it
 * replaces, one CPU copying the bytes into memory both see and the other
 * copying them out, x100 at 64 KiB; 0 when not measured (one CPU, or the
 * read refused) */
uint32_t glex_dma_pair_cost(const glex_fabric_t *f);
/* the smallest size, in KiB (8, 16, 32 or 64), from which that read costs
 * at most the copy pair at every size measured up to 64 KiB: where a NIC
 * reading a peer's buffer in place beats copying it through memory both
 * sides touch; 0 = it never does.  Without the pair measurement: 8 where
 * the read costs at most GLEX_DMA_READ_CHEAP_X100 / 100 copies, else 0.
 * What collectives (GLEX_READ_KB) and point-to-point (GLEX_RDMA_EAGER) take
 * on auto. */
uint32_t glex_dma_read_from_kb(const glex_fabric_t *f);
#define GLEX_DMA_READ_CHEAP_X100 400u
/* 1 when the read pays at 64 KiB (glex_dma_read_from_kb is not 0) */
int glex_dma_read_cheap(const glex_fabric_t *f);
/* the largest copy (bytes, 512 = none, up to 4096) glex_copy makes by its
 * own loop of 16-byte loads and stores rather than memcpy from 513 B, as
 * measured with the pair (copying out what another CPU just wrote); 4096
 * when not measured */
uint32_t glex_copy_loop_max(const glex_fabric_t *f);

#ifdef __cplusplus
}
#endif
#endif
