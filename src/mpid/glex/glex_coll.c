/* glex_coll.c - MPI_Bcast/Reduce/Allreduce/Barrier (and the nonblocking
 * variants) offered to the offload engine first.  A call is offloaded when
 * the communicator is an intracommunicator with a glex group, the datatype
 * is one the ALU has (bcast: any contiguous datatype, moved as bytes) and
 * the op is predefined; otherwise, or with GLEX_<KIND>_ALGO=mpich, MPICH's
 * own algorithms (MPIR_*_impl) run, with the same results. */
#include "glex_impl.h"

#include <stdatomic.h>

struct MPIDI_GLEX_nbc {
    MPIDI_GLEX_nbc_t *next;
    MPIR_Request *req;
    MPIR_Comm *comm;
    glex_req_t *greq;
    glex_coll_kind_t kind;
};

/* ---------------------------------------------------------- type and op */

static int map_type_scan(MPI_Datatype dt, glex_type_t * out)
{
    static const struct {
        MPI_Datatype dt;
        glex_type_t t;
    } table[] = {
        {MPI_SIGNED_CHAR, GLEX_INT8}, {MPI_CHAR, GLEX_INT8}, {MPI_INT8_T, GLEX_INT8},
        {MPI_UNSIGNED_CHAR, GLEX_UINT8}, {MPI_BYTE, GLEX_UINT8}, {MPI_UINT8_T, GLEX_UINT8},
        {MPI_SHORT, GLEX_INT16}, {MPI_INT16_T, GLEX_INT16},
        {MPI_UNSIGNED_SHORT, GLEX_UINT16}, {MPI_UINT16_T, GLEX_UINT16},
        {MPI_INT, GLEX_INT32}, {MPI_INT32_T, GLEX_INT32},
        {MPI_UNSIGNED, GLEX_UINT32}, {MPI_UINT32_T, GLEX_UINT32},
        {MPI_LONG, GLEX_INT64}, {MPI_LONG_LONG, GLEX_INT64}, {MPI_INT64_T, GLEX_INT64},
        {MPI_AINT, GLEX_INT64}, {MPI_OFFSET, GLEX_INT64}, {MPI_COUNT, GLEX_INT64},
        {MPI_UNSIGNED_LONG, GLEX_UINT64}, {MPI_UNSIGNED_LONG_LONG, GLEX_UINT64},
        {MPI_UINT64_T, GLEX_UINT64},
        {MPI_FLOAT, GLEX_FLOAT}, {MPI_DOUBLE, GLEX_DOUBLE},
        {MPI_FLOAT_INT, GLEX_FLOAT_INT}, {MPI_DOUBLE_INT, GLEX_DOUBLE_INT},
        {MPI_LONG_INT, GLEX_LONG_INT}, {MPI_2INT, GLEX_2INT}, {MPI_SHORT_INT, GLEX_SHORT_INT},
        /* Fortran's (mpif.h, mpi, mpi_f08): the extent check below keeps a
         * type out whose size differs (an MPICH built without Fortran) */
        {MPI_INTEGER, GLEX_INT32}, {MPI_INTEGER1, GLEX_INT8}, {MPI_INTEGER2, GLEX_INT16},
        {MPI_INTEGER4, GLEX_INT32}, {MPI_INTEGER8, GLEX_INT64},
        {MPI_REAL, GLEX_FLOAT}, {MPI_REAL4, GLEX_FLOAT},
        {MPI_DOUBLE_PRECISION, GLEX_DOUBLE}, {MPI_REAL8, GLEX_DOUBLE},
        {MPI_2INTEGER, GLEX_2INT},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].dt != dt)
            continue;
        /* the ALU walks elements of its own layout: it must be the MPI type's
         * extent (the value+index pairs include their padding) */
        MPI_Aint extent;
        MPIR_Datatype_get_extent_macro(dt, extent);
        if ((size_t) extent != glex_type_size(table[i].t))
            return 0;
        *out = table[i].t;
        return 1;
    }
    return 0;
}

/* The last datatype mapped, with its ALU type (handle << 32 | type + 1; 0:
 * none): a program reduces one or two types, and the table above is 40
 * entries long (the scan was a tenth of an 8-byte allreduce's
 * instructions).  Only predefined handles are in the table, and those are
 * never freed, so an entry stays right. */
static _Atomic uint64_t map_type_last;

