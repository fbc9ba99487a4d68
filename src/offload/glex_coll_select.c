/* glex_coll_select.c - the schedule compiler's policy, in one place: names
 * and fitting of the algorithms, the 'auto' selection table of each
 * collective (message size x group size x processes per CPU -> algorithm),
 * and every threshold the algorithms use (pipelining segment, the direct
 * path's mailbox/RDMA/stage limits), each overridable by its GLEX_* variable
 * (glex_coll_policy_t, doc/user-guide.md).  Calls nothing else of
 * src/offload. */
#include "glex_coll_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[GLEX_COLL_KIND_COUNT] = { "bcast", "reduce", "allreduce",
                                                              "barrier" };
static const char *const algo_names[GLEX_ALGO_COUNT] = { "auto", "binomial", "recursive_doubling",
                                                         "rabenseifner", "double_tree", "direct",
                                                         "multicast", "two_level", "flat_read",
                                                         "flat" };
/* which algorithms exist for each collective (bit per glex_algo_t) */
static const unsigned algo_mask[GLEX_COLL_KIND_COUNT] = {
    [GLEX_COLL_BCAST] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                        1u << GLEX_ALGO_DOUBLE_TREE | 1u << GLEX_ALGO_DIRECT |
                        1u << GLEX_ALGO_MULTICAST | 1u << GLEX_ALGO_TWO_LEVEL |
                        1u << GLEX_ALGO_FLAT_READ | 1u << GLEX_ALGO_FLAT,
    [GLEX_COLL_REDUCE] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                         1u << GLEX_ALGO_RABENSEIFNER | 1u << GLEX_ALGO_DOUBLE_TREE |
                         1u << GLEX_ALGO_DIRECT | 1u << GLEX_ALGO_TWO_LEVEL |
                         1u << GLEX_ALGO_FLAT,
    [GLEX_COLL_ALLREDUCE] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                            1u << GLEX_ALGO_RECURSIVE_DOUBLING | 1u << GLEX_ALGO_RABENSEIFNER |
                            1u << GLEX_ALGO_DOUBLE_TREE | 1u << GLEX_ALGO_DIRECT |
                            1u << GLEX_ALGO_MULTICAST | 1u << GLEX_ALGO_TWO_LEVEL |
                            1u << GLEX_ALGO_FLAT,
    [GLEX_COLL_BARRIER] = 1u << GLEX_ALGO_AUTO | 1u << GLEX_ALGO_BINOMIAL |
                          1u << GLEX_ALGO_RECURSIVE_DOUBLING | 1u << GLEX_ALGO_DIRECT |
                          1u << GLEX_ALGO_TWO_LEVEL | 1u << GLEX_ALGO_FLAT,
};

const char *glex_coll_kind_name(glex_coll_kind_t k)
{
    return (unsigned)k < GLEX_COLL_KIND_COUNT ? kind_names[k] : "?";
}

const char *glex_algo_name(glex_algo_t a)
{
    return (unsigned)a < GLEX_ALGO_COUNT ? algo_names[a] : "?";
}

int glex_algo_valid(glex_coll_kind_t k, glex_algo_t a)
{
    return (unsigned)k < GLEX_COLL_KIND_COUNT && (unsigned)a < GLEX_ALGO_COUNT &&
           (algo_mask[k] >> a & 1u);
}

int glex_algo_parse(glex_coll_kind_t k, const char *s, glex_algo_t *out)
{
    char list[160] = "";
    for (int a = 0; a < GLEX_ALGO_COUNT; a++) {
        if (!glex_algo_valid(k, (glex_algo_t)a))
            continue;
        if (s && !strcmp(s, algo_names[a])) {
            *out = (glex_algo_t)a;
            return GLEX_OK;
        }
        strcat(list, *list ? "|" : "");
        strcat(list, algo_names[a]);
    }
    return glex_error(GLEX_EINVAL, "%s algorithm '%s' is not valid: allowed %s",
                      glex_coll_kind_name(k), s ? s : "(null)", list);
}

/* ---- fitting and the auto table ---- */

