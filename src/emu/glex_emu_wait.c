/* glex_emu_wait.c - the host's wait loop: drive the engine inline, poll,
 * yield, then sleep on the host bell until a condition holds.  Above the
 * engine (it calls glex_progress); nothing in the NIC model calls it but the
 * segment's set-up wait. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <sched.h>

/* A collective's wait yields the core this long at most (after its spin)
 * for each process sharing its CPU, while nothing has come since it began
 * idling: 4 ranks on 2 CPUs (200 us), OSU bw between two while the other
 * two wait in a barrier, 8 B - 1 KiB 1.4-3.6x the bandwidth against the
 * full GLEX_YIELD_US (1000 us); allreduce at 4, 8 and 16 ranks and bcast
 * at 4 within noise (7 runs in turn, bench/results/2026-12-04/NOTES.md).
 * Per process: a round of the run queue grows with it, and a barrier
 * member waiting for rank 0's release sees nothing come until then; 200
 * us flat put them to sleep at 16 ranks on 2 CPUs (8 a CPU), each woken
 * by a futex: the barrier 355-466 us, with 800 us 229-327 (Open MPI
 * 186-241; bench/results/2026-12-07/NOTES.md) */
#define STALL_YIELD_NS_PER_PROC 100000ull

/* Wait for done(arg) while driving progress; spins up to GLEX_SPIN_US, polls
 * with sched_yield up to GLEX_YIELD_US more, then blocks.  Both windows count
 * from the last progress this host saw, not from the start of the wait: a
 * long transfer that keeps moving (a pulsed reduction) is never put to sleep
 * between its pulses. */
int glex_wait_until(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms)
{
    return glex_wait_until_flags(f, done, arg, timeout_ms, 0);
}

enum { SLEEP_SLEPT, SLEEP_MOVED, SLEEP_DONE };

/* The last step of a wait: the host bell's count, then count as a sleeping
 * host, then (drive) run the engine once and look at done once more, then
 * sleep until a ring or ms.  A ring after the count ends the sleep; a
 * packet that came before it is taken by this engine pass, and a mailbox
 * writer that wrote before seeing the sleeper count is seen by the look
 * (glex_notify).  A spinning host never reads the bell: its line stays
 * with the nodes that ring it. */
static int sleep_once(glex_fabric_t *f, int (*done)(void *), void *arg, int ms, int drive)
{
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    uint32_t token = glex_host_token(f);
    atomic_fetch_add(&n->host_sleepers, 1);
    glex_sleeper_fence(f); /* pairs with glex_host_asleep's */
    int r = SLEEP_MOVED;
    if (!(drive && glex_progress(f))) {
        int d = done(arg);
        r = d > 0 ? SLEEP_DONE : d < 0 ? SLEEP_MOVED : SLEEP_SLEPT;
    }
    /* done() may have posted (a host-based collective's next step): the
     * engine thread stands back while this host waits, so it runs now, not
     * after the sleep */
    if (r == SLEEP_SLEPT && drive && glex_progress(f))
        r = SLEEP_MOVED;
    if (r == SLEEP_SLEPT) {
        glex_wire_unwatched(f); /* nobody reads the fabric in glex_progress meanwhile */
        glex_eager_give_back(f); /* no pages held back over a sleep */
        glex_host_sleep(f, token, ms);
    }
    atomic_fetch_sub(&n->host_sleepers, 1);
    return r;
}

/* a receive entry or a CQE for the host on one of this process's VPs */
static int host_has_entries(void *arg)
{
    glex_fabric_t *f = arg;
    for (uint32_t v = 0; v < f->p.vps_per_node; v++) {
        const glex_vp_shm_t *s = f->vps[v].shm;
        if (s && (atomic_load_explicit(&s->rq_tail, memory_order_acquire) !=
                      atomic_load_explicit(&s->rq_head, memory_order_relaxed) ||
                  atomic_load_explicit(&s->cq_tail, memory_order_acquire) !=
                      atomic_load_explicit(&s->cq_head, memory_order_relaxed)))
            return 1;
    }
    return 0;
}

/* ... or a CPU of this machine would stand idle: the nap gives this
 * process's core to those that work, and with fewer of them awake than
 * CPUs none needs it.  Looked at after this host counts as asleep
 * (sleep_once): of processes deciding at once, at least one sees the
 * others' counts, so they do not all sleep. */
static int nap_needless(void *arg)
{
    glex_fabric_t *f = arg;
    return host_has_entries(f) || glex_cpu_to_spare(f, f->node);
}

int glex_host_nap(glex_fabric_t *f, int timeout_ms, int if_spare)
{
    if (timeout_ms < 0 || timeout_ms > 1000)
        return glex_error(GLEX_EINVAL, "nap of %d ms: allowed 0..1000", timeout_ms);
    int (*over)(void *) = if_spare ? host_has_entries : nap_needless;
    return sleep_once(f, over, f, timeout_ms, 1) == SLEEP_SLEPT ? 0 : 1;
}

int glex_wait_until_flags(glex_fabric_t *f, int (*done)(void *), void *arg, int timeout_ms,
                          unsigned flags)
{
    int d = done(arg);
    if (d > 0) /* the common case of a fast call: no clock, no bookkeeping */
        return GLEX_OK;
    /* the clock and the windows are read at the first idle look: a call
     * that the engine passes finish needs neither (in virtual time the
     * start counts: the wait is not the host's compute) */
    uint64_t start = f->p.vtime ? glex_now_ns() : 0, idle = 0;
    uint64_t end = 0; /* 0 until the first idle look sets the windows */
    uint64_t spin_ns = 0, yield_ns = 0, stall_ns = 0;
    int moved = d < 0;
    int came = 0; /* progress after the first idle look */
    unsigned looks = 0;
    int rc = GLEX_OK;
    /* without an engine thread this host is the only driver of progress */
    int drive = !(flags & GLEX_WAIT_NO_ENGINE) || !glex_engine_has_thread(f);
    if (drive)
        glex_host_wait_begin(f);
    for (;;) { /* a look after every engine pass */
        int worked = drive && glex_progress(f);
        if ((d = done(arg)) > 0)
            break;
        if (worked || d < 0) { /* the engine or done() took work: look again */
            moved = 1;
            came |= end != 0;
            continue;
        }
        if (!end) {
            if (!start)
                start = glex_now_ns();
            idle = start;
            spin_ns = (uint64_t)glex_spin_us(f) * 1000ull;
            yield_ns = spin_ns + (uint64_t)glex_yield_us(f) * 1000ull;
            stall_ns = spin_ns + STALL_YIELD_NS_PER_PROC * glex_procs_per_cpu_here(f);
            if (stall_ns > yield_ns)
                stall_ns = yield_ns;
            end = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000ull;
        }
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
        /* let the processes sharing this core run; a wait that nothing has
         * moved since it began idling (peers busy elsewhere: ranks in a
         * barrier while others exchange messages) yields only stall_ns of
         * it: each yield takes a share of a core from the processes that
         * work */
        if (now - idle < (came ? yield_ns : stall_ns)) {
            sched_yield();
            continue;
        }
        uint64_t left_ms = (end - now) / 1000000ull + 1;
        int r = sleep_once(f, done, arg, left_ms > 20 ? 20 : (int)left_ms, drive);
        if (r == SLEEP_MOVED)
            moved = 1;
        else if (r == SLEEP_DONE)
            break;
    }
    if (drive)
        glex_host_wait_end(f);
    if (f->p.vtime) /* waiting is not the host's compute (GLEX_VTIME_COMPUTE) */
        glex_vt_waited(f, glex_now_ns() - start);
    return rc;
}
