/* glex_emu_fabric.c - the job's shared-memory segment: create/attach/detach,
 * layout, node slots, doorbells and JobID agreement. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define ALIGN(x, a) (((x) + (a)-1) / (a) * (a))

static void layout(glex_shm_header_t *h, const glex_params_t *p, uint32_t nnodes,
                   const glex_vtime_model_t *vtm)
{
    uint64_t units = (uint64_t)nnodes * p->units;
    uint64_t nvps = (uint64_t)nnodes * p->vps_per_node;
    uint64_t off = ALIGN(sizeof(glex_shm_header_t), 4096);
    /* a slot: header, inline payload, and with GLEX_VTIME the packet's
     * virtual send time in its last 8 bytes (otherwise a packet of 48 bytes
     * is one cache line) */
    h->entry_size = ALIGN(sizeof(glex_pkt_hdr_t) + p->inline_max + (p->vtime ? 8u : 0u), 64);
    /* one byte a bucket of the packet buffer (its over count), as many bytes as
     * a bit a slot would take */
    h->table_words = (p->table_slots + 63) / 64;
    h->ram_pages = p->unit_buffer_kb * 1024u / GLEX_PAGE;
    h->jobs_per_unit = glex_jobs_per_unit(p);
    /* a quarter of the RAM in guaranteed areas (at least a page each: the
     * configuration check asks for half a page), the rest pooled */
    h->guar_pages = (h->ram_pages / 4) / (h->jobs_per_unit * p->vps_per_node);
    if (!h->guar_pages)
        h->guar_pages = 1;
    h->pool_first_page = h->guar_pages * h->jobs_per_unit * p->vps_per_node;
    /* the eager pages end the RAM when the pool keeps at least as many */
    h->eager_pages = h->ram_pages - h->pool_first_page >= 2 * GLEX_EAGER_PAGES ? GLEX_EAGER_PAGES : 0;
    h->eager_first_page = h->ram_pages - h->eager_pages;
    uint32_t pool_words = (h->ram_pages - h->pool_first_page + 63) / 64;
    h->off_nodes = off;
    off = ALIGN(off + nnodes * sizeof(glex_node_shm_t), 64);
    h->off_units = off;
    off = ALIGN(off + units * sizeof(glex_unit_shm_t), 64);
    /* ... then the CP counters: one word per (JobID slot of the unit, VP) */
    h->unit_stride_bitmap = ALIGN((h->table_words + pool_words) * 8ull, 64) +
                            ALIGN((uint64_t)h->jobs_per_unit * p->vps_per_node * 4u, 64);
    h->off_cp_counters = ALIGN((h->table_words + pool_words) * 8ull, 64);
    h->off_bitmaps = off;
    off = ALIGN(off + units * h->unit_stride_bitmap, 4096);
    h->unit_stride_table = ALIGN((uint64_t)p->table_slots * h->entry_size, 4096);
    h->off_tables = off;
    off += units * h->unit_stride_table;
    h->unit_stride_ram = ALIGN(p->unit_buffer_kb * 1024ull, 4096);
    h->off_ram = off;
    off += units * h->unit_stride_ram;
    h->off_vps = off;
    off = ALIGN(off + nvps * sizeof(glex_vp_shm_t), 4096);
    /* DQ, CQ, RQ (from a cache line), then the DQ entries' virtual post
     * times (GLEX_VTIME) */
    h->vp_ring_stride = ALIGN((uint64_t)p->dq_depth * (sizeof(glex_desc_t) + 8u) +
                                  (uint64_t)p->cq_depth *
                                      (sizeof(glex_cqe_t) + sizeof(glex_rq_slot_t)) + 64u,
                              4096);
    h->off_rings = off;
    off += nvps * h->vp_ring_stride;
    h->mbox_stride = glex_mbox_stride(p);
    h->off_mboxes = off;
    off += (uint64_t)nnodes * p->mailboxes * h->mbox_stride;
    off = ALIGN(off, 4096);
    off += glex_net_layout(h, p, nnodes, vtm->k, vtm->levels, off);
    h->total_size = off;
}