/* read transfers (flat_read, a reduce read in place): the NICs' reads
 * reach this host's memory; virtual time models the pushed protocol it was
 * calibrated with */
static bool read_transfers_fit(const glex_group_t *g)
{
    return g->size >= 2 && g->nhosts <= 1 && !glex_vtime_on(g->f);
}

bool glex_algo_fits(const glex_group_t *g, const glex_coll_args_t *a, glex_algo_t algo)
{
    uint32_t n = g->size;
    if (!glex_algo_valid(a->kind, algo) || algo == GLEX_ALGO_AUTO)
        return false;
    switch (algo) {
    case GLEX_ALGO_BINOMIAL:
    case GLEX_ALGO_RECURSIVE_DOUBLING:
    case GLEX_ALGO_TWO_LEVEL: /* on one host: the binomial trees */
        return true;
    case GLEX_ALGO_RABENSEIFNER:
        return n >= 2 && a->count >= pof2_floor(n);
    case GLEX_ALGO_DOUBLE_TREE:
        return n >= 2 && a->count >= 2;
    case GLEX_ALGO_DIRECT: /* a call waited for at once (one direct call in flight per
                              group), every member with a mailbox (agreed at the first);
                              outside the NIC model, so never in virtual time */
        return a->blocking && glex_fabric_params(g->f)->mailboxes > 0 && g->direct_state >= 0 &&
               !glex_vtime_on(g->f);
    case GLEX_ALGO_FLAT: /* one inline packet a member, one counter trigger (16 sources);
                            a larger allreduce by read transfers */
        if (a->kind == GLEX_COLL_ALLREDUCE &&
            glex_flat_allreduce_reads(g, a->count, a->count * glex_type_size(a->type)))
            return read_transfers_fit(g);
        return glex_flat_fits(g, a->kind == GLEX_COLL_BARRIER ? 0
                                                               : a->count * glex_type_size(a->type));
    case GLEX_ALGO_FLAT_READ:
        return read_transfers_fit(g);
    case GLEX_ALGO_MULTICAST: /* the group's tree set up or not tried yet, every member a
                                 node of its own, at most 32 descriptors (SeqIDs) */
        return g->mcast_state >= 0 && g->mcast_shape &&
               a->count <= GLEX_MAX_SEQ * glex_sel_mcast_elems(g, glex_type_size(a->type));
    default:
        return false;
    }
}

/* ---- 'auto': the one selection table of each collective (message size x
 * group size x processes per CPU -> algorithm), measured on this machine
 * with bench/auto-table.sh (doc/algorithms.md has the data behind it).  Rows
 * are read in order; the first that matches decides.  It never picks
 * 'direct', which runs outside the NIC model; 'multicast' only in virtual
 * time. ---- */

#define KIB 1024ull
#define ANY UINT64_MAX

typedef struct {
    uint32_t min_ppc;   /* processes of the job per online CPU, at least */
    uint32_t min_n;     /* group size, at least */
    uint64_t below;     /* message bytes below this */
    glex_algo_t algo;
    uint64_t from;      /* message bytes from this (0: any) */
} sel_row_t;

/* allreduce: with more processes than cores, an inline-sized vector takes
 * flat (one step: every process sends to all; OSU 8-32 B at 8 ranks on 2
 * cores 52-56 against 79-114 us, at 16 209-250 against 355-565), and from
 * 8 processes a vector up to 8 KiB whose messages fit the eager pages (64 B
 * - 8 KiB at 8 ranks 59-77 against binomial's 104-150 us, at 16 up to 2 KiB
 * 261-330 against 491-2097: bench/results/2026-11-28/NOTES.md), at 3-7 up
 * to 8 KiB (4 ranks bound, 64 B - 4 KiB 0.81-0.85x recursive doubling's
 * time, 8 KiB 0.90: NOTES 2026-12-04).  Recursive doubling while it fits (fewest steps); oversubscribed,
 * a binomial reduce + bcast sends fewer messages (2(n-1) against n log n),
 * and each message costs a context switch; Rabenseifner for large vectors
 * from 4 processes (at 2 its halves cost two steps where recursive doubling
 * takes one: OSU 1 MiB 118 against 80 us, bench/results/2026-11-26) */
