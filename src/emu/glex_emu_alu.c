/* glex_emu_alu.c - the NIC ALU.  Every op x type kernel is produced once by the
 * macros below; the dispatch table is built from the same lists. */
/* The kernels are element-wise (d[i] = d[i] op s[i]): vectorizing them
 * reorders nothing, so results stay bit-identical.  GCC vectorizes such loops
 * only from -O3 (at -O2 its cost model leaves them scalar: 9 GB/s summing
 * doubles in cache); clang does at -O2. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include "glex_emu_internal.h"

#include <string.h>

/* X(ENUM, ctype, wide unsigned type for wrapping arithmetic) */
#define GLEX_INT_TYPES(X)                         \
    X(GLEX_INT8, int8_t, unsigned)                \
    X(GLEX_UINT8, uint8_t, unsigned)              \
    X(GLEX_INT16, int16_t, unsigned)              \
    X(GLEX_UINT16, uint16_t, unsigned)            \
    X(GLEX_INT32, int32_t, uint32_t)              \
    X(GLEX_UINT32, uint32_t, uint32_t)            \
    X(GLEX_INT64, int64_t, uint64_t)              \
    X(GLEX_UINT64, uint64_t, uint64_t)
#define GLEX_FP_TYPES(X)      \
    X(GLEX_FLOAT, float, float) \
    X(GLEX_DOUBLE, double, double)
#define GLEX_PAIR_TYPES(X)                 \
    X(GLEX_FLOAT_INT, glex_float_int_t, 0)   \
    X(GLEX_DOUBLE_INT, glex_double_int_t, 0) \
    X(GLEX_LONG_INT, glex_long_int_t, 0)     \
    X(GLEX_2INT, glex_2int_t, 0)             \
    X(GLEX_SHORT_INT, glex_short_int_t, 0)

/* Element-wise expressions over a (inout) and b (in); W is the wrapping type. */
#define E_SUM(T, W) (T)((W)a + (W)b)
#define E_PROD(T, W) (T)((W)a * (W)b)
#define E_MAX(T, W) (b > a ? b : a)
#define E_MIN(T, W) (b < a ? b : a)
#define E_LAND(T, W) (T)(a && b)
#define E_LOR(T, W) (T)(a || b)
#define E_LXOR(T, W) (T)(!a != !b)
#define E_BAND(T, W) (T)(a & b)
#define E_BOR(T, W) (T)(a | b)
#define E_BXOR(T, W) (T)(a ^ b)
/* MPI semantics: the better value wins; on a tie the lower index. */
#define E_MAXLOC(T, W) (b.v > a.v ? b : (b.v == a.v && b.i < a.i ? b : a))
#define E_MINLOC(T, W) (b.v < a.v ? b : (b.v == a.v && b.i < a.i ? b : a))

/* one copy for AVX2 machines, one baseline, picked at load time */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GLEX_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GLEX_KERNEL_CLONES
#endif

/* each op x type: k_ (d[i] = d[i] op s[i]) and kt_ (d[i] = x[i] op s[i]) */
#define KERNEL(OPN, TE, T, W)                                                   \
    GLEX_KERNEL_CLONES static void k_##OPN##_##TE(void *restrict io, const void *restrict in,     \
                               size_t n)                                        \
    {                                                                           \
        T *d = io;                                                              \
        const T *s = in;                                                        \
        for (size_t i = 0; i < n; i++) {                                        \
            T a = d[i], b = s[i];                                               \
            d[i] = E_##OPN(T, W);                                               \
        }                                                                       \
    }                                                                           \
    GLEX_KERNEL_CLONES static void kt_##OPN##_##TE(void *restrict out,          \
                                                   const void *restrict x,      \
                                                   const void *restrict in, size_t n) \
    {                                                                           \
        T *d = out;                                                             \
        const T *f = x, *s = in;                                                \
        for (size_t i = 0; i < n; i++) {                                        \
            T a = f[i], b = s[i];                                               \
            d[i] = E_##OPN(T, W);                                               \
        }                                                                       \
    }

#define ARITH_KERNELS(TE, T, W) KERNEL(SUM, TE, T, W) KERNEL(PROD, TE, T, W) \
    KERNEL(MAX, TE, T, W) KERNEL(MIN, TE, T, W)
#define LOGIC_KERNELS(TE, T, W) KERNEL(LAND, TE, T, W) KERNEL(LOR, TE, T, W) \
    KERNEL(LXOR, TE, T, W) KERNEL(BAND, TE, T, W) KERNEL(BOR, TE, T, W)    \
    KERNEL(BXOR, TE, T, W)
