/* glex_emu_bell.c - the node's bells: the doorbell (packets, credits, posts:
 * the engine's) and the host bell (the host's own, rung alone by a
 * mailbox writer), with the tokens and sleeps that pair with them, and
 * the spin/yield budgets of a waiting host.  Below the engine and the wait
 * loop (glex_emu_wait.c): it calls neither. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The fence between a waker's write and its look at a sleeper count, and
 * the one between a sleeper's count and its last look at the condition,
 * must order a store before a load on both sides (each sees the other's
 * write, or the sleeper sees the waker's).  A locked instruction on every
 * message would make the sender wait for its last packet's line to leave
 * its core, so where the processes have a CPU each (a sleep is rare, and
 * a message's latency the user's measure) and the kernel has the
 * asymmetric barrier, the sleeper, about to sleep anyway, pays for both:
 * its membarrier runs a full barrier on every thread of every process
 * registered here, and the waker's fence is only the compiler's.  With
 * more processes than CPUs processes sleep all the time, and each
 * membarrier interrupts the other CPUs (in this VM: a 64-rank allreduce
 * 2.5 ms with plain fences, 6.7 with membarriers): both sides fence. */
static int bell_registered; /* this process: a membarrier's target */
static pthread_once_t bell_once = PTHREAD_ONCE_INIT;

static long membarrier_cmd(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0, 0);
}

