/* glex_progress.c - the netmod's progress loop: the NIC engine inline, the
 * active-message receive queue (glex_am.c), the nonblocking collectives in
 * flight (glex_coll.c), a yield (or a nap) when nothing happened, and the failure
 * detector of an idle loop.  Nothing in the netmod calls back into it. */
#include "glex_impl.h"
#include <sched.h>
#include <stdio.h>

/* progress calls without work before yielding the core */
#define IDLE_YIELD 64

/* an idle loop at now: nothing has arrived since idle_since_ns (0: until now) */
static int watch_peers(uint64_t now)
{
    MPIDI_GLEX_global_t *g = &MPIDI_GLEX_global;
    if (!g->idle_since_ns) {
        g->idle_since_ns = now;
        return MPI_SUCCESS;
    }
    uint64_t timeout = glex_fabric_params(g->fabric)->timeout_ms * 1000000ull;
    if (now - g->idle_since_ns < timeout || now < g->next_peer_check_ns)
        return MPI_SUCCESS;
    g->next_peer_check_ns = now + (timeout < 1000000000ull ? timeout : 1000000000ull);
    int rc = glex_fabric_check_peers(g->fabric);
    if (rc == GLEX_OK)
        return MPI_SUCCESS;
    char msg[512];
    snprintf(msg, sizeof msg, "ch4:glex: nothing arrived for GLEX_TIMEOUT=%.3f s and %s",
             timeout / 1e9, glex_last_error());
    return MPIDI_GLEX_error(rc, msg);
}

/* the longest nap of an idle loop: a task parked on a peer's full queue
 * retries, and the failure detector looks, between naps */
#define NAP_MS 4
/* idle progress calls this close together are a wait loop's */
#define TIGHT_NS 4000
/* idle this long, a process naps even when a CPU of this machine would
 * otherwise stand idle (below it, only while the others take every CPU) */
#define SPARE_NAP_NS 1000000ull

/* Waiting for a rendezvous send's ACK while the others of this machine
 * take every CPU: the receiver is copying (tens of us and more) and a CPU
 * this process polls on is one copy fewer, so it naps at once, woken by
 * the ACK (OSU mbw_mr at 4 processes on 2 CPUs, 128 KiB - 4 MiB: 8.3-13.3
 * GB/s polling GLEX_NAP_US first, NOTES 2026-11-29).  With a CPU to spare
 * it keeps polling: the receiver may offer it half the copy (glex_am.c). */
static int lmt_wait_long(glex_fabric_t * f)
{
    return MPIDI_GLEX_global.lmt_waiting && !glex_cpu_to_spare(f, glex_fabric_node(f));
}

/* An idle loop's turn, every IDLE_YIELD progress calls without work: give
 * the core to the other processes of this machine.  A process that shares
 * its core, idle for GLEX_NAP_US, sleeps on its host bell instead (any
 * packet, message or CQE for it rings it), so that while it waits it takes
 * no share of the core from those that work: a yielding process keeps its
 * fair share, and two waiting on one core leave the workers one core (OSU
 * mbw_mr 4 MiB at 4 processes on 2 cores: 5 GB/s yielding, 8 napping).  Not
 * with MPI_THREAD_MULTIPLE (MPICH holds its lock around this call), nor in
 * a loop of MPI_Test calls with the program's work between them.
 * A loop of MPI_Test calls with a little of the program's work between
 * them (HPCC's RandomAccess: an update between MPI_Testany calls) cannot be
 * told from a wait by its pace, and when every process of such a program
 * napped, none worked (RandomAccess, 4 processes on 2 CPUs: 0.0007 GUP/s,
 * 0.02 never napping).  So idleness counts from the program's last post
 * too (such a program posts sends and receives as it goes), and until
 * SPARE_NAP_NS of it a process naps only while the others awake on this
 * machine take every CPU. */
static int idle_turn(void)
{
    MPIDI_GLEX_global_t *g = &MPIDI_GLEX_global;
    glex_fabric_t *f = g->fabric;
    uint64_t now = glex_now_ns();
    int nap = 0, if_spare = 0;
    unsigned per_cpu = glex_procs_per_cpu_here(f);
    /* a process with a CPU of its own keeps polling for GLEX_SPIN_US of
     * idleness before it yields: a sched_yield costs 1.2 us in a VM here,
     * and a message that arrives during one waits for it (osu_latency) */
    if (per_cpu <= 1 && (!g->idle_since_ns ||
                         now - g->idle_since_ns < (uint64_t) glex_spin_us(f) * 1000u))
        return watch_peers(now);
    if (per_cpu > 1 && MPIR_ThreadInfo.thread_provided != MPI_THREAD_MULTIPLE) {
        /* only in a wait: the idle calls since the last turn came back to
         * back (MPICH's wait loop, or MPI_Test with under TIGHT_NS between
         * calls), not between pieces of the program's own work */
        int tight = g->turn_end_ns && now - g->turn_end_ns < (uint64_t) IDLE_YIELD * TIGHT_NS;
        /* a wait: nothing arrived and the program posted nothing since */
        if (g->posted || !g->wait_since_ns) {
            g->posted = 0;
            g->wait_since_ns = now;
        }
        uint64_t idle = now - g->wait_since_ns;
        nap = tight && (idle >= g->nap_ns || lmt_wait_long(f));
        if_spare = idle >= SPARE_NAP_NS;
    }
    /* a nap not taken is a yield */
    if (!nap || glex_host_nap(f, NAP_MS, if_spare) != 0)
        sched_yield();
    g->turn_end_ns = glex_now_ns();
    return watch_peers(g->turn_end_ns);
}

int MPIDI_GLEX_progress(int vci, int blocking)
{
    (void) vci, (void) blocking;
    int mpi_errno = MPI_SUCCESS, work = 0, am_work = 0, nbc_work = 0;

    work = glex_progress(MPIDI_GLEX_global.fabric) > 0;
    mpi_errno = MPIDI_GLEX_am_poll(&am_work);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_GLEX_nbc_progress(&nbc_work);
    MPIR_ERR_CHECK(mpi_errno);

    /* MPICH polls progress in a loop while it waits; when nothing arrives,
     * give the core to the other processes of this oversubscribed node */
    /* the failure detector reads the clock then too, not on every call */
    if (work || am_work || nbc_work) {
        MPIDI_GLEX_global.am_idle = 0;
        MPIDI_GLEX_global.idle_since_ns = 0;
        MPIDI_GLEX_global.wait_since_ns = 0;
        MPIDI_GLEX_global.turn_end_ns = 0;
    } else if (++MPIDI_GLEX_global.am_idle >= IDLE_YIELD) {
        MPIDI_GLEX_global.am_idle = 0;
        mpi_errno = idle_turn();
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
