/* glex_emu_sync.c - futex-based waiting, a process-shared lock, the clock. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t glex_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* The clock of timeouts (GLEX_TIMEOUT, stall checks: milliseconds and up),
 * read on every engine pass and idle progress call: the kernel's tick
 * (CLOCK_MONOTONIC_COARSE, a few ms resolution) costs a memory read where
 * the precise clock costs a timestamp-counter read (a tenth of a small
 * message's time in a VM). */
uint64_t glex_coarse_ns(void) { return clock_ns(CLOCK_MONOTONIC_COARSE); }

void glex_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int ms)
{
    uint64_t t = clock_ns(CLOCK_REALTIME) + (uint64_t)ms * 1000000ull;
    struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
                           .tv_nsec = (long)(t % 1000000000ull) };
    pthread_cond_timedwait(c, m, &ts);
}

void glex_futex_wait(_Atomic uint32_t *w, uint32_t val, int timeout_ms, bool shared)
{
    struct timespec ts, *tp = NULL;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
        tp = &ts;
    }
    syscall(SYS_futex, (uint32_t *)w, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val, tp,
            NULL, 0);
}

void glex_futex_wake(_Atomic uint32_t *w, int n, bool shared)
{
    syscall(SYS_futex, (uint32_t *)w, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, NULL, NULL,
            0);
}

/* Three-state futex mutex: 0 free, 1 locked, 2 locked with waiters.  A short
 * bounded spin first; then the waiter sleeps, so an oversubscribed machine
 * does not burn a holder's time slice.  The holder's pid is kept beside the
 * word: a waiter that has slept a second checks it, and takes the lock over
 * from a holder that died (SIGKILL inside the few instructions a lock is
 * held), so the survivors of a crashed job do not hang. */
static int32_t cached_pid; /* getpid() is a system call; refreshed in forked children */

static void forget_pid(void) { cached_pid = 0; }

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, forget_pid);
}

static int32_t self_pid(void)
{
    int32_t p = __atomic_load_n(&cached_pid, __ATOMIC_RELAXED);
    if (!p) {
        p = (int32_t)getpid();
        __atomic_store_n(&cached_pid, p, __ATOMIC_RELAXED);
    }
    return p;
}

static int take_over(glex_lock_t *l, int32_t self)
{
    int32_t o = atomic_load(&l->owner);
    if (o <= 0 || o == self || glex_proc_alive(o, 0))
        return 0;
    if (!atomic_compare_exchange_strong(&l->owner, &o, self))
        return 0;
    fprintf(stderr, "glex: took over a lock whose holder (pid %d) died\n", (int)o);
    return 1;
}

void glex_lock(glex_lock_t *l)
{
    int32_t self = self_pid();
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(&l->v, &c, 1))
        goto owned;
    for (int i = 0; i < 64; i++) {
        c = 0;
        if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak(&l->v, &c, 1))
            goto owned;
        glex_cpu_relax();
    }
    if (c != 2)
        c = atomic_exchange(&l->v, 2);
    while (c != 0) {
        glex_futex_wait(&l->v, 2, 1000, true);
        c = atomic_exchange(&l->v, 2);
        if (c != 0 && take_over(l, self))
            return; /* the word stays 2: unlock wakes the other waiters */
    }
owned:
    atomic_store_explicit(&l->owner, self, memory_order_relaxed);
}

void glex_unlock(glex_lock_t *l)
{
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
    if (atomic_exchange(&l->v, 0) == 2)
        glex_futex_wake(&l->v, 1, true);
}
