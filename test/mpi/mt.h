/* mt.h - tiny helpers for the MPI test programs: count failures, print the
 * first few with the rank, and end with one summary line from rank 0. */
#ifndef MT_H
#define MT_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int mt_errors, mt_checks;

#define MT_CHECK(cond, ...)                                                  \
    do {                                                                     \
        mt_checks++;                                                         \
        if (!(cond)) {                                                       \
            if (mt_errors++ < 10) {                                          \
                int mt_r_;                                                   \
                MPI_Comm_rank(MPI_COMM_WORLD, &mt_r_);                       \
                fprintf(stderr, "rank %d: %s:%d: ", mt_r_, __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                                \
                fputc('\n', stderr);                                         \
            }                                                                \
        }                                                                    \
    } while (0)

#define MT_MPI(call)                                                         \
    do {                                                                     \
        int mt_rc_ = (call);                                                 \
        MT_CHECK(mt_rc_ == MPI_SUCCESS, "%s returned %d", #call, mt_rc_);    \
    } while (0)

/* all ranks: sum the errors, rank 0 prints "name: N checks, M errors";
 * returns the exit code (0 when no rank saw an error) */
static int mt_finish(const char *name)
{
    int e[2] = { mt_errors, mt_checks }, t[2];
    MPI_Allreduce(e, t, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%s: %d checks, %d errors\n", name, t[1], t[0]);
    return t[0] != 0;
}
#endif
