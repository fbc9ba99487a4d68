/* glex_test_ref.h - test inputs whose combination is exact in any order, and
 * the serial reference result. */
#ifndef GLEX_TEST_REF_H
#define GLEX_TEST_REF_H
#include "glex_emu.h"
#include <stdint.h>

/* contribution of rank for (op, type), element i, call seed */
void ref_fill(glex_type_t t, glex_op_t op, int rank, uint64_t seed, void *buf, uint64_t count);
/* expected reduction over ranks 0..n-1 */
void ref_expected(glex_type_t t, glex_op_t op, int n, uint64_t seed, void *out, uint64_t count);
/* index of the first differing element or -1 */
int64_t ref_compare(glex_type_t t, const void *a, const void *b, uint64_t count);
#endif