static const sel_row_t allreduce_rows[] = {
    /* more processes per CPU than yield (GLEX_YIELD_MAX_PER_CPU): a waiting
     * process sleeps, and a message to it costs a wake-up; binomial sends
     * the fewest (OSU 8-32 B at 32 ranks on 2 cores 0.9-1.0 against
     * recursive doubling's 1.8 ms, at 64 2.6-2.7 against 5.0-5.2; at 24,
     * still yielding, 1.1-1.4 either way: NOTES 2026-11-28) */
    { GLEX_YIELD_MAX_PER_CPU + 1, 1, 512 * KIB, GLEX_ALGO_BINOMIAL, 0 },
    { 2, 8, 8 * KIB, GLEX_ALGO_FLAT, 0 },
    { 2, 3, 8 * KIB + 1, GLEX_ALGO_FLAT, 0 },
    /* above 64 KiB on one host flat is a reduce-scatter and an allgather by
     * read transfers, one step each: 3-16 ranks on 2 CPUs, 128 KiB - 4 MiB,
     * 0.35-0.95x the time of the rows below (NOTES 2026-12-04) */
    { 2, 3, ANY, GLEX_ALGO_FLAT, GLEX_FLAT_MAX + 1 },
    { 3, 1, 64, GLEX_ALGO_RECURSIVE_DOUBLING, 0 },
    /* from 8 processes per CPU binomial up to 1 MiB: 16 ranks on 2 cores,
     * 512 KiB, 2130-2920 us against Rabenseifner's 2740-3860 in 5 runs in
     * turn (1 MiB: 3660 against 4140 the other way; 8 ranks, 512 KiB:
     * Rabenseifner 930 against 1520), NOTES 2026-11-29 */
    { 8, 1, 1024 * KIB, GLEX_ALGO_BINOMIAL, 0 },
    /* at 3-7 processes per CPU binomial below 128 KiB; from there
     * recursive doubling (then Rabenseifner from 512 KiB), within noise of
     * each other, where binomial lost 1.2-1.9x in 4 sets of 5 runs at 8
     * ranks on 2 CPUs (128 KiB 182-225 / 197-273 against 243-393 us, 512
     * KiB 516 / 594 against 986) and at 6 (AMD EPYC VM,
     * bench/results/2026-12-02/NOTES.md) */
    { 3, 1, 128 * KIB, GLEX_ALGO_BINOMIAL, 0 },
    { 1, 1, 512 * KIB, GLEX_ALGO_RECURSIVE_DOUBLING, 0 },
    { 1, 4, ANY, GLEX_ALGO_RABENSEIFNER, 0 },
    { 1, 1, ANY, GLEX_ALGO_RECURSIVE_DOUBLING, 0 },
};
/* reduce: with more processes than cores, flat up to 16 KiB while the
 * root's eager pages hold every message (64 B - 8 KiB at 4 ranks 5.3-7
 * against binomial's 7-12 us, at 8 up to 4 KiB 14-19 against 27-62, NOTES
 * 2026-11-28; 4 ranks bound 8-16 KiB 1.7-2.0 against 2.5-3.0, 32 KiB 4.8
 * against 4.0; 8 ranks 8 KiB 2.6 against 5.2, 16 KiB 14 against 5.9:
 * NOTES 2026-12-04); otherwise binomial at every
 * size (all children of a node in one counter-triggered descriptor when
 * inline).  glex-bench favoured double tree
 * from 16 KiB to 1 MiB, but through MPI it falls off at 512 KiB (2 processes:
 * 340 against 102 us) and Rabenseifner trails binomial at 2 and 4 processes
 * from 64 KiB to 4 MiB (bench/results/osu).  With more processes than cores
 * an inline-sized vector takes flat (every packet to the root's one counter
 * trigger: 8-32 B at 16 ranks on 2 cores 20-25 against 122-142 us) */
