/* glex_emu_wait.c - the host's wait loop: drive the engine inline, poll,
 * yield, then sleep on the host bell until a condition holds.  Above the
 * engine (it calls glex_progress); nothing in the NIC model calls it but the
 * segment's set-up wait. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <sched.h>

/* Wait for done(arg) while driving progress; spins up to GLEX_SPIN_US, polls
 * with sched_yield up to GLEX_YIELD_US more, then blocks.  Both windows count
 * from the last progress this host saw, not from the start of the wait: a
 * long transfer that keeps moving (a pulsed reduction) is never put to sleep
 * between its pulses. */
int glex_wait_until(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms)
{
    return glex_wait_until_flags(f, done, arg, timeout_ms, 0);
}

int glex_wait_until_flags(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms,
                          unsigned flags)
{
    if (done(arg)) /* the common case of a fast call: no clock, no bookkeeping */
        return GLEX_OK;
    uint64_t spin_ns = (uint64_t)glex_spin_us(f) * 1000ull;
    uint64_t yield_ns = spin_ns + (uint64_t)glex_yield_us(f) * 1000ull;
    uint64_t start = glex_now_ns(), idle = start;
    int moved = 0;
    unsigned looks = 0;
    uint64_t end = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000ull;
    int rc = GLEX_OK;
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    /* without an engine thread this host is the only driver of progress */
    int drive = !(flags & GLEX_WAIT_NO_ENGINE) || !glex_engine_has_thread(f);
    if (drive)
        glex_host_wait_begin(f);
    while (!done(arg)) {
        if (drive && glex_progress(f)) {
            moved = 1;
            continue;
        }
        if (done(arg))
            break;
        /* while spinning, the clock (a vDSO call, ~25 ns here) every 8th
         * idle look: the window is microseconds, a look a fraction of one;
         * without a spin window (processes sharing a core) the first idle
         * look yields */
        if (spin_ns && (++looks & 7))
            continue;
        uint64_t now = glex_now_ns();
        if (now >= end) {
            rc = GLEX_ETIMEDOUT;
            break;
        }
        if (moved) { /* the windows restart at the last progress */
            idle = now;
            moved = 0;
        }
        if (now - idle < spin_ns)
            continue;
        if (now - idle < yield_ns) { /* let the processes sharing this core run */
            sched_yield();
            continue;
        }
        uint64_t left_ms = (end - now) / 1000000ull + 1;
        /* The bell's count, then count as a sleeping host, then drive the
         * engine and look once more: a ring after the count ends the sleep;
         * a packet that came before it is taken by this engine pass, and a
         * mailbox writer that wrote before seeing the sleeper count is seen
         * by the look (glex_notify).  The spin above never reads the bell:
         * its line stays with the nodes that ring it. */
        uint32_t token = glex_host_token(f);
        atomic_fetch_add(&n->host_sleepers, 1);
        atomic_thread_fence(memory_order_seq_cst);
        if (drive && glex_progress(f)) {
            atomic_fetch_sub(&n->host_sleepers, 1);
            moved = 1;
            continue;
        }
        int ready = done(arg);
        if (!ready) {
            glex_wire_unwatched(f); /* nobody reads the fabric in glex_progress meanwhile */
            glex_host_sleep(f, token, left_ms > 20 ? 20 : (int)left_ms);
        }
        atomic_fetch_sub(&n->host_sleepers, 1);
        if (ready)
            break;
    }
    if (drive)
        glex_host_wait_end(f);
    if (f->p.vtime) /* waiting is not the host's compute (GLEX_VTIME_COMPUTE) */
        glex_vt_waited(f, glex_now_ns() - start);
    return rc;
}
