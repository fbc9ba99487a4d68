/* glex_emu_wire_rx.c - what a node does with the messages other hosts'
 * nodes send it (glex_emu_wire.c hands them over in each sender's order):
 * packets into its hash buffer (counted on the CP counter when inline
 * data), pulses into its unit RAM, RDMA puts into its process's memory, MP
 * messages into a VP's receive queue; what finds no room waits here, in
 * order per key (per VP for MP), until there is.  Requests (an RDMA get,
 * a JobID at node 0, a probe) are answered by the progress thread. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#ifdef GLEX_HAVE_LIBFABRIC
#include "glex_emu_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hold(glex_fabric_t *f, const wmsg_t *m)
{
    struct glex_wire *w = f->wire;
    held_t *e = glex_wire_keep(m);
    if (!e)
        return;
    glex_wire_append(&w->held, &w->held_tail, e);
    atomic_fetch_add(&w->nheld, 1);
    atomic_fetch_add(&glex_node_shm(f, f->node)->wire_held, 1);
    atomic_fetch_add(&glex_node_shm(f, f->node)->wire_held_total, 1);
}

/* is an earlier message of the same stream held (same key, or MP to the
 * same VP)?  Then m waits behind it: never overtakes */
static int held_before(const struct glex_wire *w, const held_t *stop, const wmsg_t *m)
{
    for (const held_t *e = w->held; e && e != stop; e = e->next) {
        if (e->m.type != m->type)
            continue;
        if (m->type == W_MP && e->m.unit == m->unit)
            return 1;
        if (m->type == W_INSERT && e->m.x == m->x && e->m.y == m->y && e->m.unit == m->unit)
            return 1;
    }
    return 0;
}

/* a held-able message into the segment: GLEX_EAGAIN when it must wait */
static int deliver(glex_fabric_t *f, const wmsg_t *m)
{
    const uint8_t *p = (const uint8_t *)(m + 1);
    if (m->type == W_MP)
        return glex_rq_deliver(f, f->node, m->unit, m->src, m->aux, p, m->len, m->vt);
    glex_key_t k = { .hi = m->x, .lo = (uint32_t)m->y };
    int rc = glex_table_insert_vt(f, f->node, m->unit, k, p, m->len, m->vt);
    if (rc == GLEX_OK && m->cp)
        atomic_fetch_add_explicit(glex_cp_counter(f, f->node, m->aux, (uint32_t)(m->y >> 32)), 1,
                                  memory_order_release);
    return rc;
}

static void service(struct glex_wire *w, const wmsg_t *m)
{
    held_t *e = glex_wire_keep(m);
    if (!e)
        return;
    pthread_mutex_lock(&w->svc_mu);
    glex_wire_append(&w->svc, &w->svc_tail, e);
    pthread_mutex_unlock(&w->svc_mu);
    if (w->serve_after) /* the thread applying it answers it next */
        return;
    glex_wire_wake_thread(w);
}

static int in_ram(const glex_fabric_t *f, const wmsg_t *m)
{
    return m->unit < f->p.units && m->x + m->len <= (uint64_t)f->p.unit_buffer_kb * 1024u;
}

/* eager data from another host: into the sender's partition of the unit's
 * eager pages, then its READY into the hash buffer (held there if full).
 * The message carries the data's tail (z bytes in all from RAM offset aux;
 * the head came before it as unit RAM writes) */
static void eager_landed(glex_fabric_t *f, const wmsg_t *m)
{
    struct glex_wire *w = f->wire;
    uint32_t part = w->eg_pages[f->node], first = f->hdr->eager_first_page + GLEX_EAGER_LOCAL(f);
    uint64_t page = m->aux / GLEX_PAGE, total = m->z;
    /* the partition of the page, which must be the sender's */
    uint32_t idx = part && page >= first ? (uint32_t)((page - first) / part) : w->eg_nrem;
    if (m->unit >= f->p.units || !m->len || m->len > total || m->aux % GLEX_PAGE ||
        idx >= w->eg_nrem || w->eg_owner[idx] != m->src ||
        page + (total + GLEX_PAGE - 1) / GLEX_PAGE > first + (idx + 1) * part) {
        fprintf(stderr, "glex: node %u: eager data from node %u at unit %u RAM %u+%llu is "
                "outside its %u pages from %u\n", f->node, m->src, m->unit, m->aux,
                (unsigned long long)total, part, (first + idx * part) * GLEX_PAGE);
        return;
    }
    glex_copy(glex_unit_ram(f, f->node, m->unit) + m->aux + (total - m->len), m + 1, m->len);
    glex_eager_landed(f, m->unit, (uint32_t)total);
    struct {
        wmsg_t h;
        glex_ctrl_t c;
    } r;
    r.h = *m;
    r.h.type = W_INSERT;
    r.h.cp = 0;
    r.h.len = sizeof r.c;
    memset(&r.c, 0, sizeof r.c);
    r.c.ram_off = m->aux;
    r.c.len = (uint32_t)total;
    r.c.total = (uint32_t)total;
    if (held_before(w, NULL, &r.h) || deliver(f, &r.h) == GLEX_EAGAIN)
        hold(f, &r.h);
}

