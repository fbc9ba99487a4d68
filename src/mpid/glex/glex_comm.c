/* glex_comm.c - ch4:glex communicator hooks and process addressing.
 *
 * Every MPI process is one node of the emulated fabric: its NodeID is its
 * rank in MPI_COMM_WORLD.  Each intracommunicator gets a glex group at
 * creation (members' NodeIDs, collective VP); JobIDs are taken per call by
 * the offload layer and released when the call completes. */
#include "glex_impl.h"

int MPIDI_GLEX_mpi_comm_commit_pre_hook(MPIR_Comm * comm)
{
    MPIDI_GLEX_COMM(comm).group = NULL;
    memset(MPIDI_GLEX_COMM(comm).verbose_seen, 0, sizeof MPIDI_GLEX_COMM(comm).verbose_seen);
    return MPI_SUCCESS;
}

/* may a collective of this process pick the multicast algorithm: named,
 * or 'auto' in virtual time (doc/multicast.md) */
static int may_multicast(void)
{
    static const glex_coll_kind_t kinds[2] = { GLEX_COLL_BCAST, GLEX_COLL_ALLREDUCE };
    for (int i = 0; i < 2; i++) {
        const MPIDI_GLEX_choice_t *c = &MPIDI_GLEX_global.choice[kinds[i]];
        if (c->mpich)
            continue;
        if (c->algo == GLEX_ALGO_MULTICAST ||
            (c->algo == GLEX_ALGO_AUTO && glex_vtime_on(MPIDI_GLEX_global.fabric)))
            return 1;
    }
    return 0;
}

