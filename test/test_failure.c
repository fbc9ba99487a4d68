/* test_failure.c - the NIC model when things go wrong: a peer process killed
 * while others wait on it, stale segments of killed jobs (found by owner
 * liveness, removed by the next job), a lock whose holder died, segments of
 * another user or size, a tmpfs too small for the segment, counts that
 * differ between sender and receiver (an error at each end that can tell,
 * no hang, stale packets never matched later), and two jobs at once. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"
#include "glex_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint8_t area[1 << 20]; /* same address in every forked process */

static glex_desc_t coll_desc(void)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_COLL;
    d.c = d.ch = d.ct = d.coll_end_flag = 1;
    d.type = GLEX_UINT8;
    return d;
}

static int segment_exists(const char *job)
{
    char path[160];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm/glex-%u-%s", (unsigned)getuid(), job);
    return stat(path, &st) == 0;
}

/* ------------------------------------------------- a peer is killed */

typedef struct {
    _Atomic int attached, go, finished;
    int status[3];
    double ms[3];
    int peers_rc[3];
    char msg[3][320];
} dead_shared_t;

static void dead_rank(dead_shared_t *s, const char *job, int r)
{
    glex_params_t p;
    glex_params_default(&p);
    p.timeout_ms = 300;
    glex_fabric_t *f;
    glex_vp_t *vp;
    if (glex_fabric_open(job, 3, (uint32_t)r, &p, &f) || glex_vp_open(f, 0, &vp))
        _exit(2);
    atomic_fetch_add(&s->attached, 1);
    if (r == 2)
        raise(SIGKILL); /* dies attached, holding its node, never closing */
    while (!atomic_load(&s->go))
        usleep(1000);
    glex_desc_t d = coll_desc();
    d.job_id = 4;
    if (r == 1) { /* waits for a packet from the dead node */
        d.branch = 1;
        d.recv_id = 2;
        d.count = 8;
        d.recv_addr = (uint64_t)(uintptr_t)area;
    } else {      /* waits for credit from node 1, alive but never receiving */
        d.cp = 1;
        d.dest_id = 1;
        d.seq_id = 3;
        d.send_count = 100000;
        d.local_addr = (uint64_t)(uintptr_t)area;
    }
    double t0 = glex_test_now_us();
    glex_cqe_t e;
    s->status[r] = 1;
    if (glex_vp_post(vp, &d, 1) == 0 && glex_test_wait_cqe(f, vp, &e, 15000))
        s->status[r] = e.status;
    s->ms[r] = (glex_test_now_us() - t0) / 1000;
    snprintf(s->msg[r], sizeof s->msg[r], "%s", glex_vp_failure(vp));
    s->peers_rc[r] = glex_fabric_check_peers(f);
    /* stay attached until both survivors are done: a survivor that has
     * left would be the failure the other one reports, not node 2 */
    atomic_fetch_add(&s->finished, 1);
    for (int ms = 0; atomic_load(&s->finished) < 2 && ms < 30000; ms++)
        usleep(1000);
    glex_fabric_close(f);
    _exit(0);
}

static void stale_report(const char *segment, const char *why, int removed, void *arg)
{
    const char *want = arg;
    (void)removed;
    if (strstr(segment, want))
        printf("# stale: %s: %s\n", segment, why);
}

static void test_dead_peer(void)
{
    char job[64];
    snprintf(job, sizeof job, "dead-%d", (int)getpid());
    dead_shared_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
    memset(s, 0, sizeof *s);
    pid_t pid[3];
    fflush(NULL);
    for (int r = 0; r < 3; r++)
        if ((pid[r] = fork()) == 0)
            dead_rank(s, job, r);
    int st;
    waitpid(pid[2], &st, 0);
    tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "node 2 killed with SIGKILL while attached");
    while (atomic_load(&s->attached) < 3)
        usleep(1000);
    atomic_store(&s->go, 1);
    int clean = 1;
    for (int r = 0; r < 2; r++) {
        waitpid(pid[r], &st, 0);
        clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    tap_ok(clean, "the survivors return from their waits");
    tap_ok(s->status[1] == GLEX_EDEAD && strstr(s->msg[1], "node 2") && strstr(s->msg[1], "died"),
           "a receive from the dead node ends with EDEAD naming it: %d '%s'", s->status[1],
           s->msg[1]);
    tap_ok(s->status[0] == GLEX_EDEAD && strstr(s->msg[0], "node 2"),
           "a send to a live node of the broken job ends with EDEAD too: %d '%s'", s->status[0],
           s->msg[0]);
    tap_ok(s->ms[0] < 2500 && s->ms[1] < 2500,
           "both within GLEX_TIMEOUT (0.3 s) plus one check period: %.0f / %.0f ms", s->ms[0],
           s->ms[1]);
    tap_ok(s->peers_rc[0] == GLEX_EDEAD && s->peers_rc[1] == GLEX_EDEAD,
           "glex_fabric_check_peers reports the dead node");
    tap_ok(segment_exists(job), "the killed node's reference keeps the segment after the others close");
    int n = glex_cleanup_stale(1, stale_report, job);
    tap_ok(n >= 1 && segment_exists(job), "a dry run reports it stale and leaves it (%d found)", n);
    /* the next job on the machine sweeps it */
    char fresh[64];
    snprintf(fresh, sizeof fresh, "fresh-%d", (int)getpid());
    glex_fabric_t *f;
    int rc = glex_fabric_open(fresh, 1, 0, NULL, &f);
    tap_ok(rc == 0 && !segment_exists(job), "the next job's first process removes the stale segment");
    if (rc == 0)
        glex_fabric_close(f);
    munmap(s, sizeof *s);
}

