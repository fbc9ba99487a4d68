/* test_progress.c - the NIC progresses a posted collective without the host:
 * rank 0 starts a nonblocking allreduce and then computes for 400 ms without
 * calling the library; in offload mode the other ranks finish long before.
 * In host-based mode they cannot (every step needs rank 0's host), and while
 * they wait they must sleep, not spin: their CPU time stays far below the
 * wall time.  And a host asleep in a direct-path call is woken without its
 * engine thread. */
#define _GNU_SOURCE
#include "glex_test.h"
#include "glex_test_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <unistd.h>

#define COMPUTE_MS 400.0

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int run(glex_tctx_t *c)
{
    for (int host = 0; host < 2; host++) {
        for (int algo = GLEX_ALGO_BINOMIAL; algo < GLEX_ALGO_COUNT; algo++) {
            if (!glex_algo_valid(GLEX_COLL_ALLREDUCE, (glex_algo_t)algo))
                continue;
            if (algo == GLEX_ALGO_DIRECT && !host)
                continue; /* run by the calling thread: progresses only in test/wait */
            glex_coll_args_t bar = { .kind = GLEX_COLL_BARRIER };
            uint64_t count = 20000;
            double *in = malloc(count * 8), *out = malloc(count * 8), *exp = malloc(count * 8);
            ref_fill(GLEX_DOUBLE, GLEX_OP_SUM, c->rank, 9 + (uint64_t)algo, in, count);
            ref_expected(GLEX_DOUBLE, GLEX_OP_SUM, c->n, 9 + (uint64_t)algo, exp, count);
            glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = (glex_algo_t)algo,
                                   .host_mode = host, .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                                   .count = count, .sendbuf = in, .recvbuf = out };
            int id = glex_case(c, "%s %s: %s", host ? "host-based" : "offload",
                               glex_algo_name(a.algo),
                               host ? "ranks waiting for rank 0's host sleep (CPU < 25%% of wall)"
                                    : "others complete while rank 0 computes without library calls");
            glex_coll_run(c->g, &bar);
            glex_req_t *r;
            double t0 = glex_test_now_us(), c0 = cpu_us();
            if (glex_coll_start(c->g, &a, &r)) {
                glex_case_fail(c, id, "start: %s", glex_last_error());
                return 1;
            }
            if (c->rank == 0) {
                volatile double x = 0; /* computing, no library calls */
                while (glex_test_now_us() - t0 < COMPUTE_MS * 1000)
                    x += 1.0;
            }
            int rc = glex_coll_wait(r);
            double wall_ms = (glex_test_now_us() - t0) / 1000, cpu_ms = (cpu_us() - c0) / 1000;
            glex_coll_req_free(r);
            if (rc || ref_compare(GLEX_DOUBLE, out, exp, count) >= 0)
                glex_case_fail(c, id, "rc %d or wrong result", rc);
            if (c->rank != 0 && !host && wall_ms > COMPUTE_MS / 2)
                glex_case_fail(c, id, "rank %d needed %.1f ms: no progress without rank 0's host",
                               c->rank, wall_ms);
            /* recursive doubling and Rabenseifner: rank 2 takes rank 0's data
             * of its second step, which rank 0's host posts (its first is
             * posted with the call: ranks 1 and 3 of recursive doubling need
             * nothing more of rank 0) */
            if (c->rank == 2 && host && wall_ms < COMPUTE_MS * 0.9 &&
                (algo == GLEX_ALGO_RECURSIVE_DOUBLING || algo == GLEX_ALGO_RABENSEIFNER))
                glex_case_fail(c, id, "host-based finished in %.1f ms without rank 0's host",
                               wall_ms);
            if (c->rank != 0 && host && wall_ms > COMPUTE_MS / 2 && cpu_ms > 0.25 * wall_ms)
                glex_case_fail(c, id, "rank %d burned %.1f ms CPU in %.1f ms waiting", c->rank,
                               cpu_ms, wall_ms);
            free(in);
            free(out);
            free(exp);
        }
    }
    return 0;
}

/* Voluntary context switches of this process's threads other than the main
 * one (its engine thread), -1 when there is none. */
static long engine_switches(void)
{
    char path[64], line[128];
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == (long)getpid())
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
        FILE *fp = fopen(path, "r");
        if (!fp)
            continue;
        long v;
        while (fgets(line, sizeof line, fp))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1) {
                found = (found < 0 ? 0 : found) + v;
                break;
            }
        fclose(fp);
    }
    closedir(d);
    return found;
}

#define WAKE_ROUNDS 200

/* A sleeping host woken by a direct-path writer: its engine thread, which
 * has no part in the direct path, must stay asleep (it has its own bell). */
static int run_wake(glex_tctx_t *c)
{
    int id = glex_case(c, "direct path, rank 0 late, others asleep: engine threads stay asleep "
                          "(< %d switches in %d rounds)",
                       WAKE_ROUNDS / 10, WAKE_ROUNDS);
    long before = engine_switches();
    if (before < 0) {
        if (!getenv("GLEX_ENGINE_THREAD") || strcmp(getenv("GLEX_ENGINE_THREAD"), "0"))
            glex_case_fail(c, id, "rank %d: no engine thread found in /proc/self/task", c->rank);
        return 0;
    }
    uint64_t slept = 0;
    for (int i = 0; i < WAKE_ROUNDS; i++) {
        double in = c->rank + i, out = 0;
        glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_DIRECT,
                               .host_mode = 1, .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                               .count = 1, .sendbuf = &in, .recvbuf = &out };
        if (c->rank == 0) {
            struct timespec ts = { 0, 300000 };
            nanosleep(&ts, NULL);
        }
        double t0 = glex_test_now_us();
        int rc = glex_coll_run(c->g, &a);
        slept += glex_test_now_us() - t0 > 100;
        double want = (double)c->n * (c->n - 1) / 2 + (double)c->n * i;
        if (rc || out != want) {
            glex_case_fail(c, id, "round %d: rc %d, got %g, expected %g", i, rc, out, want);
            return 0;
        }
    }
    long woke = engine_switches() - before;
    if (c->rank != 0 && slept <= WAKE_ROUNDS / 2)
        glex_case_fail(c, id, "rank %d waited for rank 0 in only %llu of %d rounds", c->rank,
                       (unsigned long long)slept, WAKE_ROUNDS);
    else if (c->rank != 0 && woke >= WAKE_ROUNDS / 10)
        glex_case_fail(c, id, "rank %d: its engine thread switched %ld times in %d rounds (%llu "
                              "slept)", c->rank, woke, WAKE_ROUNDS, (unsigned long long)slept);
    return 0;
}

int main(void)
{
    glex_run_group(4, NULL, run, NULL, 300, "progress");
    glex_params_t p;
    glex_params_default(&p);
    p.spin_us = 0; /* waiting hosts sleep at once */
    p.yield_us = 0;
    glex_run_group(4, &p, run_wake, NULL, 120, "wake");
    return tap_done();
}