static const sel_row_t reduce_rows[] = {
    { 2, 3, 16 * KIB + 1, GLEX_ALGO_FLAT, 0 },
    { 1, 1, ANY, GLEX_ALGO_BINOMIAL, 0 },
};
/* bcast: with more processes than cores, one step (no member waits for
 * another but the root, so no chain of context switches): up to 64 KiB
 * flat (the root's vector to all at once, an eager message each: at 4
 * ranks 8-32 B 4.4-8.6 against the trees' 11-37 us, 64 B - 4 KiB 5.6-12
 * against 7.4-16, 8-64 KiB 7-15 against flat_read's 17-31; at 8 ranks 64
 * B - 64 KiB 0.45-3.3 against flat_read's 3.0-5.1 from its send stage, 6.6
 * before; at 16 64 B - 32 KiB 1.1-5.3 against 6.2-13.7, 64 KiB 9.8
 * against 8.9: NOTES 2026-12-04), above it and where flat does not fit
 * (more than 17 members) flat_read (every member's NIC reads the root's
 * data from its send stage: at 8 and 16 on 2 cores 1.5-8x faster than the
 * trees);
 * otherwise binomial, double tree for large messages in groups of 8 and
 * more (bench/results/2026-11-28/NOTES.md) */
static const sel_row_t bcast_rows[] = {
    { 2, 3, 64 * KIB + 1, GLEX_ALGO_FLAT, 0 },
    { 2, 3, ANY, GLEX_ALGO_FLAT_READ, 0 },
    { 1, 8, 512 * KIB, GLEX_ALGO_BINOMIAL, 0 },
    { 1, 8, 4096 * KIB, GLEX_ALGO_DOUBLE_TREE, 0 },
    { 1, 1, ANY, GLEX_ALGO_BINOMIAL, 0 },
};

/* bcast in virtual time: multicast in the modeled routers while the data
 * is a few packets (glex-vtime mcast at 4-1024 nodes, doc/multicast.md);
 * AUTO: the table above decides */
static const sel_row_t bcast_vtime_rows[] = {
    { 1, 256, 32 * KIB, GLEX_ALGO_MULTICAST, 0 },
    { 1, 64, 8 * KIB, GLEX_ALGO_MULTICAST, 0 },
    { 1, 16, 4 * KIB, GLEX_ALGO_MULTICAST, 0 },
    { 1, 4, 2 * KIB, GLEX_ALGO_MULTICAST, 0 },
    { 1, 2, 512, GLEX_ALGO_MULTICAST, 0 },
    { 1, 1, ANY, GLEX_ALGO_AUTO, 0 },
};

/* flat in one step: an inline packet a member, a bcast's one message per
 * receiver, an allreduce by reads (above GLEX_FLAT_MAX), or the n-1 messages a
 * member receives fitting in half its unit's eager pages (64 KiB,
 * doc/nic-model.md) at once - beyond, senders wait for credit (a 16 KiB
 * allreduce at 8 ranks: 1 ms) */
#define FLAT_EAGER_BUDGET (32u * 1024u)
/* a reduce's root alone receives: nearly all its eager pages (a message
 * takes whole pages) */
#define FLAT_REDUCE_BUDGET (56u * 1024u)
static bool flat_one_step(const glex_group_t *g, const glex_coll_args_t *a, uint64_t bytes)
{
    if (bytes <= glex_fabric_params(g->f)->inline_max)
        return true;
    if (a->kind == GLEX_COLL_ALLREDUCE && glex_flat_allreduce_reads(g, a->count, bytes))
        return true; /* two steps of reads, no credit awaited */
    uint64_t budget = a->kind == GLEX_COLL_REDUCE ? FLAT_REDUCE_BUDGET : FLAT_EAGER_BUDGET;
    return a->kind == GLEX_COLL_BCAST || (uint64_t)(g->size - 1) * bytes <= budget;
}