/* a job of the same name as a killed one starts instead of failing */
static void test_same_name(void)
{
    char job[64];
    snprintf(job, sizeof job, "again-%d", (int)getpid());
    int fds[2];
    if (pipe(fds))
        return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        glex_fabric_t *f;
        char ok = glex_fabric_open(job, 2, 0, NULL, &f) == 0;
        write(fds[1], &ok, 1);
        pause();
        _exit(0);
    }
    char ok = 0;
    read(fds[0], &ok, 1);
    close(fds[0]);
    close(fds[1]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    glex_fabric_t *f;
    int rc = glex_fabric_open(job, 2, 0, NULL, &f);
    tap_ok(ok && rc == 0, "a job reusing a killed job's name starts on a fresh segment: %s",
           rc ? glex_last_error() : "ok");
    if (rc == 0)
        glex_fabric_close(f);
    tap_ok(!segment_exists(job), "and removes it at its end");
}

/* a process killed while it holds a lock in the segment */
static void test_dead_lock_holder(void)
{
    char job[64];
    snprintf(job, sizeof job, "lock-%d", (int)getpid());
    glex_fabric_t *f;
    if (glex_fabric_open(job, 2, 0, NULL, &f)) {
        tap_ok(0, "open for the lock test: %s", glex_last_error());
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        glex_fabric_t *g;
        if (glex_fabric_open(job, 2, 1, NULL, &g))
            _exit(2);
        glex_lock(&g->hdr->job_lock);
        raise(SIGKILL);
    }
    int st;
    waitpid(pid, &st, 0);
    double t0 = glex_test_now_us();
    int id = glex_job_acquire(f, 77, 1);
    double ms = (glex_test_now_us() - t0) / 1000;
    tap_ok(WIFSIGNALED(st) && id >= 0 && ms < 5000,
           "a lock whose holder was killed is taken over (JobID %d after %.0f ms)", id, ms);
    glex_job_release(f, id);
    tap_ok(glex_fabric_check_peers(f) == GLEX_EDEAD && strstr(glex_last_error(), "node 1"),
           "and the dead holder's node is reported: %s", glex_last_error());
    glex_fabric_close(f);
    glex_cleanup_stale(0, NULL, NULL);
    tap_ok(!segment_exists(job), "the segment of the dead job is swept");
}

/* ---------------------------------------------- isolation and size */