static int check_job_name(const char *job)
{
    size_t n = job ? strlen(job) : 0;
    if (n == 0 || n > 64)
        return glex_error(GLEX_EINVAL, "job name length %zu is out of range 1..64", n);
    for (size_t i = 0; i < n; i++) {
        char c = job[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return glex_error(GLEX_EINVAL,
                              "job name '%s' has character '%c' at %zu: allowed [A-Za-z0-9_.-]",
                              job, c, i);
    }
    return GLEX_OK;
}

/* a compared parameter's value as the user writes it (-1 is 'auto') */
static const char *param_text(uint32_t v, char buf[16])
{
    if (v == UINT32_MAX)
        return "auto";
    snprintf(buf, 16, "%u", v);
    return buf;
}

/* first layout-relevant parameter that differs, or NULL */
static const char *param_mismatch(const glex_params_t *a, const glex_params_t *b, uint32_t *va,
                                  uint32_t *vb)
{
#define CMP(field, env)                  \
    if (a->field != b->field) {          \
        *va = (uint32_t)a->field;        \
        *vb = (uint32_t)b->field;        \
        return env;                      \
    }
    CMP(units, "GLEX_UNITS")
    CMP(unit_buffer_kb, "GLEX_UNIT_BUFFER_KB")
    CMP(table_slots, "GLEX_TABLE_SLOTS")
    CMP(inline_max, "GLEX_INLINE_MAX")
    CMP(vps_per_node, "GLEX_VPS_PER_NODE")
    CMP(dq_depth, "GLEX_DQ_DEPTH")
    CMP(cq_depth, "GLEX_CQ_DEPTH")
    CMP(pulses, "GLEX_PULSES")
    CMP(mailboxes, "GLEX_MAILBOXES")
    CMP(mailbox_kb, "GLEX_MAILBOX_KB")
    CMP(vtime, "GLEX_VTIME")
    CMP(mcast_entries, "GLEX_MCAST_ENTRIES")
#undef CMP
    return NULL;
}

static int wait_until(int (*pred)(void *), void *arg, int ms)
{
    uint64_t end = glex_now_ns() + (uint64_t)ms * 1000000ull;
    useconds_t nap = 200; /* backing off to 5 ms: hundreds of processes may wait
                           * for a creator reserving a large segment */
    while (!pred(arg)) {
        if (glex_now_ns() > end)
            return 0;
        usleep(nap);
        nap = nap < 5000 ? nap * 2 : 5000;
    }
    return 1;
}

static int fd_sized(void *arg)
{
    struct stat st;
    int fd = *(int *)arg;
    return fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(glex_shm_header_t);
}

static int hdr_ready(void *arg)
{
    return atomic_load(&((glex_shm_header_t *)arg)->ready) != 0;
}

/* how long an attaching process waits for the creator to size and lay out
 * the segment: GLEX_TIMEOUT, 5 s at least */
static int setup_ms(const glex_params_t *p)
{
    return p->timeout_ms > 5000 ? (int)p->timeout_ms : 5000;
}

static int attach_existing(glex_fabric_t *f, int fd, const glex_params_t *p, uint32_t nnodes)
{
    struct stat st;
    if (!wait_until(fd_sized, &fd, setup_ms(p)))
        return glex_error(GLEX_EMISMATCH, "segment %s: creator never sized it", f->name);
    if (fstat(fd, &st) != 0)
        return glex_error(GLEX_ESYS, "fstat %s: %s", f->name, strerror(errno));
    if (st.st_uid != getuid() || (st.st_mode & 0777) != 0600)
        return glex_error(GLEX_EMISMATCH,
                          "segment %s belongs to uid %u with mode %o: expected uid %u, mode 600",
                          f->name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
                          (unsigned)getuid());
    glex_shm_header_t *h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        return glex_error(GLEX_ESYS, "mmap %s: %s", f->name, strerror(errno));
    int rc = GLEX_OK;
    uint32_t va = 0, vb = 0;
    char sa[16], sb[16];
    const char *which;
    if (!wait_until(hdr_ready, h, setup_ms(p)))
        rc = glex_error(GLEX_EMISMATCH, "segment %s: header never became ready", f->name);
    else if (h->magic != GLEX_MAGIC)
        rc = glex_error(GLEX_EMISMATCH, "segment %s: magic %#llx, expected %#llx", f->name,
                        (unsigned long long)h->magic, (unsigned long long)GLEX_MAGIC);
    else if (h->abi != GLEX_ABI_VERSION)
        rc = glex_error(GLEX_EMISMATCH, "segment %s: ABI version %u, this library has %u",
                        f->name, h->abi, GLEX_ABI_VERSION);
    else if (h->nnodes != nnodes)
        rc = glex_error(GLEX_EMISMATCH, "segment %s: created for %u nodes, this process says %u",
                        f->name, h->nnodes, nnodes);
    else if ((which = param_mismatch(&h->params, p, &va, &vb)))
        rc = glex_error(GLEX_EMISMATCH, "segment %s: created with %s=%s, this process has %s",
                        f->name, which, param_text(va, sa), param_text(vb, sb));
    else if ((uint64_t)st.st_size != h->total_size)
        rc = glex_error(GLEX_EMISMATCH, "segment %s: size %lld, header says %llu", f->name,
                        (long long)st.st_size, (unsigned long long)h->total_size);
    size_t total = rc ? 0 : h->total_size;
    munmap(h, sizeof *h);
    if (rc)
        return rc;
    f->base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f->base == MAP_FAILED)
        return glex_error(GLEX_ESYS, "mmap %s (%zu bytes): %s", f->name, total, strerror(errno));
    f->size = total;
    f->hdr = (glex_shm_header_t *)f->base;
    uint32_t c = atomic_load(&f->hdr->refcount);
    do {
        if (c == 0) { /* last user is destroying it: start over */
            munmap(f->base, f->size);
            f->base = NULL;
            return GLEX_EAGAIN;
        }
    } while (!atomic_compare_exchange_weak(&f->hdr->refcount, &c, c + 1));
    return GLEX_OK;
}

