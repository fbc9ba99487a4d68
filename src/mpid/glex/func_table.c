/* func_table.c - the ch4:glex netmod's entry points.  Point-to-point and
 * probe are ours (glex_p2p.c: the netmod matches); RMA and partitioned
 * communication are ch4's active-message layer (MPIDIG, through MPICH's
 * netmod_am_fallback headers) riding on this netmod's AM transport; the four
 * offloaded collectives and their nonblocking variants are ours; the other
 * collectives are MPICH's own. */
#ifndef NETMOD_INLINE
#define NETMOD_DISABLE_INLINES
#include <mpidimpl.h>
#include "glex_impl.h"

/* MPIDIG's inline code included below calls these netmod entry points
 * directly: route them to the netmod's functions */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
    return MPIDI_GLEX_progress(vci, blocking);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                                                  const void *am_hdr, MPI_Aint am_hdr_sz,
                                                  int src_vci, int dst_vci)
{
    return MPIDI_GLEX_am_send_hdr(rank, comm, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                                               const void *am_hdr, MPI_Aint am_hdr_sz,
                                               const void *data, MPI_Aint count,
                                               MPI_Datatype datatype, int src_vci, int dst_vci,
                                               MPIR_Request * sreq)
{
    return MPIDI_GLEX_am_isend(rank, comm, handler_id, am_hdr, am_hdr_sz, data, count, datatype,
                               src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm * comm, int src_rank,
                                                        int handler_id, const void *am_hdr,
                                                        MPI_Aint am_hdr_sz, int src_vci,
                                                        int dst_vci)
{
    return MPIDI_GLEX_am_send_hdr_reply(comm, src_rank, handler_id, am_hdr, am_hdr_sz, src_vci,
                                        dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm * comm, int src_rank,
                                                     int handler_id, const void *am_hdr,
                                                     MPI_Aint am_hdr_sz, const void *data,
                                                     MPI_Aint count, MPI_Datatype datatype,
                                                     int src_vci, int dst_vci,
                                                     MPIR_Request * sreq)
{
    return MPIDI_GLEX_am_isend_reply(comm, src_rank, handler_id, am_hdr, am_hdr_sz, data, count,
                                     datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
    return MPIDI_GLEX_am_hdr_max_sz();
}

MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz,
                                                      const void *data, MPI_Aint count,
                                                      MPI_Datatype datatype, MPIR_Request * sreq)
{
    return MPIDI_GLEX_am_check_eager(am_hdr_sz, data_sz, data, count, datatype, sreq);
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request * req)
{
    MPIDI_GLEX_am_request_init(req);
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request * req)
{
    MPIDI_GLEX_am_request_finalize(req);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_comm_get_gpid(MPIR_Comm * comm, int idx, uint64_t * gpid,
                                                    bool is_remote)
{
    return MPIDI_GLEX_comm_get_gpid(comm, idx, gpid, is_remote);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rank_is_local(int rank, MPIR_Comm * comm)
{
    return MPIDI_GLEX_rank_is_local(rank, comm);
}

#include "netmod_am_fallback.h"

MPIDI_NM_funcs_t MPIDI_NM_glex_funcs = {
    .init_local = MPIDI_GLEX_init_local,
    .init_world = MPIDI_GLEX_init_world,
    .mpi_finalize_hook = MPIDI_GLEX_mpi_finalize_hook,
    .post_init = MPIDI_GLEX_post_init,
    .progress = MPIDI_GLEX_progress,
    .comm_set_hints = MPIDI_GLEX_comm_set_hints,
    .am_send_hdr = MPIDI_GLEX_am_send_hdr,
    .am_isend = MPIDI_GLEX_am_isend,
    .am_send_hdr_reply = MPIDI_GLEX_am_send_hdr_reply,
    .am_isend_reply = MPIDI_GLEX_am_isend_reply,
    .am_get_data_copy_cb = MPIDI_GLEX_am_get_data_copy_cb,
    .am_hdr_max_sz = MPIDI_GLEX_am_hdr_max_sz,
    .am_eager_limit = MPIDI_GLEX_am_eager_limit,
    .am_eager_buf_limit = MPIDI_GLEX_am_eager_buf_limit,
    .am_check_eager = MPIDI_GLEX_am_check_eager,
    .comm_get_gpid = MPIDI_GLEX_comm_get_gpid,
    .get_local_upids = MPIDI_GLEX_get_local_upids,
    .upids_to_gpids = MPIDI_GLEX_upids_to_gpids,
    .dynamic_send = MPIDI_GLEX_dynamic_send,
    .dynamic_recv = MPIDI_GLEX_dynamic_recv,
    .mpi_comm_commit_pre_hook = MPIDI_GLEX_mpi_comm_commit_pre_hook,
    .mpi_comm_commit_post_hook = MPIDI_GLEX_mpi_comm_commit_post_hook,
    .mpi_comm_free_hook = MPIDI_GLEX_mpi_comm_free_hook,
    .mpi_win_create_hook = MPIDI_GLEX_win_hook,
    .mpi_win_allocate_hook = MPIDI_GLEX_win_hook,
    .mpi_win_allocate_shared_hook = MPIDI_GLEX_win_hook,
    .mpi_win_create_dynamic_hook = MPIDI_GLEX_win_hook,
    .mpi_win_attach_hook = MPIDI_GLEX_win_attach_hook,
    .mpi_win_detach_hook = MPIDI_GLEX_win_detach_hook,
    .mpi_win_free_hook = MPIDI_GLEX_win_hook,
    .rma_win_cmpl_hook = MPIDI_NM_rma_win_cmpl_hook,
    .rma_win_local_cmpl_hook = MPIDI_NM_rma_win_local_cmpl_hook,
    .rma_target_cmpl_hook = MPIDI_NM_rma_target_cmpl_hook,
    .rma_target_local_cmpl_hook = MPIDI_NM_rma_target_local_cmpl_hook,
    .am_request_init = MPIDI_GLEX_am_request_init,
    .am_request_finalize = MPIDI_GLEX_am_request_finalize,
};

MPIDI_NM_native_funcs_t MPIDI_NM_native_glex_funcs = {
    .mpi_isend = MPIDI_GLEX_mpi_isend,
    .isend_coll = MPIDI_GLEX_isend_coll,
    .mpi_issend = MPIDI_GLEX_mpi_issend,
    .mpi_cancel_send = MPIDI_GLEX_mpi_cancel_send,
    .mpi_irecv = MPIDI_GLEX_mpi_irecv,
    .mpi_imrecv = MPIDI_GLEX_mpi_imrecv,
    .mpi_cancel_recv = MPIDI_GLEX_mpi_cancel_recv,
    .mpi_psend_init = MPIDI_GLEX_mpi_psend_init,
    .mpi_precv_init = MPIDI_GLEX_mpi_precv_init,
    .part_start = MPIDI_NM_part_start,
    .mpi_pready_range = MPIDI_NM_mpi_pready_range,
    .mpi_pready_list = MPIDI_NM_mpi_pready_list,
    .mpi_parrived = MPIDI_NM_mpi_parrived,
    .mpi_alloc_mem = MPIDI_GLEX_mpi_alloc_mem,
    .mpi_free_mem = MPIDI_GLEX_mpi_free_mem,
    .mpi_improbe = MPIDI_GLEX_mpi_improbe,
    .mpi_iprobe = MPIDI_GLEX_mpi_iprobe,
    .mpi_win_set_info = MPIDI_GLEX_mpi_win_set_info,
    .mpi_win_shared_query = MPIDI_NM_mpi_win_shared_query,
    .mpi_put = MPIDI_NM_mpi_put,
    .mpi_win_start = MPIDI_NM_mpi_win_start,
    .mpi_win_complete = MPIDI_NM_mpi_win_complete,
    .mpi_win_post = MPIDI_NM_mpi_win_post,
    .mpi_win_wait = MPIDI_NM_mpi_win_wait,
    .mpi_win_test = MPIDI_NM_mpi_win_test,
    .mpi_win_lock = MPIDI_NM_mpi_win_lock,
    .mpi_win_unlock = MPIDI_NM_mpi_win_unlock,
    .mpi_win_get_info = MPIDI_GLEX_mpi_win_get_info,
    .mpi_get = MPIDI_NM_mpi_get,
    .mpi_win_free = MPIDI_GLEX_mpi_win_free,
    .mpi_win_fence = MPIDI_NM_mpi_win_fence,
    .mpi_win_create = MPIDI_GLEX_mpi_win_create,
    .mpi_accumulate = MPIDI_NM_mpi_accumulate,
    .mpi_win_attach = MPIDI_GLEX_mpi_win_attach,
    .mpi_win_allocate_shared = MPIDI_GLEX_mpi_win_allocate_shared,
    .mpi_rput = MPIDI_NM_mpi_rput,
    .mpi_win_flush_local = MPIDI_NM_mpi_win_flush_local,
    .mpi_win_detach = MPIDI_GLEX_mpi_win_detach,
    .mpi_compare_and_swap = MPIDI_NM_mpi_compare_and_swap,
    .mpi_raccumulate = MPIDI_NM_mpi_raccumulate,
    .mpi_rget_accumulate = MPIDI_NM_mpi_rget_accumulate,
    .mpi_fetch_and_op = MPIDI_NM_mpi_fetch_and_op,
    .mpi_win_allocate = MPIDI_GLEX_mpi_win_allocate,
    .mpi_win_flush = MPIDI_NM_mpi_win_flush,
    .mpi_win_flush_local_all = MPIDI_NM_mpi_win_flush_local_all,
    .mpi_win_unlock_all = MPIDI_NM_mpi_win_unlock_all,
    .mpi_win_create_dynamic = MPIDI_GLEX_mpi_win_create_dynamic,
    .mpi_rget = MPIDI_NM_mpi_rget,
    .mpi_win_sync = MPIDI_NM_mpi_win_sync,
    .mpi_win_flush_all = MPIDI_NM_mpi_win_flush_all,
    .mpi_get_accumulate = MPIDI_NM_mpi_get_accumulate,
    .mpi_win_lock_all = MPIDI_NM_mpi_win_lock_all,
    .rank_is_local = MPIDI_GLEX_rank_is_local,
    .mpi_barrier = MPIDI_GLEX_mpi_barrier,
    .mpi_bcast = MPIDI_GLEX_mpi_bcast,
    .mpi_allreduce = MPIDI_GLEX_mpi_allreduce,
    .mpi_allgather = MPIDI_NM_mpi_allgather,
    .mpi_allgatherv = MPIDI_NM_mpi_allgatherv,
    .mpi_scatter = MPIDI_NM_mpi_scatter,
    .mpi_scatterv = MPIDI_NM_mpi_scatterv,
    .mpi_gather = MPIDI_NM_mpi_gather,
    .mpi_gatherv = MPIDI_NM_mpi_gatherv,
    .mpi_alltoall = MPIDI_NM_mpi_alltoall,
    .mpi_alltoallv = MPIDI_NM_mpi_alltoallv,
    .mpi_alltoallw = MPIDI_NM_mpi_alltoallw,
    .mpi_reduce = MPIDI_GLEX_mpi_reduce,
    .mpi_reduce_scatter = MPIDI_NM_mpi_reduce_scatter,
    .mpi_reduce_scatter_block = MPIDI_NM_mpi_reduce_scatter_block,
    .mpi_scan = MPIDI_NM_mpi_scan,
    .mpi_exscan = MPIDI_NM_mpi_exscan,
    .mpi_neighbor_allgather = MPIDI_NM_mpi_neighbor_allgather,
    .mpi_neighbor_allgatherv = MPIDI_NM_mpi_neighbor_allgatherv,
    .mpi_neighbor_alltoallv = MPIDI_NM_mpi_neighbor_alltoallv,
    .mpi_neighbor_alltoallw = MPIDI_NM_mpi_neighbor_alltoallw,
    .mpi_neighbor_alltoall = MPIDI_NM_mpi_neighbor_alltoall,
    .mpi_ineighbor_allgather = MPIDI_NM_mpi_ineighbor_allgather,
    .mpi_ineighbor_allgatherv = MPIDI_NM_mpi_ineighbor_allgatherv,
    .mpi_ineighbor_alltoall = MPIDI_NM_mpi_ineighbor_alltoall,
    .mpi_ineighbor_alltoallv = MPIDI_NM_mpi_ineighbor_alltoallv,
    .mpi_ineighbor_alltoallw = MPIDI_NM_mpi_ineighbor_alltoallw,
    .mpi_ibarrier = MPIDI_GLEX_mpi_ibarrier,
    .mpi_ibcast = MPIDI_GLEX_mpi_ibcast,
    .mpi_iallgather = MPIDI_NM_mpi_iallgather,
    .mpi_iallgatherv = MPIDI_NM_mpi_iallgatherv,
    .mpi_iallreduce = MPIDI_GLEX_mpi_iallreduce,
    .mpi_ialltoall = MPIDI_NM_mpi_ialltoall,
    .mpi_ialltoallv = MPIDI_NM_mpi_ialltoallv,
    .mpi_ialltoallw = MPIDI_NM_mpi_ialltoallw,
    .mpi_iexscan = MPIDI_NM_mpi_iexscan,
    .mpi_igather = MPIDI_NM_mpi_igather,
    .mpi_igatherv = MPIDI_NM_mpi_igatherv,
    .mpi_ireduce_scatter_block = MPIDI_NM_mpi_ireduce_scatter_block,
    .mpi_ireduce_scatter = MPIDI_NM_mpi_ireduce_scatter,
    .mpi_ireduce = MPIDI_GLEX_mpi_ireduce,
    .mpi_iscan = MPIDI_NM_mpi_iscan,
    .mpi_iscatter = MPIDI_NM_mpi_iscatter,
    .mpi_iscatterv = MPIDI_NM_mpi_iscatterv,
    .mpi_type_commit_hook = MPIDI_GLEX_type_hook,
    .mpi_type_free_hook = MPIDI_GLEX_type_hook,
    .mpi_op_commit_hook = MPIDI_GLEX_op_hook,
    .mpi_op_free_hook = MPIDI_GLEX_op_hook,
};
#endif /* NETMOD_INLINE */