static void test_other_owner_and_size(void)
{
    char job[64], name[96];
    snprintf(job, sizeof job, "owner-%d", (int)getpid());
    snprintf(name, sizeof name, "/glex-%u-%s", (unsigned)getuid(), job);
    glex_fabric_t *f;
    if (geteuid() != 0) {
        tap_ok(1, "# SKIP a segment owned by another user: needs root to create one");
    } else {
        /* made by root for uid 65534 under this user's name: refused */
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        glex_shm_header_t h;
        memset(&h, 0, sizeof h);
        h.magic = GLEX_MAGIC;
        h.abi = GLEX_ABI_VERSION;
        h.ready = 1;
        h.refcount = 1;
        h.creator_pid = (int32_t)getpid(); /* alive: not swept as stale */
        if (fd >= 0) {
            ftruncate(fd, 1 << 16);
            pwrite(fd, &h, sizeof h, 0);
            fchown(fd, 65534, 65534);
            close(fd);
        }
        int rc = glex_fabric_open(job, 1, 0, NULL, &f);
        tap_ok(rc == GLEX_EMISMATCH && strstr(glex_last_error(), "uid 65534"),
               "a segment owned by another user is refused: %s", glex_last_error());
        shm_unlink(name);
    }
    /* the file is not the size its header says */
    glex_fabric_t *a;
    if (glex_fabric_open(job, 2, 0, NULL, &a)) {
        tap_ok(0, "open: %s", glex_last_error());
        return;
    }
    int fd = shm_open(name, O_RDWR, 0);
    struct stat st;
    fstat(fd, &st);
    ftruncate(fd, st.st_size + 4096);
    close(fd);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = glex_fabric_open(job, 2, 1, NULL, &f);
        _exit(rc == GLEX_EMISMATCH && strstr(glex_last_error(), "size") ? 0 : 1);
    }
    int ws;
    waitpid(pid, &ws, 0);
    tap_ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
           "a segment whose size differs from its header is refused");
    glex_fabric_close(a);
}

/* a tmpfs too small for the segment: a clear error at open, not SIGBUS later */
static void test_no_room(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = { 1 << 20, 1 << 20 }; /* files up to 1 MiB */
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &rl);
        glex_fabric_t *f;
        int rc = glex_fabric_open("noroom", 4, 0, NULL, &f);
        printf("# %s\n", glex_last_error());
        fflush(stdout);
        _exit(rc == GLEX_ESYS && strstr(glex_last_error(), "cannot reserve") &&
                      strstr(glex_last_error(), "GLEX_UNIT_BUFFER_KB")
                  ? 0
                  : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !segment_exists("noroom"),
           "no room for the segment: a clear error at open naming the knobs, nothing left behind");
    /* more than /dev/shm holds at all */
    glex_fabric_t *f;
    int rc = glex_fabric_open("huge", 1u << 22, 0, NULL, &f);
    tap_ok(rc == GLEX_ESYS && strstr(glex_last_error(), "cannot reserve") && !segment_exists("huge"),
           "a segment larger than /dev/shm: %s", glex_last_error());
}

/* ------------------------------------------------ mismatched sizes */

/* one transfer rank 0 -> rank 1 under a JobID both agreed on; reads: bit 0
 * the send, bit 1 the receive moves the data by the receiver's DMA read
 * (swap_remote_addr) */
static int xfer_read(glex_tctx_t *c, uint64_t key, uint64_t sbytes, uint64_t rbytes, int reads,
                     int *status)
{
    int job = glex_job_acquire(c->f, key, 2);
    if (job < 0)
        return -1;
    glex_desc_t d = coll_desc();
    d.job_id = (uint8_t)job;
    if (c->rank == 0) {
        for (uint64_t i = 0; i < sbytes; i++)
            area[i] = (uint8_t)(i * 13 + key);
        d.cp = 1;
        d.dest_id = 1;
        d.swap_remote_addr = (uint8_t)(reads & 1);
        d.send_count = sbytes;
        d.local_addr = (uint64_t)(uintptr_t)area;
    } else {
        memset(area, 0, sizeof area);
        d.branch = 1;
        d.recv_id = 0;
        d.swap_remote_addr = (uint8_t)(reads >> 1 & 1);
        d.count = rbytes;
        d.recv_addr = (uint64_t)(uintptr_t)area;
    }
    glex_cqe_t e;
    int rc = 0;
    if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 20000))
        rc = -2;
    else
        *status = e.status;
    glex_job_release(c->f, job);
    if (rc == 0 && c->rank == 1 && e.status == GLEX_OK)
        for (uint64_t i = 0; i < rbytes; i++)
            if (area[i] != (uint8_t)(i * 13 + key))
                return -3;
    for (uint64_t i = rbytes; c->rank == 1 && i < sizeof area && i < rbytes + 4096; i++)
        if (area[i])
            return -4; /* written past the receive */
    return rc;
}

static int xfer(glex_tctx_t *c, uint64_t key, uint64_t sbytes, uint64_t rbytes, int *status)
{
    return xfer_read(c, key, sbytes, rbytes, 0, status);
}

/* on JobID job, rank 0's send of bytes at buf to rank 1, or rank 1's
 * receive of them into buf */