/* A bcast of a few ranks on one host from this size is read by every
 * member's NIC from the root's buffer (flat_read: one DMA read a member)
 * instead of copied through the receiving unit's RAM (the eager path: the
 * root's copy in, the member's copy out, both across CPUs): from the size
 * at which this machine's DMA read costs at most that copy pair (its
 * segment measured it, glex_dma_read_from_kb).  On an Intel Xeon VM (read
 * 2.2 copies at 64 KiB): 2 ranks, 16 KiB 1.55 against 2.8 us, 64 KiB 3.2
 * against 9.8 (Open MPI 1.5, 3.3); 4 ranks on 2 CPUs 32 KiB 4.9-8 against
 * 12-17.5; even at 4 KiB, slower below (the read's system call).  On an AMD
 * EPYC VM (7.7-8.1 copies, the pair fast) the read lost: 4 ranks, 8-64 KiB,
 * 17-31 against flat's 7-15; 2 ranks 2.8-8.4 against binomial's 0.55-2.35;
 * on a second one (5 copies, 0.9 of the pair at 64 KiB, 1.1-1.6 at 16-32)
 * 2 ranks 8 KiB 2.9 against 1.0, 64 KiB 6.8 against 8.5 (bench/results/
 * 2026-12-01, 2026-11-28 and 2026-12-02/NOTES.md).  With processes
 * sharing CPUs the table above decides; with a CPU each from 8 ranks it is
 * not measured here, so the trees stay.  Up to 1 MiB:
 * from there the binomial copy is split between both NICs (the sender's
 * DMA writes, the receiver's reads), one read is not (2 ranks, 4 MiB
 * 217-225 against 433-528 us; 128-512 KiB even). */
#define BCAST_READ_BELOW (1024u * 1024u)
#define READ_MAX_RANKS 7u
static uint64_t read_min_bytes(const glex_group_t *g)
{
    if (g->pol.read_kb >= 0)
        return g->pol.read_kb ? (uint64_t)g->pol.read_kb * 1024u : UINT64_MAX;
    uint32_t kb = glex_dma_read_from_kb(g->f);
    return kb ? (uint64_t)kb * 1024u : UINT64_MAX;
}

/* A binomial reduce read in place: each child offers its vector and its
 * parent's NIC reads it a pulse at a time into unit RAM and combines it.
 * The read and the combine run on the reader's CPU alone, where the pulsed
 * push has the sender copy while the receiver combines: from 256 KiB that
 * parallel wins (2 ranks, 512 KiB 47-49 against 33 us; 64 KiB 5.9 against
 * 9.0, 128 KiB 10.7 against 15.2; Open MPI 4.4 and 8.2).  And a child's
 * call lasts until its parent has read it: with processes sharing CPUs the
 * parent must run first (4 ranks on 2 CPUs, 8-64 KiB 6.8-30 against 2.7-14
 * us), so only with a CPU each. */
#define REDUCE_READ_BELOW (256u * 1024u)

bool glex_sel_read_in_place(const glex_group_t *g, glex_coll_kind_t kind, uint64_t bytes)
{
    if (kind == GLEX_COLL_REDUCE && (bytes >= REDUCE_READ_BELOW || glex_procs_per_cpu(g->f) > 1))
        return false;
    return read_transfers_fit(g) && g->size <= READ_MAX_RANKS && bytes >= read_min_bytes(g) &&
           bytes < BCAST_READ_BELOW;
}

/* the first row that matches and whose algorithm fits the call (AUTO: the
 * caller decides) */
static glex_algo_t lookup(const glex_group_t *g, const glex_coll_args_t *a, const sel_row_t *rows,
                          size_t nrows, uint32_t ppc, uint32_t n, uint64_t bytes)
{
    for (size_t i = 0; i < nrows; i++)
        if (ppc >= rows[i].min_ppc && n >= rows[i].min_n && bytes < rows[i].below &&
            bytes >= rows[i].from &&
            (rows[i].algo == GLEX_ALGO_AUTO || glex_algo_fits(g, a, rows[i].algo)) &&
            (rows[i].algo != GLEX_ALGO_FLAT || flat_one_step(g, a, bytes)))
            return rows[i].algo;
    return GLEX_ALGO_BINOMIAL;
}

