/* glex_coll_flat.c - one-step schedules, for groups whose members share
 * cores (every step of a tree wakes a process that waits for a core; these
 * take one): flat_read bcast (every member's NIC reads the root's buffer);
 * flat bcast (the root's vector to all), reduce, allreduce and barrier
 * (every member sends its vector to the root, or to every other member,
 * which combines them all in rank order: the same order, so the same
 * result, on every member).  An inline-sized vector is one descriptor to
 * all and one counter trigger over a run of sources; a larger one an eager
 * message per destination and a receive-combine per source. */
#include "glex_coll_internal.h"

#define SEQ_FLAT 0u

void glex_bcast_flat_read(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt)
{
    uint32_t n = s->g->size, peers[GLEX_MAX_FANOUT], k = 0;
    if (s->g->rank != root) {
        glex_sc_read_recv(s, root, SEQ_FLAT, buf, cnt);
        return;
    }
    for (uint32_t v = 1; v < n; v++) {
        peers[k++] = (root + v) % n;
        if (k == GLEX_MAX_FANOUT || v == n - 1) {
            glex_sc_send_many(s, peers, k, SEQ_FLAT, buf, cnt, true);
            k = 0;
        }
    }
}

bool glex_flat_fits(const glex_group_t *g, uint64_t bytes)
{
    return g->size >= 2 && g->size - 1 <= GLEX_MAX_BRANCH && bytes <= GLEX_FLAT_MAX;
}

/* an allreduce above GLEX_FLAT_MAX by read transfers (allreduce_reads):
 * every block at least an element, the members' NICs on one host */
bool glex_flat_allreduce_reads(const glex_group_t *g, uint64_t cnt, uint64_t bytes)
{
    return bytes > GLEX_FLAT_MAX && g->size >= 3 && g->size - 1 <= GLEX_MAX_BRANCH &&
           cnt >= g->size;
}

/* one inline packet: one descriptor sends it to all, one counter trigger
 * combines all */
static bool inline_sized(const glex_sched_t *s, uint64_t cnt)
{
    return cnt * s->es <= glex_fabric_params(s->g->f)->inline_max;
}

/* every member but this one, in rank order; returns how many */
static uint32_t others(const glex_sched_t *s, uint32_t *peers)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < s->g->size; r++)
        if (r != s->g->rank)
            peers[k++] = r;
    return k;
}

/* where this member's own data is when its combines need it: a member
 * other than rank 0 receives rank 0's packet into acc first, so in place
 * (src is acc) its data is saved in tmp */
static uint64_t own_data(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt)
{
    if (s->g->rank == 0 || src != acc || !cnt)
        return src;
    glex_sc_need_tmp(s, cnt * s->es);
    glex_sc_local(s, src, REF(BUF_TMP, 0), cnt, false);
    return REF(BUF_TMP, 0);
}

/* this member's vector to the k members listed: an inline packet from one
 * descriptor, a larger vector one eager message each, starting after this
 * member (not all at rank 0's eager pages first) */
static void send_all(glex_sched_t *s, const uint32_t *peers, uint32_t k, uint64_t ref, uint64_t cnt)
{
    if (inline_sized(s, cnt)) {
        glex_sc_send_many(s, peers, k, SEQ_FLAT, ref, cnt, false);
        return;
    }
    uint32_t first = 0;
    while (first < k && peers[first] < s->g->rank)
        first++;
    for (uint32_t i = 0; i < k; i++)
        glex_sc_send(s, peers[(first + i) % k], SEQ_FLAT, ref, cnt);
}

/* combine the vectors of ranks [lo, hi) into acc, in rank order: inline
 * packets by one counter trigger, larger ones a receive-combine each; the
 * first combine's other operand at operand when with_operand (not acc) */
static void combine_range(glex_sched_t *s, uint32_t lo, uint32_t hi, uint64_t acc, uint64_t cnt,
                          bool with_operand, uint64_t operand)
{
    uint32_t peers[GLEX_MAX_BRANCH], seqs[GLEX_MAX_BRANCH], k = 0;
    for (uint32_t r = lo; r < hi; r++, k++)
        peers[k] = r, seqs[k] = SEQ_FLAT;
    if (glex_sc_many_fits(s, cnt, (int)k)) {
        glex_sc_combine_many(s, peers, seqs, (int)k, acc, cnt, -1, 0);
        if (with_operand)
            glex_sc_operand(s, operand);
        return;
    }
    for (uint32_t i = 0; i < k; i++) {
        glex_sc_recv(s, peers[i], SEQ_FLAT, acc, cnt, true);
        if (i == 0 && with_operand)
            glex_sc_operand(s, operand);
    }
}

