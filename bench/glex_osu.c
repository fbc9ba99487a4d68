/* glex_osu.c - OSU-compatible latency benchmark of MPI collectives, plain MPI
 * (builds with any mpicc: ours, Debian's MPICH, Open MPI), so every system
 * is measured by the same code.
 *
 * Method (as the OSU micro-benchmarks 5.x measure collectives): per message
 * size, -x warm-up calls, then -i timed calls, each timed alone with
 * MPI_Wtime and followed by an untimed MPI_Barrier; each rank's average per
 * call; reported: the average over ranks (and with -f the minimum and
 * maximum rank averages).  Reductions use MPI_FLOAT and MPI_SUM, roots are 0.
 *
 * Nonblocking variants (i*): first the pure communication time (start + wait),
 * then start + a compute loop as long as the pure time + wait; overlap =
 * max(0, 100 - 100 * (overall - compute) / pure), averaged over ranks.
 *
 * -b also times the barrier after each blocking call (what a program that
 * syncs after each call pays: the call's number alone depends on the order
 * in which the barrier before it let the processes out).
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_BCAST, C_REDUCE, C_ALLREDUCE, C_BARRIER, C_COUNT };
static const char *const coll_names[C_COUNT] = { "bcast", "reduce", "allreduce", "barrier" };

typedef struct {
    int coll, nonblocking, full, csv, validate, time_barrier;
    int iters, warmup, iters_large, warmup_large;
    size_t min_size, max_size, large;
    const char *label;
} opts_t;

static int me, np;

static void usage(FILE *o)
{
    fprintf(o,
            "usage: mpiexec -n N glex-osu [options]\n"
            "  -c COLL       bcast|reduce|allreduce|barrier, or ibcast|ireduce|iallreduce|\n"
            "                ibarrier (nonblocking: reports compute/communication overlap);\n"
            "                default allreduce\n"
            "  -m MIN:MAX    message sizes in bytes, powers of two from MIN, default 8:4194304\n"
            "                (4 bytes is the smallest: one MPI_FLOAT)\n"
            "  -i ITERS      timed calls per size up to 8 KB, default 1000\n"
            "  -I ITERS      timed calls per size above 8 KB, default 100\n"
            "  -x WARMUP     untimed warm-up calls per size up to 8 KB, default 200\n"
            "  -X WARMUP     warm-up calls above 8 KB, default 10\n"
            "  -f            full: also the minimum and maximum of the rank averages\n"
            "  -b            also time the barrier after each call (blocking collectives,\n"
            "                not with --csv): adds its average over ranks and the sum\n"
            "  -v            validate every result (outside the timed calls); a wrong\n"
            "                element ends the run with exit status 1\n"
            "  --csv LABEL   print CSV rows: label,coll,np,size,avg_us,min_us,max_us,iters,\n"
            "                pure_us,compute_us,overlap_pct (the last three for nonblocking\n"
            "                collectives only; their avg/min/max are the overall times)\n"
            "  -h, --help    this text\n"
            "Exit status: 0, 1 on a validation error, 2 on bad options.\n");
}

static int parse_size_range(const char *s, opts_t *o)
{
    unsigned long long a, b;
    if (sscanf(s, "%llu:%llu", &a, &b) != 2 || a < 4 || a > b || b > (1ull << 30)) {
        if (!me)
            fprintf(stderr, "glex-osu: -m %s: expected MIN:MAX with 4 <= MIN <= MAX <= 1 GiB\n",
                    s);
        return 2;
    }
    o->min_size = a, o->max_size = b;
    return 0;
}

static int positive(const char *opt, const char *v, int min, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < min || x > 100000000) {
        if (!me)
            fprintf(stderr, "glex-osu: %s %s: allowed %d..100000000\n", opt, v, min);
        return 2;
    }
    *out = (int)x;
    return 0;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = { { "csv", required_argument, 0, 'C' },
                                         { "help", no_argument, 0, 'h' },
                                         { 0, 0, 0, 0 } };
    *o = (opts_t){ .coll = C_ALLREDUCE, .iters = 1000, .warmup = 200, .iters_large = 100,
                   .warmup_large = 10, .min_size = 8, .max_size = 4u << 20, .large = 8192 };
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, "c:m:i:I:x:X:fbvh", lo, NULL)) != -1) {
        switch (c) {
        case 'c': {
            const char *name = optarg;
            o->nonblocking = name[0] == 'i' && strcmp(name, "i") != 0;
            if (o->nonblocking)
                name++;
            int k;
            for (k = 0; k < C_COUNT && strcmp(name, coll_names[k]); k++)
                ;
            if (k == C_COUNT) {
                if (!me)
                    fprintf(stderr,
                            "glex-osu: -c %s: allowed bcast|reduce|allreduce|barrier and their "
                            "i-prefixed nonblocking forms\n",
                            optarg);
                return 2;
            }
            o->coll = k;
            break;
        }
        case 'm': rc = parse_size_range(optarg, o); break;
        case 'i': rc = positive("-i", optarg, 1, &o->iters); break;
        case 'I': rc = positive("-I", optarg, 1, &o->iters_large); break;
        case 'x': rc = positive("-x", optarg, 0, &o->warmup); break;
        case 'X': rc = positive("-X", optarg, 0, &o->warmup_large); break;
        case 'f': o->full = 1; break;
        case 'b': o->time_barrier = 1; break;
        case 'v': o->validate = 1; break;
        case 'C': o->csv = 1, o->label = optarg; break;
        case 'h':
            if (!me)
                usage(stdout);
            return 1;
        default:
            if (!me)
                usage(stderr);
            return 2;
        }
    }
    if (!rc && optind < argc) {
        if (!me)
            fprintf(stderr, "glex-osu: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (!rc && o->time_barrier && o->nonblocking) {
        if (!me)
            fprintf(stderr, "glex-osu: -b times blocking collectives only; -c i%s is nonblocking\n",
                    coll_names[o->coll]);
        return 2;
    }
    if (!rc && o->time_barrier && o->csv) {
        if (!me)
            fprintf(stderr, "glex-osu: -b does not combine with --csv (its columns are fixed)\n");
        return 2;
    }
    return rc;
}

/* ---- one call of the collective, blocking or started ---- */