static glex_desc_t one_way(const glex_tctx_t *c, int job, uint8_t *buf, uint32_t bytes)
{
    glex_desc_t d = coll_desc();
    d.job_id = (uint8_t)job;
    if (c->rank == 0) {
        d.cp = 1, d.dest_id = 1, d.send_count = bytes;
        d.local_addr = (uint64_t)(uintptr_t)buf;
    } else {
        d.branch = 1, d.recv_id = 0, d.count = bytes;
        d.recv_addr = (uint64_t)(uintptr_t)buf;
    }
    return d;
}

/* n eager messages of bytes each from rank 0 to rank 1, each on a JobID of
 * its own, received and checked; 0 or -1 (the case failed) */
static int eager_few(glex_tctx_t *c, int id, int n, int bytes)
{
    uint8_t buf[512];
    for (int i = 0; i < n; i++) {
        int job = glex_job_acquire(c->f, 7100 + (uint64_t)i, 2);
        if (job < 0 || bytes > (int)sizeof buf) {
            glex_case_fail(c, id, "rank %d: no JobID: %s", c->rank, glex_last_error());
            return -1;
        }
        glex_desc_t d = one_way(c, job, buf, (uint32_t)bytes);
        memset(buf, c->rank ? 0 : i + 1, (size_t)bytes);
        glex_cqe_t e;
        if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 20000) ||
            e.status) {
            glex_case_fail(c, id, "rank %d small eager message %d: %s", c->rank, i,
                           glex_vp_failure(c->vp));
            return -1;
        }
        glex_job_release(c->f, job);
        for (int j = 0; c->rank == 1 && j < bytes; j++)
            if (buf[j] != (uint8_t)(i + 1)) {
                glex_case_fail(c, id, "small eager message %d byte %d wrong", i, j);
                return -1;
            }
    }
    return 0;
}

/* Eager sends fill the receiving unit's eager pages before any receive is
 * posted (one unit: GLEX_EAGER_PAGES pages, two messages of 30000 bytes; on
 * another host the sender's partition, half of them: one message): the
 * later senders find no room, ask for credit and wait for it.  On one
 * host, 7 small eager messages before them leave their pages held back by
 * the receiver (it gives them back 8 at a time): the senders take those
 * back before they find no room. */
static void eager_full(glex_tctx_t *c)
{
    enum { N = 4, BYTES = 30000 };
    const char *split = getenv("GLEX_SPLIT_HOSTS"); /* 2 ranks on 2 hosts */
    int fit = split && atoi(split) > 1 ? 1 : 2;
    int id = glex_case(c, "%d eager sends of %d bytes before their receives: the first fill the "
                          "eager pages, the rest ask for credit; all data intact",
                       N, BYTES);
    int jobs[N];
    glex_unit_counters_t before, after; /* of the receiving unit */
    glex_coll_args_t bar = { .kind = GLEX_COLL_BARRIER };
    /* (across hosts those pages go back by the wire's own batches) */
    if (fit == 2 && eager_few(c, id, 7, 200))
        return;
    glex_unit_counters(c->f, 1, 0, &before);
    if (glex_coll_run(c->g, &bar)) { /* both have read the counters */
        glex_case_fail(c, id, "rank %d: barrier: %s", c->rank, glex_last_error());
        return;
    }
    for (int i = 0; i < N; i++) {
        jobs[i] = glex_job_acquire(c->f, 7000 + (uint64_t)i, 2);
        if (jobs[i] < 0) {
            glex_case_fail(c, id, "rank %d: no JobID: %s", c->rank, glex_last_error());
            return;
        }
    }
    if (c->rank == 1) {
        memset(area, 0, (size_t)N * BYTES);
        usleep(200000); /* every send has found the eager pages or asked */
    }
    for (int i = 0; i < N; i++) {
        uint8_t *buf = area + (size_t)i * BYTES;
        glex_desc_t d = one_way(c, jobs[i], buf, BYTES);
        for (int j = 0; c->rank == 0 && j < BYTES; j++)
            buf[j] = (uint8_t)(j * 7 + i);
        if (glex_vp_post(c->vp, &d, 1)) {
            glex_case_fail(c, id, "rank %d post %d: %s", c->rank, i, glex_last_error());
            return;
        }
    }
    for (int i = 0; i < N; i++) {
        glex_cqe_t e;
        if (!glex_test_wait_cqe(c->f, c->vp, &e, 20000) || e.status) {
            glex_case_fail(c, id, "rank %d: completion %d missing or failed: %s", c->rank, i,
                           glex_vp_failure(c->vp));
            return;
        }
    }
    for (int i = 0; i < N; i++)
        glex_job_release(c->f, jobs[i]);
    for (int i = 0; c->rank == 1 && i < N; i++)
        for (int j = 0; j < BYTES; j++)
            if (area[(size_t)i * BYTES + (size_t)j] != (uint8_t)(j * 7 + i)) {
                glex_case_fail(c, id, "message %d byte %d wrong", i, j);
                return;
            }
    glex_unit_counters(c->f, 1, 0, &after);
    if (c->rank == 1 && (after.eager_taken - before.eager_taken != (uint64_t)fit ||
                         after.eager_asked - before.eager_asked != (uint64_t)(N - fit)))
        glex_case_fail(c, id, "%llu messages went eager and %llu asked, expected %d and %d",
                       (unsigned long long)(after.eager_taken - before.eager_taken),
                       (unsigned long long)(after.eager_asked - before.eager_asked), fit, N - fit);
    /* the pages those held at once, at most the eager pages (KiB: pages) */
    uint64_t held = (uint64_t)fit * ((BYTES + 1023) / 1024);
    if (c->rank == 1 && (after.eager_high_water_kb < held || after.eager_high_water_kb > 64))
        glex_case_fail(c, id, "eager pages' high water %llu KiB, expected %llu..64",
                       (unsigned long long)after.eager_high_water_kb, (unsigned long long)held);
}