#define LOOKUP(rows, ppc, n, bytes) lookup(g, a, rows, sizeof rows / sizeof rows[0], ppc, n, bytes)

glex_algo_t glex_algo_auto(const glex_group_t *g, const glex_coll_args_t *a)
{
    /* a group across hosts with a host of several members: within each host
     * first (shared memory), one message per host between hosts (the
     * fabric), then back (doc/multinode.md) */
    if (g->nhosts > 1 && g->size > g->nhosts)
        return GLEX_ALGO_TWO_LEVEL;
    uint64_t bytes = a->count * glex_type_size(a->type);
    /* in virtual time each node is a machine of its own: the table's column
     * of one process per CPU, whatever this machine is */
    uint32_t n = g->size, ppc = glex_vtime_on(g->f) ? 1 : glex_procs_per_cpu(g->f);
    glex_algo_t algo;
    switch (a->kind) {
    case GLEX_COLL_BCAST:
        algo = glex_vtime_on(g->f) ? LOOKUP(bcast_vtime_rows, ppc, n, bytes) : GLEX_ALGO_AUTO;
        if (algo == GLEX_ALGO_AUTO && glex_sel_read_in_place(g, GLEX_COLL_BCAST, bytes))
            algo = GLEX_ALGO_FLAT_READ;
        if (algo == GLEX_ALGO_AUTO)
            algo = LOOKUP(bcast_rows, ppc, n, bytes);
        break;
    case GLEX_COLL_REDUCE: algo = LOOKUP(reduce_rows, ppc, n, bytes); break;
    case GLEX_COLL_ALLREDUCE: algo = LOOKUP(allreduce_rows, ppc, n, bytes); break;
    /* barrier: an allreduce of nothing, log2(n) exchanges where the
     * binomial reduce + bcast takes 2 log2(n) one-way steps.  With more
     * processes than cores the binomial sends fewer messages (2(n-1) against
     * n log2 n, each a context switch), yet OSU's barrier at 4, 8 and 16 on
     * 2 cores is 1.1-2x faster recursive-doubling (NOTES 2026-11-27), and
     * flat (one step, n(n-1) empty packets) faster still: 16 ranks 221-262
     * against 376-398 us (NOTES 2026-11-28).  With more processes per
     * CPU than yield, waiting ones sleep and each message is a wake-up:
     * binomial, 2.5-3.3x faster at 32 and 64 ranks (NOTES 2026-11-28) */
    default:
        if (ppc > GLEX_YIELD_MAX_PER_CPU)
            return GLEX_ALGO_BINOMIAL;
        return ppc >= 2 && n >= 3 && glex_algo_fits(g, a, GLEX_ALGO_FLAT)
                   ? GLEX_ALGO_FLAT : GLEX_ALGO_RECURSIVE_DOUBLING;
    }
    /* a choice that does not fit the call (too few elements) */
    if (!glex_algo_fits(g, a, algo))
        algo = a->kind == GLEX_COLL_ALLREDUCE ? GLEX_ALGO_RECURSIVE_DOUBLING : GLEX_ALGO_BINOMIAL;
    return algo;
}


/* ---- thresholds: the policy a group runs with ---- */

/* a multicast descriptor's elements: its packets (GLEX_MCAST_MAX_PACKETS)
 * of GLEX_INLINE_MAX bytes */
uint64_t glex_sel_mcast_elems(const glex_group_t *g, size_t es)
{
    return (uint64_t)GLEX_MCAST_MAX_PACKETS * glex_fabric_params(g->f)->inline_max / es;
}

/* each variable of the policy once: its field, range, and whether "auto"
 * (-1) is allowed; read from the environment and checked from this table */
