/* failure.c - one rank dies in the middle of a run of collectives; every
 * other rank must get an MPI error, not hang.
 *
 *   failure VICTIM ITER COUNT kill|exit [return]
 *
 * Rank VICTIM (or ranks A..B, VICTIM written A-B: a whole host's under
 * GLEX_SPLIT_HOSTS) dies at iteration ITER of a loop of MPI_Allreduce of COUNT
 * doubles (and a barrier every 10): by SIGKILL, or by _exit() without
 * MPI_Finalize (to the NIC model the same: its node stays attached, its
 * process is gone).  Hydra's proxy SIGKILLs the whole job when a rank dies by
 * a signal; a rank that exits is only reported with SIGUSR1 under
 * mpiexec -disable-auto-cleanup, so the survivors' errors are observable.
 * With "return" the survivors use MPI_ERRORS_RETURN and each prints
 *   "rank R: error class MPIX_ERR_PROC_FAILED after S s at iteration I: TEXT"
 * then, 5 s later, exits with status 3 (MPI_Finalize cannot complete
 * without the dead rank); otherwise MPI_ERRORS_ARE_FATAL aborts the job. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "failure: MPI_Error_string did not return (MPICH's error path)\n";
    if (write(2, m, sizeof m - 1) < 0)
        _exit(4);
    _exit(3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: failure VICTIM[-LAST] ITER COUNT kill|exit [return]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *dash;
    int victim = (int)strtol(argv[1], &dash, 10), iters = atoi(argv[2]), count = atoi(argv[3]);
    int last = *dash == '-' ? atoi(dash + 1) : victim;
    int by_signal = argv[4][0] == 'k';
    int ret = argc > 5;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (ret) { /* mpiexec -disable-auto-cleanup signals a failure with SIGUSR1 */
        signal(SIGUSR1, SIG_IGN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    double *x = malloc(sizeof *x * (size_t)count), *y = malloc(sizeof *y * (size_t)count);
    for (int i = 0; i < count; i++)
        x[i] = rank + i;
    for (int it = 0;; it++) {
        if (rank >= victim && rank <= last && it == iters) {
            fprintf(stderr, "rank %d: dying (%s) at iteration %d\n", rank,
                    by_signal ? "SIGKILL" : "_exit", it);
            if (by_signal)
                raise(SIGKILL);
            _exit(9);
        }
        double t0 = now();
        int rc = it % 10 == 9 ? MPI_Barrier(MPI_COMM_WORLD)
                              : MPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            int cls, len;
            char text[MPI_MAX_ERROR_STRING];
            MPI_Error_class(rc, &cls);
            /* MPICH 4.0.2's own algorithms (GLEX_OFFLOAD=0) can return codes
             * ("Ring ids do not match") whose string lookup never ends: give
             * it 2 s, then leave as a survivor that got an error would */
            signal(SIGALRM, on_alarm);
            alarm(2);
            MPI_Error_string(rc, text, &len);
            alarm(0);
            printf("rank %d: error class %s after %.2f s at iteration %d: %s\n", rank,
                   cls == MPIX_ERR_PROC_FAILED ? "MPIX_ERR_PROC_FAILED" : "other", now() - t0,
                   it, text);
            fflush(stdout);
            sleep(5); /* let the other survivors report before mpiexec tears down */
            _exit(3);
        }
        if (it > iters + 100000) {
            printf("rank %d: no error after %d iterations\n", rank, it);
            return 4;
        }
    }
}
