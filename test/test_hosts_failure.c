/* test_hosts_failure.c - a job on two emulated hosts (2 ranks each, every
 * packet between them over libfabric) loses one host mid-job: its ranks
 * killed (the fabric reports the connections reset), or stopped (no error,
 * only silence: what a link taken down looks like).  The other host's ranks
 * must get GLEX_EDEAD from their collective within GLEX_TIMEOUT and its
 * probe, never hang. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 4, HOSTS = 2 };

typedef struct {
    _Atomic int ready, go, done;
    int first_rc[N], rc[N];
    double ms[N];
    char msg[N][320];
} shared_t;

static int allreduce(glex_group_t *g, int64_t *v)
{
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .type = GLEX_INT64, .op = GLEX_OP_SUM,
                           .count = 1, .sendbuf = GLEX_IN_PLACE, .recvbuf = v };
    return glex_coll_run(g, &a);
}

static void rank_main(shared_t *s, const char *job, int r)
{
    glex_params_t p;
    glex_params_default(&p);
    p.timeout_ms = 300;
    glex_fabric_t *f;
    glex_vp_t *vp;
    glex_group_t *g;
    uint32_t nodes[N];
    uint16_t vps[N] = { 0 };
    for (int i = 0; i < N; i++)
        nodes[i] = (uint32_t)i;
    alarm(60);
    if (glex_test_fabric_open(job, N, r, &p, HOSTS, &f) || glex_vp_open(f, 0, &vp) ||
        glex_group_create(vp, 7, N, (uint32_t)r, nodes, vps, &g))
        _exit(2);
    int64_t v = r + 1;
    s->first_rc[r] = allreduce(g, &v);
    if (v != 10)
        s->first_rc[r] = -100;
    atomic_fetch_add(&s->ready, 1);
    while (!atomic_load(&s->go))
        usleep(1000);
    double t0 = glex_test_now_us();
    v = 1;
    s->rc[r] = allreduce(g, &v); /* host 1 is gone: this must fail, not hang */
    s->ms[r] = (glex_test_now_us() - t0) / 1000;
    snprintf(s->msg[r], sizeof s->msg[r], "%s", glex_last_error());
    atomic_fetch_add(&s->done, 1);
    for (int ms = 0; atomic_load(&s->done) < 2 && ms < 30000; ms++)
        usleep(1000);
    _exit(0); /* the group and fabric are left as a failed job leaves them */
}

static void quiet(const char *segment, const char *why, int removed, void *arg)
{
    (void)segment, (void)why, (void)removed, (void)arg;
}

static void scenario(int sig, const char *what)
{
    char job[64];
    snprintf(job, sizeof job, "hostfail-%d-%d", (int)getpid(), sig);
    shared_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(s, 0, sizeof *s);
    pid_t pid[N];
    fflush(NULL);
    for (int r = 0; r < N; r++)
        if ((pid[r] = fork()) == 0)
            rank_main(s, job, r);
    for (int ms = 0; atomic_load(&s->ready) < N && ms < 30000; ms++)
        usleep(1000);
    tap_ok(atomic_load(&s->ready) == N && !s->first_rc[0] && !s->first_rc[1] && !s->first_rc[2] &&
               !s->first_rc[3],
           "%s: an allreduce across both hosts first (rc %d %d %d %d)", what, s->first_rc[0],
           s->first_rc[1], s->first_rc[2], s->first_rc[3]);
    kill(pid[2], sig);
    kill(pid[3], sig);
    usleep(20000);
    atomic_store(&s->go, 1);
    int clean = 1, st;
    for (int r = 0; r < 2; r++) {
        waitpid(pid[r], &st, 0);
        clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    tap_ok(clean, "%s: host 0's ranks return from their collective", what);
    for (int r = 0; r < 2; r++)
        tap_ok(s->rc[r] == GLEX_EDEAD && strstr(s->msg[r], "host 1"),
               "%s: rank %d gets GLEX_EDEAD naming host 1: %d '%s'", what, r, s->rc[r],
               s->msg[r]);
    /* GLEX_TIMEOUT (0.3 s), then the probe's GLEX_TIMEOUT, checks each 0.3 s */
    tap_ok(s->ms[0] < 5000 && s->ms[1] < 5000, "%s: within a few GLEX_TIMEOUTs: %.0f / %.0f ms",
           what, s->ms[0], s->ms[1]);
    for (int r = 2; r < N; r++) {
        kill(pid[r], SIGKILL);
        waitpid(pid[r], &st, 0);
    }
    glex_test_hosts_cleanup(job, N);
    glex_cleanup_stale(0, quiet, NULL); /* the stopped and killed ranks' segment */
    munmap(s, sizeof *s);
}

int main(void)
{
#ifndef GLEX_HAVE_LIBFABRIC
    printf("1..0 # SKIP built without libfabric: one host only\n");
    return 0;
#endif
    scenario(SIGKILL, "host 1's ranks killed");
    scenario(SIGSTOP, "host 1's ranks silent (link down)");
    return tap_done();
}