static int map_type(MPI_Datatype dt, glex_type_t * out)
{
    uint64_t last = atomic_load_explicit(&map_type_last, memory_order_relaxed);
    if (last && (uint32_t) (last >> 32) == (uint32_t) dt) {
        *out = (glex_type_t) ((uint32_t) last - 1);
        return 1;
    }
    if (!map_type_scan(dt, out))
        return 0;
    atomic_store_explicit(&map_type_last, (uint64_t) (uint32_t) dt << 32 | ((uint32_t) * out + 1),
                          memory_order_relaxed);
    return 1;
}

static int map_op(MPI_Op op, glex_op_t * out)
{
    static const struct {
        MPI_Op op;
        glex_op_t g;
    } table[] = {
        {MPI_SUM, GLEX_OP_SUM}, {MPI_PROD, GLEX_OP_PROD}, {MPI_MAX, GLEX_OP_MAX},
        {MPI_MIN, GLEX_OP_MIN}, {MPI_MAXLOC, GLEX_OP_MAXLOC}, {MPI_MINLOC, GLEX_OP_MINLOC},
        {MPI_LAND, GLEX_OP_LAND}, {MPI_LOR, GLEX_OP_LOR}, {MPI_LXOR, GLEX_OP_LXOR},
        {MPI_BAND, GLEX_OP_BAND}, {MPI_BOR, GLEX_OP_BOR}, {MPI_BXOR, GLEX_OP_BXOR},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].op == op) {
            *out = table[i].g;
            return 1;
        }
    return 0;
}

/* ------------------------------------------------------------ decisions */

const char *const MPIDI_GLEX_kind_mpi_name[GLEX_COLL_KIND_COUNT] = {
    [GLEX_COLL_BCAST] = "MPI_Bcast",
    [GLEX_COLL_REDUCE] = "MPI_Reduce",
    [GLEX_COLL_ALLREDUCE] = "MPI_Allreduce",
    [GLEX_COLL_BARRIER] = "MPI_Barrier",
};

#define SEEN_MPICH 30
#define SEEN_FALLBACK 31

/* GLEX_VERBOSE=1: rank 0 of the communicator reports each (collective,
 * algorithm) the first time it runs there */
static void report(MPIR_Comm * comm, glex_coll_kind_t k, int bit, const char *what)
{
    if (!MPIDI_GLEX_global.verbose || comm->rank != 0)
        return;
    uint32_t *seen = &MPIDI_GLEX_COMM(comm).verbose_seen[k];
    if (*seen & (1u << bit))
        return;
    *seen |= 1u << bit;
    fprintf(stderr, "glex: comm context %#x size %d: %s runs %s\n", (unsigned) comm->context_id,
            comm->local_size, MPIDI_GLEX_kind_mpi_name[k], what);
}

/* Fill *a for an offloaded call; 0 when the call must go to MPICH.
 * sendbuf/recvbuf/datatype/op as given to MPI. */
static int offloadable(MPIR_Comm * comm, glex_coll_kind_t k, int blocking, const void *sendbuf,
                       void *recvbuf, MPI_Aint count, MPI_Datatype datatype, MPI_Op op, int root,
                       glex_coll_args_t * a)
{
    const MPIDI_GLEX_choice_t *c = &MPIDI_GLEX_global.choice[k];
    glex_group_t *g = MPIDI_GLEX_COMM(comm).group;
    if (c->mpich) {
        report(comm, k, SEEN_MPICH, "mpich (GLEX_OFFLOAD=0 or GLEX_*_ALGO=mpich)");
        return 0;
    }
    const char *why = NULL;
    memset(a, 0, sizeof *a);
    a->kind = k;
    a->blocking = blocking;     /* 'auto' may then take the direct path */
    a->algo = c->algo;
    a->host_mode = c->host;
    a->root = (uint32_t) root;
    if (!g) {   /* groups exist for intracommunicators only */
        why = "mpich (not an offloaded intracommunicator)";
    } else if (k == GLEX_COLL_BCAST) {
        int contig;
        MPI_Aint size, true_lb;
        MPIDI_Datatype_check_contig_size_lb(datatype, count, contig, size, true_lb);
        if (!contig) {
            why = "mpich (non-contiguous datatype)";
        } else {
            a->type = GLEX_UINT8;
            a->count = (uint64_t) size;
            a->recvbuf = (char *) recvbuf + true_lb;
            a->sendbuf = a->recvbuf;
        }
    } else if (k == GLEX_COLL_REDUCE || k == GLEX_COLL_ALLREDUCE) {
        if (!map_op(op, &a->op))
            why = "mpich (user-defined op)";
        else if (!map_type(datatype, &a->type))
            why = "mpich (datatype not in the ALU)";
        else if (!glex_alu_supported(a->op, a->type))
            why = "mpich (op x datatype not in the ALU)";
        else {
            a->count = (uint64_t) count;
            a->sendbuf = sendbuf == MPI_IN_PLACE ? GLEX_IN_PLACE : sendbuf;
            a->recvbuf = recvbuf;
        }
    }
    if (why) {
        report(comm, k, SEEN_FALLBACK, why);
        return 0;
    }
    if (MPIDI_GLEX_global.verbose && comm->rank == 0) {
        glex_algo_t algo;
        if (glex_coll_resolve(g, a, &algo) == 0) {
            char what[96];
            snprintf(what, sizeof what, "%s (%s)", glex_algo_name(algo),
                     algo == GLEX_ALGO_DIRECT ? "mailboxes + RDMA"
                     : a->host_mode ? "host-based" : "offload");
            report(comm, k, (int) algo + (a->host_mode ? GLEX_ALGO_COUNT : 0), what);
        }
    }
    return 1;
}

