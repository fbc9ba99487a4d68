/* nic_counts.c - the four collectives, blocking and nonblocking, each K
 * times on its own communicator, every result checked.  Run with
 * GLEX_VERBOSE=2: when the communicators are freed every rank prints what
 * the emulated NIC did for them (descriptors, packets, ALU operations), and
 * test/mpi/nic_counts.py checks those numbers against what each algorithm
 * implies for the group size.
 *
 * usage: nic_counts [K]   (default 50) */
#include "mt.h"

#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, k = argc > 1 ? atoi(argv[1]) : 50;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm blk, nbc;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &blk));
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &nbc));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Comm c = pass ? nbc : blk;
        for (int i = 0; i < k; i++) {
            /* 8 bytes: 2 floats, one inline packet per message */
            float in[2] = { (float) (rank + i), (float) (2 * rank) }, out[2] = { -1, -1 };
            float esum0 = 0, esum1 = 0;
            for (int r = 0; r < size; r++)
                esum0 += (float) (r + i), esum1 += (float) (2 * r);
            MPI_Request q;
            if (pass) {
                MT_MPI(MPI_Iallreduce(in, out, 2, MPI_FLOAT, MPI_SUM, c, &q));
                MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Allreduce(in, out, 2, MPI_FLOAT, MPI_SUM, c));
            }
            MT_CHECK(out[0] == esum0 && out[1] == esum1, "allreduce %d: %g %g, expected %g %g",
                     i, out[0], out[1], esum0, esum1);
            out[0] = out[1] = -1;
            if (pass) {
                MT_MPI(MPI_Ireduce(in, out, 2, MPI_FLOAT, MPI_SUM, 0, c, &q));
                MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Reduce(in, out, 2, MPI_FLOAT, MPI_SUM, 0, c));
            }
            if (rank == 0)
                MT_CHECK(out[0] == esum0 && out[1] == esum1, "reduce %d: %g %g, expected %g %g",
                         i, out[0], out[1], esum0, esum1);
            double b = rank == 0 ? 1000.0 + i : -1;
            if (pass) {
                MT_MPI(MPI_Ibcast(&b, 1, MPI_DOUBLE, 0, c, &q));
                MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Bcast(&b, 1, MPI_DOUBLE, 0, c));
            }
            MT_CHECK(b == 1000.0 + i, "bcast %d: %g, expected %g", i, b, 1000.0 + i);
            if (pass) {
                MT_MPI(MPI_Ibarrier(c, &q));
                MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Barrier(c));
            }
        }
    }
    MT_MPI(MPI_Comm_free(&blk));
    MT_MPI(MPI_Comm_free(&nbc));
    int rc = mt_finish("nic_counts");
    MPI_Finalize();
    return rc;
}
