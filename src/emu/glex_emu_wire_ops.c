/* glex_emu_wire_ops.c - what the NIC model hands to the fabric between
 * hosts (glex_emu_wire.c): packets, unit RAM pulses, RDMA, MP messages,
 * JobID agreement at node 0, the probe of a silent peer; and each node's
 * fabric counters.  A build without libfabric has one host: these refuse. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GLEX_HAVE_LIBFABRIC

/* a build without libfabric: one host only (glex_fabric_open_hosts refuses more) */
static int no_fabric(void)
{
    return glex_error(GLEX_ENOTSUP, "this libglex was built without libfabric: one host only");
}
struct glex_wire_rx {
    int none;
};
const struct glex_wire_rx glex_wire_rx = { 0 };
int glex_wire_start(glex_fabric_t *f, const struct glex_wire_rx *rx)
{
    (void)f, (void)rx;
    return no_fabric();
}
void glex_wire_stop(glex_fabric_t *f) { (void)f; }
int glex_wire_poll(glex_fabric_t *f)
{
    (void)f;
    return 0;
}
void glex_wire_unwatched(glex_fabric_t *f) { (void)f; }
int glex_wire_insert(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                     const void *payload, uint32_t len, uint64_t vt, int cp, uint32_t job,
                     uint32_t dvp)
{
    (void)f, (void)node, (void)unit, (void)key, (void)payload, (void)len, (void)vt, (void)cp;
    (void)job, (void)dvp;
    return no_fabric();
}
int glex_wire_ram(glex_fabric_t *f, uint32_t node, uint32_t unit, uint64_t off, const void *src,
                  uint64_t len)
{
    (void)f, (void)node, (void)unit, (void)off, (void)src, (void)len;
    return no_fabric();
}
int glex_wire_eager(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                    const void *src, uint32_t len)
{
    (void)f, (void)node, (void)unit, (void)key, (void)src, (void)len;
    return no_fabric();
}
uint32_t glex_wire_eager_max(const glex_fabric_t *f, uint32_t node)
{
    (void)f, (void)node;
    return 0;
}
void glex_wire_eager_freed(glex_fabric_t *f, uint32_t unit, uint32_t page, uint32_t n)
{
    (void)f, (void)unit, (void)page, (void)n;
}
void glex_wire_eager_flush(glex_fabric_t *f) { (void)f; }
int glex_wire_put(glex_fabric_t *f, uint32_t node, uint64_t addr, const void *src, uint64_t len)
{
    (void)f, (void)node, (void)addr, (void)src, (void)len;
    return no_fabric();
}
int glex_wire_get(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, uint64_t len)
{
    (void)f, (void)node, (void)local, (void)remote, (void)len;
    return no_fabric();
}
int glex_wire_get_done(glex_fabric_t *f, int ticket) { (void)f, (void)ticket; return no_fabric(); }
int glex_wire_mp(glex_fabric_t *f, uint32_t node, uint32_t dvp, uint32_t svp, const void *data,
                 uint32_t len, uint64_t vt)
{
    (void)f, (void)node, (void)dvp, (void)svp, (void)data, (void)len, (void)vt;
    return no_fabric();
}
int glex_wire_job(glex_fabric_t *f, uint64_t key, uint32_t members, int lease)
{
    (void)f, (void)key, (void)members, (void)lease;
    return no_fabric();
}
void glex_wire_job_release(glex_fabric_t *f, int job_id) { (void)f, (void)job_id; }
int glex_wire_peer_failed(glex_fabric_t *f, uint32_t node, char *why, size_t len)
{
    (void)f, (void)node, (void)why, (void)len;
    return 0;
}
int glex_fabric_address(glex_fabric_t *f, void *buf, size_t *len)
{
    (void)f, (void)buf;
    *len = 0;
    return GLEX_OK;
}
int glex_fabric_connect(glex_fabric_t *f, const void *addrs, size_t stride, const size_t *len)
{
    (void)f, (void)addrs, (void)stride, (void)len;
    return GLEX_OK;
}

int glex_fabric_expose(glex_fabric_t *f, void *base, uint64_t bytes, uint64_t *key)
{
    (void)f, (void)base, (void)bytes;
    *key = 0;
    return GLEX_ENOTSUP;
}

int glex_fabric_remote_region(glex_fabric_t *f, uint32_t node, uint64_t base, uint64_t bytes,
                              uint64_t key)
{
    (void)f, (void)node, (void)base, (void)bytes, (void)key;
    return GLEX_ENOTSUP;
}
#else /* GLEX_HAVE_LIBFABRIC */
#include "glex_emu_wire.h"

/* ------------------------------------------------------------ operations */