static int coll_error(int rc, glex_coll_kind_t k, MPIR_Errflag_t * errflag)
{
    char msg[768];
    snprintf(msg, sizeof msg, "ch4:glex: %s failed: %s", MPIDI_GLEX_kind_mpi_name[k], glex_last_error());
    if (errflag)
        *errflag = rc == GLEX_ETIMEDOUT ? MPIR_ERR_PROC_FAILED : MPIR_ERR_OTHER;
    return MPIDI_GLEX_error(rc, msg);
}

/* A blocking call waits on the node's doorbell (spinning first, as
 * GLEX_SPIN_US says) while it keeps serving point-to-point traffic: a peer
 * may need this process to read or acknowledge a message before it can
 * join the collective. */
typedef struct {
    glex_req_t *greq;
    int done, rc, mpi_errno;
} wait_t;

static int blocking_done(void *arg)
{
    wait_t *w = arg;
    int work = 0;
    w->rc = glex_coll_test(w->greq, &w->done);
    if (!w->done && !w->mpi_errno)
        w->mpi_errno = MPIDI_GLEX_am_poll(&work);
#ifndef MPIDI_CH4_DIRECT_NETMOD
    /* with MPICH's shm module, point-to-point between local processes is its */
    if (!w->done && !w->mpi_errno)
        w->mpi_errno = MPIDI_SHM_progress(0, 0);
#endif
    if (w->done || w->mpi_errno)
        return 1;
    /* a batch of messages taken, maybe not all: more may be here, and what
     * is here rings no bell, so the wait looks again before it sleeps (an
     * RMA target in a fence's barrier slept with the ACCs unread) */
    return work ? GLEX_WAIT_MOVED : 0;
}

static int run(MPIR_Comm * comm, const glex_coll_args_t * a, MPIR_Errflag_t * errflag)
{
    wait_t w = { 0 };
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    /* this thread drives the call from its post on: the post does not wake
     * the engine thread */
    glex_host_wait_begin(f);
    int rc = glex_coll_start(MPIDI_GLEX_COMM(comm).group, a, &w.greq);
    int direct = !rc && glex_coll_req_algo(w.greq) == GLEX_ALGO_DIRECT;
    if (rc || direct)   /* the direct path runs outside the NIC model: its engine thread
                         * goes on serving point-to-point meanwhile */
        glex_host_wait_end(f);
    if (rc)
        return coll_error(rc, a->kind, errflag);
    /* virtual time: a peer's message that arrives later than this call ends
     * waits for its end (then the modeled times do not depend on which came
     * first in real time) */
    glex_vtime_hold_later(f, 1);
    /* no time limit; a direct-path call needs no engine progress (the engine
     * thread goes on serving point-to-point meanwhile) */
    glex_wait_until_flags(f, blocking_done, &w, -1, direct ? GLEX_WAIT_NO_ENGINE : 0);
    glex_vtime_hold_later(f, 0);
    if (!w.done)   /* a point-to-point error interrupted the wait: finish the call */
        w.rc = glex_coll_wait(w.greq);
    glex_coll_req_free(w.greq);
    if (!direct)
        glex_host_wait_end(f);
    if (w.rc)
        return coll_error(w.rc, a->kind, errflag);
    return w.mpi_errno;
}

/* MPICH 4.0.2's bindings let a negative count through to reduce and
 * allreduce (its own algorithms then assert); answer as MPI says */
#define CHECK_COUNT(count)                                                          \
    do {                                                                            \
        if ((count) < 0)                                                            \
            return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, \
                                        __LINE__, MPI_ERR_COUNT, "**countneg",      \
                                        "**countneg %d", (int) (count));           \
    } while (0)

/* ------------------------------------------------------------- blocking */

