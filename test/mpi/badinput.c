/* badinput.c - bad arguments to the offloaded collectives under
 * MPI_ERRORS_RETURN: each returns the MPI error class MPICH gives, and the
 * job goes on (checked collectives after every error).  With 2 processes,
 * counts that differ between the ranks are reported too (MPI_ERR_TRUNCATE
 * where more data came than the receive's count). */
#include "mt.h"

#include <string.h>

static int class_of(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static const char *class_name(int c)
{
    switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPIX_ERR_PROC_FAILED: return "MPIX_ERR_PROC_FAILED";
    default: return "another class";
    }
}

#define EXPECT(call, want)                                                              \
    do {                                                                                \
        int c_ = class_of(call);                                                        \
        MT_CHECK(c_ == (want), "%s gave %s (%d), expected %s", #call, class_name(c_), c_, \
                 class_name(want));                                                     \
    } while (0)

/* the job goes on: a checked allreduce and bcast on comm */
static void still_works(MPI_Comm comm, const char *after)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long v[100], w[100];
    for (int i = 0; i < 100; i++)
        v[i] = rank + i;
    MT_MPI(MPI_Allreduce(v, w, 100, MPI_LONG, MPI_SUM, comm));
    for (int i = 0; i < 100; i++)
        MT_CHECK(w[i] == (long)size * (size - 1) / 2 + (long)size * i,
                 "after %s: allreduce element %d is %ld", after, i, w[i]);
    int b[64];
    for (int i = 0; i < 64; i++)
        b[i] = rank == 0 ? i * 3 : -1;
    MT_MPI(MPI_Bcast(b, 64, MPI_INT, 0, comm));
    for (int i = 0; i < 64; i++)
        MT_CHECK(b[i] == i * 3, "after %s: bcast element %d is %d", after, i, b[i]);
}

/* 2 processes: rank 0 broadcasts `sent` ints, rank 1 receives `count`
 * (fewer): rank 1 gets MPI_ERR_TRUNCATE, nothing past its count changes,
 * and the job goes on (4096 against 1000 ints: the root on the RDMA path,
 * the receiver on the mailbox path) */
static void bcast_mismatch(int rank, int sent, int count, const char *what)
{
    int big[4096];
    for (int i = 0; i < 4096; i++)
        big[i] = rank == 0 ? i : -7;
    int rc = MPI_Bcast(big, rank == 0 ? sent : count, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1)
        MT_CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "bcast of %d ints into %d: %s, expected "
                 "MPI_ERR_TRUNCATE", sent, count, class_name(class_of(rc)));
    /* MPICH's root sends eagerly and returns MPI_SUCCESS; a root that learns
     * of the mismatch says MPI_ERR_OTHER ("collective size mismatch"), never
     * that a process failed */
    if (rank == 0)
        MT_CHECK(class_of(rc) == MPI_SUCCESS || class_of(rc) == MPI_ERR_OTHER,
                 "bcast root of %d ints against %d: %s, expected MPI_SUCCESS or MPI_ERR_OTHER",
                 sent, count, class_name(class_of(rc)));
    for (int i = count; rank == 1 && i < 4096; i++)
        MT_CHECK(big[i] == -7, "bcast wrote past the receive's count at %d", i);
    still_works(MPI_COMM_WORLD, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int a[16] = { 0 }, b[16] = { 0 };
    MPI_Request req;

    EXPECT(MPI_Bcast(a, 16, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(a, 16, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce(a, b, 16, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Ireduce(a, b, 16, MPI_INT, MPI_SUM, -2, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    still_works(MPI_COMM_WORLD, "wrong roots");

    EXPECT(MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(a, -5, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Reduce(a, b, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    {   /* MPICH 4.0.2 reports this one as MPI_ERR_ARG */
        int c = class_of(MPI_Iallreduce(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        MT_CHECK(c == MPI_ERR_COUNT || c == MPI_ERR_ARG, "Iallreduce count -1 gave %s",
                 class_name(c));
    }
    still_works(MPI_COMM_WORLD, "negative counts");

    EXPECT(MPI_Allreduce(NULL, b, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Allreduce(a, NULL, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Allreduce(a, a, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Bcast(NULL, 16, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    still_works(MPI_COMM_WORLD, "null and aliased buffers");

    EXPECT(MPI_Bcast(a, 16, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allreduce(a, b, 16, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    still_works(MPI_COMM_WORLD, "null datatype and op");

    /* communicators: null, and a handle kept after MPI_Comm_free */
    MPI_Comm dup, stale;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    still_works(dup, "dup");
    stale = dup;
    MPI_Comm_free(&dup);
    EXPECT(MPI_Bcast(a, 16, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(a, b, 16, MPI_INT, MPI_SUM, stale), MPI_ERR_COMM);
    EXPECT(MPI_Barrier(stale), MPI_ERR_COMM);
    still_works(MPI_COMM_WORLD, "freed communicators");

    if (size == 2) {
        /* counts differ: inline (under 256 bytes) and pulsed */
        bcast_mismatch(rank, 48, 24, "an inline count mismatch");
        bcast_mismatch(rank, 4096, 1000, "a pulsed count mismatch");
        /* where this machine's DMA read pays (GLEX_READ_KB auto) a root of 16
         * KiB offers its buffer to be read: a receive of another size on
         * another path (inline, eager, a read of another size) fails with
         * TRUNCATE and refuses the offer, so the root does not wait on */
        bcast_mismatch(rank, 4096, 4, "a read offer against an inline receive");
        bcast_mismatch(rank, 4096, 3000, "a read offer against a read of another size");
        {
            float v[4096], r[4096];
            for (int i = 0; i < 4096; i++)
                v[i] = (float)i;
            /* rank 1 (a child) offers 16 KiB to be read, the root takes 4000 B */
            int rc = MPI_Reduce(v, r, rank == 0 ? 1000 : 4096, MPI_FLOAT, MPI_SUM, 0,
                                MPI_COMM_WORLD);
            MT_CHECK(rank == 0 ? class_of(rc) == MPI_ERR_TRUNCATE || class_of(rc) == MPI_ERR_OTHER
                               : class_of(rc) == MPI_SUCCESS || class_of(rc) == MPI_ERR_OTHER,
                     "reduce of 4096 floats into 1000 at rank %d: %s", rank,
                     class_name(class_of(rc)));
            still_works(MPI_COMM_WORLD, "a reduce count mismatch");
        }
        double x[2000], y[2000];
        for (int i = 0; i < 2000; i++)
            x[i] = i;
        int rc = MPI_Allreduce(x, y, rank == 0 ? 2000 : 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MT_CHECK(class_of(rc) == MPI_ERR_TRUNCATE || class_of(rc) == MPI_ERR_OTHER,
                 "allreduce of 2000 against 1000 doubles: %s", class_name(class_of(rc)));
        still_works(MPI_COMM_WORLD, "an allreduce count mismatch");
    }
    return mt_finish("badinput") | (MPI_Finalize() != MPI_SUCCESS);
}
