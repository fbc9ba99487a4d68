/* glex_emu_mbox.c - mailboxes (per-node slot areas at fixed places of the
 * segment, claimed under a key) and RDMA read/write between the processes of
 * a job with cross-memory attach: the building blocks of the direct path. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define GLEX_HAVE_MEMCHECK 1
#endif
#endif

static glex_mbox_t *mbox_at(const glex_fabric_t *f, uint32_t node, uint32_t i)
{
    return (glex_mbox_t *)(f->base + f->hdr->off_mboxes +
                           ((uint64_t)node * f->p.mailboxes + i) * f->hdr->mbox_stride);
}

int glex_mbox_claim(glex_fabric_t *f, uint64_t key, uint32_t index, glex_mbox_t **out)
{
    *out = NULL;
    for (uint32_t i = 0; i < f->p.mailboxes; i++) {
        glex_mbox_t *m = mbox_at(f, f->node, i);
        uint32_t free_state = 0;
        if (!atomic_compare_exchange_strong(&m->state, &free_state, 1))
            continue;
        m->key = key;
        m->index = index;
        memset(m + 1, 0, glex_mbox_area_bytes(&f->p));
        atomic_store_explicit(&m->state, 2, memory_order_release);
        *out = m;
        return GLEX_OK;
    }
    return glex_error(GLEX_EBUSY, "all %u mailboxes of node %u are in use (GLEX_MAILBOXES, "
                      "allowed 0..1024)", f->p.mailboxes, f->node);
}

void glex_mbox_release(glex_fabric_t *f, glex_mbox_t *m)
{
    (void)f;
    if (m)
        atomic_store_explicit(&m->state, 0, memory_order_release);
}

glex_mbox_t *glex_mbox_find(glex_fabric_t *f, uint32_t node, uint64_t key, uint32_t index)
{
    if (node >= f->nnodes)
        return NULL;
    for (uint32_t i = 0; i < f->p.mailboxes; i++) {
        glex_mbox_t *m = mbox_at(f, node, i);
        if (atomic_load_explicit(&m->state, memory_order_acquire) == 2 && m->key == key &&
            m->index == index)
            return m;
    }
    return NULL;
}

void *glex_mbox_area(glex_mbox_t *m) { return m + 1; }

int glex_mbox_holds(const void *area, uint64_t key, uint32_t index)
{
    const glex_mbox_t *m = (const glex_mbox_t *)area - 1;
    return atomic_load_explicit(&m->state, memory_order_acquire) == 2 && m->key == key &&
           m->index == index;
}

size_t glex_mbox_bytes(const glex_fabric_t *f) { return glex_mbox_area_bytes(&f->p); }

int glex_host_asleep(glex_fabric_t *f, uint32_t node)
{
    /* pairs with the fence in glex_wait_until between counting itself as a
     * sleeper and its last look at the condition */
    atomic_thread_fence(memory_order_seq_cst);
    return atomic_load_explicit(&glex_node_shm(f, node)->host_sleepers, memory_order_relaxed) != 0;
}

void glex_notify(glex_fabric_t *f, uint32_t node)
{
    if (glex_host_asleep(f, node))
        glex_wake_host(f, node);
}

/* processes per online CPU, rounded up (1 when they fit) */
static uint32_t per_cpu(const glex_fabric_t *f)
{
    /* sysconf reads /sys on every call: once per process is enough */
    static _Atomic long cpus;
    long ncpu = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (!ncpu) {
        ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        atomic_store_explicit(&cpus, ncpu, memory_order_relaxed);
    }
    return ncpu > 0 ? (uint32_t)((f->nnodes + (uint32_t)ncpu - 1) / (uint32_t)ncpu) : 1;
}

int glex_spin_us(const glex_fabric_t *f)
{
    return f->p.spin_us >= 0 ? f->p.spin_us : per_cpu(f) > 1 ? 0 : 50;
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
    uint32_t k = per_cpu(f);
    return k > 1 && k <= GLEX_YIELD_MAX_PER_CPU ? 1000 : 0;
}

