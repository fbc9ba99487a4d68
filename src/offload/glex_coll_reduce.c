/* glex_coll_reduce.c - reduce and allreduce schedules: binomial, recursive
 * doubling, Rabenseifner (vector halving + distance doubling, then binomial
 * gather or recursive-doubling allgather) and double tree.  The combining
 * order is fixed by the schedule, so floating-point results are reproducible. */
#include "glex_coll_internal.h"

void glex_bcast_dtree(glex_sched_t *s, uint32_t root, uint64_t buf, uint64_t cnt,
                      uint32_t seqbase);
void glex_reduce_dtree(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t cnt,
                       uint32_t seqbase);

#define REAL(v) (((v) + root) % s->g->size)
#define SEQ_PAIR_IN 0u   /* extra rank folds its data into its partner */
#define SEQ_PAIR_OUT 31u /* partner returns the result to the extra rank */

/* the step just emitted moves by its receiver's DMA read (s->read): a
 * send offers its buffer, a receive reads and combines, a forward offers
 * what it combined */
static void as_read(glex_sched_t *s)
{
    if (s->read && !s->err)
        s->d[s->n - 1].swap_remote_addr = 1;
}

/* binomial reduce of src into acc at virtual root 0 */
void glex_reduce_binomial(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src,
                          uint64_t cnt)
{
    uint32_t n = s->g->size, v = (s->g->rank + n - root) % n, kids[32], bits[32];
    int64_t parent;
    int nk = glex_binomial(v, n, &parent, kids, bits);
    uint32_t mybit = v ? (uint32_t)__builtin_ctz(v) : 0;
    if (nk == 0) {
        if (parent >= 0) {
            glex_sc_send(s, REAL((uint32_t)parent), mybit, src, cnt);
            as_read(s);
        } else if (src != acc && cnt)
            glex_sc_local(s, src, acc, cnt, false);
        return;
    }
    /* the first child's data combines with this node's own (src) into acc */
    bool own = src != acc && cnt;
    if (glex_sc_many_fits(s, cnt, nk)) { /* all children in one descriptor (counter trigger) */
        uint32_t peers[32];
        for (int i = 0; i < nk; i++)
            peers[i] = REAL(kids[i]);
        int64_t up = parent >= 0 ? (int64_t)REAL((uint32_t)parent) : -1;
        glex_sc_combine_many(s, peers, bits, nk, acc, cnt, up, mybit);
        if (own)
            glex_sc_operand(s, src);
        return;
    }
    for (int i = 0; i < nk; i++) {
        if (i == nk - 1 && parent >= 0)
            glex_sc_fwd(s, REAL(kids[i]), bits[i], REAL((uint32_t)parent), mybit, acc, cnt, true);
        else
            glex_sc_recv(s, REAL(kids[i]), bits[i], acc, cnt, true);
        as_read(s);
        if (i == 0 && own)
            glex_sc_operand(s, src);
    }
}

/* The power-of-two core used by recursive doubling and Rabenseifner: ranks
 * v < 2r pair up (odd folds into even).  Returns the new rank, or -1 for a
 * rank that only contributed.  *own: acc does not hold this rank's data yet
 * (it is still at src): the caller's first combine takes it from there. */
static int64_t fold_extra(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src,
                          uint64_t cnt, bool result_back, bool *own)
{
    uint32_t n = s->g->size, v = (s->g->rank + n - root) % n;
    uint32_t r = n - pof2_floor(n);
    *own = false;
    if (v < 2 * r && (v & 1)) {
        glex_sc_send(s, REAL(v - 1), SEQ_PAIR_IN, src, cnt);
        if (result_back)
            glex_sc_recv(s, REAL(v - 1), SEQ_PAIR_OUT, acc, cnt, false);
        return -1;
    }
    bool moved = src != acc && cnt;
    if (v < 2 * r) {
        glex_sc_recv(s, REAL(v + 1), SEQ_PAIR_IN, acc, cnt, true);
        if (moved)
            glex_sc_operand(s, src);
        return v / 2;
    }
    if (moved && pof2_floor(n) == 1) /* no step to combine in: a copy */
        glex_sc_local(s, src, acc, cnt, false);
    else
        *own = moved;
    return v - r;
}

