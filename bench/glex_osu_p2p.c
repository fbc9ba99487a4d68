/* glex_osu_p2p.c - OSU-compatible point-to-point benchmarks, plain MPI
 * (builds with any mpicc: ours, Debian's MPICH, Open MPI), so every system
 * is measured by the same code.
 *
 * Method (as the OSU micro-benchmarks 5.x measure them), per message size:
 *   latency  ranks 0 and 1 ping-pong (blocking send/recv); one-way latency =
 *            time / (2 * iterations).  Other ranks idle in a barrier.
 *   bw       rank 0 posts a window of 64 MPI_Isend, rank 1 64 MPI_Irecv,
 *            both wait, rank 1 answers with a 4-byte message; MB/s =
 *            bytes * window * iterations / time (MB = 1e6 bytes).
 *   bibw     as bw with both directions at once (each posts its window of
 *            receives and of sends).
 *   mbw_mr   the first half of the ranks each stream to a partner in the
 *            second half as in bw; reported: the aggregate MB/s and
 *            messages per second.
 * Warm-up iterations (-x, -X above 8 KiB) are not timed.  With -v every
 * received buffer is checked (a pattern per size, sender and iteration)
 * after the timed loop.  See --help. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_LATENCY, T_BW, T_BIBW, T_MBW_MR, T_COUNT };
static const char *const test_names[T_COUNT] = { "latency", "bw", "bibw", "mbw_mr" };

#define WINDOW 64
#define LARGE 8192

typedef struct {
    int test;
    size_t min, max;
    int iters, warmup, iters_large, warmup_large;
    int validate;
    const char *csv; /* label: print CSV rows system,test,np,size,value */
} opts_t;

static int me, np;