int MPIDI_GLEX_mpi_comm_commit_post_hook(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    uint32_t *nodes = NULL;
    uint16_t *vps = NULL;

    /* the pre hook has cleared the state */
    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM || !MPIDI_GLEX_global.coll_vp)
        goto fn_exit;

    int n = comm->local_size;
    nodes = MPL_malloc(sizeof *nodes * n, MPL_MEM_COMM);
    vps = MPL_malloc(sizeof *vps * n, MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP1(!nodes || !vps, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d", n);
    uint32_t lowest = UINT32_MAX;
    for (int r = 0; r < n; r++) {
        nodes[r] = MPIDI_GLEX_node_of(comm, r);
        vps[r] = MPIDI_GLEX_COLL_VP;
        if (nodes[r] < lowest)
            lowest = nodes[r];
    }
    /* live communicators sharing a process have distinct context ids, and
     * disjoint ones that share a context id (split) have distinct lowest
     * members: together they name the group on every member alike */
    uint64_t key = ((uint64_t) comm->context_id << 32) | lowest;
    glex_group_t *g = NULL;
    int rc = glex_group_create(MPIDI_GLEX_global.coll_vp, key, (uint32_t) n,
                               (uint32_t) comm->rank, nodes, vps, &g);
    if (rc) {
        char msg[512];
        snprintf(msg, sizeof msg, "ch4:glex: communicator setup: %s", glex_last_error());
        mpi_errno = MPIDI_GLEX_error(rc, msg);
        goto fn_fail;
    }
    MPIDI_GLEX_COMM(comm).group = g;
    /* a communicator that may multicast sets its tree up now, while every
     * member is here: at its first multicast call the members' agreement
     * would block inside a nonblocking call, with other operations pending */
    if (may_multicast() && (rc = glex_group_mcast_prepare(g)) < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "ch4:glex: communicator setup (multicast): %s",
                 glex_last_error());
        mpi_errno = MPIDI_GLEX_error(rc, msg);
        goto fn_fail;
    }
    if (comm == MPIR_Process.comm_world && glex_vtime_on(MPIDI_GLEX_global.fabric)) {
        /* virtual time starts at 0 on every rank once MPI_COMM_WORLD is up
         * (what MPI_Init did before is not the program's) */
        mpi_errno = MPIR_pmi_barrier();
        MPIR_ERR_CHECK(mpi_errno);
        glex_vtime_reset(MPIDI_GLEX_global.fabric);
    }

  fn_exit:
    MPL_free(nodes);
    MPL_free(vps);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* GLEX_VERBOSE: what the NIC did for this communicator's collectives, one
 * line per collective, algorithm and mode that ran (blocking and
 * nonblocking together), from the CQEs of its tasks; 1: its rank 0, 2: every
 * rank */
static void report_stats(MPIR_Comm * comm, glex_group_t * g)
{
    int v = MPIDI_GLEX_global.verbose;
    if (!v || (v == 1 && comm->rank != 0))
        return;
    for (int k = 0; k < GLEX_COLL_KIND_COUNT; k++)
        for (int a = 0; a < GLEX_ALGO_COUNT; a++)
            for (int h = 0; h < 2; h++) {
                glex_coll_stats_t s;
                if (glex_group_stats(g, (glex_coll_kind_t) k, (glex_algo_t) a, h, &s) || !s.calls)
                    continue;
                fprintf(stderr, "glex: rank %d comm context %#x size %d rank %d: %s %s %s: "
                        "%llu calls, %llu tasks, %llu descriptors, %llu packets sent, "
                        "%llu received, %llu ALU ops\n", MPIR_Process.rank,
                        (unsigned) comm->context_id, comm->local_size, comm->rank, MPIDI_GLEX_kind_mpi_name[k],
                        glex_algo_name((glex_algo_t) a),
                        a == GLEX_ALGO_DIRECT ? "(outside the NIC model)" : h ? "host-based" :
                        "offload", (unsigned long long) s.calls, (unsigned long long) s.tasks,
                        (unsigned long long) s.descriptors, (unsigned long long) s.sent,
                        (unsigned long long) s.received, (unsigned long long) s.alu_ops);
            }
}

int MPIDI_GLEX_mpi_comm_free_hook(MPIR_Comm * comm)
{
    if (MPIDI_GLEX_COMM(comm).group) {
        report_stats(comm, MPIDI_GLEX_COMM(comm).group);
        glex_group_free(MPIDI_GLEX_COMM(comm).group);
    }
    MPIDI_GLEX_COMM(comm).group = NULL;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_comm_set_hints(MPIR_Comm * comm, MPIR_Info * info)
{
    (void) comm, (void) info;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_comm_get_gpid(MPIR_Comm * comm, int idx, uint64_t * gpid, bool is_remote)
{
    int avtid = 0, lpid = 0;
    if (comm->comm_kind == MPIR_COMM_KIND__INTRACOMM || is_remote)
        MPIDIU_comm_rank_to_pid(comm, idx, &lpid, &avtid);
    else
        MPIDIU_comm_rank_to_pid_local(comm, idx, &lpid, &avtid);
    *gpid = MPIDIU_GPID_CREATE(avtid, lpid);
    return MPI_SUCCESS;
}

int MPIDI_GLEX_rank_is_local(int rank, MPIR_Comm * comm)
{
    return MPIDIU_rank_is_local(rank, comm);
}

static int no_dynamic_processes(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_SPAWN, "**fail", "**fail %s",
                  "ch4:glex: dynamic processes (spawn, connect/accept) are not supported: "
                  "the emulated fabric's nodes are fixed at MPI_Init");
    return mpi_errno;
}

int MPIDI_GLEX_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    (void) comm, (void) local_upid_size, (void) local_upids;
    return no_dynamic_processes();
}

int MPIDI_GLEX_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                              uint64_t * remote_gpids)
{
    (void) size, (void) remote_upid_size, (void) remote_upids, (void) remote_gpids;
    return no_dynamic_processes();
}

int MPIDI_GLEX_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size,
                            int timeout)
{
    (void) remote_gpid, (void) tag, (void) buf, (void) size, (void) timeout;
    return no_dynamic_processes();
}

int MPIDI_GLEX_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    (void) tag, (void) buf, (void) size, (void) timeout;
    return no_dynamic_processes();
}
