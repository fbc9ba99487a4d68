/* glex_test.c - see glex_test.h */
#define _GNU_SOURCE
#include "glex_test.h"

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CASES 40000
#define NAME_LEN 120

typedef struct shared_results {
    int ncases;
    unsigned char failed[MAX_CASES];
    char names[MAX_CASES][NAME_LEN];
} shared_results_t;

static shared_results_t *res;
static int tap_n, tap_failed;

void tap_ok(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (!ok)
        tap_failed++;
}

int tap_done(void)
{
    printf("1..%d\n", tap_n);
    fflush(stdout);
    fprintf(stderr, "%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
    return tap_failed ? 1 : 0;
}

double glex_test_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static char local_name[NAME_LEN]; /* this rank's view of the current case */

int glex_case(glex_tctx_t *c, const char *fmt, ...)
{
    static int next;
    int id = next++;
    if (id >= MAX_CASES) {
        fprintf(stderr, "too many cases\n");
        exit(3);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(local_name, NAME_LEN, fmt, ap);
    va_end(ap);
    if (c->rank == 0) {
        memcpy(res->names[id], local_name, NAME_LEN);
        __atomic_store_n(&res->ncases, id + 1, __ATOMIC_RELEASE);
    }
    return id;
}

void glex_case_fail(glex_tctx_t *c, int id, const char *fmt, ...)
{
    if (__atomic_exchange_n(&res->failed[id], 1, __ATOMIC_ACQ_REL))
        return; /* first report only */
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# case %d rank %d (latest case here: %s): ", id, c->rank, local_name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* GLEX_SPLIT_HOSTS=H: the job's ranks form H emulated hosts, consecutive
 * blocks of ranks, each with a segment of its own, every packet between
 * them over libfabric (doc/multinode.md); unset or 1: one host */
static uint32_t split_hosts(int n)
{
    const char *s = getenv("GLEX_SPLIT_HOSTS");
    if (!s || !*s)
        return 1;
    char *end;
    unsigned long h = strtoul(s, &end, 10);
    if (*end || h < 1) {
        fprintf(stderr, "GLEX_SPLIT_HOSTS=%s: allowed 1..the number of ranks\n", s);
        exit(3);
    }
    return h > (unsigned long)n ? (uint32_t)n : (uint32_t)h;
}

static uint32_t host_of_rank(int rank, int n, uint32_t hosts)
{
    return (uint32_t)((uint64_t)rank * hosts / (uint64_t)n);
}

/* the ranks' fabric addresses, through files in a directory of the job */
static int exchange_addresses(glex_fabric_t *f, int rank, int n, const char *job)
{
    char dir[160], path[200], tmp[220];
    snprintf(dir, sizeof dir, "/tmp/glex-addr-%u-%s", (unsigned)getuid(), job);
    mkdir(dir, 0700);
    uint8_t *all = calloc((size_t)n, GLEX_ADDR_MAX);
    size_t *len = calloc((size_t)n, sizeof *len);
    if (!all || !len)
        return 2;
    int rc = glex_fabric_address(f, all + (size_t)rank * GLEX_ADDR_MAX, &len[rank]);
    if (rc) {
        fprintf(stderr, "# rank %d: fabric address: %s\n", rank, glex_last_error());
        return 2;
    }
    snprintf(path, sizeof path, "%s/%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *o = fopen(tmp, "wb");
    if (!o || fwrite(all + (size_t)rank * GLEX_ADDR_MAX, 1, len[rank], o) != len[rank] ||
        fclose(o) || rename(tmp, path)) {
        fprintf(stderr, "# rank %d: cannot write %s\n", rank, path);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%d", dir, i);
        FILE *in;
        while (!(in = fopen(path, "rb")))
            usleep(1000);
        len[i] = fread(all + (size_t)i * GLEX_ADDR_MAX, 1, GLEX_ADDR_MAX, in);
        fclose(in);
    }
    rc = glex_fabric_connect(f, all, GLEX_ADDR_MAX, len);
    free(all);
    free(len);
    if (rc) {
        fprintf(stderr, "# rank %d: fabric connect: %s\n", rank, glex_last_error());
        return 2;
    }
    return 0;
}

int glex_test_fabric_open(const char *job, int n, int rank, const glex_params_t *p,
                          uint32_t hosts, glex_fabric_t **out)
{
    uint32_t *host_of = malloc(sizeof *host_of * (size_t)n);
    for (int i = 0; i < n && host_of; i++)
        host_of[i] = host_of_rank(i, n, hosts);
    int rc = glex_fabric_open_hosts(job, (uint32_t)n, (uint32_t)rank, p, hosts, host_of, out);
    free(host_of);
    if (rc) {
        fprintf(stderr, "# rank %d: fabric_open: %s\n", rank, glex_last_error());
        return rc;
    }
    if (hosts > 1 && exchange_addresses(*out, rank, n, job)) {
        glex_fabric_close(*out);
        *out = NULL;
        return GLEX_ESYS;
    }
    return GLEX_OK;
}

void glex_test_hosts_cleanup(const char *job, int n)
{
    char dir[160], path[200];
    snprintf(dir, sizeof dir, "/tmp/glex-addr-%u-%s", (unsigned)getuid(), job);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%d", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

static int alarm_rank, alarm_s;

/* A rank out of time says which case it was in and where it stood (the
 * sanitizer build symbolizes; otherwise offsets for addr2line), then dies of
 * SIGALRM as before.  Not async-signal-safe, so a second alarm ends a report
 * that hangs. */
static void on_alarm(int sig)
{
    signal(sig, SIG_DFL);
    alarm(20);
    char msg[NAME_LEN + 96];
    int len = snprintf(msg, sizeof msg, "# rank %d timed out after %d s in case: %s\n", alarm_rank,
                       alarm_s, local_name);
    if (len > 0 && write(2, msg, (size_t)len) < 0)
        _exit(4);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_print_stack_trace();
#else
    void *bt[32];
    backtrace_symbols_fd(bt, backtrace(bt, 32), 2);
#endif
    raise(sig);
}

static int child(int rank, int n, const glex_params_t *p, glex_tfn fn, void *arg, const char *job,
                 int timeout_s)
{
    glex_tctx_t c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.n = n;
    c.arg = arg;
    snprintf(c.job, sizeof c.job, "%s", job);
    alarm_rank = rank, alarm_s = timeout_s;
    signal(SIGALRM, on_alarm);
    alarm((unsigned)timeout_s);
    uint32_t hosts = split_hosts(n);
    int rc = glex_test_fabric_open(job, n, rank, p, hosts, &c.f);
    if (rc)
        return 2;
    if ((rc = glex_vp_open(c.f, 0, &c.vp))) {
        fprintf(stderr, "# rank %d: vp_open: %s\n", rank, glex_last_error());
        return 2;
    }
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)n);
    uint16_t *vps = calloc((size_t)n, sizeof *vps);
    for (int i = 0; i < n; i++)
        nodes[i] = (uint32_t)i;
    if ((rc = glex_group_create(c.vp, 1, (uint32_t)n, (uint32_t)rank, nodes, vps, &c.g))) {
        fprintf(stderr, "# rank %d: group_create: %s\n", rank, glex_last_error());
        return 2;
    }
    free(nodes);
    free(vps);
    rc = fn(&c);
    /* across hosts, as MPI_Finalize: nobody leaves while another may still
     * need it (node 0 agrees on JobIDs; a send completes when it is on the
     * wire, before its receiver took it) */
    glex_coll_args_t barrier = { .kind = GLEX_COLL_BARRIER };
    if (hosts > 1 && glex_coll_run(c.g, &barrier))
        fprintf(stderr, "# rank %d: barrier: %s\n", rank, glex_last_error());
    glex_group_free(c.g);
    glex_fabric_close(c.f);
    return rc;
}

int glex_run_group(int n, const glex_params_t *p, glex_tfn fn, void *arg, int timeout_s,
                   const char *what)
{
    static int runs;
    char job[64];
    snprintf(job, sizeof job, "t%d-%d", (int)getpid(), runs++);
    static pid_t res_pid; /* a forked job runner gets results of its own */
    if (!res || res_pid != getpid()) {
        res_pid = getpid();
        res = mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (res == MAP_FAILED) {
            perror("mmap");
            exit(3);
        }
    }
    memset(res, 0, sizeof *res);
    fflush(NULL);
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(child(r, n, p, fn, arg, job, timeout_s));
    }
    int bad = 0, first_bad = -1;
    /* reap only our ranks: wait() would also take other children of this
     * process (a second job run beside this one) and count them as ranks */
    for (int left = n; left > 0;) {
        int st = 0, r = 0;
        pid_t w = 0;
        for (; r < n; r++)
            if (pids[r] > 0 && (w = waitpid(pids[r], &st, WNOHANG)) != 0)
                break;
        if (r == n) {
            usleep(1000);
            continue;
        }
        if (w < 0) /* not ours to wait for after all: count it as broken */
            st = 0xff00;
        pids[r] = -pids[r]; /* reaped */
        left--;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            if (!bad)
                first_bad = r;
            bad++;
            if (WIFSIGNALED(st))
                fprintf(stderr, "# %s n=%d: rank %d killed by signal %d\n", what, n, r,
                        WTERMSIG(st));
            else
                fprintf(stderr, "# %s n=%d: rank %d exit %d\n", what, n, r, WEXITSTATUS(st));
            for (int k = 0; k < n; k++) /* do not wait for a broken run */
                if (pids[k] > 0)
                    kill(pids[k], SIGKILL);
        }
    }
    free(pids);
    char name[96];
    int leaked = 0;
    uint32_t hosts = split_hosts(n);
    for (uint32_t h = 0; h < hosts; h++) {
        if (hosts > 1)
            snprintf(name, sizeof name, "/glex-%u-%s.h%u", (unsigned)getuid(), job, h);
        else
            snprintf(name, sizeof name, "/glex-%u-%s", (unsigned)getuid(), job);
        leaked |= shm_unlink(name) == 0;
    }
    if (hosts > 1)
        glex_test_hosts_cleanup(job, n);
    int fails = 0;
    for (int i = 0; i < res->ncases; i++) {
        tap_ok(!res->failed[i], "%s n=%d: %s", what, n, res->names[i]);
        fails += res->failed[i];
    }
    tap_ok(!bad, "%s n=%d: all ranks exited cleanly%s", what, n,
           bad ? " (see log)" : "");
    if (!bad)
        tap_ok(!leaked, "%s n=%d: segment removed by the last process", what, n);
    (void)first_bad;
    return fails + bad + (!bad && leaked);
}

glex_desc_t glex_test_coll_desc(uint8_t job, glex_type_t type, glex_op_t op)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_COLL;
    d.c = 1;
    d.job_id = job;
    d.type = (uint8_t)type;
    d.op = (uint8_t)op;
    return d;
}

int glex_test_wait_cqe(glex_fabric_t *f, glex_vp_t *vp, glex_cqe_t *e, int ms)
{
    double end = glex_test_now_us() + ms * 1000.0;
    while (glex_test_now_us() < end) {
        glex_progress(f);
        if (glex_vp_poll_cq(vp, e))
            return 1;
        usleep(50);
    }
    return 0;
}