static int rank_eager_full(glex_tctx_t *c)
{
    eager_full(c);
    return 0;
}

static int rank_mismatch(glex_tctx_t *c)
{
    static const struct {
        uint64_t s, r;
        int sst, rst; /* expected statuses: sender, receiver */
        int reads;    /* read transfer (swap_remote_addr): bit 0 the send, bit 1 the receive */
    } cases[] = {
        { 40, 20, GLEX_OK, GLEX_ETRUNC, 0 },            /* inline (48 bytes), larger sender */
        { 20, 40, GLEX_OK, GLEX_ESIZE, 0 },             /* inline, smaller sender */
        { 100000, 70000, GLEX_ESIZE, GLEX_ETRUNC, 0 },  /* pulsed (above 64 KiB), larger sender */
        { 70000, 100000, GLEX_ESIZE, GLEX_ESIZE, 0 },   /* pulsed, smaller sender */
        { 8, 100000, GLEX_OK, GLEX_ESIZE, 0 },          /* inline sender, pulsed receiver */
        { 100000, 8, GLEX_ESIZE, GLEX_ETRUNC, 0 },      /* pulsed sender, inline receiver */
        { 4000, 2000, GLEX_OK, GLEX_ETRUNC, 0 },        /* eager (no credit awaited), larger sender */
        { 2000, 4000, GLEX_OK, GLEX_ESIZE, 0 },         /* eager, smaller sender */
        { 4000, 100000, GLEX_OK, GLEX_ESIZE, 0 },       /* eager sender, pulsed receiver */
        { 100000, 4000, GLEX_ESIZE, GLEX_ETRUNC, 0 },   /* pulsed sender, eager receiver */
        { 8, 4000, GLEX_OK, GLEX_ESIZE, 0 },            /* inline sender, eager receiver */
        { 4000, 8, GLEX_OK, GLEX_ETRUNC, 0 },           /* eager sender, inline receiver */
        /* the receiver's NIC reads the sender's buffer: on both sides or,
         * by mistake, on one */
        { 100000, 100000, GLEX_OK, GLEX_OK, 3 },
        { 8, 8, GLEX_OK, GLEX_OK, 3 },
        { 0, 0, GLEX_OK, GLEX_OK, 3 },
        { 100000, 70000, GLEX_ESIZE, GLEX_ETRUNC, 3 },
        { 70000, 100000, GLEX_ESIZE, GLEX_ESIZE, 3 },
        { 100000, 100000, GLEX_EINVAL, GLEX_EINVAL, 1 }, /* the send reads, the receive not */
        { 100000, 100000, GLEX_EINVAL, GLEX_EINVAL, 2 }, /* pulsed sender, read receive */
        { 4000, 4000, GLEX_OK, GLEX_EINVAL, 2 },         /* eager sender, read receive */
        { 8, 8, GLEX_OK, GLEX_EINVAL, 2 },               /* inline sender, read receive */
    };
    static const char *const reading[4] = { "", "read on the send, ", "read on the receive, ",
                                             "read on both sides, " };
    uint64_t key = 1000;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int id = glex_case(c, "%ssend %llu bytes to a receive of %llu: sender %s, receiver %s, "
                           "no hang", reading[cases[i].reads], (unsigned long long)cases[i].s,
                           (unsigned long long)cases[i].r, glex_strerror(cases[i].sst),
                           glex_strerror(cases[i].rst));
        int st = 99;
        int rc = xfer_read(c, key++, cases[i].s, cases[i].r, cases[i].reads, &st);
        int want = c->rank == 0 ? cases[i].sst : cases[i].rst;
        if (rc || st != want)
            glex_case_fail(c, id, "rank %d: rc %d status %d (%s), expected %d: %s", c->rank, rc,
                           st, glex_strerror(st), want, glex_vp_failure(c->vp));
        id = glex_case(c, "then the same JobID moves %llu bytes correctly",
                       (unsigned long long)cases[i].r);
        rc = xfer(c, key++, cases[i].r, cases[i].r, &st);
        if (rc || st)
            glex_case_fail(c, id, "rank %d: rc %d status %d: %s", c->rank, rc, st,
                           glex_vp_failure(c->vp));
    }
    /* an inline sender leaves the pulsed receiver's credits behind in its
     * buffer each time: they must be swept, never matched */
    int id = glex_case(c, "80 rounds leaving stale credits in a 64-slot buffer: swept, data intact");
    for (int round = 0; round < 80; round++) {
        int st = 99;
        int rc = xfer(c, key++, 8, 100000, &st);
        int want = c->rank == 0 ? GLEX_OK : GLEX_ESIZE;
        if (rc || st != want) {
            glex_case_fail(c, id, "round %d rank %d mismatch: rc %d st %d", round, c->rank, rc, st);
            break;
        }
        rc = xfer(c, key++, 4096, 4096, &st);
        if (rc || st) {
            glex_case_fail(c, id, "round %d rank %d good transfer: rc %d st %d %s", round,
                           c->rank, rc, st, glex_vp_failure(c->vp));
            break;
        }
    }
    glex_unit_counters_t u;
    glex_unit_counters(c->f, 0, 0, &u);
    if (c->rank == 0 && u.stale_dropped == 0)
        glex_case_fail(c, id, "no stale packet was swept (table high water %llu)",
                       (unsigned long long)u.table_high_water);
    eager_full(c);
    return 0;
}

