/* lang_mpiio.c - MPI-IO (ROMIO) on the glex netmod: every rank writes its
 * interleaved blocks of one shared file collectively through a file view
 * (ROMIO's two-phase collective buffering, whose exchanges and reductions
 * run on the NIC model), then every rank reads back another rank's blocks
 * independently and checks each value, and the file's size.
 * usage: lang_mpiio PATH   (the file is created, checked and deleted) */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

enum { BLOCK = 1000, NBLOCKS = 64 }; /* ints per block, blocks per rank */

static int value(int rank, int block, int i) { return rank * 1000000 + block * 1000 + i; }

static int check(int rc, const char *what, int rank)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "lang_mpiio: rank %d: %s: %s\n", rank, what, msg);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (!rank)
            fprintf(stderr, "usage: lang_mpiio PATH\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *path = argv[1];
    int *buf = malloc(sizeof(int) * BLOCK * NBLOCKS);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int b = 0; b < NBLOCKS; b++)
        for (int i = 0; i < BLOCK; i++)
            buf[b * BLOCK + i] = value(rank, b, i);

    /* the file: block b of rank r at block index b * size + r */
    MPI_Datatype blocks, view;
    MPI_Type_vector(NBLOCKS, BLOCK, BLOCK * size, MPI_INT, &blocks);
    MPI_Type_create_resized(blocks, 0, (MPI_Aint)sizeof(int) * BLOCK * size * NBLOCKS, &view);
    MPI_Type_commit(&view);
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    bad += check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh), "MPI_File_open", rank);
    if (bad)
        MPI_Abort(MPI_COMM_WORLD, 1);
    bad += check(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * BLOCK * rank, MPI_INT, view,
                                   "native", MPI_INFO_NULL), "MPI_File_set_view", rank);
    MPI_Status st;
    bad += check(MPI_File_write_all(fh, buf, BLOCK * NBLOCKS, MPI_INT, &st), "MPI_File_write_all",
                 rank);
    int written = 0;
    MPI_Get_count(&st, MPI_INT, &written);
    if (written != BLOCK * NBLOCKS) {
        fprintf(stderr, "lang_mpiio: rank %d: wrote %d ints, expected %d\n", rank, written,
                BLOCK * NBLOCKS);
        bad++;
    }
    bad += check(MPI_File_sync(fh), "MPI_File_sync", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    bad += check(MPI_File_sync(fh), "MPI_File_sync", rank);

    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    if (fsize != (MPI_Offset)sizeof(int) * BLOCK * NBLOCKS * size) {
        fprintf(stderr, "lang_mpiio: rank %d: file size %lld, expected %lld\n", rank,
                (long long)fsize, (long long)sizeof(int) * BLOCK * NBLOCKS * size);
        bad++;
    }

    /* read the next rank's blocks, one independent read each, byte offsets */
    int peer = (rank + 1) % size;
    bad += check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
                 "MPI_File_set_view", rank);
    int *in = malloc(sizeof(int) * BLOCK);
    for (int b = 0; b < NBLOCKS && in; b++) {
        MPI_Offset off = (MPI_Offset)sizeof(int) * BLOCK * ((MPI_Offset)b * size + peer);
        bad += check(MPI_File_read_at(fh, off, in, BLOCK, MPI_INT, &st), "MPI_File_read_at", rank);
        for (int i = 0; i < BLOCK; i++)
            if (in[i] != value(peer, b, i)) {
                if (bad++ < 3)
                    fprintf(stderr, "lang_mpiio: rank %d: rank %d's block %d int %d is %d\n",
                            rank, peer, b, i, in[i]);
            }
    }
    bad += check(MPI_File_close(&fh), "MPI_File_close", rank);
    MPI_Type_free(&view);
    MPI_Type_free(&blocks);
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        MPI_File_delete(path, MPI_INFO_NULL);
        printf("lang_mpiio: %d ranks, %s\n", size, allbad ? "FAILED" : "file written and read back");
    }
    free(in);
    free(buf);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