#define PAIR_KERNELS(TE, T, W) KERNEL(MAXLOC, TE, T, W) KERNEL(MINLOC, TE, T, W)

GLEX_INT_TYPES(ARITH_KERNELS)
GLEX_INT_TYPES(LOGIC_KERNELS)
GLEX_FP_TYPES(ARITH_KERNELS)
GLEX_PAIR_TYPES(PAIR_KERNELS)

typedef struct {
    void (*acc)(void *restrict, const void *restrict, size_t);
    void (*into)(void *restrict, const void *restrict, const void *restrict, size_t);
} glex_kernel_t;

#define SLOT(OPN, TE) [GLEX_OP_##OPN][TE] = { k_##OPN##_##TE, kt_##OPN##_##TE },
#define ARITH_SLOTS(TE, T, W) SLOT(SUM, TE) SLOT(PROD, TE) SLOT(MAX, TE) SLOT(MIN, TE)
#define LOGIC_SLOTS(TE, T, W) SLOT(LAND, TE) SLOT(LOR, TE) SLOT(LXOR, TE) \
    SLOT(BAND, TE) SLOT(BOR, TE) SLOT(BXOR, TE)
#define PAIR_SLOTS(TE, T, W) SLOT(MAXLOC, TE) SLOT(MINLOC, TE)

static const glex_kernel_t kernels[GLEX_OP_COUNT][GLEX_TYPE_COUNT] = {
    GLEX_INT_TYPES(ARITH_SLOTS) GLEX_INT_TYPES(LOGIC_SLOTS)
    GLEX_FP_TYPES(ARITH_SLOTS) GLEX_PAIR_TYPES(PAIR_SLOTS)
};

#define SIZE_ROW(TE, T, W) [TE] = sizeof(T),
static const size_t type_sizes[GLEX_TYPE_COUNT] = {
    GLEX_INT_TYPES(SIZE_ROW) GLEX_FP_TYPES(SIZE_ROW) GLEX_PAIR_TYPES(SIZE_ROW)
};

#define NAME_ROW(TE, T, W) [TE] = #T,
static const char *const type_names[GLEX_TYPE_COUNT] = {
    GLEX_INT_TYPES(NAME_ROW) GLEX_FP_TYPES(NAME_ROW) GLEX_PAIR_TYPES(NAME_ROW)
};

static const char *const op_names[GLEX_OP_COUNT] = {
    "sum", "prod", "max", "min", "maxloc", "minloc",
    "land", "lor", "lxor", "band", "bor", "bxor",
};

size_t glex_type_size(glex_type_t t)
{
    return (unsigned)t < GLEX_TYPE_COUNT ? type_sizes[t] : 0;
}

const char *glex_type_name(glex_type_t t)
{
    return (unsigned)t < GLEX_TYPE_COUNT ? type_names[t] : "?";
}

const char *glex_op_name(glex_op_t op)
{
    return (unsigned)op < GLEX_OP_COUNT ? op_names[op] : "?";
}

int glex_alu_supported(glex_op_t op, glex_type_t type)
{
    return (unsigned)op < GLEX_OP_COUNT && (unsigned)type < GLEX_TYPE_COUNT &&
           kernels[op][type].acc != NULL;
}

int glex_alu_native(glex_op_t op, glex_type_t type)
{
    if (!glex_alu_supported(op, type) || op == GLEX_OP_PROD)
        return 0;
    switch (type) {
    case GLEX_INT8: case GLEX_UINT8: case GLEX_INT16: case GLEX_UINT16:
    case GLEX_SHORT_INT:
        return 0; /* 8/16-bit data: documented extension */
    default:
        return 1;
    }
}

static int no_kernel(glex_op_t op, glex_type_t type)
{
    return glex_error(GLEX_ENOTSUP, "ALU has no kernel for op %s (%d) on type %s (%d)",
                      glex_op_name(op), (int)op, glex_type_name(type), (int)type);
}

int glex_alu_combine(glex_op_t op, glex_type_t type, void *inout, const void *in,
                     size_t count)
{
    if (!glex_alu_supported(op, type))
        return no_kernel(op, type);
    if (count)
        kernels[op][type].acc(inout, in, count);
    return GLEX_OK;
}

int glex_alu_combine_into(glex_op_t op, glex_type_t type, void *out, const void *a,
                          const void *b, size_t count)
{
    if (!glex_alu_supported(op, type))
        return no_kernel(op, type);
    if (count)
        kernels[op][type].into(out, a, b, count);
    return GLEX_OK;
}