static void usage(void)
{
    if (me)
        return;
    printf("usage: mpiexec -n N glex-osu-p2p -t TEST [-m MIN:MAX] [-i N] [-x N] [-I N] [-X N]\n"
           "                 [-v] [--csv LABEL]\n"
           "  -t TEST   latency, bw, bibw (2 ranks or more: ranks 0 and 1),\n"
           "            mbw_mr (an even number of ranks: the first half sends)\n"
           "  -m A:B    message sizes A..B bytes, doubling (default 1:4194304; 0 allowed)\n"
           "  -i N -x N timed and warm-up iterations up to 8 KiB (default 10000, 100;\n"
           "            bw, bibw, mbw_mr: 100, 10 windows)\n"
           "  -I N -X N the same above 8 KiB (default 1000, 10; windows: 20, 2)\n"
           "  -v        check every received buffer after the timed loop\n"
           "  --csv L   print rows L,TEST,NP,SIZE,VALUE (us or MB/s) instead of the table\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = { { "csv", required_argument, NULL, 'c' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
    *o = (opts_t){ .test = -1, .min = 1, .max = 4194304, .iters = -1, .warmup = -1,
                   .iters_large = -1, .warmup_large = -1 };
    int c;
    while ((c = getopt_long(argc, argv, "t:m:i:x:I:X:vh", lo, NULL)) != -1) {
        char *end = NULL;
        long v = 0;
        switch (c) {
        case 't':
            for (int t = 0; t < T_COUNT; t++)
                if (!strcmp(optarg, test_names[t]))
                    o->test = t;
            if (o->test < 0) {
                if (!me)
                    fprintf(stderr, "glex-osu-p2p: -t '%s': allowed latency, bw, bibw, mbw_mr\n",
                            optarg);
                return 2;
            }
            break;
        case 'm': {
            unsigned long long a, b;
            if (sscanf(optarg, "%llu:%llu", &a, &b) != 2 || a > b || b > (1ull << 30)) {
                if (!me)
                    fprintf(stderr,
                            "glex-osu-p2p: -m '%s': want MIN:MAX bytes, MIN <= MAX <= 1073741824\n",
                            optarg);
                return 2;
            }
            o->min = (size_t)a;
            o->max = (size_t)b;
            break;
        }
        case 'i': case 'x': case 'I': case 'X':
            v = strtol(optarg, &end, 10);
            if (!end || *end || v < (c == 'i' || c == 'I' ? 1 : 0) || v > 100000000) {
                if (!me)
                    fprintf(stderr, "glex-osu-p2p: -%c '%s': a count from %d to 100000000\n", c,
                            optarg, c == 'i' || c == 'I' ? 1 : 0);
                return 2;
            }
            *(c == 'i' ? &o->iters : c == 'x' ? &o->warmup : c == 'I' ? &o->iters_large
                                                                      : &o->warmup_large) = (int)v;
            break;
        case 'v': o->validate = 1; break;
        case 'c': o->csv = optarg; break;
        case 'h': usage(); return 1;
        default: usage(); return 2;
        }
    }
    if (o->test < 0) {
        if (!me)
            fprintf(stderr, "glex-osu-p2p: -t TEST is required (latency, bw, bibw, mbw_mr)\n");
        return 2;
    }
    int windowed = o->test != T_LATENCY;
    if (o->iters < 0) o->iters = windowed ? 100 : 10000;
    if (o->warmup < 0) o->warmup = windowed ? 10 : 100;
    if (o->iters_large < 0) o->iters_large = windowed ? 20 : 1000;
    if (o->warmup_large < 0) o->warmup_large = windowed ? 2 : 10;
    if (np < 2 || (o->test == T_MBW_MR && np % 2)) {
        if (!me)
            fprintf(stderr, "glex-osu-p2p: %s needs %s ranks (have %d)\n", test_names[o->test],
                    o->test == T_MBW_MR ? "an even number of" : "at least 2", np);
        return 2;
    }
    return 0;
}

/* ---- buffers and their pattern ---- */

static unsigned char pattern(int sender, size_t size, int slot, size_t i)
{
    return (unsigned char)(sender * 31 + (int)(size % 251) + slot * 7 + (int)(i % 239));
}

static void fill(unsigned char *b, int sender, size_t size, int slot)
{
    for (size_t i = 0; i < size; i++)
        b[i] = pattern(sender, size, slot, i);
}

static long check(const unsigned char *b, int sender, size_t size, int slot)
{
    long bad = 0;
    for (size_t i = 0; i < size; i++)
        if (b[i] != pattern(sender, size, slot, i) && bad++ < 2)
            fprintf(stderr, "glex-osu-p2p: rank %d: %zu-byte message from %d, slot %d: byte %zu is %u, expected %u\n",
                    me, size, sender, slot, i, b[i], pattern(sender, size, slot, i));
    return bad;
}

/* ---- the tests: each returns its value on rank 0 (us or MB/s; mbw_mr also msg/s) ---- */

static double latency(size_t size, int warm, int iters, unsigned char *s, unsigned char *r,
                      long *bad, int validate)
{
    double t0 = 0;
    if (me < 2) {
        fill(s, me, size, 0);
        memset(r, 0, size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm)
            t0 = MPI_Wtime();
        if (me == 0) {
            MPI_Send(s, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(r, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == 1) {
            MPI_Recv(r, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (validate && me < 2)
        *bad += check(r, 1 - me, size, 0);
    return t * 1e6 / (2.0 * iters);
}

/* one direction or both between me and peer: a window of receives and/or
 * sends, then (one direction) an ack back; returns the elapsed time */
static double windows(size_t size, int warm, int iters, int peer, int sends, int recvs,
                      unsigned char *s, unsigned char *r, long *bad, int validate)
{
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW];
    char ack = 0;
    for (int w = 0; w < WINDOW && sends; w++)
        fill(s + (size_t)w * size, me, size, w);
    memset(r, 0, size * WINDOW);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0;
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm)
            t0 = MPI_Wtime();
        int n = 0;
        for (int w = 0; w < WINDOW && recvs; w++)
            MPI_Irecv(r + (size_t)w * size, (int)size, MPI_BYTE, peer, 10, MPI_COMM_WORLD,
                      &req[n++]);
        for (int w = 0; w < WINDOW && sends; w++)
            MPI_Isend(s + (size_t)w * size, (int)size, MPI_BYTE, peer, 10, MPI_COMM_WORLD,
                      &req[n++]);
        MPI_Waitall(n, req, st);
        if (sends && !recvs)
            MPI_Recv(&ack, 1, MPI_BYTE, peer, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (recvs && !sends)
            MPI_Send(&ack, 1, MPI_BYTE, peer, 11, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    if (validate && recvs)
        for (int w = 0; w < WINDOW; w++)
            *bad += check(r + (size_t)w * size, peer, size, w);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    size_t cap = o.max ? o.max : 1;
    unsigned char *s = malloc(cap * WINDOW), *r = malloc(cap * WINDOW);
    if (!s || !r) {
        fprintf(stderr, "glex-osu-p2p: rank %d: out of memory for %zu-byte buffers\n", me,
                cap * WINDOW);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!me && !o.csv) {
        printf("# OSU-compatible MPI %s test (glex-osu-p2p), %d processes\n",
               test_names[o.test], np);
        printf(o.test == T_LATENCY ? "# Size       Latency (us)\n"
               : o.test == T_MBW_MR ? "# Size       MB/s          Messages/s\n"
                                    : "# Size       Bandwidth (MB/s)\n");
    }
    long bad = 0;
    for (size_t size = o.min; size <= o.max; size = size ? size * 2 : 1) {
        int large = size > LARGE;
        int warm = large ? o.warmup_large : o.warmup, iters = large ? o.iters_large : o.iters;
        double value = 0, rate = 0;
        if (o.test == T_LATENCY) {
            value = latency(size, warm, iters, s, r, &bad, o.validate);
        } else {
            int half = o.test == T_MBW_MR ? np / 2 : 1;
            int active = o.test == T_MBW_MR ? 1 : me < 2;
            int sender = me < half, peer = sender ? me + half : me - half;
            double t = 0;
            if (active && o.test == T_BIBW)
                t = windows(size, warm, iters, peer, 1, 1, s, r, &bad, o.validate);
            else if (active)
                t = windows(size, warm, iters, peer, sender, !sender, s, r, &bad, o.validate);
            else
                MPI_Barrier(MPI_COMM_WORLD); /* the barrier windows() starts with */
            double bytes = (double)size * WINDOW * iters * (o.test == T_BIBW ? 2 : 1);
            double mbs = t > 0 && sender && active ? bytes / t / 1e6 : 0;
            double msgs = t > 0 && sender && active ? (double)WINDOW * iters / t : 0;
            if (o.test == T_BIBW && me == 0)
                mbs = bytes / t / 1e6;
            MPI_Reduce(&mbs, &value, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Reduce(&msgs, &rate, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        }
        if (!me) {
            if (o.csv)
                printf("%s,%s,%d,%zu,%.3f\n", o.csv, test_names[o.test], np, size, value);
            else if (o.test == T_MBW_MR)
                printf("%-12zu %-13.2f %.0f\n", size, value, rate);
            else
                printf("%-12zu %.2f\n", size, value);
            fflush(stdout);
        }
        if (!size && o.max == 0)
            break;
    }
    long allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (!me && o.validate)
        printf("# validation: %s\n", allbad ? "FAILED" : "every received buffer right");
    free(s);
    free(r);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
