/* glex_coll_internal.h - schedule compiler internals. */
#ifndef GLEX_COLL_INTERNAL_H
#define GLEX_COLL_INTERNAL_H

#include "glex_coll.h"

#include <stdbool.h>

#define glex_error glex_set_error

/* buffer references inside plan templates: tag in the top byte, byte offset below */
enum { BUF_NONE = 0, BUF_SEND = 1, BUF_RECV = 2, BUF_TMP = 3 };
/* (the NIC's base registers of a post by reference: glex_vp_post_list) */
#define REF(buf, off) GLEX_ADDR_REL(buf, off)

typedef struct glex_plan_sig {
    int kind, algo, host, inplace;
    uint32_t root;
    uint64_t count;
    int type, op;
} glex_plan_sig_t;

typedef struct glex_plan {
    struct glex_plan *next;   /* hash chain */
    glex_plan_sig_t sig;
    uint64_t hash, last_use;
    uint32_t refs;            /* requests using it: never evicted while > 0 */
    glex_desc_t *d;
    uint32_t n;
    uint32_t split;           /* > 0: [0, split) is posted as a sequence of its own (sends
                                 that must not hold up the receives after them), [split, n)
                                 as another; each ends with a CQE */
    uint64_t tmp_bytes;
    void **tmp_free;      /* scratch buffers ready for reuse */
    uint32_t ntmp, captmp;
} glex_plan_t;

#define GLEX_PLAN_BUCKETS 256u

typedef struct glex_direct glex_direct_t;

/* one of a group's last calls of one kind: a call with the same arguments
 * (a loop) reuses its algorithm and plan (not referenced: eviction clears
 * it).  GLEX_MEMO_WAYS a kind: a loop of a few shapes (roots taking turns,
 * two sizes) finds each without choosing the algorithm again (2 ranks, 8 B,
 * roots taking turns, medians of 6 in turn: bcast 0.405 -> 0.345 us, reduce
 * 0.40 -> 0.37, NOTES 2026-12-03) */
#define GLEX_MEMO_WAYS 4u
typedef struct glex_call_memo {
    glex_plan_t *plan; /* NULL: nothing kept */
    glex_algo_t algo, asked;
    int host, blocking, type, op;
    uint32_t root, bufs;
    uint64_t count;
} glex_call_memo_t;

struct glex_group {
    glex_vp_t *vp;
    glex_fabric_t *f;
    uint64_t key;
    uint32_t size, rank;
    uint32_t *nodes;
    uint16_t *vps;
    uint64_t calls;
    glex_plan_t *buckets[GLEX_PLAN_BUCKETS];
    uint32_t nplans, max_plans; /* GLEX_COLL_PLAN_CACHE */
    uint64_t use_clock;
    glex_call_memo_t memo[GLEX_COLL_KIND_COUNT][GLEX_MEMO_WAYS];
    uint8_t memo_next[GLEX_COLL_KIND_COUNT]; /* the way the next kept call takes */
    glex_coll_policy_t pol; /* thresholds (glex_coll_select.c) */
    int lease;            /* JobID of the group's blocking calls, or -1: one per call */
    uint32_t lease_calls; /* calls under it: each its own key generation ... */
    uint32_t lease_done;  /* ... and, one at a time, in call order: */
    struct glex_req *lq_head, *lq_tail; /* calls under it not yet posted */
    glex_coll_stats_t stats[GLEX_COLL_KIND_COUNT][GLEX_ALGO_COUNT][2];
    glex_direct_t *direct; /* direct path (glex_coll_direct.c) */
    int direct_state;      /* 0 not set up yet, 1 on, -1 off (a member had no mailbox) */
    struct glex_req *spare; /* a finished direct-path request kept for the next call */
    struct glex_req *dfirst, *dlast; /* direct calls in flight, oldest first */
    /* multicast (glex_coll_mcast.c): 0 not set up yet, 1 the group's tree is
     * in the routers, -1 off (its creation failed on a member's word) */
    int mcast_state;
    bool mcast_shape;   /* a node of its own and one VP for every member */
    uint64_t mcast_refreshed; /* rank 0, the creator: its last refresh (ns) */
    /* hosts (doc/multinode.md): each member's host, numbered 0..nhosts-1 in
     * the order of their first member */
    uint32_t *host, nhosts;
};