static int create_new(glex_fabric_t *f, int fd, const glex_params_t *p, uint32_t nnodes,
                      const glex_vtime_model_t *vtm)
{
    glex_shm_header_t tmp;
    memset(&tmp, 0, sizeof tmp);
    layout(&tmp, p, nnodes, vtm);
    /* reserve every page now: a tmpfs too small for the segment must fail
     * here with a message, not with SIGBUS in the middle of a collective */
    int e = ftruncate(fd, (off_t)tmp.total_size) != 0 ? errno
                                                       : posix_fallocate(fd, 0, (off_t)tmp.total_size);
    if (e) {
        struct statvfs vfs;
        unsigned long long avail = statvfs("/dev/shm", &vfs) == 0
                                       ? (unsigned long long)vfs.f_bavail * vfs.f_frsize
                                       : 0;
        shm_unlink(f->name);
        return glex_error(GLEX_ESYS,
                          "cannot reserve %llu bytes for segment %s (/dev/shm has %llu bytes "
                          "free): %s; make /dev/shm larger or lower GLEX_UNITS, "
                          "GLEX_UNIT_BUFFER_KB, GLEX_TABLE_SLOTS, GLEX_DQ_DEPTH or the node count",
                          (unsigned long long)tmp.total_size, f->name, avail, strerror(e));
    }
    f->base = mmap(NULL, tmp.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f->base == MAP_FAILED) {
        int e = errno;
        shm_unlink(f->name);
        return glex_error(GLEX_ESYS, "mmap %s: %s", f->name, strerror(e));
    }
    f->size = tmp.total_size;
    f->hdr = (glex_shm_header_t *)f->base;
    memcpy(f->hdr, &tmp, sizeof tmp);
    f->hdr->abi = GLEX_ABI_VERSION;
    f->hdr->header_size = sizeof tmp;
    f->hdr->params = *p;
    f->hdr->nnodes = nnodes;
    f->hdr->vtm = *vtm;
    f->hdr->owner_uid = getuid();
    glex_jobs_init(f->hdr);
    glex_calib_dma(&f->hdr->dma);
    glex_proc_self(&f->hdr->creator_pid, &f->hdr->creator_start);
    atomic_store(&f->hdr->refcount, 1);
    f->hdr->magic = GLEX_MAGIC;
    atomic_store_explicit(&f->hdr->ready, 1, memory_order_release);
    return GLEX_OK;
}

/* Fault the segment's pages into this process at open, not one by one
 * inside its first hundreds of calls (each call's packets land in hash
 * slots and lines not touched before: an early 8-byte allreduce at 2
 * processes took 5-8 us, 0.8 once warm; the first 100 averaged 8.7-12.8 us,
 * 1.2-1.8 with the pages in).  The whole segment while it is small; past
 * that every node's hash buffers (while they are small) and this node's
 * own units and VPs, so that a job of a thousand nodes does not build page
 * tables for gigabytes in every process. */