static const struct {
    const char *env;
    size_t off;
    int64_t lo, hi;
    int auto_ok;
} policy_rows[] = {
    { "GLEX_COLL_SEGMENT_KB", offsetof(glex_coll_policy_t, segment_kb), 1, 65536, 1 },
    { "GLEX_COLL_PLAN_CACHE", offsetof(glex_coll_policy_t, plan_cache), 1, 1000000, 0 },
    { "GLEX_RDMA_KB", offsetof(glex_coll_policy_t, rdma_kb), 0, 1024, 1 },
    { "GLEX_STAGE_KB", offsetof(glex_coll_policy_t, stage_kb), 0, GLEX_STAGE_KB_MAX, 1 },
    { "GLEX_STAGE_MAP", offsetof(glex_coll_policy_t, stage_map), 0, 1, 0 },
    { "GLEX_READ_KB", offsetof(glex_coll_policy_t, read_kb), 0, 65536, 1 },
};
#define NPOLICY (sizeof policy_rows / sizeof policy_rows[0])

static int64_t *policy_field(glex_coll_policy_t *p, size_t i)
{
    return (int64_t *)(void *)((char *)p + policy_rows[i].off);
}

void glex_coll_policy_default(glex_coll_policy_t *p)
{
    p->segment_kb = -1;
    p->plan_cache = 256;
    p->rdma_kb = -1;
    p->stage_kb = -1;
    p->stage_map = 1;
    p->read_kb = -1;
}

int glex_coll_policy_from_env(glex_coll_policy_t *p)
{
    for (size_t i = 0; i < NPOLICY; i++) {
        int64_t *v = policy_field(p, i);
        uint64_t u = (uint64_t)*v;
        int rc = policy_rows[i].auto_ok
                     ? glex_env_uint_auto(policy_rows[i].env, (uint64_t)policy_rows[i].lo,
                                          (uint64_t)policy_rows[i].hi, v)
                     : glex_env_uint(policy_rows[i].env, (uint64_t)policy_rows[i].lo,
                                     (uint64_t)policy_rows[i].hi, &u);
        if (rc)
            return rc;
        if (!policy_rows[i].auto_ok)
            *v = (int64_t)u;
    }
    return glex_coll_policy_check(p);
}

int glex_coll_policy_check(const glex_coll_policy_t *p)
{
    for (size_t i = 0; i < NPOLICY; i++) {
        int64_t v = *policy_field((glex_coll_policy_t *)p, i);
        if ((v < policy_rows[i].lo || v > policy_rows[i].hi) && !(v == -1 && policy_rows[i].auto_ok))
            return glex_error(GLEX_EINVAL, "%s=%lld is out of range %s%lld..%lld",
                              policy_rows[i].env, (long long)v,
                              policy_rows[i].auto_ok ? "auto(-1) or " : "",
                              (long long)policy_rows[i].lo, (long long)policy_rows[i].hi);
    }
    return GLEX_OK;
}

/* what the members of a group must agree on (the direct path's choices):
 * a positive 62-bit digest */
int64_t glex_coll_policy_digest(const glex_coll_policy_t *p)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    const int64_t v[3] = { p->rdma_kb, p->stage_kb, p->stage_map };
    for (int i = 0; i < 3; i++) {
        h ^= (uint64_t)v[i] + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return (int64_t)(h >> 2);
}

/* Messages of more bytes than this take RDMA rather than a mailbox slot on
 * the direct path (GLEX_RDMA_KB).  Measured (bench/results/2026-11-24/NOTES.md):
 * with a core per process RDMA, one copy per byte split over both sides,
 * beats the mailbox's two copies from 16 KiB; when processes share cores the
 * mailbox (no system calls, no waiting for the peer to map pages) wins up to
 * its full 64 KiB. */
size_t glex_sel_rdma_bytes(const glex_group_t *g)
{
    if (g->pol.rdma_kb >= 0)
        return (size_t)g->pol.rdma_kb * 1024u;
    return glex_procs_per_cpu(g->f) <= 1 ? 8192u : SIZE_MAX;
}

/* A large bcast with a core per process goes through the root's stage up
 * to this size, above it the root and the receivers split the copy
 * (bench/results/2026-11-24/NOTES.md "Staged allreduce and bcast": 2 ranks,
 * 64 KiB 3.8 against 5.9 us, 128 KiB even, 4 MiB 242 against 162 us). */