int glex_wire_insert(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                     const void *payload, uint32_t len, uint64_t vt, int cp, uint32_t job,
                     uint32_t dvp)
{
    if (len > f->p.inline_max)
        return glex_error(GLEX_EINVAL, "packet payload %u is out of range 0..%u", len,
                          f->p.inline_max);
    wmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = W_INSERT;
    m.cp = (uint8_t)(cp != 0);
    m.unit = (uint16_t)unit;
    m.aux = job;
    m.x = key.hi;
    m.y = key.lo | (uint64_t)dvp << 32;
    m.vt = vt;
    return glex_wire_send(f, node, &m, payload, len);
}

/* a copy of len bytes cut into messages of type at x + offset */
static int wcopy(glex_fabric_t *f, uint32_t node, int type, uint32_t unit, uint64_t x,
                 const void *src, uint64_t len)
{
    uint32_t chunk = f->wire->chunk;
    for (uint64_t off = 0; off < len; off += chunk) {
        uint32_t n = len - off < chunk ? (uint32_t)(len - off) : chunk;
        wmsg_t m;
        memset(&m, 0, sizeof m);
        m.type = (uint8_t)type;
        m.unit = (uint16_t)unit;
        m.x = x + off;
        int rc = glex_wire_send(f, node, &m, (const uint8_t *)src + off, n);
        if (rc)
            return rc;
    }
    return GLEX_OK;
}

int glex_wire_ram(glex_fabric_t *f, uint32_t node, uint32_t unit, uint64_t off, const void *src,
                  uint64_t len)
{
    return wcopy(f, node, W_RAM, unit, off, src, len);
}

uint32_t glex_wire_eager_max(const glex_fabric_t *f, uint32_t node)
{
    return f->wire ? f->wire->eg_pages[node] * GLEX_PAGE : 0;
}

int glex_wire_eager(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                    const void *src, uint32_t len)
{
    struct glex_wire *w = f->wire;
    uint32_t part = w->eg_pages[node], n = (len + GLEX_PAGE - 1) / GLEX_PAGE;
    if (!n || n > part)
        return GLEX_ENOSPC;
    _Atomic uint64_t *taken = &w->eg_taken[(size_t)node * f->p.units + unit];
    int64_t claimed = glex_pages_claim(taken, n, part, 0);
    if (claimed < 0)
        return GLEX_ENOSPC;
    uint32_t at = (uint32_t)claimed;
    uint32_t ram = (f->hdr->eager_first_page + w->eg_first[node] + at) * GLEX_PAGE;
    /* more than a message carries: the head as unit RAM writes, the tail
     * with the READY (applied in this order) */
    uint32_t head = len > w->chunk ? (len - 1) / w->chunk * w->chunk : 0;
    int rc = head ? wcopy(f, node, W_RAM, unit, ram, src, head) : GLEX_OK;
    wmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = W_EAGER;
    m.unit = (uint16_t)unit;
    m.aux = ram;
    m.z = len;
    m.x = key.hi;
    m.y = key.lo;
    if (!rc)
        rc = glex_wire_send(f, node, &m, (const uint8_t *)src + head, len - head);
    if (rc)
        atomic_fetch_and_explicit(taken, ~glex_page_mask(n, at), memory_order_release);
    return rc;
}

void glex_wire_eager_freed(glex_fabric_t *f, uint32_t unit, uint32_t page, uint32_t n)
{
    struct glex_wire *w = f->wire;
    uint32_t part = w ? w->eg_pages[f->node] : 0, rel = page - GLEX_EAGER_LOCAL(f);
    if (!part || rel / part >= w->eg_nrem)
        return;
    atomic_fetch_or_explicit(&w->eg_ret[(size_t)unit * w->eg_nrem + rel / part],
                             glex_page_mask(n, rel % part), memory_order_relaxed);
    atomic_store_explicit(&w->eg_pending, 1, memory_order_release);
}

void glex_wire_eager_flush(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    if (!w || !atomic_load_explicit(&w->eg_pending, memory_order_acquire))
        return;
    atomic_store_explicit(&w->eg_pending, 0, memory_order_relaxed);
    /* a sender that finds its partition full asks for credit: returns may
     * wait for half a partition, sent in one message */
    uint32_t part = w->eg_pages[f->node], enough = part / 2 ? part / 2 : 1, left = 0;
    for (uint32_t u = 0; u < f->p.units; u++)
        for (uint32_t i = 0; i < w->eg_nrem; i++) {
            _Atomic uint64_t *r = &w->eg_ret[(size_t)u * w->eg_nrem + i];
            uint64_t bits = atomic_load_explicit(r, memory_order_relaxed);
            if (!bits)
                continue;
            if ((uint32_t)__builtin_popcountll(bits) < enough) {
                left = 1;
                continue;
            }
            bits = atomic_exchange_explicit(r, 0, memory_order_acq_rel);
            wmsg_t m;
            memset(&m, 0, sizeof m);
            m.type = W_ERET;
            m.unit = (uint16_t)u;
            m.y = bits;
            if (glex_wire_send(f, w->eg_owner[i], &m, NULL, 0) == GLEX_EAGAIN) {
                atomic_fetch_or_explicit(r, bits, memory_order_relaxed);
                left = 1;
            }
        }
    if (left)
        atomic_store_explicit(&w->eg_pending, 1, memory_order_release);
}