/* acc = x0 op x1 op ... op x(n-1), left to right, x(rank) this member's own
 * at own (own_data) */
static void combine_all(glex_sched_t *s, uint64_t acc, uint64_t own, uint64_t cnt)
{
    uint32_t n = s->g->size, me = s->g->rank;
    if (!cnt) { /* a barrier: nothing to combine, every packet in */
        uint32_t peers[GLEX_MAX_BRANCH], seqs[GLEX_MAX_BRANCH], k = others(s, peers);
        for (uint32_t i = 0; i < k; i++)
            seqs[i] = SEQ_FLAT;
        if (k == 1)
            glex_sc_recv(s, peers[0], SEQ_FLAT, acc, 0, false);
        else
            glex_sc_combine_many(s, peers, seqs, (int)k, acc, 0, -1, 0);
        return;
    }
    if (me == 0) { /* x0 is its own: the first combine takes it from there */
        combine_range(s, 1, n, acc, cnt, own != acc, own);
        return;
    }
    glex_sc_recv(s, 0, SEQ_FLAT, acc, cnt, false);
    combine_range(s, 1, me, acc, cnt, false, 0);
    glex_sc_local(s, own, acc, cnt, true);
    combine_range(s, me + 1, n, acc, cnt, false, 0);
}

void glex_reduce_flat(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src, uint64_t cnt)
{
    if (s->g->rank != root) {
        glex_sc_send(s, root, SEQ_FLAT, src, cnt);
        return;
    }
    combine_all(s, acc, own_data(s, acc, src, cnt), cnt);
}

/* the root's inline packet to every other member, from one descriptor */
void glex_bcast_flat(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt)
{
    uint32_t n = s->g->size, peers[GLEX_MAX_BRANCH], k = 0;
    if (s->g->rank != root) {
        glex_sc_recv(s, root, SEQ_FLAT, buf, cnt, false);
        return;
    }
    for (uint32_t v = 1; v < n; v++)
        peers[k++] = (root + v) % n;
    send_all(s, peers, k, buf, cnt);
}

#define SEQ_RS 1u   /* the offers of the whole vectors */
#define SEQ_DONE 2u /* this member's block is reduced (to its own first sequence) */
#define SEQ_AG 3u   /* the offers of the reduced blocks */

/* A larger allreduce on one host: a reduce-scatter and an allgather, one
 * step each, by read transfers.  Every member offers its whole vector to
 * all others (its NIC's send stage: one copy), and member b's NIC reads
 * block b of each and its ALU combines them in rank order; then it offers
 * its reduced block to all, and reads every other member's.  Two
 * sequences, so that no offer waits for a read that waits for it: the
 * first offers the vector, waits for this member's block (a packet from
 * the second) and offers it; the second reduces the block, says so, and
 * reads the others' blocks.  In place, the block's own data is saved in
 * tmp before the first read overwrites it; the blocks others read from an
 * unstaged offer are ones this member writes only after their readers
 * offered their results, so after they read. */
static void allreduce_reads(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt)
{
    uint32_t n = s->g->size, me = s->g->rank, peers[GLEX_MAX_BRANCH], k = others(s, peers);
    uint64_t es = s->es, total = cnt * es;
    uint64_t at = glex_block_at(cnt, n, me) * es, len = glex_block_at(cnt, n, me + 1) - glex_block_at(cnt, n, me);
    glex_sc_send_many(s, peers, k, SEQ_RS, src, cnt, true);
    glex_sc_recv(s, me, SEQ_DONE, 0, 0, false);
    glex_sc_send_many(s, peers, k, SEQ_AG, acc + at, len, true);
    s->split = s->n;
    uint64_t own = src + at;
    if (src == acc && me != 0) {
        glex_sc_need_tmp(s, len * es);
        glex_sc_local(s, own, REF(BUF_TMP, 0), len, false);
        own = REF(BUF_TMP, 0);
    }
    for (uint32_t r = 0; r < n; r++) {
        if (r == me) {
            if (me != 0)
                glex_sc_local(s, own, acc + at, len, true);
            continue;
        }
        /* rank 0's block starts from its own data (the first combine's
         * operand, or acc itself in place); another's from rank 0's */
        bool first = r == (me == 0 ? 1u : 0u);
        glex_sc_read_part(s, r, SEQ_RS, acc + at, len, at, total, !(first && me != 0));
        if (first && me == 0 && src != acc)
            glex_sc_operand(s, own);
    }
    glex_sc_send(s, me, SEQ_DONE, 0, 0);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = peers[i];
        uint64_t rat = glex_block_at(cnt, n, r), rlen = glex_block_at(cnt, n, r + 1) - rat;
        glex_sc_read_recv(s, r, SEQ_AG, acc + rat * es, rlen);
    }
}