/* a direct-path call in progress */
typedef struct glex_dcall {
    glex_coll_args_t a;
    uint64_t bytes;
    int large;          /* by RDMA (bytes above the mailbox slot) */
    int staged;         /* large, through stages: a reduce's senders, a bcast's
                         * root, every allreduce rank copy their data out first
                         * and readers take it from there as it arrives */
    int out;            /* staged: this rank's data is in its stage */
    uint64_t ci;        /* large reduce/allreduce: next chunk of this rank's share;
                         * staged allreduce/bcast, then: next chunk to gather */
    uint32_t rq;        /* large reduce: next rank to combine in chunk ci */
    const uint8_t *first; /* ... rank 0's data for that chunk, not copied */
    uint32_t c;         /* call number */
    int st;
    uint32_t q;         /* next rank to wait for */
    int notify;         /* slot written, sleeping peers not yet woken */
    uint32_t polls;     /* unsuccessful polls (the clock is read every 64th) */
    uint64_t wait_since, next_check;
    int status;
} glex_dcall_t;

/* direct path: set up at the first call (claim this rank's mailbox: 1 when
 * it has one; the members agree; open: 1 on, 0 off for good), start,
 * advance (1 when done), and tear down at group free */
int glex_direct_claim(glex_group_t *g);
int glex_direct_open(glex_group_t *g, int all);
int glex_direct_start(glex_group_t *g, const glex_coll_args_t *a, glex_dcall_t *c);
int glex_direct_poll(glex_group_t *g, glex_dcall_t *c);
void glex_direct_free(glex_group_t *g);

/* schedule under construction */
typedef struct glex_sched {
    const glex_group_t *g;
    const glex_coll_args_t *a;
    bool inplace;
    size_t es;
    uint64_t seg_bytes;
    glex_desc_t *d;
    uint32_t n, cap;
    int err;
    uint64_t tmp_bytes;
    uint32_t split; /* > 0: descriptors [0, split) are a sequence of their own,
                       run by the NIC alongside the rest (glex_plan_t) */
    bool read;      /* a binomial reduce's steps are read transfers: each child
                       offers its vector, its parent's NIC reads and combines it
                       (glex_sel_read_in_place) */
} glex_sched_t;

void glex_sc_send(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt);
void glex_sc_recv(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt, bool red);
void glex_sc_xchg(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t sref, uint64_t scnt,
             uint64_t rref, uint64_t rcnt, bool red);
void glex_sc_fwd(glex_sched_t *s, uint32_t src, uint32_t rseq, uint32_t dst, uint32_t sseq,
            uint64_t ref, uint64_t cnt, bool red);
void glex_sc_local(glex_sched_t *s, uint64_t sref, uint64_t dref, uint64_t cnt, bool red);
/* the counter trigger: one descriptor combines k packets (peers[i] with
 * SeqID seqs[i], in that order) into ref, then (dst >= 0) forwards the
 * result to dst with SeqID dseq; only for k = 2..16 inline-sized packets */
bool glex_sc_many_fits(const glex_sched_t *s, uint64_t cnt, int k);
void glex_sc_combine_many(glex_sched_t *s, const uint32_t *peers, const uint32_t *seqs, int k,
                     uint64_t ref, uint64_t cnt, int64_t dst, uint32_t dseq);
/* the last descriptor's receive combines the node's own data at ref with
 * what arrives (recv = ref op packet: swap_local_data), in place of a local
 * copy of ref into the receive buffer first */
void glex_sc_operand(glex_sched_t *s, uint64_t ref);
/* one descriptor sends ref to k = 1..GLEX_MAX_FANOUT peers (each with
 * SeqID seq): an inline packet each, or (read: a read transfer, one host,
 * real time) an offer each, whose NICs read it; the receive that reads it
 * from peer */
void glex_sc_send_many(glex_sched_t *s, const uint32_t *peers, uint32_t k, uint32_t seq,
                       uint64_t ref, uint64_t cnt, bool read);
void glex_sc_read_recv(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt);
/* the receive that reads cnt elements from byte off of peer's offer of
 * total bytes (red: combined into ref by the ALU) */
void glex_sc_read_part(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt,
                       uint64_t off, uint64_t total, bool red);
void glex_sc_need_tmp(glex_sched_t *s, uint64_t bytes);
/* element displacement of block i of n blocks of cnt elements (the first
 * cnt % n one element longer) */
uint64_t glex_block_at(uint64_t cnt, uint32_t n, uint32_t i);

/* shapes shared by algorithms */
static inline uint32_t pof2_floor(uint32_t n)
{
    uint32_t p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}
