/* glex_switch.c - what waiting costs on this machine: a system call, a
 * sched_yield, a hand-off between two processes on one CPU (by sched_yield
 * and by futex), and a futex wake-up of a process on another CPU (with the
 * CPUs idle and with both busy).  These bound the collectives when
 * processes share cores (doc/performance.md, "Oversubscribed small
 * messages").  No MPI, no fabric.  See --help. */
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
            "  -h, --help    this text\n"
            "Prints, in us: a system call (getppid), a sched_yield with nothing else\n"
            "to run, one hand-off between two processes on one CPU by sched_yield\n"
            "and by futex wait/wake, and one futex hand-off between two processes on\n"
            "two CPUs, idle and with a busy process on each CPU.\n");
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

/* two processes take turns n times through *turn: mode 0 sched_yield while
 * it is not one's turn, 1 futex wait and wake; us per hand-off */
static double ping_pong(_Atomic int *turn, long n, int mode, int cpu0, int cpu1, int busy)
{
    atomic_store(turn, 0);
    pid_t kids[3] = { -1, -1, -1 };
    /* a busy process on each CPU: a woken process must be scheduled on a
     * CPU that has work, not an idle one */
    for (int i = 0; busy && i < 2; i++) {
        kids[1 + i] = fork();
        if (kids[1 + i] == 0) {
            pin(i ? cpu1 : cpu0);
            for (;;)
                atomic_signal_fence(memory_order_seq_cst);
        }
    }
    kids[0] = fork();
    int me = kids[0] == 0;
    pin(me ? cpu1 : cpu0);
    double t0 = glex_test_now_us();
    for (long i = 0; i < n; i++) {
        while (atomic_load(turn) != me) {
            if (mode == 0)
                sched_yield();
            else
                futex(turn, FUTEX_WAIT, !me);
        }
        atomic_store(turn, !me);
        if (mode == 1)
            futex(turn, FUTEX_WAKE, 1);
    }
    double us = (glex_test_now_us() - t0) / (2.0 * (double)n);
    if (me)
        _exit(0);
    waitpid(kids[0], NULL, 0);
    for (int i = 1; i < 3; i++)
        if (kids[i] > 0) {
            kill(kids[i], SIGKILL);
            waitpid(kids[i], NULL, 0);
        }
    return us;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = { { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    long n = 20000, cpu0 = 0, cpu1 = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int c;
    while ((c = getopt_long(argc, argv, "n:c:h", lo, NULL)) != -1) {
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
    _Atomic int *turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (turn == MAP_FAILED) {
        perror("glex-switch: mmap");
        return 1;
    }
    pin((int)cpu0);
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
           ping_pong(turn, n, 0, (int)cpu0, (int)cpu0, 0));
    printf("hand-off on one CPU, futex           %8.3f us\n",
           ping_pong(turn, n, 1, (int)cpu0, (int)cpu0, 0));
    if (cpu0 != cpu1) {
        printf("futex hand-off across CPUs, idle     %8.3f us\n",
               ping_pong(turn, n, 1, (int)cpu0, (int)cpu1, 0));
        /* far slower: a few hundred rounds tell */
        printf("futex hand-off across CPUs, busy     %8.3f us\n",
               ping_pong(turn, n / 20 ? n / 20 : 1, 1, (int)cpu0, (int)cpu1, 1));
    }
    return 0;
}