/* RDMA writes from this size: below it a message costs no more (2 ranks on
 * 2 hosts over a veth pair, writes against messages: 1-8 KiB latency 37-46
 * against 30-41 us in one run, even in another; 16-64 KiB 50-143 against
 * 58-206, bandwidth at 32-64 KiB 270-380 against 176-250 MB/s) */
#define WRITE_MIN 8192u

int glex_wire_put(glex_fabric_t *f, uint32_t node, uint64_t addr, const void *src, uint64_t len)
{
    struct glex_wire *w = f->wire;
    if (len >= WRITE_MIN && w->rg_len[node] && addr >= w->rg_base[node] &&
        len <= w->rg_len[node] &&
        addr - w->rg_base[node] <= w->rg_len[node] - len)
        return glex_wire_write(f, node, addr, src, len);
    return wcopy(f, node, W_PUT, 0, addr, src, len);
}

int glex_fabric_expose(glex_fabric_t *f, void *base, uint64_t bytes, uint64_t *key)
{
    *key = 0;
    if (!f->wire)
        return GLEX_ENOTSUP;
    return glex_wire_expose(f, base, bytes, key);
}

int glex_fabric_remote_region(glex_fabric_t *f, uint32_t node, uint64_t base, uint64_t bytes,
                              uint64_t key)
{
    if (node >= f->nnodes)
        return glex_error(GLEX_EINVAL, "node=%u is out of range 0..%u", node, f->nnodes - 1);
    struct glex_wire *w = f->wire;
    if (!w || !w->rma || !glex_remote(f, node))
        return GLEX_ENOTSUP;
    w->rg_base[node] = base;
    w->rg_key[node] = key;
    w->rg_len[node] = bytes;
    return GLEX_OK;
}

/* a get's ticket free again (its destination's registration closed) */
static void get_release(struct glex_wire *w, uint32_t i)
{
    if (w->get_mr[i]) {
        fi_close(&w->get_mr[i]->fid);
        w->get_mr[i] = NULL;
    }
    atomic_store(&w->gets[i], 0);
}

int glex_wire_get(glex_fabric_t *f, uint32_t node, void *local, uint64_t remote, uint64_t len)
{
    struct glex_wire *w = f->wire;
    for (uint32_t i = 0; i < NGETS; i++) {
        int z = 0;
        if (!atomic_compare_exchange_strong(&w->gets[i], &z, 1))
            continue;
        wmsg_t m;
        memset(&m, 0, sizeof m);
        m.type = W_GET;
        m.aux = i;
        m.x = remote;
        m.y = (uint64_t)(uintptr_t)local;
        m.z = len;
        /* from this size the data comes as RDMA writes into the destination,
         * registered for the get, instead of messages copied out at arrival */
        if (len >= WRITE_MIN &&
            glex_wire_reg(f, local, len, GET_KEY + i, &w->get_mr[i], &m.vt) == GLEX_OK)
            m.cp = 1;
        int rc = glex_wire_send(f, node, &m, NULL, 0);
        if (rc) {
            get_release(w, i);
            return rc;
        }
        return (int)i;
    }
    return GLEX_EAGAIN; /* NGETS in flight: the task waits */
}

int glex_wire_get_done(glex_fabric_t *f, int ticket)
{
    struct glex_wire *w = f->wire;
    int st = atomic_load(&w->gets[ticket]);
    if (st == 1) {
        glex_wire_drain(f, 0);
        return 0;
    }
    get_release(w, (uint32_t)ticket);
    if (st == 2)
        return 1;
    return glex_error(GLEX_ESYS, "RDMA get over the fabric failed at its target");
}

int glex_wire_mp(glex_fabric_t *f, uint32_t node, uint32_t dvp, uint32_t svp, const void *data,
                 uint32_t len, uint64_t vt)
{
    wmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = W_MP;
    m.unit = (uint16_t)dvp;
    m.aux = svp;
    m.vt = vt;
    return glex_wire_send(f, node, &m, data, len);
}

