/* glex_error.c - the base of the netmod: its global state and the NIC
 * model's error codes as MPI error codes.  Used by every other file of the
 * netmod; calls none of them. */
#include "glex_impl.h"
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

MPIDI_GLEX_global_t MPIDI_GLEX_global;

int MPIDI_GLEX_error(int glex_rc, const char *what)
{
    static int told;
    /* extracterrmsgs wants the class literal in each call */
    switch (glex_rc) {
    case GLEX_EDEAD:   /* a peer process is gone */
    case GLEX_ETIMEDOUT:
        /* said once on stderr too: MPICH's own algorithms can wrap this code
         * until MPI_Error_string loses it ("Ring ids do not match") */
        if (!told++)
            fprintf(stderr, "%s\n", what);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPIX_ERR_PROC_FAILED, "**fail", "**fail %s", what);
    case GLEX_ETRUNC:  /* more data came than the call's count: as MPICH's receives */
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_TRUNCATE, "**fail", "**fail %s", what);
    case GLEX_EINVAL:
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_ARG, "**fail", "**fail %s", what);
    default:           /* GLEX_ESIZE: MPICH says "collective size mismatch", MPI_ERR_OTHER */
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**fail", "**fail %s", what);
    }
}

/* MPI_Init's failure ends in MPI_Abort, and at an abort mpiexec (Hydra)
 * exits with its processes' output still in flight: the reason, written to
 * the pipe Hydra reads a process's stderr from, was lost in 1 run of 6
 * here.  So after the line, while stderr is a pipe with bytes unread, wait
 * (up to a second) for the launcher to take them. */
#define SAY_DRAIN_MS 1000
void MPIDI_GLEX_say_fatal(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    struct stat st;
    if (fstat(STDERR_FILENO, &st) || !S_ISFIFO(st.st_mode))
        return;
    const struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < SAY_DRAIN_MS; i++) {
        int unread = 0;
        if (ioctl(STDERR_FILENO, FIONREAD, &unread) || unread <= 0)
            return;
        nanosleep(&ms, NULL);
    }
}