static inline uint32_t log2u(uint32_t p)
{
    uint32_t k = 0;
    while ((1u << k) < p)
        k++;
    return k;
}
/* binomial tree in virtual ranks (root 0): parent (or -1), children in the
 * order they are combined (increasing distance); returns child count */
int glex_binomial(uint32_t v, uint32_t n, int64_t *parent, uint32_t *children, uint32_t *bits);
/* in-order binary tree over positions [0, m): parent position (-1 = tree root) and
 * up to two children (-1 = none) of position p */
void glex_inorder_tree(uint32_t m, uint32_t p, int64_t *parent, int64_t kids[2]);
/* segments: nseg and elements per segment for cnt elements */
void glex_segments(const glex_sched_t *s, uint64_t cnt, uint64_t *nseg, uint64_t *seg);

/* algorithm bodies */
void glex_build_bcast(glex_sched_t *s, glex_algo_t algo);
void glex_bcast_mcast(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt);
/* multicast (glex_coll_mcast.c): the group's GID (the same on every
 * member), whether its members can have a tree (a node of its own and one
 * VP each; at group creation), the creator's refresh while in use, and
 * deletion with the group */
glex_gid_t glex_mcast_gid(const glex_group_t *g);
bool glex_mcast_shape(const glex_group_t *g);
void glex_mcast_touch(glex_group_t *g);
void glex_mcast_free(glex_group_t *g);
/* elements in one multicast descriptor (glex_coll_select.c) */
uint64_t glex_sel_mcast_elems(const glex_group_t *g, size_t es);
void glex_build_reduce(glex_sched_t *s, glex_algo_t algo);
void glex_build_allreduce(glex_sched_t *s, glex_algo_t algo);
/* pieces the two-level algorithm composes (on a view of the group) */
void glex_reduce_binomial(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src,
                          uint64_t cnt);
void glex_allreduce_rd(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt);
void glex_bcast_binomial(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt,
                         uint32_t seqbase);
/* two_level (glex_coll_hier.c): each host's members, then their leaders
 * across hosts, then each host again */
void glex_build_two_level(glex_sched_t *s);
/* one-step schedules (glex_coll_flat.c): flat_read bcast; flat bcast,
 * reduce, allreduce and barrier (up to 17 members and GLEX_FLAT_MAX bytes:
 * glex_flat_fits; a larger allreduce on one host, in real time, with a
 * count of at least the group's size: glex_flat_allreduce_reads) */
#define GLEX_FLAT_MAX (64u * 1024u)
void glex_bcast_flat_read(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt);
bool glex_flat_fits(const glex_group_t *g, uint64_t bytes);
bool glex_flat_allreduce_reads(const glex_group_t *g, uint64_t cnt, uint64_t bytes);
void glex_reduce_flat(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src, uint64_t cnt);
void glex_allreduce_flat(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt);
void glex_bcast_flat(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt);
/* ---- policy (glex_coll_select.c): the one home of thresholds ---- */
/* does algorithm a fit this call? */
bool glex_algo_fits(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo);
/* the selection table's choice (never 'direct') */
glex_algo_t glex_algo_auto(const glex_group_t *g, const glex_coll_args_t *a);
/* pipelining segment in bytes: the same on every member */
uint64_t glex_sel_segment_bytes(const glex_group_t *g, const glex_coll_args_t *a, size_t es);
/* direct path: messages above this many bytes go by RDMA, not a mailbox slot */
size_t glex_sel_rdma_bytes(const glex_group_t *g);
/* direct path: is a large call of this kind and size staged? */
int glex_sel_staged(const glex_group_t *g, glex_coll_kind_t kind, uint64_t bytes);
/* a bcast (flat_read) or binomial reduce of bytes moved by the receiving
 * NICs' DMA reads: a few ranks on one host, real time, GLEX_READ_KB */
bool glex_sel_read_in_place(const glex_group_t *g, glex_coll_kind_t kind, uint64_t bytes);
/* direct path: are stages mapped (memfd) rather than read by RDMA? */
int glex_sel_stage_map(const glex_group_t *g);
/* what members must agree on: a positive digest of the direct path's policy */
int64_t glex_coll_policy_digest(const glex_coll_policy_t *p);
/* direct path: small slots whose data lines a reader fetches at once (bytes) */
#define GLEX_SEL_PREFETCH_MAX 512u

/* cached or newly compiled plan, with a reference taken; drop it with plan_put */
glex_plan_t *glex_plan_get(glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo,
                           int *err);
void glex_plan_put(glex_plan_t *p);
#endif
