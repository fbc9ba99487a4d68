/* glex_emu_region.c - host memory a process exports for its peers to map:
 * the model of a NIC whose peers reach registered memory by load and store
 * (XPMEM-like on one node), where RDMA (cross-memory attach) would copy
 * through the kernel at about half the speed of memcpy.  The memory is a
 * memfd; a peer maps it by the owner's descriptor number, fetched with
 * pidfd_getfd under the same permission check as cross-memory attach.
 * Where that is not to be had (older kernel, no permission), callers keep
 * using RDMA. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd) && defined(MFD_CLOEXEC)
#define GLEX_HAVE_REGIONS 1
#endif

int glex_region_alloc(glex_region_t *r, size_t bytes)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
#ifdef GLEX_HAVE_REGIONS
    if (!bytes)
        return glex_error(GLEX_EINVAL, "region of 0 bytes: allowed 1..SIZE_MAX");
    int fd = memfd_create("glex-region", MFD_CLOEXEC);
    if (fd < 0)
        return glex_error(GLEX_ESYS, "region of %zu bytes: memfd_create: %s", bytes,
                          strerror(errno));
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        return glex_error(GLEX_ENOMEM, "region of %zu bytes: %s", bytes, strerror(e));
    }
    static _Atomic uint64_t ids;
    r->base = p;
    r->bytes = bytes;
    r->fd = fd;
    r->id = atomic_fetch_add(&ids, 1) + 1;
    return GLEX_OK;
#else
    (void)bytes;
    return glex_error(GLEX_ENOTSUP, "exported regions need memfd_create and pidfd_getfd");
#endif
}

void glex_region_prefault(glex_region_t *r)
{
    if (!r->base)
        return;
    (void)madvise(r->base, r->bytes, MADV_POPULATE_WRITE);
    glex_touch_pages(r->base, r->bytes);
}

void glex_region_free(glex_region_t *r)
{
    if (r->base) { /* a zeroed one holds nothing (fd 0 is not its) */
        munmap(r->base, r->bytes);
        close(r->fd);
    }
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

void glex_rmap_drop(glex_rmap_t *m)
{
    if (m->base)
        munmap((void *)m->base, m->bytes);
    memset(m, 0, sizeof *m);
}

static int rmap_get(glex_fabric_t *f, uint32_t node, int32_t fd, uint64_t id, size_t bytes,
                    glex_rmap_t *m, int prot)
{
    if (node >= f->nnodes)
        return glex_error(GLEX_EINVAL, "mapping a region of node %u: allowed 0..%u", node,
                          f->nnodes - 1);
    if (glex_remote(f, node))
        return glex_error(GLEX_ENOTSUP, "mapping a region of node %u: it is on host %u, this "
                          "process on host %u (regions are mapped within one host)", node,
                          f->host_of[node], f->host);
    pid_t pid = atomic_load(&glex_node_shm(f, node)->pid);
    if (m->base && m->pid == pid && m->node == node && m->fd == fd && m->id == id &&
        m->bytes >= bytes)
        return GLEX_OK; /* mapped already */
    glex_rmap_drop(m);
#ifdef GLEX_HAVE_REGIONS
    if (pid <= 0)
        return glex_error(GLEX_EDEAD, "mapping a region of node %u: its process is gone", node);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return glex_error(errno == ESRCH ? GLEX_EDEAD : GLEX_ESYS,
                          "mapping a region of node %u (pid %d): pidfd_open: %s", node, (int)pid,
                          strerror(errno));
    int lfd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(pidfd);
    if (lfd < 0)
        return glex_error(GLEX_ESYS, "mapping a region of node %u (pid %d, descriptor %d): "
                          "pidfd_getfd: %s", node, (int)pid, (int)fd, strerror(e));
    struct stat st = { 0 };
    void *p = MAP_FAILED;
    if (fstat(lfd, &st) == 0 && (size_t)st.st_size >= bytes && bytes)
        p = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED | MAP_POPULATE, lfd, 0);
    e = errno;
    close(lfd);
    if (p == MAP_FAILED)
        return glex_error(GLEX_ESYS, "mapping a region of node %u (pid %d, descriptor %d, "
                          "%zu bytes wanted): %s", node, (int)pid, (int)fd, bytes,
                          (size_t)st.st_size < bytes ? "it is smaller" : strerror(e));
    m->base = p;
    m->bytes = (size_t)st.st_size;
    m->node = node;
    m->fd = fd;
    m->pid = pid;
    m->id = id;
    return GLEX_OK;
#else
    (void)bytes;
    (void)fd;
    (void)id;
    (void)prot;
    return glex_error(GLEX_ENOTSUP, "exported regions need memfd_create and pidfd_getfd");
