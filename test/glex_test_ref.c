/* glex_test_ref.c - see glex_test_ref.h */
#include "glex_test_ref.h"

#include <stdlib.h>
#include <string.h>

static uint64_t h64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void store(glex_type_t t, void *buf, uint64_t i, int64_t v, uint64_t bits, int idx)
{
    switch (t) {
    case GLEX_INT8: ((int8_t *)buf)[i] = (int8_t)(bits ? (int64_t)bits : v); break;
    case GLEX_UINT8: ((uint8_t *)buf)[i] = (uint8_t)(bits ? bits : (uint64_t)v); break;
    case GLEX_INT16: ((int16_t *)buf)[i] = (int16_t)(bits ? (int64_t)bits : v); break;
    case GLEX_UINT16: ((uint16_t *)buf)[i] = (uint16_t)(bits ? bits : (uint64_t)v); break;
    case GLEX_INT32: ((int32_t *)buf)[i] = (int32_t)(bits ? (int64_t)bits : v); break;
    case GLEX_UINT32: ((uint32_t *)buf)[i] = (uint32_t)(bits ? bits : (uint64_t)v); break;
    case GLEX_INT64: ((int64_t *)buf)[i] = bits ? (int64_t)bits : v; break;
    case GLEX_UINT64: ((uint64_t *)buf)[i] = bits ? bits : (uint64_t)v; break;
    case GLEX_FLOAT: ((float *)buf)[i] = (float)v; break;
    case GLEX_DOUBLE: ((double *)buf)[i] = (double)v; break;
    case GLEX_FLOAT_INT: ((glex_float_int_t *)buf)[i] = (glex_float_int_t){ (float)v, idx }; break;
    case GLEX_DOUBLE_INT: ((glex_double_int_t *)buf)[i] = (glex_double_int_t){ (double)v, idx }; break;
    case GLEX_LONG_INT: ((glex_long_int_t *)buf)[i] = (glex_long_int_t){ (long)v, idx }; break;
    case GLEX_2INT: ((glex_2int_t *)buf)[i] = (glex_2int_t){ (int)v, idx }; break;
    case GLEX_SHORT_INT: ((glex_short_int_t *)buf)[i] = (glex_short_int_t){ (short)v, idx }; break;
    default: abort();
    }
}

void ref_fill(glex_type_t t, glex_op_t op, int rank, uint64_t seed, void *buf, uint64_t count)
{
    int is_unsigned = t == GLEX_UINT8 || t == GLEX_UINT16 || t == GLEX_UINT32 || t == GLEX_UINT64;
    int is_fp = t == GLEX_FLOAT || t == GLEX_DOUBLE;
    size_t es = glex_type_size(t);
    if (glex_type_size(t) && count)
        memset(buf, 0, count * es); /* defined padding bytes in pair types */
    for (uint64_t i = 0; i < count; i++) {
        uint64_t r = h64(seed * 1000003u + (uint64_t)rank * 7919u + i);
        int64_t v;
        uint64_t bits = 0;
        switch (op) {
        case GLEX_OP_PROD:
            if (is_fp) {
                static const int64_t pv[4] = { 1, -1, 2, 1 };
                v = pv[r % 4];
            } else {
                v = (int64_t)(r % 3) + 1;
                if (!is_unsigned && (r >> 8) % 2)
                    v = -v;
            }
            break;
        case GLEX_OP_BAND: case GLEX_OP_BOR: case GLEX_OP_BXOR:
            v = 0;
            bits = h64(r) | 1u; /* nonzero so it is used */
            if (op == GLEX_OP_BAND)
                bits |= h64(r + 1); /* denser ones for AND */
            break;
        case GLEX_OP_LAND: case GLEX_OP_LOR: case GLEX_OP_LXOR:
            v = (int64_t)(r % 5 == 0 ? 0 : r % 3); /* mostly true */
            if (op == GLEX_OP_LOR)
                v = r % 7 == 0;
            break;
        case GLEX_OP_MAXLOC: case GLEX_OP_MINLOC:
            v = (int64_t)(r % 6); /* many ties: the lower index must win */
            break;
        default:
            v = is_unsigned ? (int64_t)(r % 100) : (int64_t)(r % 101) - 50;
        }
        store(t, buf, i, v, bits, rank);
    }
}

void ref_expected(glex_type_t t, glex_op_t op, int n, uint64_t seed, void *out, uint64_t count)
{
    size_t es = glex_type_size(t);
    void *tmp = malloc(count * es + 1);
    ref_fill(t, op, 0, seed, out, count);
    for (int r = 1; r < n; r++) {
        ref_fill(t, op, r, seed, tmp, count);
        glex_alu_combine(op, t, out, tmp, count);
    }
    free(tmp);
}

int64_t ref_compare(glex_type_t t, const void *a, const void *b, uint64_t count)
{
    size_t es = glex_type_size(t);
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *x = (const uint8_t *)a + i * es, *y = (const uint8_t *)b + i * es;
        int diff;
        switch (t) { /* compare value and index, not padding */
        case GLEX_FLOAT_INT: case GLEX_2INT: case GLEX_SHORT_INT:
            diff = memcmp(x, y, es == 8 && t != GLEX_SHORT_INT ? 8 : 2) ||
                   memcmp(x + 4, y + 4, 4);
            if (t == GLEX_FLOAT_INT || t == GLEX_2INT)
                diff = memcmp(x, y, 8);
            break;
        case GLEX_DOUBLE_INT: case GLEX_LONG_INT:
            diff = memcmp(x, y, 12);
            break;
        default:
            diff = memcmp(x, y, es);
        }
        if (diff)
            return (int64_t)i;
    }
    return -1;
}