static void bell_register_once(void)
{
    long q = membarrier_cmd(MEMBARRIER_CMD_QUERY);
    bell_registered = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                      membarrier_cmd(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

static uint32_t per_cpu_here(const glex_fabric_t *f);

void glex_bell_setup(glex_fabric_t *f)
{
    /* before the fabric connects (machine_nodes unset: the job's nodes):
     * every process of the job on this host decides alike */
    f->bell_asym = per_cpu_here(f) <= 1;
    if (f->bell_asym)
        pthread_once(&bell_once, bell_register_once);
    f->bell_light = f->bell_asym && bell_registered;
}

void glex_waker_fence(const glex_fabric_t *f)
{
    if (f->bell_light)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

void glex_sleeper_fence(const glex_fabric_t *f)
{
    /* a process that could not register still fences its peers' wakers */
    if (!f->bell_asym || membarrier_cmd(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}

/* a node of another host is rung by its own process when it applies what
 * came over the fabric (glex_emu_wire.c) */
void glex_ring_doorbell(glex_fabric_t *f, uint32_t node)
{
    if (glex_remote(f, node))
        return;
    glex_node_shm_t *n = glex_node_shm(f, node);
    atomic_fetch_add(&n->doorbell, 1);
    if (atomic_load(&n->sleepers))
        glex_futex_wake(&n->doorbell, INT_MAX, true);
}

/* A packet's ring.  Where the processes have a CPU each, the bells are
 * bumped on every packet (a sleeper reads its token before it counts
 * itself, and the engine thread polls the doorbell without counting).
 * Where processes share CPUs, several nodes ring one node from both CPUs,
 * and each locked add took the bell's line from the last ringer: there a
 * bell is bumped only while someone is counted on it (a host asleep, or
 * the engine thread watching the doorbell: glex_doorbell_watch).  The
 * ringer's fence orders its packet before its look at the counts, as the
 * counter's fence orders its count before its last look at the packets:
 * either that look finds the packet or the ringer sees the count and
 * bumps a bell whose token was read before it. */
void glex_ring(glex_fabric_t *f, uint32_t node)
{
    if (!glex_bells_counted(f)) {
        glex_ring_doorbell(f, node);
        glex_wake_host(f, node);
        return;
    }
    if (glex_remote(f, node))
        return;
    glex_node_shm_t *n = glex_node_shm(f, node);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&n->sleepers, memory_order_relaxed) ||
        atomic_load_explicit(&n->watchers, memory_order_relaxed))
        glex_ring_doorbell(f, node);
    if (atomic_load_explicit(&n->host_sleepers, memory_order_relaxed))
        glex_wake_host(f, node);
}

/* where the processes share CPUs: both sides fence (glex_bell_setup) */
int glex_bells_counted(const glex_fabric_t *f) { return !f->bell_light; }

void glex_doorbell_watch(glex_fabric_t *f, int on)
{
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    if (on) {
        atomic_fetch_add(&n->watchers, 1);
        glex_sleeper_fence(f);
    } else {
        atomic_fetch_sub(&n->watchers, 1);
    }
}

/* The host's own bell: a mailbox writer wakes the host it wrote for
 * without waking that process's engine thread, which has nothing to do. */
void glex_wake_host(glex_fabric_t *f, uint32_t node)
{
    if (glex_remote(f, node))
        return;
    glex_node_shm_t *n = glex_node_shm(f, node);
    atomic_fetch_add(&n->hostbell, 1);
    if (atomic_load(&n->host_sleepers))
        glex_futex_wake(&n->hostbell, INT_MAX, true);
}

uint32_t glex_host_token(const glex_fabric_t *f)
{
    return atomic_load(&glex_node_shm(f, f->node)->hostbell);
}

void glex_host_sleep(glex_fabric_t *f, uint32_t token, int timeout_ms)
{
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    if (atomic_load(&n->hostbell) == token)
        glex_futex_wait(&n->hostbell, token, timeout_ms, true);
}

uint32_t glex_wait_token(const glex_fabric_t *f)
{
    return atomic_load(&glex_node_shm(f, f->node)->doorbell);
}

int glex_wait(glex_fabric_t *f, uint32_t token, int timeout_ms)
{
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    atomic_fetch_add(&n->sleepers, 1);
    if (atomic_load(&n->doorbell) == token)
        glex_futex_wait(&n->doorbell, token, timeout_ms, true);
    atomic_fetch_sub(&n->sleepers, 1);
    return GLEX_OK;
}

int glex_host_asleep(glex_fabric_t *f, uint32_t node)
{
    /* pairs with glex_sleeper_fence in glex_wait_until between counting
     * itself as a sleeper and its last look at the condition */
    glex_waker_fence(f);
    return atomic_load_explicit(&glex_node_shm(f, node)->host_sleepers, memory_order_relaxed) != 0;
}

void glex_notify(glex_fabric_t *f, uint32_t node)
{
    if (glex_host_asleep(f, node))
        glex_wake_host(f, node);
}

/* this machine's online CPUs (0: unknown) */
static long online_cpus(void)
{
    /* sysconf reads /sys on every call: once per process is enough */
    static _Atomic long cpus;
    long ncpu = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (!ncpu) {
        ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        atomic_store_explicit(&cpus, ncpu, memory_order_relaxed);
    }
    return ncpu > 0 ? ncpu : 0;
}

/* n processes per online CPU, rounded up (1 when they fit) */
static uint32_t per_cpu_of(uint32_t n)
{
    long ncpu = online_cpus();
    return ncpu > 0 ? (uint32_t)((n + (uint32_t)ncpu - 1) / (uint32_t)ncpu) : 1;
}

/* the whole job's: what every rank must choose alike (collective algorithms) */
static uint32_t per_cpu(const glex_fabric_t *f)
{
    uint32_t k = atomic_load_explicit(&f->job_per_cpu, memory_order_relaxed);
    return k ? k : per_cpu_of(f->nnodes);
}

/* this machine's: how this process waits (spin, yield, reading the fabric) */
static uint32_t per_cpu_here(const glex_fabric_t *f)
{
    return per_cpu_of(glex_nodes_on_machine(f));
}

int glex_spin_us(const glex_fabric_t *f)
{
    return f->p.spin_us >= 0 ? f->p.spin_us : per_cpu_here(f) > 1 ? 0 : 200;
}

int glex_yield_us(const glex_fabric_t *f)
{
    /* taking turns by sched_yield beats futex wake-ups while a few processes
     * share a core (16 on 2 cores: 0.2 ms against 0.35 ms for an 8-byte
     * allreduce); at 12 per core the two tie (24 on 2 cores: 0.5-0.6 ms
     * each), with more each yield is a trip round a long run queue (32 on 2
     * cores: 1.1-1.7 ms against 0.8-0.9 ms) - doc/performance.md */
    if (f->p.yield_us >= 0)
        return f->p.yield_us;
    uint32_t k = per_cpu_here(f);
    return k > 1 && k <= GLEX_YIELD_MAX_PER_CPU ? 1000 : 0;
}

unsigned glex_procs_per_cpu(const glex_fabric_t *f) { return per_cpu(f); }

unsigned glex_procs_per_cpu_here(const glex_fabric_t *f) { return per_cpu_here(f); }

int glex_fabric_set_job_per_cpu(glex_fabric_t *f, unsigned k)
{
    if (k < 1 || k > f->nnodes)
        return glex_error(GLEX_EINVAL, "processes per CPU %u: allowed 1..%u (the job's nodes)", k,
                          f->nnodes);
    atomic_store_explicit(&f->job_per_cpu, k, memory_order_relaxed);
    return GLEX_OK;
}

unsigned glex_nodes_on_machine(const glex_fabric_t *f)
{
    uint32_t n = atomic_load_explicit(&f->machine_nodes, memory_order_relaxed);
    return n ? n : f->nnodes;
}

/* more nodes on this host than this are not counted one by one: a look
 * would read as many lines (each written by its sleeper) */
#define SPARE_COUNT_MAX 64u

int glex_cpu_to_spare(glex_fabric_t *f, uint32_t except)
{
    unsigned machine = glex_nodes_on_machine(f);
    if (per_cpu_of(machine) <= 1)
        return 1; /* a CPU each */
    uint32_t here = 0, awake = 0;
    for (uint32_t i = 0; i < f->nnodes; i++) {
        if (glex_remote(f, i))
            continue;
        if (++here > SPARE_COUNT_MAX)
            return 0;
        if (i != except &&
            !atomic_load_explicit(&glex_node_shm(f, i)->host_sleepers, memory_order_relaxed))
            awake++;
    }
    /* the processes of other hosts emulated on this machine count awake */
    if (machine > here)
        awake += machine - here;
    return awake < (uint32_t)online_cpus();
}

int glex_node_has_cpu(glex_fabric_t *f, uint32_t node)
{
    if (node >= f->nnodes || glex_remote(f, node))
        return 0; /* not a process of this machine */
    if (per_cpu_of(glex_nodes_on_machine(f)) <= 1)
        return 1;
    if (atomic_load_explicit(&glex_node_shm(f, node)->host_sleepers, memory_order_relaxed))
        return 0;
    return glex_cpu_to_spare(f, node);
}
