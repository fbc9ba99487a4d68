/* glex_emu_sync.c - futex-based waiting, a process-shared lock, clock, errors. */
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

#if defined(__x86_64__) || defined(__i386__)
#define glex_cpu_relax() __builtin_ia32_pause()
#else
#define glex_cpu_relax() sched_yield()
#endif

static _Thread_local char last_error[512];

int glex_set_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *glex_last_error(void)
{
    return last_error;
}

const char *glex_strerror(int code)
{
    switch (code) {
    case GLEX_OK: return "success";
    case GLEX_EINVAL: return "invalid argument or field out of range";
    case GLEX_ENOTSUP: return "operation/type not offloadable";
    case GLEX_EAGAIN: return "resource temporarily full, retry";
    case GLEX_ETIMEDOUT: return "timed out waiting for a packet or credit";
    case GLEX_ENOMEM: return "out of memory";
    case GLEX_ESYS: return "system call failed";
    case GLEX_EMISMATCH: return "shared segment does not match (magic, ABI, size or parameters)";
    case GLEX_EBUSY: return "resource busy";
    case GLEX_ENOENT: return "no such object";
    default: return "unknown error";
    }
}

uint64_t glex_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
 * does not burn a holder's time slice. */
void glex_lock(glex_lock_t *l)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(&l->v, &c, 1))
        return;
    for (int i = 0; i < 64; i++) {
        c = 0;
        if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak(&l->v, &c, 1))
            return;
        glex_cpu_relax();
    }
    if (c != 2)
        c = atomic_exchange(&l->v, 2);
    while (c != 0) {
        glex_futex_wait(&l->v, 2, -1, true);
        c = atomic_exchange(&l->v, 2);
    }
}

void glex_unlock(glex_lock_t *l)
{
    if (atomic_exchange(&l->v, 0) == 2)
        glex_futex_wake(&l->v, 1, true);
}