int MPIDI_GLEX_mpi_barrier(MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    glex_coll_args_t a;
    if (!offloadable(comm, GLEX_COLL_BARRIER, 1, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0,
                     &a))
        return MPIR_Barrier_impl(comm, errflag);
    return run(comm, &a, errflag);
}

int MPIDI_GLEX_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                         MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_BCAST, 1, buffer, buffer, count, datatype, MPI_OP_NULL, root,
                     &a))
        return MPIR_Bcast_impl(buffer, count, datatype, root, comm, errflag);
    return run(comm, &a, errflag);
}

int MPIDI_GLEX_mpi_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                             MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                             MPIR_Errflag_t * errflag)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_ALLREDUCE, 1, sendbuf, recvbuf, count, datatype, op, 0, &a))
        return MPIR_Allreduce_impl(sendbuf, recvbuf, count, datatype, op, comm, errflag);
    return run(comm, &a, errflag);
}

int MPIDI_GLEX_mpi_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                          MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                          MPIR_Errflag_t * errflag)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_REDUCE, 1, sendbuf, recvbuf, count, datatype, op, root, &a))
        return MPIR_Reduce_impl(sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
    return run(comm, &a, errflag);
}

/* ---------------------------------------------------------- nonblocking */

static int start(MPIR_Comm * comm, const glex_coll_args_t * a, MPIR_Request ** req)
{
    int mpi_errno = MPI_SUCCESS;
    glex_req_t *greq = NULL;
    int rc = glex_coll_start(MPIDI_GLEX_COMM(comm).group, a, &greq);
    if (rc)
        return coll_error(rc, a->kind, NULL);
    MPIDI_GLEX_nbc_t *n = MPL_malloc(sizeof *n, MPL_MEM_COLL);
    MPIR_Request *r = MPIR_Request_create(MPIR_REQUEST_KIND__COLL);
    if (!n || !r) {
        glex_coll_wait(greq);
        glex_coll_req_free(greq);
        MPL_free(n);
        if (r)
            MPIR_Request_free(r);
        MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**nomem");
        return mpi_errno;
    }
    MPIR_Request_add_ref(r);    /* one for the user, one until completion */
    MPIR_Comm_add_ref(comm);
    n->req = r;
    n->comm = comm;
    n->greq = greq;
    n->kind = a->kind;
    n->next = MPIDI_GLEX_global.nbc_head;
    MPIDI_GLEX_global.nbc_head = n;
    *req = r;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_nbc_progress(int *made_progress)
{
    MPIDI_GLEX_nbc_t **pp = &MPIDI_GLEX_global.nbc_head;
    *made_progress = 0;
    while (*pp) {
        MPIDI_GLEX_nbc_t *n = *pp;
        int done = 0;
        int rc = glex_coll_test(n->greq, &done);
        if (!done) {
            pp = &n->next;
            continue;
        }
        *pp = n->next;
        if (rc)
            n->req->status.MPI_ERROR = coll_error(rc, n->kind, NULL);
        glex_coll_req_free(n->greq);
        MPIR_Comm_release(n->comm);
        MPID_Request_complete(n->req);
        MPL_free(n);
        *made_progress = 1;
    }
    return MPI_SUCCESS;
}

int MPIDI_GLEX_mpi_ibarrier(MPIR_Comm * comm, MPIR_Request ** req)
{
    glex_coll_args_t a;
    if (!offloadable(comm, GLEX_COLL_BARRIER, 0, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0,
                     &a))
        return MPIR_Ibarrier_impl(comm, req);
    return start(comm, &a, req);
}

int MPIDI_GLEX_mpi_ibcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                          MPIR_Comm * comm, MPIR_Request ** req)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_BCAST, 0, buffer, buffer, count, datatype, MPI_OP_NULL, root,
                     &a))
        return MPIR_Ibcast_impl(buffer, count, datatype, root, comm, req);
    return start(comm, &a, req);
}

int MPIDI_GLEX_mpi_iallreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                              MPIR_Request ** req)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_ALLREDUCE, 0, sendbuf, recvbuf, count, datatype, op, 0, &a))
        return MPIR_Iallreduce_impl(sendbuf, recvbuf, count, datatype, op, comm, req);
    return start(comm, &a, req);
}

int MPIDI_GLEX_mpi_ireduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                           MPIR_Request ** req)
{
    glex_coll_args_t a;
    CHECK_COUNT(count);
    if (!offloadable(comm, GLEX_COLL_REDUCE, 0, sendbuf, recvbuf, count, datatype, op, root, &a))
        return MPIR_Ireduce_impl(sendbuf, recvbuf, count, datatype, op, root, comm, req);
    return start(comm, &a, req);
}
