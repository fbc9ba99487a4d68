/* glex_coll.h - schedule compiler and collective API over the emulated NIC.
 * Knows nothing of MPICH: a group is (size, my rank, rank -> NodeID/VP). */
#ifndef GLEX_COLL_H
#define GLEX_COLL_H

#include "glex_emu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GLEX_COLL_BCAST, GLEX_COLL_REDUCE, GLEX_COLL_ALLREDUCE, GLEX_COLL_BARRIER,
    GLEX_COLL_KIND_COUNT
} glex_coll_kind_t;

typedef enum {
    GLEX_ALGO_AUTO, GLEX_ALGO_BINOMIAL, GLEX_ALGO_RECURSIVE_DOUBLING,
    GLEX_ALGO_RABENSEIFNER, GLEX_ALGO_DOUBLE_TREE,
    GLEX_ALGO_DIRECT, /* mailboxes + RDMA, run by the calling thread (doc/algorithms.md) */
    GLEX_ALGO_MULTICAST, /* bcast (and allreduce's second half) by multicast in the
                            modeled routers (doc/multicast.md) */
    GLEX_ALGO_TWO_LEVEL, /* node-aware: within each host, then between hosts, then back
                            (doc/multinode.md) */
    GLEX_ALGO_FLAT_READ, /* bcast on one host: every receiver's NIC reads the root's
                            buffer (doc/algorithms.md) */
    GLEX_ALGO_FLAT,      /* bcast, reduce, allreduce, barrier in one step: every
                            member's vector to the root (or all), combined in rank
                            order; up to 17 members and GLEX_FLAT_MAX bytes */
    GLEX_ALGO_COUNT
} glex_algo_t;

#define GLEX_IN_PLACE ((const void *)-1)

const char *glex_coll_kind_name(glex_coll_kind_t k);
const char *glex_algo_name(glex_algo_t a);
/* parse an algorithm name; GLEX_EINVAL (message lists the valid names for k) */
int glex_algo_parse(glex_coll_kind_t k, const char *s, glex_algo_t *out);
/* 1 if algorithm a exists for collective k */
int glex_algo_valid(glex_coll_kind_t k, glex_algo_t a);

typedef struct glex_group glex_group_t;

/* The thresholds a group runs with (glex_coll_select.c is their one home;
 * doc/user-guide.md has each variable).  -1 = auto.  Members of a group
 * must have the same rdma_kb, stage_kb and stage_map: the direct path's
 * first call checks it (GLEX_EMISMATCH). */
typedef struct glex_coll_policy {
    int64_t segment_kb;  /* pipelining segment, 1..65536 KiB   GLEX_COLL_SEGMENT_KB */
    int64_t plan_cache;  /* compiled plans kept per group      GLEX_COLL_PLAN_CACHE */
    int64_t rdma_kb;     /* direct path: RDMA above, 0..1024 KiB  GLEX_RDMA_KB */
    int64_t stage_kb;    /* direct path: stage calls up to, KiB   GLEX_STAGE_KB */
    int64_t stage_map;   /* direct path: stages mapped, allreduce/bcast staged too (1)
                            or reduce only, read by RDMA (0)    GLEX_STAGE_MAP */
    int64_t read_kb;     /* 2-7 ranks on one host: bcasts (auto: flat_read) up to
                            1 MiB and binomial reduces with a CPU each up to 256 KiB
                            read in place from this size; 0 never, 0..65536 KiB,
                            auto: 8 where this machine's DMA read pays   GLEX_READ_KB */
} glex_coll_policy_t;
#define GLEX_STAGE_KB_MAX 4194304u /* GLEX_STAGE_KB: 4 GiB */
void glex_coll_policy_default(glex_coll_policy_t *p);
/* overlay the GLEX_* variables; GLEX_EINVAL names variable, value and range */
int glex_coll_policy_from_env(glex_coll_policy_t *p);
int glex_coll_policy_check(const glex_coll_policy_t *p);

/* members[r] = NodeID of rank r, vps[r] = its VP.  group_key must be the same
 * on every member and unique among the fabric's live groups.  The policy is
 * the defaults overlaid with the environment. */
