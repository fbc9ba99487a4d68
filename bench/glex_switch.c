/* glex_switch.c - what waiting costs on this machine: a system call, a
 * sched_yield, a hand-off between two processes on one CPU (by sched_yield
 * and by futex), a futex wake-up of a process on another CPU (with the
 * CPUs idle and with both busy), and, polling, a hand-off and an exchange
 * of one cache line between two CPUs.  The futex and yield numbers bound
 * the collectives when processes share cores (doc/performance.md,
 * "Oversubscribed small messages"), the polling ones a small collective
 * between two processes with a CPU each ("The floor of a small call").
 * No MPI, no fabric.  See --help. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *o)
{
    fprintf(o,
            "usage: glex-switch [options]\n"
            "  -n N          rounds of each measurement, default 20000 (1..100000000)\n"
            "  -c CPU:CPU    the two CPUs used, default 0:1 (the same twice: the\n"
            "                cross-CPU lines are left out)\n"
            "  -l            only the cache-line measurements (polling, two CPUs)\n"
            "  -b BYTES      also an exchange carrying BYTES each way (copied into a\n"
            "                shared slot and out of the other's), default 0: none\n"
            "                (0..67108864)\n"
            "  -h, --help    this text\n"
            "Prints, in us: a system call (getppid), a sched_yield with nothing else\n"
            "to run, one hand-off between two processes on one CPU by sched_yield\n"
            "and by futex wait/wake, one futex hand-off between two processes on\n"
            "two CPUs, idle and with a busy process on each CPU, and, with both\n"
            "processes polling, one hand-off of a cache line from one CPU to the\n"
            "other (half a ping-pong) and one exchange (each writes its own line,\n"
            "then waits for the other's: what a 2-process barrier or 8-byte\n"
            "allreduce cannot beat; with -b, the same carrying BYTES each way).\n");
}

static int parse_count(const char *s, long lo, long hi, const char *what, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "glex-switch: %s=%s is invalid: allowed range %ld..%ld\n", what, s, lo,
                hi);
        return -1;
    }
    *out = v;
    return 0;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s)) {
        perror("glex-switch: sched_setaffinity");
        _exit(1);
    }
}

static long futex(_Atomic int *w, int op, int val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/* SIGKILL and reap the children in kids[0..n) that were started (> 0) */
static void stop_children(const pid_t *kids, int n)
{
    for (int i = 0; i < n; i++)
        if (kids[i] > 0) {
            kill(kids[i], SIGKILL);
            waitpid(kids[i], NULL, 0);
        }
}

/* fork; when it fails, say so, stop the children already started
 * (started[0..n)) and exit, instead of waiting for a partner that is not
 * there */
static pid_t fork_or_exit(const pid_t *started, int n)
{
    pid_t p = fork();
    if (p < 0) {
        perror("glex-switch: fork");
        stop_children(started, n);
        exit(1);
    }
    return p;
}

enum { BY_YIELD, BY_FUTEX, BY_POLLING };

/* two processes take turns n times through *turn: while it is not one's
 * turn, sched_yield (BY_YIELD), futex wait and wake (BY_FUTEX) or read
 * *turn again (BY_POLLING); us per hand-off */
static double ping_pong(_Atomic int *turn, long n, int mode, int cpu0, int cpu1, int busy)
{
    atomic_store(turn, 0);
    pid_t kids[3] = { -1, -1, -1 };
    /* a busy process on each CPU: a woken process must be scheduled on a
     * CPU that has work, not an idle one */
    for (int i = 0; busy && i < 2; i++) {
        kids[1 + i] = fork_or_exit(kids + 1, 2);
        if (kids[1 + i] == 0) {
            pin(i ? cpu1 : cpu0);
            for (;;)
                atomic_signal_fence(memory_order_seq_cst);
        }
    }
    kids[0] = fork_or_exit(kids + 1, 2);
    int me = kids[0] == 0;
    pin(me ? cpu1 : cpu0);
    double t0 = glex_test_now_us();
    for (long i = 0; i < n; i++) {
        while (atomic_load(turn) != me) {
            if (mode == BY_YIELD)
                sched_yield();
            else if (mode == BY_FUTEX)
                futex(turn, FUTEX_WAIT, !me);
        }
        atomic_store(turn, !me);
        if (mode == BY_FUTEX)
            futex(turn, FUTEX_WAKE, 1);
    }
    double us = (glex_test_now_us() - t0) / (2.0 * (double)n);
    if (me)
        _exit(0);
    waitpid(kids[0], NULL, 0);
    stop_children(kids + 1, 2);
    return us;
}

/* two processes on two CPUs, n rounds: each copies `bytes` of data into its
 * slot for the round (two slots per process, by the round's parity, each
 * a flag word followed by the data, as the direct path's mailbox slots
 * are), writes the round's number into that slot's flag, polls the other's
 * slot until its flag has that round, and copies the data out.  Returns us
 * per round: this process's rounds after n / 10 (at most 1000) untimed
 * ones, each timed on its own as OSU times each call (so the clock reads
 * count as in OSU).  Nothing a two-process barrier (bytes 0) or a
 * bytes-sized allreduce through shared memory does can take less */
