/* test_alu.c - every ALU op x type kernel against a scalar computation written
 * independently here, the tie rule of maxloc/minloc, wrapping integer
 * arithmetic, and GLEX_ENOTSUP for combinations the ALU lacks. */
#include "glex_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* scalar reference on int64/double views: returns 1 if supported */
static int expect_scalar(glex_op_t op, int is_fp, int is_signed, int bits, int64_t a, int64_t b,
                         double fa, double fb, int64_t *ri, double *rf)
{
    uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    switch (op) {
    case GLEX_OP_SUM: *ri = (int64_t)(((uint64_t)a + (uint64_t)b) & mask); *rf = fa + fb; return 1;
    case GLEX_OP_PROD: *ri = (int64_t)(((uint64_t)a * (uint64_t)b) & mask); *rf = fa * fb; return 1;
    case GLEX_OP_MAX:
        *ri = (is_signed ? a > b : (uint64_t)a > (uint64_t)b) ? a : b;
        *rf = fa > fb ? fa : fb;
        return 1;
    case GLEX_OP_MIN:
        *ri = (is_signed ? a < b : (uint64_t)a < (uint64_t)b) ? a : b;
        *rf = fa < fb ? fa : fb;
        return 1;
    case GLEX_OP_LAND: *ri = a && b; return !is_fp;
    case GLEX_OP_LOR: *ri = a || b; return !is_fp;
    case GLEX_OP_LXOR: *ri = (!a) != (!b); return !is_fp;
    case GLEX_OP_BAND: *ri = a & b; return !is_fp;
    case GLEX_OP_BOR: *ri = a | b; return !is_fp;
    case GLEX_OP_BXOR: *ri = a ^ b; return !is_fp;
    default: return 0;
    }
}

typedef struct { glex_type_t t; int fp, sign, bits; } tinfo_t;
static const tinfo_t base[] = {
    { GLEX_INT8, 0, 1, 8 }, { GLEX_UINT8, 0, 0, 8 }, { GLEX_INT16, 0, 1, 16 },
    { GLEX_UINT16, 0, 0, 16 }, { GLEX_INT32, 0, 1, 32 }, { GLEX_UINT32, 0, 0, 32 },
    { GLEX_INT64, 0, 1, 64 }, { GLEX_UINT64, 0, 0, 64 }, { GLEX_FLOAT, 1, 1, 32 },
    { GLEX_DOUBLE, 1, 1, 64 },
};

