/* test_repro.c - floating-point reproducibility.  Inputs spread over 60
 * binary orders of magnitude make a double sum depend on the combining
 * order.  Each algorithm runs 50 times with random delays (up to 300 us)
 * injected before every send; the bits must be identical every time (and on
 * every rank for allreduce).  Binomial reduce and recursive doubling are also
 * checked against a serial evaluation in the schedule's order. */
#include "glex_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 50

static double val(int rank, uint64_t i)
{
    uint64_t h = (uint64_t)rank * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull + 12345;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    double m = (double)(h % 100000 + 1) / 7.0;
    return ldexp((h >> 20) & 1 ? -m : m, (int)((h >> 24) % 60) - 30);
}

/* binomial reduce to virtual root 0 in schedule order: own, then children by
 * increasing distance, each child's value its own subtree's */
static double binomial_ref(int v, int n, uint64_t i, int root)
{
    double acc = val((v + root) % n, i);
    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask)
            break;
        if (v + mask < n)
            acc += binomial_ref(v + mask, n, i, root);
    }
    return acc;
}

/* recursive doubling for a power-of-two n: pairwise, level by level */
static double rd_ref(int n, uint64_t i)
{
    double x[64];
    for (int r = 0; r < n; r++)
        x[r] = val(r, i);
    for (int mask = 1; mask < n; mask <<= 1) {
        double y[64];
        for (int r = 0; r < n; r++)
            y[r] = x[r] + x[r ^ mask];
        memcpy(x, y, sizeof x);
    }
    return x[0];
}

static int run(glex_tctx_t *c)
{
    uint64_t counts[2] = { 5, 3000 }; /* inline packets, and pulsed transfers */
    for (int kind = GLEX_COLL_REDUCE; kind <= GLEX_COLL_ALLREDUCE; kind++)
        for (int algo = 1; algo < GLEX_ALGO_COUNT; algo++)
            for (int ci = 0; ci < 2; ci++) {
                glex_coll_args_t a = { .kind = (glex_coll_kind_t)kind, .algo = (glex_algo_t)algo,
                                       .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                                       .count = counts[ci], .root = 1 % (uint32_t)c->n,
                                       /* as glex_coll_run marks it: resolve says what runs */
                                       .blocking = algo == GLEX_ALGO_DIRECT };
                if (!glex_algo_valid(a.kind, a.algo))
                    continue;
                double *in = malloc(a.count * 8), *out = malloc(a.count * 8),
                       *first = malloc(a.count * 8);
                a.sendbuf = in;
                a.recvbuf = out;
                glex_algo_t real = GLEX_ALGO_AUTO;
                if (glex_coll_resolve(c->g, &a, &real))
                    fprintf(stderr, "# resolve: %s\n", glex_last_error());
                int id = glex_case(c, "%s %s (%s) of %llu doubles: identical bits in %d runs with "
                                   "random send delays",
                                   glex_coll_kind_name(a.kind), glex_algo_name(a.algo),
                                   glex_algo_name(real), (unsigned long long)a.count, RUNS);
                for (uint64_t i = 0; i < a.count; i++)
                    in[i] = val(c->rank, i);
                int have = kind == GLEX_COLL_ALLREDUCE || (uint32_t)c->rank == a.root;
                for (int r = 0; r < RUNS; r++) {
                    glex_debug_set_send_jitter(c->f, 300, (uint32_t)(r * 131 + c->rank * 7 + 1));
                    memset(out, 0, a.count * 8);
                    if (glex_coll_run(c->g, &a)) {
                        glex_case_fail(c, id, "run %d: %s", r, glex_last_error());
                        break;
                    }
                    if (!have)
                        continue;
                    if (r == 0)
                        memcpy(first, out, a.count * 8);
                    else if (memcmp(first, out, a.count * 8)) {
                        glex_case_fail(c, id, "run %d differs from run 0", r);
                        break;
                    }
                }
                glex_debug_set_send_jitter(c->f, 0, 0);
                if (real == GLEX_ALGO_BINOMIAL && kind == GLEX_COLL_REDUCE) {
                    int id2 = glex_case(c, "binomial reduce of %llu doubles equals the serial "
                                        "same-order reference", (unsigned long long)a.count);
                    if (!have)
                        goto next;
                    double naive_differs = 0;
                    for (uint64_t i = 0; i < a.count; i++) {
                        double want = binomial_ref(0, c->n, i, (int)a.root), naive = 0;
                        for (int r = 0; r < c->n; r++)
                            naive += val(r, i);
                        naive_differs += naive != want;
                        if (memcmp(&want, &first[i], 8))
                            glex_case_fail(c, id2, "element %llu: %.17g, reference %.17g",
                                           (unsigned long long)i, first[i], want);
                    }
                    if (c->n >= 4 && a.count > 100 && naive_differs == 0)
                        glex_case_fail(c, id2, "inputs do not expose rounding");
                }
                if (real == GLEX_ALGO_RECURSIVE_DOUBLING && (c->n & (c->n - 1)) == 0) {
                    int id2 = glex_case(c, "recursive doubling of %llu doubles equals the serial "
                                        "same-order reference", (unsigned long long)a.count);
                    for (uint64_t i = 0; i < a.count; i++) {
                        double want = rd_ref(c->n, i);
                        if (memcmp(&want, &first[i], 8))
                            glex_case_fail(c, id2, "element %llu: %.17g, reference %.17g",
                                           (unsigned long long)i, first[i], want);
                    }
                }
            next:
                free(in);
                free(out);
                free(first);
            }
    return 0;
}

int main(void)
{
    glex_run_group(4, NULL, run, NULL, 900, "repro");
    glex_run_group(7, NULL, run, NULL, 900, "repro");
    return tap_done();
}