static void start(const opts_t *o, float *sb, float *rb, int count, MPI_Request *req)
{
    switch (o->coll) {
    case C_BCAST:
        if (o->nonblocking)
            MPI_Ibcast(sb, count, MPI_FLOAT, 0, MPI_COMM_WORLD, req);
        else
            MPI_Bcast(sb, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
    case C_REDUCE:
        if (o->nonblocking)
            MPI_Ireduce(sb, rb, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, req);
        else
            MPI_Reduce(sb, rb, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case C_ALLREDUCE:
        if (o->nonblocking)
            MPI_Iallreduce(sb, rb, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, req);
        else
            MPI_Allreduce(sb, rb, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    default:
        if (o->nonblocking)
            MPI_Ibarrier(MPI_COMM_WORLD, req);
        else
            MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

static double run_once(const opts_t *o, float *sb, float *rb, int count)
{
    MPI_Request req = MPI_REQUEST_NULL;
    double t0 = MPI_Wtime();
    start(o, sb, rb, count, &req);
    if (o->nonblocking)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

/* ---- compute for the overlap measurement ---- */

static volatile double sink;

/* busy work for 'seconds' of wall-clock time, as OSU 5.x does it
 * (do_compute_cpu: short kernels until their summed MPI_Wtime intervals
 * reach the target; time the process spends preempted counts as compute) */
static double compute_for(double seconds)
{
    double t0 = MPI_Wtime(), elapsed = 0, x = 0;
    while (elapsed < seconds) {
        double t1 = MPI_Wtime();
        for (int j = 0; j < 200; j++)
            x += j * 1e-9;
        elapsed += MPI_Wtime() - t1;
    }
    sink = x;
    return MPI_Wtime() - t0;
}

/* ---- validation ---- */

static float value(int rank, size_t i)
{
    return (float)((rank + 1) * 3 + (int)(i % 17)); /* small integers: sums are exact */
}

static void fill(const opts_t *o, float *sb, float *rb, int count)
{
    for (int i = 0; i < count; i++) {
        sb[i] = o->coll == C_BCAST ? (me == 0 ? value(0, (size_t)i) : -1.0f) : value(me, (size_t)i);
        rb[i] = -1.0f;
    }
}

static long check(const opts_t *o, const float *sb, const float *rb, int count)
{
    long bad = 0;
    if (o->coll == C_BARRIER || (o->coll == C_REDUCE && me != 0))
        return 0;
    for (int i = 0; i < count; i++) {
        float want = 0, got = o->coll == C_BCAST ? sb[i] : rb[i];
        if (o->coll == C_BCAST)
            want = value(0, (size_t)i);
        else
            for (int r = 0; r < np; r++)
                want += value(r, (size_t)i);
        if (got != want && bad++ < 3)
            fprintf(stderr, "glex-osu: rank %d: %s size %zu: element %d is %g, expected %g\n", me,
                    coll_names[o->coll], (size_t)count * sizeof(float), i, (double)got,
                    (double)want);
    }
    return bad;
}

/* ---- one message size ---- */

typedef struct {
    double avg, min, max; /* latency; nonblocking: overall time with compute */
    double pure, compute, overlap; /* nonblocking only (overlap in %) */
    double barrier; /* -b: the barrier after each call, average over ranks */
    int iters;
} result_t;

static void stats(double mine, double *avg, double *min, double *max)
{
    MPI_Reduce(&mine, min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    *avg /= np;
}

static double timed_loop(const opts_t *o, float *sb, float *rb, int count, int warm, int iters,
                         double compute_s, double *compute_total, double *barrier)
{
    double total = 0, ctotal = 0, btotal = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + iters; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        double t0 = MPI_Wtime(), t;
        if (compute_s > 0) {
            start(o, sb, rb, count, &req);
            double c = compute_for(compute_s);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            t = MPI_Wtime() - t0;
            if (i >= warm)
                ctotal += c;
        } else {
            t = run_once(o, sb, rb, count);
        }
        if (i >= warm)
            total += t;
        double b0 = barrier ? MPI_Wtime() : 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (barrier && i >= warm)
            btotal += MPI_Wtime() - b0;
    }
    if (compute_total)
        *compute_total = ctotal;
    if (barrier)
        *barrier = btotal / iters;
    return total / iters;
}

static int measure(const opts_t *o, size_t size, float *sb, float *rb, result_t *res)
{
    int count = (int)(size / sizeof(float));
    int large = size > o->large;
    int warm = large ? o->warmup_large : o->warmup;
    int iters = large ? o->iters_large : o->iters;
    long bad = 0;
    if (o->validate) {
        fill(o, sb, rb, count);
        run_once(o, sb, rb, count);
        bad = check(o, sb, rb, count);
    }
    double bar = 0, mn, mx;
    double lat = timed_loop(o, sb, rb, count, warm, iters, 0, NULL,
                            o->time_barrier ? &bar : NULL);
    if (o->validate) { /* and once more after the timed calls (cached plans, reused slots) */
        fill(o, sb, rb, count);
        run_once(o, sb, rb, count);
        bad += check(o, sb, rb, count);
    }
    stats(lat, &res->avg, &res->min, &res->max);
    res->barrier = 0;
    if (o->time_barrier)
        stats(bar, &res->barrier, &mn, &mx);
    res->iters = iters;
    res->pure = res->compute = res->overlap = 0;
    if (o->nonblocking) {
        /* every rank computes as long as the slowest pure communication */
        double pure, ctot;
        MPI_Allreduce(&lat, &pure, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double overall = timed_loop(o, sb, rb, count, warm, iters, pure, &ctot, NULL);
        double comp = ctot / iters;
        double ov = 100.0 - 100.0 * (overall - comp) / lat;
        stats(ov < 0 ? 0 : ov, &res->overlap, &mn, &mx);
        res->pure = res->avg;
        stats(comp, &res->compute, &mn, &mx);
        stats(overall, &res->avg, &res->min, &res->max);
    }
    long allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return allbad ? 1 : 0;
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
        return rc == 1 ? 0 : 2;
    }
    size_t lo = o.coll == C_BARRIER ? 0 : o.min_size, hi = o.coll == C_BARRIER ? 0 : o.max_size;
    size_t bytes = hi < 4 ? 4 : hi;
    float *sb = malloc(bytes), *rb = malloc(bytes);
    if (!sb || !rb) {
        fprintf(stderr, "glex-osu: rank %d: cannot allocate 2 x %zu bytes\n", me, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sb, 0, bytes);
    memset(rb, 0, bytes);
    const char *name = coll_names[o.coll];
    if (!me && !o.csv) {
        printf("# OSU-compatible MPI %s%s latency test (glex-osu), %d processes\n",
               o.nonblocking ? "I" : "", name, np);
        const char *bar_cols = o.time_barrier ? "   Barrier(us)       Sum(us)" : "";
        if (o.nonblocking)
            printf("# %-10s %13s %13s %15s %11s\n", "Size", "Overall(us)", "Compute(us)",
                   "Pure Comm.(us)", "Overlap(%)");
        else if (o.full)
            printf("# %-10s %17s %17s %17s %12s%s\n", "Size", "Avg Latency(us)", "Min Latency(us)",
                   "Max Latency(us)", "Iterations", bar_cols);
        else
            printf("# %-10s %17s%s\n", "Size", "Avg Latency(us)", bar_cols);
    }
    int failed = 0;
    for (size_t size = lo;; size = size ? size * 2 : 1) {
        result_t r;
        failed |= measure(&o, size, sb, rb, &r);
        if (!me) {
            if (o.csv && o.nonblocking)
                printf("%s,i%s,%d,%zu,%.3f,%.3f,%.3f,%d,%.3f,%.3f,%.1f\n", o.label, name, np,
                       size, r.avg * 1e6, r.min * 1e6, r.max * 1e6, r.iters, r.pure * 1e6,
                       r.compute * 1e6, r.overlap);
            else if (o.csv)
                printf("%s,%s,%d,%zu,%.3f,%.3f,%.3f,%d,,,\n", o.label, name, np, size,
                       r.avg * 1e6, r.min * 1e6, r.max * 1e6, r.iters);
            else if (o.nonblocking)
                printf("  %-10zu %13.2f %13.2f %15.2f %11.2f\n", size, r.avg * 1e6,
                       r.compute * 1e6, r.pure * 1e6, r.overlap);
            else if (o.full)
                printf("  %-10zu %17.2f %17.2f %17.2f %12d", size, r.avg * 1e6, r.min * 1e6,
                       r.max * 1e6, r.iters);
            else
                printf("  %-10zu %17.2f", size, r.avg * 1e6);
            if (!o.csv && !o.nonblocking)
                printf(o.time_barrier ? " %13.2f %13.2f\n" : "\n", r.barrier * 1e6,
                       (r.avg + r.barrier) * 1e6);
            fflush(stdout);
        }
        if (size >= hi)
            break;
    }
    if (failed && !me)
        fprintf(stderr, "glex-osu: validation failed\n");
    free(sb);
    free(rb);
    MPI_Finalize();
    return failed ? 1 : 0;
}