static uint32_t new_to_v(uint32_t nr, uint32_t r) { return nr < r ? nr * 2 : nr + r; }

static void unfold_extra(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t cnt)
{
    uint32_t n = s->g->size, v = (s->g->rank + n - root) % n;
    if (v < 2 * (n - pof2_floor(n)))
        glex_sc_send(s, REAL(v + 1), SEQ_PAIR_OUT, acc, cnt);
}

void glex_allreduce_rd(glex_sched_t *s, uint64_t acc, uint64_t src, uint64_t cnt)
{
    const uint32_t root = 0;
    uint32_t n = s->g->size, pof2 = pof2_floor(n), r = n - pof2;
    bool own;
    int64_t nr = fold_extra(s, root, acc, src, cnt, true, &own);
    if (nr < 0)
        return;
    for (uint32_t st = 0; (1u << st) < pof2; st++) {
        uint32_t partner = new_to_v((uint32_t)nr ^ (1u << st), r);
        /* the first exchange sends this rank's data from src and combines
         * it with the partner's into acc */
        glex_sc_xchg(s, REAL(partner), 1 + st, own && !st ? src : acc, cnt, acc, cnt, true);
        if (own && !st)
            glex_sc_operand(s, src);
    }
    unfold_extra(s, root, acc, cnt);
}

/* Rabenseifner: reduce-scatter by vector halving / distance doubling, then a
 * binomial gather to virtual root 0 or (all) a recursive-doubling allgather. */
static void rabenseifner(glex_sched_t *s, uint32_t root, uint64_t acc, uint64_t src, uint64_t cnt,
                         bool all)
{
    uint32_t n = s->g->size, pof2 = pof2_floor(n), r = n - pof2, k = log2u(pof2);
    size_t es = s->es;
    bool own;
    int64_t nr64 = fold_extra(s, root, acc, src, cnt, all, &own);
    if (nr64 < 0)
        return;
    uint32_t nr = (uint32_t)nr64, lo = 0, hi = pof2, wlo[32] = { 0 }, whi[32] = { 0 };
#define AT(b) (acc + glex_block_at(cnt, pof2, (b)) * es)
#define SRC(b) (src + glex_block_at(cnt, pof2, (b)) * es)
#define LEN(a, b) (glex_block_at(cnt, pof2, (b)) - glex_block_at(cnt, pof2, (a)))
    for (uint32_t st = 0; st < k; st++) {
        uint32_t mask = 1u << st, half = (hi - lo) / 2, partner = new_to_v(nr ^ mask, r);
        uint32_t klo = (nr & mask) ? lo + half : lo, khi = (nr & mask) ? hi : lo + half;
        uint32_t slo = (nr & mask) ? lo : lo + half, shi = (nr & mask) ? lo + half : hi;
        /* the first step sends half of src and combines the other half with
         * the partner's into acc: acc's sent half is written by the gather */
        bool first = own && !st;
        glex_sc_xchg(s, REAL(partner), 1 + st, first ? SRC(slo) : AT(slo), LEN(slo, shi), AT(klo),
                     LEN(klo, khi), true);
        if (first)
            glex_sc_operand(s, SRC(klo));
        wlo[st] = lo, whi[st] = hi;
        lo = klo, hi = khi;
    }
    for (uint32_t st = k; st-- > 0;) {
        uint32_t mask = 1u << st, partner = new_to_v(nr ^ mask, r);
        uint32_t olo = lo == wlo[st] ? hi : wlo[st], ohi = lo == wlo[st] ? whi[st] : lo;
        if (all) {
            glex_sc_xchg(s, REAL(partner), 1 + k + st, AT(lo), LEN(lo, hi), AT(olo), LEN(olo, ohi),
                    false);
        } else if (nr & mask) {
            glex_sc_send(s, REAL(partner), 1 + k + st, AT(lo), LEN(lo, hi));
            return;
        } else {
            glex_sc_recv(s, REAL(partner), 1 + k + st, AT(olo), LEN(olo, ohi), false);
        }
        lo = wlo[st], hi = whi[st];
    }
#undef AT
#undef SRC
#undef LEN
    if (all)
        unfold_extra(s, root, acc, cnt);
}

