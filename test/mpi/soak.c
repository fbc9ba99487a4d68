/* soak.c - many mixed collectives, every result checked.
 *
 *   soak [N [SEED]]      (N collectives in all, default 100000)
 *
 * Four communicators span all ranks in different orders (a dup, reversed,
 * rotated, and a dup of the dup).  Every rank draws the same pseudo-random
 * sequence: communicator, collective (blocking or not), datatype, op, count
 * (mostly small, some up to 256 KiB), root, in place or not.  Values are
 * small integers so sums are exact in every type.  The algorithm is the
 * GLEX_*_ALGO environment of the run (test/mpi/reliability.sh draws them).
 * First, 1000 nonblocking allreduces in flight at once over the four
 * communicators (more than the 256 JobIDs: back-pressure, not failure).
 * The heap in use (mallinfo2) half way and at the end is printed; from
 * 20000 calls on, growth of more than 16 MiB over the second half is
 * reported (cached plans hold scratch buffers of up to 256 KiB, so the heap
 * swings by a few MiB as they are evicted; the exact leak check is
 * valgrind's, test/mpi/reliability.sh). */
#define _GNU_SOURCE
#include "mt.h"

#include <malloc.h>
#include <stdint.h>
#include <string.h>

static uint64_t rng;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

enum { T_INT, T_LONG, T_UCHAR, T_FLOAT, T_DOUBLE, T_DOUBLE_INT, NT };
static const MPI_Datatype mtype[NT] = { MPI_INT, MPI_LONG, MPI_UNSIGNED_CHAR, MPI_FLOAT,
                                        MPI_DOUBLE, MPI_DOUBLE_INT };
static const size_t tsize[NT] = { sizeof(int), sizeof(long), 1, sizeof(float), sizeof(double),
                                  sizeof(struct { double v; int i; }) };
typedef struct { double v; int i; } dint_t;

/* value of element i at rank r in call k: small, exact in every type */
static long val(int r, long i, long k) { return (r * 7 + i * 3 + k) % 5 + 1; }

static void fill(int t, void *buf, long n, int r, long k)
{
    for (long i = 0; i < n; i++) {
        long v = val(r, i, k);
        switch (t) {
        case T_INT: ((int *)buf)[i] = (int)v; break;
        case T_LONG: ((long *)buf)[i] = v; break;
        case T_UCHAR: ((unsigned char *)buf)[i] = (unsigned char)v; break;
        case T_FLOAT: ((float *)buf)[i] = (float)v; break;
        case T_DOUBLE: ((double *)buf)[i] = (double)v; break;
        default: ((dint_t *)buf)[i] = (dint_t){ (double)v, r }; break;
        }
    }
}

/* expected combination over ranks 0..n-1 of element i */
static double expect(MPI_Op op, long i, long k, int n, int *loc)
{
    double acc = val(0, i, k);
    *loc = 0;
    for (int r = 1; r < n; r++) {
        double v = val(r, i, k);
        if (op == MPI_SUM)
            acc += v;
        else if (op == MPI_BOR)
            acc = (double)((long)acc | (long)v);
        else if ((op == MPI_MAX || op == MPI_MAXLOC) ? v > acc : v < acc)
            acc = v, *loc = r;
    }
    return acc;
}

