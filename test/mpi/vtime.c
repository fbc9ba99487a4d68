/* vtime.c - MPI_Wtime in virtual time (GLEX_VTIME=1, doc/vtime.md).
 *   vtime times   every rank times a fixed mix of collectives with MPI_Wtime
 *                 and rank 0 prints each rank's modeled time of each, as
 *                 "name rank seconds" lines (results checked)
 *   vtime sleep   rank 0 prints how far MPI_Wtime moved over a 20 ms sleep
 *   vtime race    200 times: a barrier, then all but rank 0 send it a
 *                 message at once; rank 0 prints the sum of its modeled
 *                 barrier times (a message that comes after the barrier in
 *                 virtual time must not count in it, whichever the emulator
 *                 ran first) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (64 * 1024 / 8)

static double a[N], b[N];

static int check(const char *what, int ok)
{
    if (!ok)
        fprintf(stderr, "vtime: %s: wrong result\n", what);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "sleep")) {
        double t0 = MPI_Wtime();
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        double dt = MPI_Wtime() - t0;
        if (rank == 0)
            printf("slept %.9f\n", dt);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "race")) {
        double own = 0;
        for (int rep = 0; rep < 200; rep++) {
            double t0 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0, x;
            if (rank) {
                MPI_Send(&dt, 1, MPI_DOUBLE, 0, rep, MPI_COMM_WORLD);
                continue;
            }
            own += dt;
            for (int r = 1; r < size; r++)
                MPI_Recv(&x, 1, MPI_DOUBLE, r, rep, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (rank == 0)
            printf("barrier %.9f\n", own);
        MPI_Finalize();
        return 0;
    }
    static const struct { const char *name; int count, kind; } mix[] = {
        { "allreduce-8B", 1, 0 },    { "allreduce-1KiB", 128, 0 }, { "allreduce-64KiB", N, 0 },
        { "reduce-64KiB", N, 1 },    { "bcast-64KiB", N, 2 },      { "barrier", 0, 3 },
    };
    int nmix = (int)(sizeof mix / sizeof mix[0]);
    double mine[16], all[16 * 64];
    for (int m = 0; m < nmix; m++) {
        for (int i = 0; i < N; i++)
            a[i] = rank + i % 3, b[i] = -1;
        double t0 = MPI_Wtime();
        for (int rep = 0; rep < 3; rep++) {
            switch (mix[m].kind) {
            case 0: MPI_Allreduce(a, b, mix[m].count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
            case 1: MPI_Reduce(a, b, mix[m].count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
            case 2: MPI_Bcast(rank == 0 ? a : b, mix[m].count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
            default: MPI_Barrier(MPI_COMM_WORLD); break;
            }
        }
        mine[m] = (MPI_Wtime() - t0) / 3;
        double want = size * (size - 1) / 2.0 + size * (double)((mix[m].count - 1) % 3);
        if (mix[m].kind == 0 || (mix[m].kind == 1 && rank == 0))
            bad |= check(mix[m].name, b[mix[m].count - 1] == want);
        if (mix[m].kind == 2 && rank != 0)
            bad |= check(mix[m].name, b[N - 1] == (N - 1) % 3);
    }
    MPI_Gather(mine, nmix, MPI_DOUBLE, all, nmix, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int m = 0; m < nmix; m++)
            for (int r = 0; r < size && r < 64; r++)
                printf("%s %d %.9f\n", mix[m].name, r, all[r * nmix + m]);
    MPI_Finalize();
    return bad;
}