#define POPULATE_MAX (64ull << 20)

static void populate_range(uint8_t *base, uint64_t off, uint64_t len)
{
    uint64_t a = off / 4096u * 4096u;
    if (!len || madvise(base + a, off + len - a, MADV_POPULATE_WRITE) == 0)
        return;
    glex_touch_pages(base + a, off + len - a); /* kernels before 5.14 */
}

static void populate(glex_fabric_t *f)
{
    const glex_shm_header_t *h = f->hdr;
    if (f->size <= POPULATE_MAX) {
        populate_range(f->base, 0, f->size);
        return;
    }
    populate_range(f->base, 0, h->off_bitmaps); /* header, node lines, unit lines */
    uint64_t units = (uint64_t)f->nnodes * f->p.units;
    int all_tables = units * (h->unit_stride_bitmap + h->unit_stride_table) <= POPULATE_MAX;
    if (all_tables) { /* every node's hash buffers and CP counters: where packets land */
        populate_range(f->base, h->off_bitmaps, units * h->unit_stride_bitmap);
        populate_range(f->base, h->off_tables, units * h->unit_stride_table);
    }
    for (uint32_t u = 0; u < f->p.units; u++) {
        uint32_t i = glex_unit_index(f, f->node, u);
        if (!all_tables) {
            populate_range(f->base, h->off_bitmaps + h->unit_stride_bitmap * i,
                           h->unit_stride_bitmap);
            populate_range(f->base, h->off_tables + h->unit_stride_table * i,
                           h->unit_stride_table);
        }
        populate_range(f->base, h->off_ram + h->unit_stride_ram * i, h->unit_stride_ram);
    }
    uint64_t vps = f->p.vps_per_node;
    populate_range(f->base, h->off_rings + h->vp_ring_stride * vps * f->node,
                   h->vp_ring_stride * vps);
}

int glex_fabric_open(const char *job, uint32_t nnodes, uint32_t node_id,
                     const glex_params_t *params, glex_fabric_t **out)
{
    return glex_fabric_open_hosts(job, nnodes, node_id, params, 1, NULL, out);
}

/* host_of checked and copied; NULL on one host */
static int hosts_copy(uint32_t nnodes, uint32_t nhosts, const uint32_t *host_of, uint32_t **out)
{
    *out = NULL;
    if (nhosts < 1 || nhosts > nnodes)
        return glex_error(GLEX_EINVAL, "nhosts=%u is out of range 1..%u (the job's nodes)", nhosts,
                          nnodes);
    if (nhosts == 1 || !host_of)
        return GLEX_OK;
    for (uint32_t i = 0; i < nnodes; i++)
        if (host_of[i] >= nhosts)
            return glex_error(GLEX_EINVAL, "host_of[%u]=%u is out of range 0..%u", i, host_of[i],
                              nhosts - 1);
    *out = malloc(sizeof **out * nnodes);
    if (!*out)
        return glex_error(GLEX_ENOMEM, "out of memory for the host map of %u nodes", nnodes);
    memcpy(*out, host_of, sizeof **out * nnodes);
    return GLEX_OK;
}

