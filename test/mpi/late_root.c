/* late_root.c - MPI_Reduce whose root comes late: the other ranks return,
 * overwrite their send buffers, free the communicator (and at the end
 * finalize) while the root is still away; the root's result must hold the
 * values they had at the call.  Likewise MPI_Bcast whose last receiver
 * comes late (the root may return, overwrite its buffer and broadcast
 * again before it arrives) and MPI_Allreduce with a late rank.  Sizes
 * above the direct path's mailbox slot (where senders copy out into a
 * stage, or wait to be read: GLEX_STAGE_KB, GLEX_STAGE_MAP).
 *
 * usage: late_root [SECONDS [out|wait [out|wait]]]
 *   SECONDS  how long the root stays away (default 1.5: longer than any
 *            fixed grace period)
 *   out      reduce: the others must return before the root enters (their
 *            data is copied out); wait: not before (they wait to be read);
 *            checked on one clock, the root's entry against their return
 *   3rd      the same for a bcast of 72 and 125 KiB: the root against the
 *            late receiver's entry */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "mt.h"

#include <string.h>
#include <time.h>

static int rank, size;

static void away(double sec)
{
    struct timespec ts = { (time_t) sec, (long) ((sec - (double) (time_t) sec) * 1e9) };
    nanosleep(&ts, NULL);
}

static double value(int r, long i) { return (double) ((r + 1) * 1000 + i % 977); }

static long check(const double *out, long n, long *first)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        double e = 0;
        for (int r = 0; r < size; r++)
            e += value(r, i);
        if (out[i] != e && !bad++)
            *first = i;
    }
    return bad;
}

/* one reduce to the last rank on comm; the root arrives sec late.
 * Returns when the root entered the call (root) or this rank left it */
static double late_reduce(MPI_Comm comm, long n, double sec, const char *what)
{
    int root = size - 1;
    double *in = malloc((size_t) n * sizeof *in), *out = malloc((size_t) n * sizeof *out);
    for (long i = 0; i < n; i++)
        in[i] = value(rank, i);
    if (rank == root)
        away(sec);
    double entered = MPI_Wtime();
    MT_MPI(MPI_Reduce(in, out, (int) n, MPI_DOUBLE, MPI_SUM, root, comm));
    double left = MPI_Wtime();
    for (long i = 0; i < n; i++) /* the send buffer is the caller's again */
        in[i] = -1e300;
    if (rank == root) {
        long first = 0, bad = check(out, n, &first);
        MT_CHECK(!bad, "%s, %ld doubles: %ld elements wrong, first [%ld] = %g", what, n, bad,
                 first, out[first]);
    }
    free(in);
    free(out);
    return rank == root ? entered : left;
}

static double bvalue(int call, long i) { return (double) (call * 7919 + i % 1009); }

/* bcasts from rank 0 on comm, the last rank sec late to call number late:
 * the root overwrites its buffer after each call.  Returns, on the root,
 * when it left that call, on the late rank when it entered it */
static double late_bcast(MPI_Comm comm, const long *counts, int nc, int late, double sec)
{
    double t = 0;
    for (int c = 0; c < nc; c++) {
        long n = counts[c];
        double *buf = malloc((size_t) n * sizeof *buf);
        for (long i = 0; i < n; i++)
            buf[i] = rank == 0 ? bvalue(c, i) : -1;
        if (rank == size - 1 && c == late)
            away(sec);
        double entered = MPI_Wtime();
        MT_MPI(MPI_Bcast(buf, (int) n, MPI_DOUBLE, 0, comm));
        if (c == late)
            t = rank == 0 ? MPI_Wtime() : entered;
        long bad = 0, first = 0;
        for (long i = 0; i < n; i++) {
            if (rank != 0 && buf[i] != bvalue(c, i) && !bad++)
                first = i;
            buf[i] = -1e300;
        }
        MT_CHECK(!bad, "bcast %d, %ld doubles, receiver late: %ld elements wrong, first [%ld]",
                 c, n, bad, first);
        free(buf);
    }
    return t;
}

/* allreduce with the last rank sec late, buffers overwritten after */
static void late_allreduce(MPI_Comm comm, long n, double sec)
{
    double *in = malloc((size_t) n * sizeof *in), *out = malloc((size_t) n * sizeof *out);
    for (long i = 0; i < n; i++)
        in[i] = value(rank, i);
    if (rank == size - 1)
        away(sec);
    MT_MPI(MPI_Allreduce(in, out, (int) n, MPI_DOUBLE, MPI_SUM, comm));
    long first = 0, bad = check(out, n, &first);
    MT_CHECK(!bad, "allreduce, %ld doubles, a rank late: %ld elements wrong, first [%ld] = %g",
             n, bad, first, out[first]);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double sec = argc > 1 ? atof(argv[1]) : 1.5;
    const char *expect = argc > 2 ? argv[2] : "";
    const char *bexpect = argc > 3 ? argv[3] : "";

    /* sizes that grow, shrink and alternate the mailbox's two slots; the
     * root late only at the last call before the communicator goes */
    long counts[] = { 9000, 70000, 300000, 9000, 300000, 131072 };
    int nc = (int) (sizeof counts / sizeof counts[0]);
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    double t = 0;
    for (int c = 0; c < nc; c++)
        t = late_reduce(dup, counts[c], c == nc - 1 ? sec : 0.0, "dup communicator");
    MT_MPI(MPI_Comm_free(&dup));
    double root_entered = t;
    MT_MPI(MPI_Bcast(&root_entered, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
    if (rank != size - 1 && !strcmp(expect, "out"))
        MT_CHECK(t < root_entered, "copied out: returned %.3f s after the root entered",
                 t - root_entered);
    if (rank != size - 1 && !strcmp(expect, "wait"))
        MT_CHECK(t >= root_entered, "waiting to be read: returned %.3f s before the root "
                 "entered", root_entered - t);

    /* bcast: the receiver late to the second call (the first sets the new
     * communicator up, together), the root goes on to the fourth, which
     * reuses the second's stage; the communicator is freed after */
    long bcounts[] = { 9000, 16000, 9000, 16000, 300000, 16000 };
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    t = late_bcast(dup, bcounts, 4, 1, sec);
    late_bcast(dup, bcounts + 4, 2, 0, 0.3);
    for (int c = 0; c < 4; c++)
        late_allreduce(dup, c & 1 ? 300000 : 9000, c == 2 ? 0.3 : 0.0);
    MT_MPI(MPI_Comm_free(&dup));
    double late_entered = t;
    MT_MPI(MPI_Bcast(&late_entered, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
    if (rank == 0 && size > 1 && !strcmp(bexpect, "out"))
        MT_CHECK(t < late_entered, "bcast from a stage: the root left %.3f s after the late "
                 "receiver entered", t - late_entered);
    if (rank == 0 && size > 1 && !strcmp(bexpect, "wait"))
        MT_CHECK(t >= late_entered, "bcast read in place: the root left %.3f s before the late "
                 "receiver entered", late_entered - t);
    int rc = mt_finish("late_root");

    /* MPI_COMM_WORLD: the non-roots go on to MPI_Finalize */
    mt_errors = 0;
    late_reduce(MPI_COMM_WORLD, 200000, sec, "MPI_COMM_WORLD before MPI_Finalize");
    if (rank == size - 1) {
        printf("late_root: reduce into a root %.1f s late before MPI_Finalize: %s\n", sec,
               mt_errors ? "WRONG" : "right");
        rc |= mt_errors != 0;
    }
    MPI_Finalize();
    return rc;
}
