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

int glex_rmap_get(glex_fabric_t *f, uint32_t node, int32_t fd, uint64_t id, size_t bytes,
                  glex_rmap_t *m)
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
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, lfd, 0);
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
    return glex_error(GLEX_ENOTSUP, "exported regions need memfd_create and pidfd_getfd");
#endif
}