static double get(int t, const void *buf, long i, int *loc)
{
    switch (t) {
    case T_INT: return ((const int *)buf)[i];
    case T_LONG: return (double)((const long *)buf)[i];
    case T_UCHAR: return ((const unsigned char *)buf)[i];
    case T_FLOAT: return ((const float *)buf)[i];
    case T_DOUBLE: return ((const double *)buf)[i];
    default: *loc = ((const dint_t *)buf)[i].i; return ((const dint_t *)buf)[i].v;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long total = argc > 1 ? atol(argv[1]) : 100000;
    rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
    if (!rng)
        rng = 1;
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm comm[4];
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &comm[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank + 3) % wsize, &comm[2]);
    MPI_Comm_dup(comm[0], &comm[3]);
    /* more collectives in flight than JobIDs */
    enum { FLOOD = 1000 };
    static long fin[FLOOD], fout[FLOOD];
    static MPI_Request freq[FLOOD];
    static MPI_Status fst[FLOOD]; /* gcc 12 warns on MPI_STATUSES_IGNORE here */
    for (int i = 0; i < FLOOD; i++) {
        fin[i] = wrank + i;
        MT_MPI(MPI_Iallreduce(&fin[i], &fout[i], 1, MPI_LONG, MPI_SUM, comm[i % 4], &freq[i]));
    }
    MT_MPI(MPI_Waitall(FLOOD, freq, fst));
    for (int i = 0; i < FLOOD; i++)
        MT_CHECK(fout[i] == (long)wsize * (wsize - 1) / 2 + (long)wsize * i,
                 "in-flight allreduce %d: %ld", i, fout[i]);
    const long maxbytes = 256 * 1024;
    char *sb = malloc(maxbytes), *rb = malloc(maxbytes);
    size_t heap_early = 0;
    long counts[7] = { 0 };
    for (long k = 0; k < total; k++) {
        if (k == total / 2)
            heap_early = mallinfo2().uordblks;
        MPI_Comm c = comm[next() % 4];
        int rank, size;
        MPI_Comm_rank(c, &rank);
        MPI_Comm_size(c, &size);
        int kind = (int)(next() % 7); /* bcast reduce allreduce barrier ibcast ireduce iallreduce */
        int nb = kind >= 4;
        int base = nb ? kind - 4 : kind; /* 0 bcast 1 reduce 2 allreduce 3 barrier */
        counts[kind]++;
        int t = (int)(next() % NT);
        uint32_t sz = next() % 100;
        long maxn = maxbytes / (long)tsize[t];
        long n = sz < 70 ? 1 + next() % 16 : sz < 95 ? 1 + next() % 2048 : 1 + next() % maxn;
        if (n > maxn)
            n = maxn;
        int root = (int)(next() % (uint32_t)size);
        int inplace = next() % 3 == 0;
        MPI_Op op;
        int o = (int)(next() % 3);
        if (t == T_DOUBLE_INT)
            op = o ? MPI_MAXLOC : MPI_MINLOC;
        else if (t == T_FLOAT || t == T_DOUBLE)
            op = o == 0 ? MPI_SUM : o == 1 ? MPI_MAX : MPI_MIN;
        else
            op = o == 0 ? MPI_SUM : o == 1 ? MPI_MIN : MPI_BOR;
        if (t == T_UCHAR && op == MPI_SUM && size * 5 > 255)
            op = MPI_MAX;
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Datatype dt = mtype[t];
        if (base == 3) {
            MT_MPI(MPI_Barrier(c));
            continue;
        }
        if (base == 0) {
            if (rank == root)
                fill(t, rb, n, 7, k);
            else
                memset(rb, 0, (size_t)n * tsize[t]);
            MT_MPI(nb ? MPI_Ibcast(rb, (int)n, dt, root, c, &req)
                      : MPI_Bcast(rb, (int)n, dt, root, c));
        } else {
            fill(t, inplace && (base == 2 || rank == root) ? rb : sb, n, rank, k);
            const void *s = inplace && (base == 2 || rank == root) ? MPI_IN_PLACE : sb;
            if (base == 1)
                MT_MPI(nb ? MPI_Ireduce(s, rb, (int)n, dt, op, root, c, &req)
                          : MPI_Reduce(s, rb, (int)n, dt, op, root, c));
            else
                MT_MPI(nb ? MPI_Iallreduce(s, rb, (int)n, dt, op, c, &req)
                          : MPI_Allreduce(s, rb, (int)n, dt, op, c));
        }
        if (nb)
            MT_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (base == 1 && rank != root)
            continue;
        int bad = 0;
        for (long i = 0; i < n && bad < 3; i++) {
            int loc = -1, wl = -1;
            double got = get(t, rb, i, &loc);
            double want = base == 0 ? (double)val(7, i, k) : expect(op, i, k, size, &wl);
            if (base == 0 && t == T_DOUBLE_INT)
                wl = 7;
            if (got != want || (t == T_DOUBLE_INT && loc != wl)) {
                bad++;
                MT_CHECK(0, "call %ld kind %d type %d op %d count %ld root %d inplace %d: "
                         "element %ld is %g (loc %d), expected %g (loc %d)",
                         k, kind, t, (int)(op == MPI_SUM), n, root, inplace, i, got, loc, want,
                         wl);
            }
        }
        mt_checks++;
    }
    size_t heap_end = mallinfo2().uordblks;
    if (total >= 20000) /* the plan cache's scratch buffers make the heap swing by MBs */
        MT_CHECK(heap_end < heap_early + (16u << 20),
                 "heap grew from %zu to %zu bytes over the second half", heap_early, heap_end);
    if (wrank == 0)
        printf("soak: %ld collectives (bcast %ld reduce %ld allreduce %ld barrier %ld ibcast %ld "
               "ireduce %ld iallreduce %ld), heap %zu -> %zu bytes\n",
               total, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6],
               heap_early, heap_end);
    for (int i = 0; i < 4; i++)
        MPI_Comm_free(&comm[i]);
    free(sb);
    free(rb);
    return mt_finish("soak") | (MPI_Finalize() != MPI_SUCCESS);
}