int glex_wire_job(glex_fabric_t *f, uint64_t key, uint32_t members, int lease)
{
    struct glex_wire *w = f->wire;
    if (members == 0)
        return glex_error(GLEX_EINVAL, "members=0 is out of range 1..%u", GLEX_MAX_NODES);
    pthread_mutex_lock(&w->job_mu);
    int t = -1;
    while (t < 0) {
        for (uint32_t i = 0; i < NJOBS && t < 0; i++)
            if (!w->job_busy[i])
                t = (int)i;
        if (t < 0)
            pthread_cond_wait(&w->job_cv, &w->job_mu);
    }
    w->job_busy[t] = 1;
    w->job_done[t] = 0;
    pthread_mutex_unlock(&w->job_mu);
    wmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = W_JOB;
    m.x = key;
    m.aux = members << 1 | (lease ? 1u : 0u);
    m.z = (uint64_t)t;
    int rc;
    while ((rc = glex_wire_send(f, 0, &m, NULL, 0)) == GLEX_EAGAIN)
        usleep(100);
    int64_t id = rc;
    uint64_t gen = 0;
    /* the answer is read by the progress thread: it must not wait for a
     * host that read the CQ a moment ago (this one, now blocked here) */
    glex_wire_unwatched(f);
    pthread_mutex_lock(&w->job_mu);
    while (!rc && !w->job_done[t]) {
        if (atomic_load(&w->dead[0])) {
            id = glex_error(GLEX_EDEAD, "node 0, which agrees on JobIDs, is unreachable");
            break;
        }
        glex_cond_wait_ms(&w->job_cv, &w->job_mu, 100);
    }
    if (!rc && w->job_done[t]) {
        id = w->job_result[t];
        gen = w->job_gen[t];
    }
    w->job_busy[t] = 0;
    pthread_cond_broadcast(&w->job_cv);
    pthread_mutex_unlock(&w->job_mu);
    if (id >= 0) { /* this host's tasks key their packets with node 0's generation */
        atomic_store(&f->hdr->jobs[id].gen, (uint32_t)gen);
        return (int)id;
    }
    if (id == GLEX_ENOENT)
        return glex_error(GLEX_ENOENT, "no JobID to lease (%u of %u may be leased): this group "
                          "takes one per task", GLEX_MAX_LEASES, GLEX_MAX_JOBS);
    if (id == GLEX_EAGAIN)
        return glex_error(GLEX_EAGAIN, "all %u JobIDs are in use", GLEX_MAX_JOBS);
    return (int)id;
}

void glex_wire_job_release(glex_fabric_t *f, int job_id)
{
    wmsg_t m;
    memset(&m, 0, sizeof m);
    m.type = W_JOBREL;
    m.aux = (uint32_t)job_id;
    (void)glex_wire_send(f, 0, &m, NULL, 0);
}

int glex_wire_peer_failed(glex_fabric_t *f, uint32_t node, char *why, size_t len)
{
    struct glex_wire *w = f->wire;
    if (!w || node >= f->nnodes)
        return 0;
    uint64_t now = glex_coarse_ns(), ping = atomic_load(&w->ping_ns[node]);
    if (!atomic_load(&w->dead[node]) && ping && atomic_load(&w->pong_ns[node]) < ping &&
        now - ping > (uint64_t)f->p.timeout_ms * 1000000ull)
        glex_wire_mark_dead(f, node, "no answer to a probe within GLEX_TIMEOUT");
    if (atomic_load(&w->dead[node])) {
        snprintf(why, len, "node %u on host %u is unreachable over the fabric", node,
                 f->host_of[node]);
        return 1;
    }
    if (!ping || atomic_load(&w->pong_ns[node]) >= ping) { /* probe it (anew) */
        wmsg_t m;
        memset(&m, 0, sizeof m);
        m.type = W_PING;
        atomic_store(&w->ping_ns[node], now ? now : 1);
        (void)glex_wire_send(f, node, &m, NULL, 0);
    }
    return 0;
}

#endif /* GLEX_HAVE_LIBFABRIC */
int glex_fabric_wire_stats(const glex_fabric_t *f, uint32_t node, glex_wire_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (node >= f->nnodes)
        return glex_error(GLEX_EINVAL, "node=%u is out of range 0..%u", node, f->nnodes - 1);
    const glex_node_shm_t *n = glex_node_shm(f, node);
    s->msgs_sent = atomic_load(&n->wire_msgs_sent);
    s->bytes_sent = atomic_load(&n->wire_bytes_sent);
    s->msgs_received = atomic_load(&n->wire_msgs_received);
    s->bytes_received = atomic_load(&n->wire_bytes_received);
    s->held = atomic_load(&n->wire_held);
    s->held_total = atomic_load(&n->wire_held_total);
    s->writes = atomic_load(&n->wire_writes);
#ifdef GLEX_HAVE_LIBFABRIC
    if (node == f->node && f->wire)
        snprintf(s->provider, sizeof s->provider, "%s", f->wire->info->fabric_attr->prov_name);
#endif
    return GLEX_OK;
}
