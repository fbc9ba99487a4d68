/* glex_emu_mbox.c - mailboxes (per-node slot areas at fixed places of the
 * segment, claimed under a key) and RDMA read/write between the processes of
 * a job with cross-memory attach: the host-memory paths of the NIC. */
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
            glex_move((void *)(uintptr_t)remote, local, len);
        else
            glex_move(local, (const void *)(uintptr_t)remote, len);
        return GLEX_OK;
    }
    if (glex_remote(f, node)) /* the engine's DMA goes over the fabric (glex_emu_wire_ops.c) */
        return glex_error(GLEX_ENOTSUP, "cross-memory RDMA %s node %u on host %u: only the "
                          "NIC's descriptors reach another host", write ? "to" : "from", node,
                          f->host_of[node]);
    /* memory the peer registered for its NIC (glex_region_publish): in
     * place, through a mapping, as a NIC's DMA reads and writes it */
    void *win = glex_dma_window(f, node, remote, len);
    if (win) {
        if (write)
            glex_copy(win, local, len);
        else
            glex_copy(local, win, len);
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