int glex_group_create(glex_vp_t *vp, uint64_t group_key, uint32_t size, uint32_t rank,
                      const uint32_t *nodes, const uint16_t *vps, glex_group_t **out);
/* the same with a given policy (copied; NULL: from the environment) */
int glex_group_create_policy(glex_vp_t *vp, uint64_t group_key, uint32_t size, uint32_t rank,
                             const uint32_t *nodes, const uint16_t *vps,
                             const glex_coll_policy_t *pol, glex_group_t **out);
void glex_group_free(glex_group_t *g);
/* Set up the group's multicast tree now (collective: every member calls it,
 * and with nothing else of the group in flight): rank 0 creates it in the
 * modeled routers and the members agree whether it was created (a blocking
 * engine allreduce).  Otherwise the first multicast call does it, blocking
 * inside that call: a caller with other operations pending that need its
 * progress (MPI) sets up at group creation instead.  1: the group multicasts;
 * 0: it cannot (a full router table, members sharing a node...); < 0: error. */
int glex_group_mcast_prepare(glex_group_t *g);
uint32_t glex_group_size(const glex_group_t *g);
uint32_t glex_group_rank(const glex_group_t *g);
/* how many hosts its members are on (1 on one host); a group across hosts
 * runs its nonblocking calls too under its leased JobID, one at a time */
uint32_t glex_group_hosts(const glex_group_t *g);

typedef struct glex_coll_args {
    glex_coll_kind_t kind;
    glex_algo_t algo;      /* GLEX_ALGO_AUTO picks from the threshold table */
    int host_mode;         /* 1: host-based (host posts every step) */
    uint32_t root;         /* bcast, reduce */
    uint64_t count;        /* elements */
    glex_type_t type;
    glex_op_t op;          /* reduce, allreduce */
    const void *sendbuf;   /* GLEX_IN_PLACE or == recvbuf: in place */
    void *recvbuf;         /* bcast: the buffer; reduce: significant at root */
    int blocking;          /* 1: the caller waits for the call before it starts another
                              on the group (glex_coll_run sets it).  As in MPI, a
                              blocking call never matches a nonblocking one: every
                              member must say the same.  Blocking calls share the
                              group's leased JobID; only they may name 'direct' */
} glex_coll_args_t;

/* Which algorithm a call will run: the one asked for when it fits the call,
 * else what 'auto' picks.  GLEX_ENOTSUP when op x type is not offloadable. */
int glex_coll_resolve(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t *out);

typedef struct glex_req glex_req_t;
int glex_coll_start(glex_group_t *g, const glex_coll_args_t *a, glex_req_t **out);
/* *done = 1 when complete; returns the request's status once done */
int glex_coll_test(glex_req_t *r, int *done);
/* blocks (futex, not spinning) until done; returns the status */
int glex_coll_wait(glex_req_t *r);
void glex_coll_req_free(glex_req_t *r);
glex_algo_t glex_coll_req_algo(const glex_req_t *r);
/* JobID held by the request while it runs (-1 before and after) */
int glex_coll_req_job(const glex_req_t *r);
/* start + wait + free */
int glex_coll_run(glex_group_t *g, const glex_coll_args_t *a);

/* What the NIC did for a group's calls of one collective, algorithm and mode
 * (host: 0 offload, 1 host-based), summed from its tasks' CQEs: calls,
 * tasks (CQEs), descriptors executed, data packets sent and received, ALU
 * operations.  A direct-path call counts as a call with no NIC work. */
typedef struct glex_coll_stats {
    uint64_t calls, tasks, descriptors, sent, received, alu_ops;
} glex_coll_stats_t;
int glex_group_stats(const glex_group_t *g, glex_coll_kind_t k, glex_algo_t a, int host,
                     glex_coll_stats_t *out);

/* Compiled plans cached in this group (for tests and tools). */
uint32_t glex_group_plans(const glex_group_t *g);
/* Number of descriptors this rank posts for the call (compiles if needed). */
int glex_coll_plan_size(glex_group_t *g, const glex_coll_args_t *a);

#ifdef __cplusplus
}
#endif
#endif