void glex_build_reduce(glex_sched_t *s, glex_algo_t algo)
{
    const glex_coll_args_t *a = s->a;
    bool am_root = s->g->rank == a->root;
    uint64_t bytes = a->count * s->es;
    uint64_t acc = am_root ? REF(BUF_RECV, 0) : REF(BUF_TMP, 0);
    uint64_t src = (am_root && s->inplace) ? REF(BUF_RECV, 0) : REF(BUF_SEND, 0);
    if (!am_root && algo != GLEX_ALGO_BINOMIAL && algo != GLEX_ALGO_AUTO && algo != GLEX_ALGO_FLAT)
        glex_sc_need_tmp(s, bytes);
    switch (algo) {
    case GLEX_ALGO_RABENSEIFNER:
        rabenseifner(s, a->root, acc, src, a->count, false);
        break;
    case GLEX_ALGO_FLAT:
        glex_reduce_flat(s, a->root, acc, src, a->count);
        break;
    case GLEX_ALGO_DOUBLE_TREE:
        if (src != acc && a->count)
            glex_sc_local(s, src, acc, a->count, false);
        glex_reduce_dtree(s, a->root, acc, a->count, 0);
        break;
    default: {
        /* binomial: only ranks with children accumulate; a leaf sends its buffer
         * (or offers it, to be read) */
        s->read = glex_sel_read_in_place(s->g, GLEX_COLL_REDUCE, bytes);
        uint32_t n = s->g->size, v = (s->g->rank + n - a->root) % n, kids[32], bits[32];
        int64_t parent;
        if (!am_root && glex_binomial(v, n, &parent, kids, bits) > 0)
            glex_sc_need_tmp(s, bytes);
        glex_reduce_binomial(s, a->root, acc, src, a->count);
    }
    }
}

void glex_build_allreduce(glex_sched_t *s, glex_algo_t algo)
{
    const glex_coll_args_t *a = s->a;
    uint64_t acc = REF(BUF_RECV, 0), cnt = a->count;
    uint64_t src = s->inplace ? acc : REF(BUF_SEND, 0);
    if (a->kind == GLEX_COLL_BARRIER)
        acc = src = 0, cnt = 0;
    switch (algo) {
    case GLEX_ALGO_RECURSIVE_DOUBLING:
        glex_allreduce_rd(s, acc, src, cnt);
        break;
    case GLEX_ALGO_RABENSEIFNER:
        rabenseifner(s, 0, acc, src, cnt, true);
        break;
    case GLEX_ALGO_FLAT:
        glex_allreduce_flat(s, acc, src, cnt);
        break;
    case GLEX_ALGO_DOUBLE_TREE:
        if (src != acc && cnt)
            glex_sc_local(s, src, acc, cnt, false);
        glex_reduce_dtree(s, 0, acc, cnt, 0);
        glex_bcast_dtree(s, 0, acc, cnt, 0);
        break;
    case GLEX_ALGO_MULTICAST: /* a binomial reduce to rank 0, which multicasts the result */
        glex_reduce_binomial(s, 0, acc, src, cnt);
        glex_bcast_mcast(s, 0, acc, cnt);
        break;
    default:
        glex_reduce_binomial(s, 0, acc, src, cnt);
        glex_bcast_binomial(s, 0, acc, cnt, 0);
    }
}
