/* coll_ops.c - MPI_Allreduce/Reduce/Bcast/Barrier and their nonblocking
 * variants over every predefined op x datatype MPI allows, several counts,
 * roots and MPI_IN_PLACE; every result checked against a reference computed
 * from the inputs.  Inputs are small integers, so every reduction order
 * gives the same exact answer (float/double included).
 * usage: coll_ops [quick]   (quick: fewer counts, for large process counts) */
#define _POSIX_C_SOURCE 200809L
#include "mt.h"
#include <stdint.h>
#include <time.h>
#include <string.h>

typedef enum { K_INT, K_UINT, K_BYTE, K_FLOAT, K_PAIR } kind_t;
typedef struct {
    MPI_Datatype dt;
    const char *name;
    kind_t kind;
    int size;   /* bytes of the value (pairs: of the value part) */
} type_t;

static const type_t types[] = {
    {MPI_SIGNED_CHAR, "signed_char", K_INT, 1}, {MPI_UNSIGNED_CHAR, "unsigned_char", K_UINT, 1},
    {MPI_BYTE, "byte", K_BYTE, 1}, {MPI_INT8_T, "int8", K_INT, 1},
    {MPI_UINT8_T, "uint8", K_UINT, 1}, {MPI_SHORT, "short", K_INT, 2},
    {MPI_UNSIGNED_SHORT, "unsigned_short", K_UINT, 2}, {MPI_INT16_T, "int16", K_INT, 2},
    {MPI_UINT16_T, "uint16", K_UINT, 2}, {MPI_INT, "int", K_INT, 4},
    {MPI_UNSIGNED, "unsigned", K_UINT, 4}, {MPI_INT32_T, "int32", K_INT, 4},
    {MPI_UINT32_T, "uint32", K_UINT, 4}, {MPI_LONG, "long", K_INT, 8},
    {MPI_UNSIGNED_LONG, "unsigned_long", K_UINT, 8}, {MPI_LONG_LONG, "long_long", K_INT, 8},
    {MPI_UNSIGNED_LONG_LONG, "unsigned_long_long", K_UINT, 8}, {MPI_INT64_T, "int64", K_INT, 8},
    {MPI_UINT64_T, "uint64", K_UINT, 8}, {MPI_FLOAT, "float", K_FLOAT, 4},
    {MPI_DOUBLE, "double", K_FLOAT, 8}, {MPI_FLOAT_INT, "float_int", K_PAIR, 4},
    {MPI_DOUBLE_INT, "double_int", K_PAIR, 8}, {MPI_LONG_INT, "long_int", K_PAIR, 8},
    {MPI_2INT, "2int", K_PAIR, 4}, {MPI_SHORT_INT, "short_int", K_PAIR, 2},
};

typedef struct {
    MPI_Op op;
    const char *name;
} op_t;
static const op_t ops[] = {
    {MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MAX, "max"}, {MPI_MIN, "min"},
    {MPI_LAND, "land"}, {MPI_LOR, "lor"}, {MPI_LXOR, "lxor"}, {MPI_BAND, "band"},
    {MPI_BOR, "bor"}, {MPI_BXOR, "bxor"}, {MPI_MAXLOC, "maxloc"}, {MPI_MINLOC, "minloc"},
};

static int op_valid(const type_t * t, int o)
{
    MPI_Op op = ops[o].op;
    int loc = op == MPI_MAXLOC || op == MPI_MINLOC;
    int bit = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
    int logic = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
    switch (t->kind) {
        case K_PAIR: return loc;
        case K_BYTE: return bit;
        case K_FLOAT: return !loc && !bit && !logic;
        default: return !loc;
    }
}

/* input element i of rank r for op o: small non-negative integers */
static int64_t input(int o, int r, int size, long i)
{
    MPI_Op op = ops[o].op;
    if (op == MPI_PROD)
        return (i % size) == r ? 2 : 1;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return ((r + i) % 3) == 0 ? 0 : 1;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return (r * 37 + i * 11) & 0x7f;
    if (op == MPI_SUM)
        return (r + i) % 5;
    return (r * 31 + i * 17) % 100;
}

static int64_t combine(MPI_Op op, int64_t a, int64_t b)
{
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_LAND) return a && b;
    if (op == MPI_LOR) return a || b;
    if (op == MPI_LXOR) return !a != !b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    return a ^ b;
}

