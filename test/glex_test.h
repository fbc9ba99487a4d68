/* glex_test.h - multi-process test harness: fork N processes on one fabric
 * segment (no MPI), per-case results in shared memory, TAP output. */
#ifndef GLEX_TEST_H
#define GLEX_TEST_H

#include "glex_coll.h"
#include "glex_emu.h"

#include <stdarg.h>
#include <stdint.h>

typedef struct glex_tctx {
    int rank, n;
    glex_fabric_t *f;
    glex_vp_t *vp;
    glex_group_t *g;
    void *arg;
    char job[64];
} glex_tctx_t;

typedef int (*glex_tfn)(glex_tctx_t *c);

/* Fork n processes, each node=rank of a fresh fabric (params p or defaults),
 * VP 0 open and a group of all n.  Runs fn in each; per-case results land in
 * TAP lines printed by the parent.  Returns the number of failures. */
int glex_run_group(int n, const glex_params_t *p, glex_tfn fn, void *arg, int timeout_s,
                   const char *what);

/* Open node rank of n on a fabric of hosts emulated hosts (consecutive
 * blocks of ranks; 1: one segment), exchanging the fabric addresses through
 * files under /tmp; glex_test_hosts_cleanup removes them after the job */
int glex_test_fabric_open(const char *job, int n, int rank, const glex_params_t *p,
                          uint32_t hosts, glex_fabric_t **out);
void glex_test_hosts_cleanup(const char *job, int n);

/* Cases inside fn: every rank calls glex_case in the same order. */
int glex_case(glex_tctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void glex_case_fail(glex_tctx_t *c, int id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* TAP in the parent */
void tap_ok(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tap_done(void);

/* fast deterministic pseudo-random numbers */
static inline uint64_t glex_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

double glex_test_now_us(void);

/* a COLL descriptor of JobID job, type and op, every other field 0 (the
 * caller sets its steps and CH/CT) */
glex_desc_t glex_test_coll_desc(uint8_t job, glex_type_t type, glex_op_t op);

/* drive progress and poll vp's CQ for up to ms: 1 with *e filled, 0 on timeout */
int glex_test_wait_cqe(glex_fabric_t *f, glex_vp_t *vp, glex_cqe_t *e, int ms);
#endif