/* --------------------------------------------------- two jobs at once */

static int rank_allreduce(glex_tctx_t *c)
{
    int id = glex_case(c, "500 allreduces with checked results");
    int64_t v[64], want;
    for (int it = 0; it < 500; it++) {
        for (int i = 0; i < 64; i++)
            v[i] = (int64_t)(c->rank + 1) * (i + it);
        glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .op = GLEX_OP_SUM, .type = GLEX_INT64,
                               .count = 64, .sendbuf = GLEX_IN_PLACE, .recvbuf = v };
        int rc = glex_coll_run(c->g, &a);
        for (int i = 0; i < 64 && !rc; i++) {
            want = (int64_t)c->n * (c->n + 1) / 2 * (i + it);
            if (v[i] != want) {
                glex_case_fail(c, id, "iteration %d element %d: %lld, expected %lld", it, i,
                               (long long)v[i], (long long)want);
                return 0;
            }
        }
        if (rc) {
            glex_case_fail(c, id, "iteration %d: %s", it, glex_last_error());
            return 0;
        }
    }
    return 0;
}

static void test_two_jobs(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* the other job, quietly */
        if (!freopen("/dev/null", "w", stdout))
            _exit(3);
        _exit(glex_run_group(3, NULL, rank_allreduce, NULL, 120, "job B") ? 1 : 0);
    }
    glex_run_group(3, NULL, rank_allreduce, NULL, 120, "job A (job B runs beside it)");
    int st;
    waitpid(pid, &st, 0);
    tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "job B, run at the same time, passed too");
}

int main(int argc, char **argv)
{
    glex_params_t p;
    glex_params_default(&p);
    p.units = 1;
    p.vps_per_node = 1;
    p.table_slots = 64;
    if (argc > 1 && !strcmp(argv[1], "eager")) { /* test_hosts.sh: the eager case alone */
        glex_run_group(2, &p, rank_eager_full, NULL, 120, "eager pages full");
        return tap_done();
    }
    if (argc > 1) {
        fprintf(stderr, "usage: %s [eager]\n", argv[0]);
        return 2;
    }
    test_dead_peer();
    test_same_name();
    test_dead_lock_holder();
    test_other_owner_and_size();
    test_no_room();
    glex_run_group(2, &p, rank_mismatch, NULL, 120, "size mismatch");
    test_two_jobs();
    return tap_done();
}