static MPI_Aint extent_of(MPI_Datatype dt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

static void put(const type_t * t, void *buf, long i, int64_t v, int idx)
{
    char *p = (char *) buf + i * extent_of(t->dt);
    if (t->kind == K_FLOAT || t->dt == MPI_FLOAT_INT || t->dt == MPI_DOUBLE_INT) {
        if (t->size == 4) { float f = (float) v; memcpy(p, &f, 4); }
        else { double d = (double) v; memcpy(p, &d, 8); }
    } else {
        switch (t->size) {
            case 1: { int8_t x = (int8_t) v; memcpy(p, &x, 1); break; }
            case 2: { int16_t x = (int16_t) v; memcpy(p, &x, 2); break; }
            case 4: { int32_t x = (int32_t) v; memcpy(p, &x, 4); break; }
            default: memcpy(p, &v, 8);
        }
    }
    if (t->kind == K_PAIR) {
        /* the index follows the value at the C struct's alignment */
        size_t off = t->dt == MPI_SHORT_INT ? 4 : (size_t) t->size;
        memcpy(p + off, &idx, sizeof idx);
    }
}

static int64_t get(const type_t * t, const void *buf, long i, int *idx)
{
    const char *p = (const char *) buf + i * extent_of(t->dt);
    int64_t v;
    if (t->kind == K_FLOAT || t->dt == MPI_FLOAT_INT || t->dt == MPI_DOUBLE_INT) {
        if (t->size == 4) { float f; memcpy(&f, p, 4); v = (int64_t) f; }
        else { double d; memcpy(&d, p, 8); v = (int64_t) d; }
    } else {
        switch (t->size) {
            case 1: { int8_t x; memcpy(&x, p, 1); v = x; break; }
            case 2: { int16_t x; memcpy(&x, p, 2); v = x; break; }
            case 4: { int32_t x; memcpy(&x, p, 4); v = x; break; }
            default: memcpy(&v, p, 8);
        }
    }
    if (t->kind == K_PAIR && idx) {
        size_t off = t->dt == MPI_SHORT_INT ? 4 : (size_t) t->size;
        memcpy(idx, p + off, sizeof *idx);
    }
    return v;
}

/* expected element i over all ranks, and for *LOC the index */
static int64_t expect(const type_t * t, int o, int size, long i, int *idx)
{
    MPI_Op op = ops[o].op;
    if (t->kind == K_PAIR) {
        int64_t best = input(o, 0, size, i);
        *idx = 0;
        for (int r = 1; r < size; r++) {
            int64_t v = input(o, r, size, i);
            if (op == MPI_MAXLOC ? v > best : v < best)
                best = v, *idx = r;
        }
        return best;
    }
    int64_t acc = input(o, 0, size, i);
    for (int r = 1; r < size; r++)
        acc = combine(op, acc, input(o, r, size, i));
    return acc;
}

static int rank, size;

static void fill(const type_t * t, int o, void *buf, long n)
{
    for (long i = 0; i < n; i++)
        put(t, buf, i, input(o, rank, size, i), rank);
}

static void verify(const char *what, const type_t * t, int o, const void *buf, long n, int root)
{
    int bad = 0;
    for (long i = 0; i < n && bad < 3; i++) {
        int idx = -1, eidx = -1;
        int64_t v = get(t, buf, i, &idx), e = expect(t, o, size, i, &eidx);
        if (t->kind == K_UINT || t->kind == K_BYTE) {   /* compare the type's bits */
            int64_t mask = t->size == 8 ? -1 : (((int64_t) 1 << (8 * t->size)) - 1);
            v &= mask, e &= mask;
        }
        if (v != e || (t->kind == K_PAIR && idx != eidx)) {
            MT_CHECK(0, "%s %s %s count %ld root %d: element %ld = %lld (index %d), expected "
                     "%lld (index %d)", what, t->name, ops[o].name, n, root, i, (long long) v,
                     idx, (long long) e, eidx);
            bad++;
        }
    }
    mt_checks++;
}

static void reductions(long n)
{
    int ntypes = (int) (sizeof types / sizeof types[0]);
    int nops = (int) (sizeof ops / sizeof ops[0]);
    int roots[3] = { 0, size - 1, size / 2 };
    for (int ti = 0; ti < ntypes; ti++) {
        const type_t *t = &types[ti];
        if (n > 1000 && t->dt != MPI_INT && t->dt != MPI_DOUBLE && t->dt != MPI_DOUBLE_INT)
            continue;   /* large counts: one type per kind is enough */
        MPI_Aint ext = extent_of(t->dt);
        char *in = malloc((size_t) (ext * n + 1)), *out = malloc((size_t) (ext * n + 1));
        for (int o = 0; o < nops; o++) {
            if (!op_valid(t, o))
                continue;
            for (int inplace = 0; inplace < 2; inplace++) {
                for (int nb = 0; nb < 2; nb++) {
                    /* allreduce */
                    memset(out, 0x5a, (size_t) (ext * n));
                    fill(t, o, inplace ? out : in, n);
                    const void *sb = inplace ? MPI_IN_PLACE : in;
                    if (nb) {
                        MPI_Request rq;
                        MT_MPI(MPI_Iallreduce(sb, out, (int) n, t->dt, ops[o].op, MPI_COMM_WORLD,
                                              &rq));
                        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                    } else {
                        MT_MPI(MPI_Allreduce(sb, out, (int) n, t->dt, ops[o].op, MPI_COMM_WORLD));
                    }
                    verify(nb ? "iallreduce" : "allreduce", t, o, out, n, -1);
                    /* reduce */
                    for (int ri = 0; ri < 3; ri++) {
                        int root = roots[ri];
                        if (ri && root == roots[0])
                            continue;
                        memset(out, 0x5a, (size_t) (ext * n));
                        int ip = inplace && rank == root;
                        fill(t, o, ip ? out : in, n);
                        sb = ip ? MPI_IN_PLACE : in;
                        if (nb) {
                            MPI_Request rq;
                            MT_MPI(MPI_Ireduce(sb, out, (int) n, t->dt, ops[o].op, root,
                                               MPI_COMM_WORLD, &rq));
                            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                        } else {
                            MT_MPI(MPI_Reduce(sb, out, (int) n, t->dt, ops[o].op, root,
                                              MPI_COMM_WORLD));
                        }
                        if (rank == root)
                            verify(nb ? "ireduce" : "reduce", t, o, out, n, root);
                    }
                }
            }
        }
        free(in);
        free(out);
    }
}

static void bcasts(long n)
{
    MPI_Datatype pair;
    MPI_Type_contiguous(3, MPI_INT, &pair);   /* derived but contiguous */
    MPI_Type_commit(&pair);
    MPI_Datatype dts[] = { MPI_BYTE, MPI_INT, MPI_DOUBLE, pair };
    for (int d = 0; d < 4; d++) {
        int esz;
        MPI_Type_size(dts[d], &esz);
        size_t bytes = (size_t) esz * (size_t) n;
        unsigned char *buf = malloc(bytes + 1);
        for (int root = 0; root < size; root += (size > 3 ? size / 3 : 1)) {
            for (int nb = 0; nb < 2; nb++) {
                for (size_t i = 0; i < bytes; i++)
                    buf[i] = rank == root ? (unsigned char) (i * 7 + root) : 0xee;
                if (nb) {
                    MPI_Request rq;
                    MT_MPI(MPI_Ibcast(buf, (int) n, dts[d], root, MPI_COMM_WORLD, &rq));
                    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                } else {
                    MT_MPI(MPI_Bcast(buf, (int) n, dts[d], root, MPI_COMM_WORLD));
                }
                size_t bad = bytes;
                for (size_t i = 0; i < bytes; i++)
                    if (buf[i] != (unsigned char) (i * 7 + root)) {
                        bad = i;
                        break;
                    }
                MT_CHECK(bad == bytes, "%s datatype %d count %ld root %d: byte %zu wrong",
                         nb ? "ibcast" : "bcast", d, n, root, bad);
            }
        }
        free(buf);
    }
    MPI_Type_free(&pair);
}

static void barriers(void)
{
    /* nobody leaves a barrier before the last rank enters it: rank 0 enters
     * late and notes when; every rank notes when it left.  All processes
     * share one machine, so MPI_Wtime is one clock for all of them. */
    for (int nb = 0; nb < 2; nb++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double entered = 0;
        if (rank == 0) {
            nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 50000000 }, NULL);
            entered = MPI_Wtime();
        }
        if (nb) {
            MPI_Request rq;
            MT_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        double left = MPI_Wtime();
        MT_MPI(MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        MT_CHECK(left >= entered, "%s returned %.6f s before rank 0 entered it",
                 nb ? "ibarrier" : "barrier", entered - left);
    }
    for (int i = 0; i < 200; i++)
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    long counts[] = { 1, 7, 1000, 70000 };
    int ncounts = quick ? 2 : 4;
    for (int c = 0; c < ncounts; c++)
        reductions(counts[c]);
    long bcounts[] = { 0, 1, 100, 300000 };
    for (int c = 0; c < 4; c++)
        bcasts(bcounts[c]);
    barriers();
    int rc = mt_finish("coll_ops");
    MPI_Finalize();
    return rc;
}
