/* glex_error.c - the base of the netmod: its global state and the NIC
 * model's error codes as MPI error codes.  Used by every other file of the
 * netmod; calls none of them. */
#include "glex_impl.h"
#include <stdio.h>

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