static double exchange(long n, size_t bytes, int cpu0, int cpu1)
{
    size_t slot = (8 + bytes + 63) / 64 * 64;
    size_t per_rank = (2 * slot + 4095) / 4096 * 4096; /* each process's own pages */
    uint8_t *area = mmap(NULL, 2 * per_rank, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                         -1, 0);
    uint8_t *src = malloc(bytes + 1), *dst = malloc(bytes + 1);
    if (area == MAP_FAILED || !src || !dst) {
        fprintf(stderr, "glex-switch: no memory for two exchange areas of %zu bytes\n", per_rank);
        exit(1);
    }
    memset(src, 1, bytes + 1);
    pid_t kid = fork_or_exit(NULL, 0);
    int me = kid == 0;
    pin(me ? cpu1 : cpu0);
    long warm = n / 10 < 1000 ? n / 10 : 1000; /* first touches, as OSU's warm-up */
    double t = 0;
    for (long i = 1; i <= warm + n; i++) {
        double t0 = glex_test_now_us();
        uint8_t *mine = area + (size_t)me * per_rank + (size_t)(i & 1) * slot;
        uint8_t *theirs = area + (size_t)!me * per_rank + (size_t)(i & 1) * slot;
        memcpy(mine + 8, src, bytes);
        atomic_store_explicit((_Atomic long *)mine, i, memory_order_release);
        /* the other may be a round ahead already, in its other slot: it
         * writes this one again only after this process said the next
         * round, which it does after it copied this round out */
        while (atomic_load_explicit((_Atomic long *)theirs, memory_order_acquire) != i)
            ;
        memcpy(dst, theirs + 8, bytes);
        if (i > warm)
            t += glex_test_now_us() - t0;
    }
    double us = t / (double)n;
    if (me)
        _exit(0);
    waitpid(kid, NULL, 0);
    munmap(area, 2 * per_rank);
    free(src);
    free(dst);
    return us;
}

/* the system call, sched_yield and futex measurements */
static void kernel_costs(_Atomic int *turn, long n, int cpu0, int cpu1)
{
    double t0 = glex_test_now_us();
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid);
    double t1 = glex_test_now_us();
    for (long i = 0; i < n; i++)
        sched_yield();
    double t2 = glex_test_now_us();
    printf("system call                          %8.3f us\n", (t1 - t0) / (double)n);
    printf("sched_yield, nothing else to run     %8.3f us\n", (t2 - t1) / (double)n);
    printf("hand-off on one CPU, sched_yield     %8.3f us\n",
           ping_pong(turn, n, BY_YIELD, cpu0, cpu0, 0));
    printf("hand-off on one CPU, futex           %8.3f us\n",
           ping_pong(turn, n, BY_FUTEX, cpu0, cpu0, 0));
    if (cpu0 != cpu1) {
        printf("futex hand-off across CPUs, idle     %8.3f us\n",
               ping_pong(turn, n, BY_FUTEX, cpu0, cpu1, 0));
        /* far slower: a few hundred rounds tell */
        printf("futex hand-off across CPUs, busy     %8.3f us\n",
               ping_pong(turn, n / 20 ? n / 20 : 1, BY_FUTEX, cpu0, cpu1, 1));
    }
}

int main(int argc, char **argv)
{
    static const struct option lo[] = { { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    long n = 20000, cpu0 = 0, cpu1 = 1;
    int lines_only = 0;
    size_t bytes = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int c;
    while ((c = getopt_long(argc, argv, "n:c:lb:h", lo, NULL)) != -1) {
        if (c == 'n') {
            if (parse_count(optarg, 1, 100000000, "-n", &n))
                return 2;
        } else if (c == 'c') {
            char a[32], b[32];
            const char *colon = strchr(optarg, ':');
            if (!colon || colon - optarg >= (long)sizeof a || strlen(colon + 1) >= sizeof b) {
                fprintf(stderr, "glex-switch: -c %s is invalid: allowed CPU:CPU, each 0..%ld\n",
                        optarg, ncpu - 1);
                return 2;
            }
            memcpy(a, optarg, (size_t)(colon - optarg));
            a[colon - optarg] = 0;
            strcpy(b, colon + 1);
            if (parse_count(a, 0, ncpu - 1, "-c's first CPU", &cpu0) ||
                parse_count(b, 0, ncpu - 1, "-c's second CPU", &cpu1))
                return 2;
        } else if (c == 'b') {
            long b;
            if (parse_count(optarg, 0, 64L << 20, "-b", &b))
                return 2;
            bytes = (size_t)b;
        } else if (c == 'l') {
            lines_only = 1;
        } else {
            usage(c == 'h' ? stdout : stderr);
            return c == 'h' ? 0 : 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "glex-switch: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((lines_only || bytes) && cpu0 == cpu1) {
        fprintf(stderr, "glex-switch: %s with -c %ld:%ld is invalid: the cache-line measurements "
                "need two different CPUs\n", lines_only ? "-l" : "-b", cpu0, cpu1);
        return 2;
    }
    _Atomic int *turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (turn == MAP_FAILED) {
        perror("glex-switch: mmap");
        return 1;
    }
    pin((int)cpu0);
    if (!lines_only)
        kernel_costs(turn, n, (int)cpu0, (int)cpu1);
    if (cpu0 != cpu1) {
        printf("line hand-off across CPUs, polling   %8.3f us\n",
               ping_pong(turn, n, BY_POLLING, (int)cpu0, (int)cpu1, 0));
        printf("line exchange across CPUs, polling   %8.3f us\n",
               exchange(n, 0, (int)cpu0, (int)cpu1));
        if (bytes) {
            char what[64];
            snprintf(what, sizeof what, "exchange of %zu bytes, polling", bytes);
            printf("%-37s%8.3f us\n", what, exchange(n, bytes, (int)cpu0, (int)cpu1));
        }
    }
    return 0;
}
