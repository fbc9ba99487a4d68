/* glex_misc.c - ch4:glex entry points the emulated NIC adds nothing to:
 * windows, partitioned communication and memory allocation are carried by
 * ch4's active-message layer (MPIDIG) over the NIC model; and MPI_Wtime,
 * which reads the rank's virtual clock in virtual time. */
#include "glex_impl.h"

/* With GLEX_VTIME=1 MPI_Wtime is this rank's virtual time (doc/vtime.md):
 * unmodified programs, the OSU benchmarks among them, report modeled times.
 * Otherwise MPICH's own clock (PMPI_Wtime).  This strong definition takes
 * the place of MPICH's weak alias of PMPI_Wtime. */
double MPI_Wtime(void)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    if (f && glex_vtime_on(f))
        return glex_vtime_host_ns(f) * 1e-9;
    return PMPI_Wtime();
}

int MPIDI_GLEX_win_hook(MPIR_Win * win)
{
    (void) win;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    (void) win, (void) base, (void) size;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_win_detach_hook(MPIR_Win * win, const void *base)
{
    (void) win, (void) base;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_type_hook(MPIR_Datatype * dt)
{
    (void) dt;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_op_hook(MPIR_Op * op)
{
    (void) op;
    return MPI_SUCCESS;
}

void *MPIDI_GLEX_mpi_alloc_mem(MPI_Aint size, MPIR_Info * info)
{
    return MPIDIG_mpi_alloc_mem(size, info);
}

int MPIDI_GLEX_mpi_free_mem(void *ptr)
{
    return MPIDIG_mpi_free_mem(ptr);
}

int MPIDI_GLEX_mpi_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_GLEX_mpi_win_get_info(MPIR_Win * win, MPIR_Info ** info_p)
{
    return MPIDIG_mpi_win_get_info(win, info_p);
}

int MPIDI_GLEX_mpi_win_free(MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_free(win_p);
}

int MPIDI_GLEX_mpi_win_create(void *base, MPI_Aint length, int disp_unit, MPIR_Info * info,
                              MPIR_Comm * comm, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm, win_p);
}

int MPIDI_GLEX_mpi_win_attach(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_GLEX_mpi_win_allocate_shared(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                       MPIR_Comm * comm, void **baseptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info, comm, baseptr, win_p);
}

int MPIDI_GLEX_mpi_win_detach(MPIR_Win * win, const void *base)
{
    return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_GLEX_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                MPIR_Comm * comm, void *baseptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate(size, disp_unit, info, comm, baseptr, win_p);
}

int MPIDI_GLEX_mpi_win_create_dynamic(MPIR_Info * info, MPIR_Comm * comm, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create_dynamic(info, comm, win_p);
}

int MPIDI_GLEX_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                              MPI_Datatype datatype, int rank, int tag, MPIR_Comm * comm,
                              MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    (void) av;
    return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, rank, tag, comm, info, req);
}

int MPIDI_GLEX_mpi_precv_init(void *buf, int partitions, MPI_Aint count, MPI_Datatype datatype,
                              int rank, int tag, MPIR_Comm * comm, MPIR_Info * info,
                              MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    (void) av;
    return MPIDIG_mpi_precv_init(buf, partitions, (int) count, datatype, rank, tag, comm, info,
                                 req);
}