#define BCAST_STAGE_CORE (128u * 1024u)

/* A large direct call: is it staged (the same answer on every rank)?  Reduce
 * up to GLEX_STAGE_KB (auto 16 MiB: the senders' pipelined copy-out is 4-17x
 * faster at 8-16 processes on 2 cores, 1.3-2.3x at 4, even or better with a
 * core per process; the cap bounds the memory, two stages per group at
 * most); with mapped stages (GLEX_STAGE_MAP) allreduce too, and bcast where
 * the split copy does not beat it. */
int glex_sel_staged(const glex_group_t *g, glex_coll_kind_t kind, uint64_t bytes)
{
    uint64_t limit = g->pol.stage_kb >= 0 ? (uint64_t)g->pol.stage_kb * 1024u : 16ull << 20;
    if (g->size < 2 || bytes > limit)
        return 0;
    if (kind == GLEX_COLL_REDUCE)
        return 1;
    if (!g->pol.stage_map)
        return 0;
    return kind == GLEX_COLL_ALLREDUCE ||
           (kind == GLEX_COLL_BCAST && (bytes <= BCAST_STAGE_CORE || glex_procs_per_cpu(g->f) > 1));
}

int glex_sel_stage_map(const glex_group_t *g) { return (int)g->pol.stage_map; }

#define SEG_AUTO_MIN (256u * 1024u)
#define SEG_AUTO_MAX (1024u * 1024u)

/* Pipelining segment: GLEX_COLL_SEGMENT_KB, made coarser for big messages so
 * that every rank's plan fits its DQ.  It depends only on the call and the
 * group size, never on the rank: all members must cut the same segments. */
uint64_t glex_sel_segment_bytes(const glex_group_t *g, const glex_coll_args_t *a, size_t es)
{
    const glex_params_t *prm = glex_fabric_params(g->f);
    uint64_t bytes = a->count * es;
    /* descriptors per segment at the busiest rank: a binomial root sends to
     * log2(n) children; a double-tree node has 2 trees x 2 steps */
    uint64_t per_seg = log2u(g->size) + 4;
    int64_t room = (int64_t)prm->dq_depth - 2 * (int64_t)log2u(g->size) - 8;
    uint64_t max_segs = room > (int64_t)(2 * per_seg) ? (uint64_t)room / (2 * per_seg) : 1;
    uint64_t seg = g->pol.segment_kb > 0 ? (uint64_t)g->pol.segment_kb * 1024u : 0;
    if (!seg && g->size <= 2 && a->kind == GLEX_COLL_BCAST && bytes)
        /* auto, a bcast between two: nothing is forwarded, so nothing to
         * pipeline; one segment (from 1 MiB the receiver's NIC then reads
         * half of it itself): 4 MiB 330-510 us against 1580-2170 in 1 MiB
         * segments, in turn (bench/results/2026-11-27/NOTES.md).  But where
         * the DMA is dear a copy above the eager size, placed by DMA, costs
         * a system call at 8x a memcpy: segments of the eager size, each
         * copied into the receiver's unit RAM while the receiver copies the
         * last one out (AMD EPYC VM, 128 KiB 4.8 against 13 us, 1 MiB 38-41
         * against 73, 4 MiB 164-172 against 223; 128 KiB segments as slow
         * as one: bench/results/2026-12-02/NOTES.md) */
        seg = read_transfers_fit(g) && !glex_dma_read_cheap(g->f) && bytes > GLEX_EAGER_BYTES
                  ? GLEX_EAGER_BYTES : bytes;
    if (!seg) /* auto: half the message within [256 KiB, 1 MiB] (measured: fewer, larger
               * DMA pulses beat deeper pipelining on this machine, 2 and 8 ranks) */
        seg = bytes / 2 < SEG_AUTO_MIN ? SEG_AUTO_MIN : bytes / 2 > SEG_AUTO_MAX ? SEG_AUTO_MAX
                                                                                 : bytes / 2;
    if (bytes / seg >= max_segs)
        seg = (bytes + max_segs - 1) / max_segs;
    return seg;
}