int glex_fabric_open_hosts(const char *job, uint32_t nnodes, uint32_t node_id,
                           const glex_params_t *params, uint32_t nhosts, const uint32_t *host_of,
                           glex_fabric_t **out)
{
    int rc;
    glex_params_t p;
    *out = NULL;
    if ((rc = check_job_name(job)))
        return rc;
    if (nnodes < 1 || nnodes > GLEX_MAX_NODES)
        return glex_error(GLEX_EINVAL, "nnodes=%u is out of range 1..%u", nnodes, GLEX_MAX_NODES);
    if (node_id >= nnodes)
        return glex_error(GLEX_EINVAL, "node_id=%u is out of range 0..%u", node_id, nnodes - 1);
    if (params)
        p = *params;
    else
        glex_params_default(&p);
    if ((rc = glex_params_check(&p)))
        return rc;
    /* the virtual-time model: every process checks its GLEX_VTIME_PARAMS,
     * the job's first process puts its own in the segment.  Its radix also
     * shapes the modeled routers (multicast) without GLEX_VTIME */
    glex_vtime_model_t vtm;
    glex_vtime_model_default(&vtm);
    if ((p.vtime || glex_env("GLEX_VTIME_PARAMS")) && (rc = glex_vtime_model_load(&vtm)))
        return rc;
    glex_vtime_model_shape(&vtm, nnodes);
    uint32_t *hosts;
    if ((rc = hosts_copy(nnodes, nhosts, host_of, &hosts)))
        return rc;
#ifndef GLEX_HAVE_LIBFABRIC
    if (hosts) {
        free(hosts);
        return glex_error(GLEX_ENOTSUP, "a job on %u hosts needs libfabric: this libglex was "
                          "built without it (configure --with-libfabric)", nhosts);
    }
#endif
    glex_fabric_t *f = calloc(1, sizeof *f);
    if (!f) {
        free(hosts);
        return glex_error(GLEX_ENOMEM, "out of memory for fabric handle");
    }
    if ((rc = glex_vt_host_init(f))) {
        free(hosts);
        free(f);
        return rc;
    }
    f->host_of = hosts;
    f->nhosts = hosts ? nhosts : 1;
    f->host = hosts ? hosts[node_id] : 0;
    if (hosts) /* each host's nodes in a segment of their own */
        snprintf(f->name, sizeof f->name, "/glex-%u-%s.h%u", (unsigned)getuid(), job, f->host);
    else
        snprintf(f->name, sizeof f->name, "/glex-%u-%s", (unsigned)getuid(), job);
    f->p = p;
    f->node = node_id;
    f->nnodes = nnodes;
    glex_segment_remove_if_stale(f->name); /* a killed earlier job of the same name */
    int created = 0;
    for (int attempt = 0;; attempt++) {
        int fd = shm_open(f->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            fchmod(fd, 0600); /* umask-proof */
            rc = create_new(f, fd, &p, nnodes, &vtm);
            created = rc == GLEX_OK;
        } else if (errno == EEXIST) {
            fd = shm_open(f->name, O_RDWR, 0600);
            if (fd < 0 && errno == ENOENT)
                continue;
            if (fd < 0) {
                rc = glex_error(GLEX_ESYS, "shm_open %s: %s", f->name, strerror(errno));
                break;
            }
            rc = attach_existing(f, fd, &p, nnodes);
        } else {
            rc = glex_error(GLEX_ESYS, "shm_open %s: %s", f->name, strerror(errno));
            break;
        }
        close(fd);
        if (rc != GLEX_EAGAIN || attempt > 1000)
            break;
        usleep(1000);
    }
    if (rc) {
        free(f->host_of);
        free(f);
        return rc;
    }
    if (created) /* the job's first process sweeps segments of killed jobs */
        glex_sweep_stale();
    glex_copy_set_loop_max(f->hdr->dma.loop_max); /* as the job measured it */
    populate(f);
    glex_bell_setup(f);
    glex_node_shm_t *n = glex_node_shm(f, node_id);
    uint32_t z = atomic_load(&n->state);
    if (z == GLEX_NODE_ALIVE || !atomic_compare_exchange_strong(&n->state, &z, GLEX_NODE_ALIVE)) {
        rc = glex_error(GLEX_EBUSY, "node %u of %s is already attached by pid %d", node_id,
                        f->name, (int)atomic_load(&n->pid));
        f->node = UINT32_MAX;
        glex_fabric_close(f);
        return rc;
    }
    int32_t me;
    uint64_t start;
    glex_proc_self(&me, &start);
    atomic_store(&n->start, start);
    atomic_store(&n->pid, me);
    f->vps = calloc(p.vps_per_node, sizeof *f->vps);
    f->rq_head_seen = calloc((size_t)nnodes * p.vps_per_node, sizeof *f->rq_head_seen);
    f->table_left_seen = calloc((size_t)nnodes * p.units, sizeof *f->table_left_seen);
    if (!f->rq_head_seen || !f->table_left_seen) {
        free(f->vps);
        f->vps = NULL;
    }
    if (f->vps && f->host_of && (rc = glex_wire_start(f, &glex_wire_rx))) {
        glex_fabric_close(f);
        return rc;
    }
    if (!f->vps || (rc = glex_engine_start(f))) {
        if (!rc)
            rc = glex_error(GLEX_ENOMEM, "out of memory for VP handles");
        glex_fabric_close(f);
        return rc;
    }
    *out = f;
    return GLEX_OK;
}