unsigned glex_procs_per_cpu(const glex_fabric_t *f) { return per_cpu(f); }

size_t glex_rdma_threshold(const glex_fabric_t *f)
{
    /* measured (doc/performance.md): with a core per process RDMA, one copy
     * per byte split over both sides, beats the mailbox's two copies from
     * 16 KiB; when processes share cores the mailbox (no system calls, no
     * waiting for the peer to map pages) wins up to its full 64 KiB */
    if (f->p.rdma_kb >= 0)
        return (size_t)f->p.rdma_kb * 1024u;
    return per_cpu(f) <= 1 ? 8192u : SIZE_MAX;
}

size_t glex_stage_limit(const glex_fabric_t *f)
{
    /* measured (doc/performance.md, staged large reduce): the senders'
     * pipelined copy-out is 4-17x faster at 8-16 processes on 2 cores,
     * 1.3-2.3x at 4, even or better with a core per process.  The cap
     * bounds the memory: two stages per group at most */
    if (f->p.stage_kb >= 0)
        return (size_t)f->p.stage_kb * 1024u;
    return (size_t)16u << 20;
}

/* ---- RDMA by cross-memory attach ---- */

void glex_rdma_landed(void *local, size_t len)
{
#ifdef GLEX_HAVE_MEMCHECK
    (void)VALGRIND_MAKE_MEM_DEFINED(local, len);
#else
    (void)local;
    (void)len;
#endif
}

static int rdma(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, size_t len,
                int write)
{
    if (node >= f->nnodes)
        return glex_error(GLEX_EINVAL, "RDMA to node %u: allowed 0..%u", node, f->nnodes - 1);
    if (!len)
        return GLEX_OK;
    if (node == f->node) { /* this process: a plain copy */
        if (write)
            memmove((void *)(uintptr_t)remote, local, len);
        else
            memmove(local, (const void *)(uintptr_t)remote, len);
        return GLEX_OK;
    }
    pid_t pid = atomic_load(&glex_node_shm(f, node)->pid);
    size_t done = 0;
    while (done < len) {
        struct iovec l = { (char *)local + done, len - done };
        struct iovec r = { (void *)(uintptr_t)(remote + done), len - done };
        ssize_t n;
        if (write) {
            /* a copy carries undefined bytes along (the gap in a
             * double+int pair): under valgrind that is no error here,
             * as it is none for memcpy */
#ifdef GLEX_HAVE_MEMCHECK
            VALGRIND_DISABLE_ERROR_REPORTING;
#endif
            n = process_vm_writev(pid, &l, 1, &r, 1, 0);
#ifdef GLEX_HAVE_MEMCHECK
            VALGRIND_ENABLE_ERROR_REPORTING;
#endif
        } else {
            n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        }
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        int e = n < 0 ? errno : EFAULT;
        if (e == EINTR)
            continue;
        if (e == ESRCH || pid <= 0)
            return glex_error(GLEX_EDEAD, "RDMA %s node %u: its process %d is gone",
                              write ? "write to" : "read from", node, (int)pid);
        return glex_error(e == EFAULT ? GLEX_EINVAL : GLEX_ESYS,
                          "RDMA %s node %u (pid %d), %zu bytes at %#llx: %s%s",
                          write ? "write to" : "read from", node, (int)pid, len - done,
                          (unsigned long long)(remote + done), strerror(e),
                          e == EPERM ? " (cross-memory attach is not permitted here: see "
                                       "kernel.yama.ptrace_scope, or choose another algorithm)"
                                     : "");
    }
    return GLEX_OK;
}

int glex_rdma_read(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, size_t len)
{
    return rdma(f, node, local, remote, len, 0);
}

int glex_rdma_write(glex_fabric_t *f, uint32_t node, uint64_t remote, const void *local,
                    size_t len)
{
    return rdma(f, node, (void *)(uintptr_t)local, remote, len, 1);
}