static int64_t load(const tinfo_t *ti, const void *p, size_t i)
{
    switch (ti->t) {
    case GLEX_INT8: return ((const int8_t *)p)[i];
    case GLEX_UINT8: return ((const uint8_t *)p)[i];
    case GLEX_INT16: return ((const int16_t *)p)[i];
    case GLEX_UINT16: return ((const uint16_t *)p)[i];
    case GLEX_INT32: return ((const int32_t *)p)[i];
    case GLEX_UINT32: return ((const uint32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

static int truncate_eq(const tinfo_t *ti, int64_t got, int64_t want)
{
    uint64_t mask = ti->bits == 64 ? ~0ull : ((1ull << ti->bits) - 1);
    return ((uint64_t)got & mask) == ((uint64_t)want & mask);
}

int main(void)
{
    uint64_t seed = 88172645463325252ull;
    enum { N = 257 };
    int32_t x_unused[3] = { 0 };
    for (size_t k = 0; k < sizeof base / sizeof base[0]; k++) {
        const tinfo_t *ti = &base[k];
        size_t es = glex_type_size(ti->t);
        for (int op = 0; op < GLEX_OP_COUNT; op++) {
            int64_t ri = 0;
            double rf = 0;
            int want_sup = expect_scalar((glex_op_t)op, ti->fp, ti->sign, ti->bits, 1, 1, 1, 1, &ri, &rf);
            int sup = glex_alu_supported((glex_op_t)op, ti->t);
            if (!want_sup) {
                uint8_t x[16] = { 0 }, y[16] = { 0 };
                tap_ok(!sup && glex_alu_combine((glex_op_t)op, ti->t, x, y, 1) == GLEX_ENOTSUP,
                       "%s on %s reported not offloadable", glex_op_name((glex_op_t)op),
                       glex_type_name(ti->t));
                continue;
            }
            uint8_t a[N * 8], b[N * 8], orig[N * 8];
            for (size_t i = 0; i < N * es; i++)
                a[i] = (uint8_t)glex_rand(&seed), b[i] = (uint8_t)glex_rand(&seed);
            if (ti->fp) { /* finite values with a few equal pairs */
                for (size_t i = 0; i < N; i++) {
                    double va = (double)((int)(glex_rand(&seed) % 2001) - 1000) / 8;
                    double vb = i % 5 ? (double)((int)(glex_rand(&seed) % 2001) - 1000) / 8 : va;
                    if (ti->t == GLEX_FLOAT)
                        ((float *)a)[i] = (float)va, ((float *)b)[i] = (float)vb;
                    else
                        ((double *)a)[i] = va, ((double *)b)[i] = vb;
                }
            } else {
                for (size_t i = 0; i < N; i += 7) /* zeros for the logical ops */
                    memset(a + i * es, 0, es);
            }
            memcpy(orig, a, N * es);
            int ok = sup && glex_alu_combine((glex_op_t)op, ti->t, a, b, N) == GLEX_OK;
            for (size_t i = 0; ok && i < N; i++) {
                if (ti->fp) {
                    double fa = ti->t == GLEX_FLOAT ? ((float *)orig)[i] : ((double *)orig)[i];
                    double fb = ti->t == GLEX_FLOAT ? ((float *)b)[i] : ((double *)b)[i];
                    double got = ti->t == GLEX_FLOAT ? ((float *)a)[i] : ((double *)a)[i];
                    expect_scalar((glex_op_t)op, 1, 1, ti->bits, 0, 0, fa, fb, &ri, &rf);
                    if (ti->t == GLEX_FLOAT)
                        rf = (float)rf;
                    ok = got == rf;
                } else {
                    expect_scalar((glex_op_t)op, 0, ti->sign, ti->bits, load(ti, orig, i),
                                  load(ti, b, i), 0, 0, &ri, &rf);
                    ok = truncate_eq(ti, load(ti, a, i), ri);
                }
            }
            tap_ok(ok, "%s on %s (%d elements) matches the scalar reference%s",
                   glex_op_name((glex_op_t)op), glex_type_name(ti->t), N,
                   glex_alu_native((glex_op_t)op, ti->t) ? "" : " [extension]");
        }
    }
    /* combine_into (out = a op b) gives combine's bytes, for every op x type */
    for (int t = 0; t < GLEX_TYPE_COUNT; t++) {
        int ok = 1, n = 0;
        size_t es = glex_type_size((glex_type_t)t);
        int pair = !glex_alu_supported(GLEX_OP_SUM, (glex_type_t)t); /* value+index */
        for (int op = 0; op < GLEX_OP_COUNT; op++) {
            if (!glex_alu_supported((glex_op_t)op, (glex_type_t)t))
                continue;
            uint8_t a[N * 16], b[N * 16], acc[N * 16], out[N * 16];
            for (size_t i = 0; i < N * es; i++)
                a[i] = (uint8_t)glex_rand(&seed), b[i] = i % 3 ? (uint8_t)glex_rand(&seed) : a[i];
            memcpy(acc, a, N * es);
            memcpy(out, a, N * es); /* pair types: padding as combine leaves it */
            for (size_t i = 0; !pair && i < N * es; i += es * 2) /* out is not read */
                memset(out + i, 0x5a, es);
            ok &= glex_alu_combine((glex_op_t)op, (glex_type_t)t, acc, b, N) == GLEX_OK &&
                  glex_alu_combine_into((glex_op_t)op, (glex_type_t)t, out, a, b, N) == GLEX_OK &&
                  memcmp(acc, out, N * es) == 0;
            n++;
        }
        tap_ok(ok && n > 0, "combine_into equals combine for the %d ops on %s", n,
               glex_type_name((glex_type_t)t));
    }
    tap_ok(glex_alu_combine_into(GLEX_OP_MAXLOC, GLEX_INT32, x_unused, x_unused + 1, x_unused + 2,
                                 1) == GLEX_ENOTSUP &&
               strstr(glex_last_error(), "maxloc"),
           "combine_into rejects an op x type the ALU lacks");
    /* maxloc/minloc on every pair type, including ties */
    glex_double_int_t x[4] = { { 1.0, 5 }, { 2.0, 1 }, { 3.0, 7 }, { -1.0, 2 } };
    glex_double_int_t y[4] = { { 1.0, 3 }, { 2.0, 4 }, { 1.0, 0 }, { -1.0, 9 } };
    glex_double_int_t xl[4];
    memcpy(xl, x, sizeof x);
    glex_alu_combine(GLEX_OP_MAXLOC, GLEX_DOUBLE_INT, x, y, 4);
    tap_ok(x[0].v == 1.0 && x[0].i == 3 && x[1].i == 1 && x[2].v == 3.0 && x[2].i == 7 &&
               x[3].i == 2,
           "maxloc double_int: larger value wins, ties take the lower index");
    glex_alu_combine(GLEX_OP_MINLOC, GLEX_DOUBLE_INT, xl, y, 4);
    tap_ok(xl[0].i == 3 && xl[1].i == 1 && xl[2].v == 1.0 && xl[2].i == 0 && xl[3].i == 2,
           "minloc double_int: smaller value wins, ties take the lower index");
    glex_type_t pairs[] = { GLEX_FLOAT_INT, GLEX_DOUBLE_INT, GLEX_LONG_INT, GLEX_2INT,
                            GLEX_SHORT_INT };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        int ok = 1;
        for (int op = 0; op < GLEX_OP_COUNT; op++)
            ok &= glex_alu_supported((glex_op_t)op, pairs[k]) ==
                  (op == GLEX_OP_MAXLOC || op == GLEX_OP_MINLOC);
        tap_ok(ok, "%s supports exactly maxloc/minloc", glex_type_name(pairs[k]));
    }
    tap_ok(glex_type_size(GLEX_LONG_INT) == sizeof(struct { long v; int i; }) &&
               glex_type_size(GLEX_SHORT_INT) == sizeof(struct { short v; int i; }),
           "pair types have MPI's C layout");
    tap_ok(glex_alu_combine(GLEX_OP_COUNT, GLEX_INT32, x, y, 1) == GLEX_ENOTSUP &&
               glex_alu_combine(GLEX_OP_SUM, GLEX_TYPE_COUNT, x, y, 1) == GLEX_ENOTSUP &&
               strstr(glex_last_error(), "type"),
           "out-of-range op and type are rejected with a message");
    return tap_done();
}