int glex_fabric_observe(const char *job, glex_fabric_t **out)
{
    int rc = check_job_name(job);
    *out = NULL;
    if (rc)
        return rc;
    glex_fabric_t *f = calloc(1, sizeof *f);
    if (!f)
        return glex_error(GLEX_ENOMEM, "out of memory for fabric handle");
    snprintf(f->name, sizeof f->name, "/glex-%u-%s", (unsigned)getuid(), job);
    int fd = shm_open(f->name, O_RDONLY, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = glex_error(GLEX_ENOENT, "no segment %s: %s", f->name, strerror(errno));
        goto out;
    }
    if ((size_t)st.st_size < sizeof(glex_shm_header_t)) {
        rc = glex_error(GLEX_EMISMATCH, "segment %s is %lld bytes, smaller than a header",
                        f->name, (long long)st.st_size);
        goto out;
    }
    f->base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (f->base == MAP_FAILED) {
        f->base = NULL;
        rc = glex_error(GLEX_ESYS, "mmap %s: %s", f->name, strerror(errno));
        goto out;
    }
    f->size = (size_t)st.st_size;
    f->hdr = (glex_shm_header_t *)f->base;
    if (f->hdr->magic != GLEX_MAGIC || f->hdr->abi != GLEX_ABI_VERSION ||
        f->hdr->total_size != f->size) {
        rc = glex_error(GLEX_EMISMATCH, "segment %s: magic %#llx ABI %u size %llu do not match",
                        f->name, (unsigned long long)f->hdr->magic, f->hdr->abi,
                        (unsigned long long)f->hdr->total_size);
        goto out;
    }
    f->p = f->hdr->params;
    f->nnodes = f->hdr->nnodes;
    f->node = UINT32_MAX;
    f->observer = 1;
out:
    if (fd >= 0)
        close(fd);
    if (rc) {
        if (f->base)
            munmap(f->base, f->size);
        free(f);
        return rc;
    }
    *out = f;
    return GLEX_OK;
}

int glex_fabric_close(glex_fabric_t *f)
{
    if (!f)
        return GLEX_OK;
    if (f->observer) {
        munmap(f->base, f->size);
        free(f);
        return GLEX_OK;
    }
    if (f->eng)
        glex_engine_stop(f);
    if (f->wire)
        glex_wire_stop(f);
    if (f->node != UINT32_MAX && f->vps) {
        for (uint32_t v = 0; v < f->p.vps_per_node; v++)
            if (f->vps[v].shm)
                glex_vp_close(&f->vps[v]);
    }
    if (f->node != UINT32_MAX) {
        glex_node_shm_t *n = glex_node_shm(f, f->node);
        atomic_store(&n->state, GLEX_NODE_LEFT); /* pid stays: who left */
    }
    if (atomic_fetch_sub(&f->hdr->refcount, 1) == 1)
        shm_unlink(f->name);
    munmap(f->base, f->size);
    glex_dma_unmap_all(f);
    free(f->vps);
    free(f->rq_head_seen);
    free(f->table_left_seen);
    free(f->host_of);
    free(f);
    return GLEX_OK;
}

int glex_fabric_same_host(const glex_fabric_t *f, uint32_t node) { return !glex_remote(f, node); }
uint32_t glex_fabric_nhosts(const glex_fabric_t *f) { return f->nhosts ? f->nhosts : 1; }
uint32_t glex_fabric_host(const glex_fabric_t *f) { return f->host; }
uint32_t glex_fabric_host_of(const glex_fabric_t *f, uint32_t node)
{
    return f->host_of && node < f->nnodes ? f->host_of[node] : 0;
}

const glex_params_t *glex_fabric_params(const glex_fabric_t *f) { return &f->p; }
uint32_t glex_fabric_node(const glex_fabric_t *f) { return f->node; }
uint32_t glex_fabric_nnodes(const glex_fabric_t *f) { return f->nnodes; }
const char *glex_fabric_name(const glex_fabric_t *f) { return f->name; }

void glex_debug_set_send_jitter(glex_fabric_t *f, uint32_t max_us, uint32_t seed)
{
    f->jitter_max_us = max_us;
    f->jitter_seed = seed ? seed : 1;
}