/* apply one message in its turn (under cq_mu) */
static void rx_apply(glex_fabric_t *f, const wmsg_t *m)
{
    struct glex_wire *w = f->wire;
    const uint8_t *p = (const uint8_t *)(m + 1);
    switch (m->type) {
    case W_INSERT:
    case W_MP:
        if ((m->type == W_INSERT && (m->unit >= f->p.units || m->len > f->p.inline_max)) ||
            (m->type == W_MP && (m->unit >= f->p.vps_per_node || m->len > GLEX_MP_CAP))) {
            fprintf(stderr, "glex: node %u: fabric message from node %u: unit/VP %u or length %u "
                    "out of range\n", f->node, m->src, m->unit, m->len);
            return;
        }
        if (held_before(w, NULL, m) || deliver(f, m) == GLEX_EAGAIN)
            hold(f, m);
        break;
    case W_RAM:
        if (!in_ram(f, m)) {
            fprintf(stderr, "glex: node %u: unit RAM write from node %u at %llu+%u is outside "
                    "the unit's %u KiB\n", f->node, m->src, (unsigned long long)m->x, m->len,
                    f->p.unit_buffer_kb);
            return;
        }
        glex_copy(glex_unit_ram(f, f->node, m->unit) + m->x, p, m->len);
        break;
    case W_EAGER:
        eager_landed(f, m);
        break;
    case W_ERET:
        if (m->unit < f->p.units && m->src < f->nnodes)
            atomic_fetch_and_explicit(&w->eg_taken[(size_t)m->src * f->p.units + m->unit], ~m->y,
                                      memory_order_release);
        break;
    case W_PUT:
        glex_copy((void *)(uintptr_t)m->x, p, m->len);
        glex_rdma_landed((void *)(uintptr_t)m->x, m->len);
        break;
    case W_GOT:
        if (m->aux < NGETS)
            atomic_store(&w->gets[m->aux], m->cp ? -1 : 2);
        break;
    case W_JOBREPLY:
        pthread_mutex_lock(&w->job_mu);
        if (m->aux < NJOBS) {
            w->job_result[m->aux] = (int64_t)m->y;
            w->job_gen[m->aux] = m->z;
            w->job_done[m->aux] = 1;
        }
        pthread_cond_broadcast(&w->job_cv);
        pthread_mutex_unlock(&w->job_mu);
        break;
    case W_JOBREL:
        glex_job_release_local(f, (int)m->aux);
        break;
    case W_PONG:
        atomic_store(&w->pong_ns[m->src], glex_coarse_ns());
        break;
    case W_BYE:
        atomic_store(&w->dead[m->src], 2);
        atomic_store(&glex_node_shm(f, m->src)->state, GLEX_NODE_LEFT);
        break;
    case W_GET:
    case W_JOB:
    case W_PING:
        service(w, m); /* answered outside cq_mu */
        break;
    default:
        fprintf(stderr, "glex: node %u: fabric message of unknown type %u from node %u\n",
                f->node, m->type, m->src);
        return;
    }
    glex_ring(f, f->node);
}

/* held messages whose turn has come; 1 if any went in */
static int rx_retry(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    int any = 0;
    held_t *prev = NULL;
    for (held_t *e = w->held; e;) {
        if (held_before(w, e, &e->m) || deliver(f, &e->m) == GLEX_EAGAIN) {
            prev = e;
            e = e->next;
            continue;
        }
        held_t *n = e->next;
        if (prev)
            prev->next = n;
        else
            w->held = n;
        if (w->held_tail == e)
            w->held_tail = prev;
        free(e);
        atomic_fetch_sub(&w->nheld, 1);
        atomic_fetch_sub(&glex_node_shm(f, f->node)->wire_held, 1);
        any = 1;
        e = n;
    }
    if (any)
        glex_ring(f, f->node);
    return any;
}

/* requests answered by the thread that read them (glex_wire_drain_serve),
 * else by the progress thread: GET (the data back, then GOT), JOB (node 0
 * agrees on a JobID), PING */
static void rx_services(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    for (;;) {
        pthread_mutex_lock(&w->svc_mu);
        held_t *e = w->svc;
        if (e) {
            w->svc = e->next;
            if (!w->svc)
                w->svc_tail = NULL;
        }
        pthread_mutex_unlock(&w->svc_mu);
        if (!e)
            return;
        wmsg_t *m = &e->m, r;
        memset(&r, 0, sizeof r);
        r.aux = m->aux;
        if (m->type == W_GET) {
            int bad = 0;
            if (m->cp) /* its destination is registered: written in place */
                bad = glex_wire_write_key(f, m->src, w->rma_virt ? m->y : 0, m->vt,
                                          (const void *)(uintptr_t)m->x, m->z) != GLEX_OK;
            else
                for (uint64_t off = 0; off < m->z && !bad; off += w->chunk) {
                    uint32_t n = m->z - off < w->chunk ? (uint32_t)(m->z - off) : w->chunk;
                    wmsg_t put;
                    memset(&put, 0, sizeof put);
                    put.type = W_PUT;
                    put.x = m->y + off;
                    bad = glex_wire_send(f, m->src, &put, (const void *)(uintptr_t)(m->x + off),
                                         n) != GLEX_OK;
                }
            r.type = W_GOT;
            r.cp = (uint8_t)bad;
            glex_wire_send(f, m->src, &r, NULL, 0);
        } else if (m->type == W_JOB) {
            int id = glex_job_agree_local(f, m->x, m->aux >> 1, (int)(m->aux & 1u));
            r.type = W_JOBREPLY;
            r.aux = (uint32_t)m->z;
            r.y = (uint64_t)(int64_t)id;
            r.z = id >= 0 ? atomic_load(&f->hdr->jobs[id].gen) : 0;
            glex_wire_send(f, m->src, &r, NULL, 0);
        } else if (m->type == W_PING) {
            r.type = W_PONG;
            glex_wire_send(f, m->src, &r, NULL, 0);
        }
        free(e);
    }
}

const glex_wire_rx_t glex_wire_rx = { rx_apply, rx_retry, rx_services };

#endif /* GLEX_HAVE_LIBFABRIC */
