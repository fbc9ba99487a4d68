/* libs.c - in how many of the job's processes libfabric is mapped
 * (/proc/self/maps): none on one host (the netmod loads it only for a job
 * across hosts, doc/multinode.md), every one across hosts.  Rank 0 prints
 * "libfabric mapped in N of M processes"; test/mpi/hosts.sh reads it. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int mapped(void)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libfabric.so") != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, mine = mapped(), n = 0, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int one = mine == 1, err = mine < 0;
    MPI_Reduce(&one, &n, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&err, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (bad)
            printf("/proc/self/maps unreadable in %d processes\n", bad);
        printf("libfabric mapped in %d of %d processes\n", n, size);
    }
    MPI_Finalize();
    return bad != 0;
}
