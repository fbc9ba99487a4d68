/* fallback.c - calls the offload engine must decline, run by MPICH's own
 * algorithms with the right results: a user-defined non-commutative op
 * (2x2 matrix product, order matters) on a derived contiguous datatype,
 * and a derived non-contiguous datatype (vector) in bcast from every root. */
#include "mt.h"
#include <string.h>

static int rank, size;

/* 2x2 integer matrices, row major: inout = in x inout (MPI's order) */
static void matmul(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    (void) dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]
        };
        memcpy(b, c, sizeof c);
    }
}

static void mat_of(int r, int *m)
{
    /* non-commuting: [[1, r+1], [0, 1]] x [[1, 0], [r%3, 1]] */
    int a[4] = { 1, r + 1, 0, 1 }, b[4] = { 1, 0, r % 3, 1 };
    m[0] = a[0] * b[0] + a[1] * b[2];
    m[1] = a[0] * b[1] + a[1] * b[3];
    m[2] = a[2] * b[0] + a[3] * b[2];
    m[3] = a[2] * b[1] + a[3] * b[3];
}

static void noncommutative(void)
{
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op op;
    MT_MPI(MPI_Op_create(matmul, 0, &op));
    enum { N = 3 };
    int in[4 * N], out[4 * N], expect[4];
    for (int k = 0; k < N; k++)
        mat_of(rank, in + 4 * k);
    /* rank order product m0 x m1 x ... x m(n-1) */
    mat_of(0, expect);
    for (int r = 1; r < size; r++) {
        int m[4], c[4];
        mat_of(r, m);
        c[0] = expect[0] * m[0] + expect[1] * m[2];
        c[1] = expect[0] * m[1] + expect[1] * m[3];
        c[2] = expect[2] * m[0] + expect[3] * m[2];
        c[3] = expect[2] * m[1] + expect[3] * m[3];
        memcpy(expect, c, sizeof c);
    }
    for (int nb = 0; nb < 2; nb++) {
        memset(out, 0, sizeof out);
        if (nb) {
            MPI_Request rq;
            MT_MPI(MPI_Iallreduce(in, out, N, mat, op, MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MT_MPI(MPI_Allreduce(in, out, N, mat, op, MPI_COMM_WORLD));
        }
        for (int k = 0; k < N; k++)
            MT_CHECK(!memcmp(out + 4 * k, expect, sizeof expect),
                     "%sallreduce non-commutative: [%d %d %d %d] expected [%d %d %d %d]",
                     nb ? "i" : "", out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3],
                     expect[0], expect[1], expect[2], expect[3]);
        int root = size - 1;
        memset(out, 0, sizeof out);
        MT_MPI(MPI_Reduce(in, out, N, mat, op, root, MPI_COMM_WORLD));
        if (rank == root)
            MT_CHECK(!memcmp(out, expect, sizeof expect), "reduce non-commutative wrong");
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
}

static void vector_types(void)
{
    /* every other int of 2*N */
    enum { N = 1000 };
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *buf = malloc(sizeof(int) * 2 * N), *out = malloc(sizeof(int) * 2 * N);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 2 * N; i++)
            buf[i] = rank == root ? i * 5 + root : -7;
        MT_MPI(MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD));
        int bad = -1;
        for (int i = 0; i < 2 * N; i++) {
            int e = (i % 2 == 0 || rank == root) ? i * 5 + root : -7;
            if (buf[i] != e) {
                bad = i;
                break;
            }
        }
        MT_CHECK(bad < 0, "vector bcast root %d: element %d = %d", root, bad, buf[bad < 0 ? 0 : bad]);
    }
    free(buf);
    free(out);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    noncommutative();
    vector_types();
    int rc = mt_finish("fallback");
    MPI_Finalize();
    return rc;
}