/* From this many members a barrier goes to rank 0 and back: every
 * member's packet to rank 0, whose counter trigger takes them all, then
 * its packet to all from one descriptor (2(n-1) packets, two steps)
 * instead of n(n-1) in one.  An inline-sized allreduce did so from 12
 * members on an Intel Xeon VM, where each packet's insert
 * takes lines other senders wrote last (the unit's claim count, the CP
 * counter, the slot): 16 ranks on 2 CPUs, medians of 5-7 in turn,
 * allreduce 8-32 B 0.75-0.86x the time, at 12 0.83-0.96x; at 4 ranks it
 * was 1.6x slower, at 6 even, at 8 1.01-1.10x slower (an Intel Xeon VM).
 * On an AMD EPYC VM (2026-12-04, medians of 5 in turn) it was the slower:
 * every member to all took 0.56-0.64x its time at 16 ranks, 0.45-0.90x
 * at 12, so the allreduce no longer goes through rank 0; the barrier
 * still does.  A barrier from 4: there
 * rank 0 leaves first, so a bcast from it after the barrier finds its
 * members waiting for a packet already sent, not for a root that has not
 * left yet (4 ranks bound, medians of 6-10 in turn: OSU bcast 8 B 1.73 ->
 * 0.40 us, bcast + barrier 5.36 -> 5.00, reduce + barrier 5.89 -> 4.88,
 * allreduce + barrier 6.83 -> 7.60, the barrier alone 3.31 -> 3.66; 0.88x
 * at 16 ranks, 1.14x at 3: bench/results/2026-12-03/NOTES.md, third
 * session). */
#define FLAT_BARRIER_VIA_ROOT_MIN 4u

/* every member's packet to all others, then all n combined in rank order
 * on each (n(n-1) packets, one step: at 8 and 16 processes on 2 cores 1.5x
 * faster than recursive doubling, and than a flat reduce to rank 0 followed
 * by its packet to all: bench/results/2026-11-28/NOTES.md); a barrier
 * from FLAT_BARRIER_VIA_ROOT_MIN members through rank 0; above
 * GLEX_FLAT_MAX on one host a reduce-scatter and an allgather by reads */
void glex_allreduce_flat(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt)
{
    if (glex_flat_allreduce_reads(s->g, cnt, cnt * s->es)) {
        allreduce_reads(s, acc, src, cnt);
        return;
    }
    if (!cnt && s->g->size >= FLAT_BARRIER_VIA_ROOT_MIN) {
        glex_reduce_flat(s, 0, acc, src, 0);
        glex_bcast_flat(s, 0, acc, 0);
        return;
    }
    uint32_t peers[GLEX_MAX_BRANCH], k = others(s, peers);
    if (inline_sized(s, cnt)) { /* each send done at once: one sequence */
        uint64_t own = own_data(s, acc, src, cnt);
        send_all(s, peers, k, own, cnt);
        combine_all(s, acc, own, cnt);
        return;
    }
    /* Larger vectors: a send may wait for its receiver's credit (no eager
     * pages free there), so the sends are a sequence of their own, run
     * alongside the combines (no member's combines wait for its sends: no
     * cycle).  In place, the combines go to tmp while the sends read acc;
     * the sends' last step, an empty packet to this member itself, lets the
     * result be copied into acc once they are done. */
    bool inplace = src == acc;
    uint64_t res = inplace ? REF(BUF_TMP, 0) : acc;
    send_all(s, peers, k, src, cnt);
    if (inplace) {
        glex_sc_send(s, s->g->rank, SEQ_FLAT, 0, 0);
        glex_sc_need_tmp(s, cnt * s->es);
    }
    s->split = s->n;
    combine_all(s, res, src, cnt);
    if (inplace) {
        glex_sc_recv(s, s->g->rank, SEQ_FLAT, 0, 0, false);
        glex_sc_local(s, res, acc, cnt, false);
    }
}