#endif
}

int glex_rmap_get(glex_fabric_t *f, uint32_t node, int32_t fd, uint64_t id, size_t bytes,
                  glex_rmap_t *m)
{
    return rmap_get(f, node, fd, id, bytes, m, PROT_READ);
}

/* ------------------------------------------- memory registered for DMA */

int glex_region_publish(glex_fabric_t *f, const glex_region_t *r)
{
    if (!r || !r->base || r->fd < 0)
        return glex_error(GLEX_EINVAL, "publishing a region that holds no memory");
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    for (uint32_t i = 0; i < GLEX_PUBLISH_MAX; i++) {
        if (atomic_load_explicit(&n->pub[i].id, memory_order_relaxed))
            continue;
        n->pub[i].fd = r->fd;
        n->pub[i].base = (uint64_t)(uintptr_t)r->base;
        n->pub[i].bytes = r->bytes;
        atomic_store_explicit(&n->pub[i].id, r->id, memory_order_release);
        return GLEX_OK;
    }
    return glex_error(GLEX_EBUSY, "publishing a region: node %u has %u published already "
                      "(allowed %u)", f->node, GLEX_PUBLISH_MAX, GLEX_PUBLISH_MAX);
}

void glex_region_withdraw(glex_fabric_t *f, const glex_region_t *r)
{
    glex_node_shm_t *n = glex_node_shm(f, f->node);
    for (uint32_t i = 0; r && r->id && i < GLEX_PUBLISH_MAX; i++)
        if (atomic_load_explicit(&n->pub[i].id, memory_order_relaxed) == r->id)
            atomic_store_explicit(&n->pub[i].id, 0, memory_order_release);
}

int glex_region_published(glex_fabric_t *f, uint32_t node, uint32_t index, uint64_t *base,
                          uint64_t *bytes)
{
    if (node >= f->nnodes || index >= GLEX_PUBLISH_MAX || glex_remote(f, node))
        return GLEX_ENOENT;
    glex_node_shm_t *n = glex_node_shm(f, node);
    if (!atomic_load_explicit(&n->pub[index].id, memory_order_acquire))
        return GLEX_ENOENT;
    *base = n->pub[index].base;
    *bytes = n->pub[index].bytes;
    return GLEX_OK;
}

void *glex_dma_window(glex_fabric_t *f, uint32_t node, uint64_t addr, uint64_t len)
{
    glex_node_shm_t *n = glex_node_shm(f, node);
    for (uint32_t i = 0; i < GLEX_PUBLISH_MAX; i++) {
        uint64_t id = atomic_load_explicit(&n->pub[i].id, memory_order_acquire);
        uint64_t base = n->pub[i].base, bytes = n->pub[i].bytes;
        if (!id || addr < base || addr - base > bytes || len > bytes - (addr - base))
            continue;
        if (!f->dma_maps) {
            f->dma_maps = calloc((size_t)f->nnodes * GLEX_PUBLISH_MAX, sizeof *f->dma_maps);
            if (!f->dma_maps)
                return NULL;
        }
        glex_rmap_t *m = &f->dma_maps[(size_t)node * GLEX_PUBLISH_MAX + i];
        int32_t fd = n->pub[i].fd, pid = atomic_load_explicit(&n->pid, memory_order_relaxed);
        /* a region that could not be mapped (pidfd_getfd missing before
         * Linux 5.6, refused by a seccomp filter or by ptrace rules, or
         * under valgrind) is not tried again for every transfer: each try
         * costs two system calls and an error text nobody reads */
        if (m->failed && m->pid == pid && m->node == node && m->fd == fd && m->id == id)
            return NULL;
        if (rmap_get(f, node, fd, id, bytes, m, PROT_READ | PROT_WRITE)) {
            *m = (glex_rmap_t){ .node = node, .fd = fd, .pid = pid, .id = id, .failed = 1 };
            return NULL; /* not to be mapped: cross-memory attach */
        }
        /* published again since this look: the mapping is of what was read */
        if (atomic_load_explicit(&n->pub[i].id, memory_order_acquire) != id)
            return NULL;
        return (uint8_t *)(uintptr_t)m->base + (addr - base);
    }
    return NULL;
}

void glex_dma_unmap_all(glex_fabric_t *f)
{
    if (!f->dma_maps)
        return;
    for (size_t i = 0; i < (size_t)f->nnodes * GLEX_PUBLISH_MAX; i++)
        glex_rmap_drop(&f->dma_maps[i]);
    free(f->dma_maps);
    f->dma_maps = NULL;
}
