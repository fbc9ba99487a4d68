/* glex_emu_wire.c - the network between hosts.  A job may span hosts: each
 * host keeps its nodes in a segment of its own, and what a node sends to a
 * node of another host (a packet for its hash buffer, a pulse for its unit
 * RAM, RDMA, an MP message, a JobID request) travels as one message over
 * libfabric (FI_EP_RDM, FI_MSG, messages in order).  The receiving process
 * applies each message in its own segment and memory, in arrival order, as
 * its NIC's receive port would; a progress thread per process waits on the
 * fabric for it.  See doc/multinode.md. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#ifdef GLEX_HAVE_LIBFABRIC
#include "glex_emu_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int glex_wire_fail(const char *what, ssize_t rc)
{
    return glex_error(GLEX_ESYS, "libfabric %s: %s", what, fi_strerror((int)-rc));
}

/* ---------------------------------------------------------------- sending */

/* dead[node]: 1 unreachable (a fabric error, or no answer to a probe), 2
 * left the job (it said so as it closed) */
void glex_wire_mark_dead(glex_fabric_t *f, uint32_t node, const char *why)
{
    struct glex_wire *w = f->wire;
    uint8_t z = 0;
    if (node >= f->nnodes || !atomic_compare_exchange_strong(&w->dead[node], &z, 1))
        return;
    atomic_store(&glex_node_shm(f, node)->state, GLEX_NODE_DEAD);
    /* once this process closes (every process of the job passed MPI_Finalize's
     * barrier), a peer that closed first is no failure: its goodbye and ours
     * crossed (MPICH's p_gather on 4 hosts printed this after "No Errors") */
    if (!atomic_load(&w->closing))
        fprintf(stderr, "glex: node %u: node %u on host %u is unreachable over the fabric (%s)\n",
                f->node, node, f->host_of[node], why);
    glex_ring(f, f->node); /* whoever waits here looks at its peers */
}

static int reap_sends(glex_fabric_t *f);

static wbuf_t *take_send(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    for (;;) {
        pthread_mutex_lock(&w->send_mu);
        wbuf_t *b = w->free_send;
        if (b)
            w->free_send = b->next;
        pthread_mutex_unlock(&w->send_mu);
        if (b)
            return b;
        if (!reap_sends(f) && !glex_wire_drain(f, 0))
            sched_yield();
    }
}

static void give_send(struct glex_wire *w, wbuf_t *b)
{
    pthread_mutex_lock(&w->send_mu);
    b->next = w->free_send;
    w->free_send = b;
    pthread_mutex_unlock(&w->send_mu);
    atomic_fetch_sub(&w->sends_out, 1);
}

/* one message of header h and len payload bytes to node */
int glex_wire_send(glex_fabric_t *f, uint32_t node, wmsg_t *h, const void *p, uint32_t len)
{
    struct glex_wire *w = f->wire;
    if (!atomic_load(&w->connected))
        return GLEX_EAGAIN; /* the addresses are not exchanged yet */
    if (atomic_load(&w->dead[node]))
        return glex_error(GLEX_EDEAD, "node %u on host %u %s", node, f->host_of[node],
                          atomic_load(&w->dead[node]) == 2 ? "left the job"
                                                           : "is unreachable over the fabric");
    h->src = f->node;
    h->len = len;
    h->token = w->token;
    wbuf_t *b = take_send(f);
    b->node = node;
    memcpy(b->data, h, sizeof *h);
    if (len)
        glex_copy(b->data + sizeof *h, p, len);
    atomic_fetch_add(&w->sends_out, 1);
    pthread_mutex_lock(&w->order_mu);
    ((wmsg_t *)(void *)b->data)->seq = w->tx_seq[node];
    /* a peer that takes nothing for GLEX_TIMEOUT (1 s once this process
     * closes) is taken for gone */
    uint64_t t0 = 0, give_up = 0;
    for (;;) {
        ssize_t rc = fi_send(w->ep, b->data, sizeof *h + len, NULL, (fi_addr_t)node, &b->ctx);
        if (rc == 0)
            break;
        uint64_t now = glex_coarse_ns();
        if (!give_up) {
            t0 = now;
            give_up = now + (atomic_load(&w->closing) ? 1000ull : f->p.timeout_ms) * 1000000ull;
        }
        /* a peer that said it left while this waited: no point waiting on */
        int left = atomic_load(&w->dead[node]) == 2;
        if (rc != -FI_EAGAIN || now > give_up || left) {
            pthread_mutex_unlock(&w->order_mu);
            give_send(w, b);
            if (left)
                return glex_error(GLEX_EDEAD, "node %u on host %u left the job", node,
                                  f->host_of[node]);
            if (rc != -FI_EAGAIN) {
                glex_wire_mark_dead(f, node, fi_strerror((int)-rc));
                return glex_wire_fail("fi_send", rc);
            }
            glex_wire_mark_dead(f, node, "it takes no message");
            uint64_t heard = atomic_load_explicit(&w->heard_ns[node], memory_order_relaxed);
            char last[64] = "nothing heard from it yet";
            if (heard)
                snprintf(last, sizeof last, "last heard from it %.3f s ago",
                         now > heard ? (now - heard) / 1e9 : 0.0);
            return glex_error(GLEX_EDEAD, "node %u on host %u took no message for %.3f s (%s; "
                              "%d sends of this process in flight, %d messages held here)",
                              node, f->host_of[node], (now - t0) / 1e9, last,
                              (int)atomic_load(&w->sends_out), (int)atomic_load(&w->nheld));
        }
        if (!glex_wire_drain(f, 0))
            sched_yield();
    }
    w->tx_seq[node]++;
    pthread_mutex_unlock(&w->order_mu);
    atomic_store_explicit(&w->talked[node], 1, memory_order_relaxed);
    glex_node_shm_t *me = glex_node_shm(f, f->node);
    atomic_fetch_add_explicit(&me->wire_msgs_sent, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->wire_bytes_sent, sizeof *h + len, memory_order_relaxed);
    return GLEX_OK;
}

/* ------------------------------------------------------------- receiving */

held_t *glex_wire_keep(const wmsg_t *m)
{
    held_t *e = malloc(sizeof *e + m->len);
    if (!e) {
        fprintf(stderr, "glex: out of memory keeping a fabric message of %u bytes\n", m->len);
        return NULL;
    }
    memcpy(&e->m, m, sizeof *m + m->len);
    e->next = NULL;
    return e;
}

void glex_wire_append(held_t **head, held_t **tail, held_t *e)
{
    if (*tail)
        (*tail)->next = e;
    else
        *head = e;
    *tail = e;
}

/* a message as it completes: applied when it is its sender's next, else
 * kept until the ones sent before it are in (under cq_mu) */
static void apply(glex_fabric_t *f, const wmsg_t *m, size_t got)
{
    struct glex_wire *w = f->wire;
    if (got < sizeof *m || got != sizeof *m + m->len || m->src >= f->nnodes) {
        fprintf(stderr, "glex: node %u: a fabric message of %zu bytes is malformed\n", f->node,
                got);
        return;
    }
    if (m->token != w->token) {
        atomic_fetch_add(&w->strays, 1);
        return;
    }
    glex_node_shm_t *me = glex_node_shm(f, f->node);
    atomic_fetch_add_explicit(&me->wire_msgs_received, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->wire_bytes_received, got, memory_order_relaxed);
    atomic_store_explicit(&w->talked[m->src], 1, memory_order_relaxed);
    atomic_store_explicit(&w->heard_ns[m->src], glex_coarse_ns(), memory_order_relaxed);
    if (m->seq != w->rx_next[m->src]) {
        held_t *e = glex_wire_keep(m);
        if (e) {
            e->next = w->early;
            w->early = e;
        }
        return;
    }
    w->rx->apply(f, m);
    uint32_t src = m->src;
    w->rx_next[src]++;
    for (int found = 1; found && w->early;) {
        found = 0;
        for (held_t **pe = &w->early; *pe; pe = &(*pe)->next) {
            held_t *e = *pe;
            if (e->m.src != src || e->m.seq != w->rx_next[src])
                continue;
            *pe = e->next;
            w->rx->apply(f, &e->m);
            w->rx_next[src]++;
            free(e);
            found = 1;
            break;
        }
    }
}

static void post_recv(glex_fabric_t *f, wbuf_t *b)
{
    struct glex_wire *w = f->wire;
    for (int i = 0; i < 1000000 && !atomic_load(&w->stop); i++) {
        ssize_t rc = fi_recv(w->ep, b->data, BUFSZ, NULL, FI_ADDR_UNSPEC, &b->ctx);
        if (rc != -FI_EAGAIN)
            return;
        struct fi_cq_msg_entry e;
        (void)fi_cq_read(w->cq, &e, 0); /* progress only */
    }
}

static int is_write(const struct glex_wire *w, const void *ctx)
{
    return (const uint8_t *)ctx >= (const uint8_t *)w->writes &&
           (const uint8_t *)ctx < (const uint8_t *)(w->writes + NWRITES);
}

/* a send's buffer comes back; a write's waiter learns how it went (or, if
 * it gave up waiting, the slot is free again) */
static void done_send(struct glex_wire *w, void *ctx, int failed)
{
    if (!is_write(w, ctx)) {
        give_send(w, ctx);
        return;
    }
    wwrite_t *r = ctx;
    int one = 1;
    if (!atomic_compare_exchange_strong(&r->state, &one, failed ? -1 : 2))
        atomic_store(&r->state, 0); /* given up */
    atomic_fetch_sub(&w->sends_out, 1);
}

int glex_wire_write(glex_fabric_t *f, uint32_t node, uint64_t addr, const void *src,
                    uint64_t len)
{
    struct glex_wire *w = f->wire;
    return glex_wire_write_key(f, node, w->rma_virt ? addr : addr - w->rg_base[node],
                               w->rg_key[node], src, len);
}

/* one fi_write of at most max_msg_size bytes, waited for */
static int write_one(glex_fabric_t *f, uint32_t node, uint64_t raddr, uint64_t key,
                     const void *src, uint64_t len)
{
    struct glex_wire *w = f->wire;
    if (atomic_load(&w->dead[node]))
        return glex_error(GLEX_EDEAD, "node %u on host %u is unreachable over the fabric", node,
                          f->host_of[node]);
    wwrite_t *r = NULL;
    while (!r) {
        for (uint32_t i = 0; i < NWRITES && !r; i++) {
            int z = 0;
            if (atomic_compare_exchange_strong(&w->writes[i].state, &z, 1))
                r = &w->writes[i];
        }
        if (!r && !reap_sends(f) && !glex_wire_drain(f, 0))
            sched_yield();
    }
    atomic_fetch_add(&w->sends_out, 1);
    uint64_t now = glex_coarse_ns(), give_up = now + f->p.timeout_ms * 1000000ull;
    ssize_t rc;
    /* under the order lock: a send of this thread after it goes after it */
    pthread_mutex_lock(&w->order_mu);
    while ((rc = fi_write(w->ep, src, len, NULL, (fi_addr_t)node, raddr, key, &r->ctx)) ==
               -FI_EAGAIN && glex_coarse_ns() < give_up)
        if (!reap_sends(f) && !glex_wire_drain(f, 0))
            sched_yield();
    pthread_mutex_unlock(&w->order_mu);
    if (rc) {
        atomic_fetch_sub(&w->sends_out, 1);
        atomic_store(&r->state, 0);
        glex_wire_mark_dead(f, node, rc == -FI_EAGAIN ? "it takes no RDMA write"
                                                      : fi_strerror((int)-rc));
        return glex_wire_fail("fi_write", rc);
    }
    /* the source may be reused once the write completes */
    int st;
    while ((st = atomic_load(&r->state)) == 1) {
        if (glex_coarse_ns() > give_up || atomic_load(&w->dead[node])) {
            int one = 1;
            if (atomic_compare_exchange_strong(&r->state, &one, 3)) { /* freed when done */
                glex_wire_mark_dead(f, node, "an RDMA write to it did not complete");
                return glex_error(GLEX_EDEAD, "an RDMA write to node %u on host %u did not "
                                  "complete in %u ms", node, f->host_of[node], f->p.timeout_ms);
            }
            continue;
        }
        if (!reap_sends(f) && !glex_wire_drain(f, 0))
            sched_yield();
    }
    atomic_store(&r->state, 0);
    if (st < 0) {
        glex_wire_mark_dead(f, node, "an RDMA write to it failed");
        return glex_error(GLEX_EDEAD, "an RDMA write to node %u on host %u failed", node,
                          f->host_of[node]);
    }
    glex_node_shm_t *me = glex_node_shm(f, f->node);
    atomic_fetch_add_explicit(&me->wire_msgs_sent, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->wire_bytes_sent, len, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->wire_writes, 1, memory_order_relaxed);
    atomic_store_explicit(&w->talked[node], 1, memory_order_relaxed);
    return GLEX_OK;
}

/* The most one fi_write carries.  Each is waited for within GLEX_TIMEOUT,
 * so that bounds the time of one write, not of a transfer: a write of 1 GiB
 * (the earlier bound) took 5-7 s between emulated hosts here (a slower
 * link or a busy machine nears the default 30 s), and a healthy receiver
 * of a 256 MiB message was declared unreachable at GLEX_TIMEOUT=0.5.
 * 16 MiB: 0.1 s here; one write at a time costs a completion's round trip
 * per 16 MiB (4 x 256 MiB as fast as before). */
#define WRITE_CHUNK (16ull << 20)

int glex_wire_write_key(glex_fabric_t *f, uint32_t node, uint64_t raddr, uint64_t key,
                        const void *src, uint64_t len)
{
    uint64_t most = f->wire->info->ep_attr->max_msg_size;
    if (!most || most > WRITE_CHUNK)
        most = WRITE_CHUNK;
    for (uint64_t off = 0; off < len; off += most) {
        int rc = write_one(f, node, raddr + off, key, (const uint8_t *)src + off,
                           len - off < most ? len - off : most);
        if (rc)
            return rc;
    }
    return GLEX_OK;
}

int glex_wire_reg(glex_fabric_t *f, void *base, uint64_t len, uint64_t want, struct fid_mr **mr,
                  uint64_t *key)
{
    struct glex_wire *w = f->wire;
    *mr = NULL;
    *key = 0;
    if (!w || !w->rma)
        return GLEX_ENOTSUP;
    int rc = fi_mr_reg(w->domain, base, len, FI_REMOTE_WRITE, 0, want, 0, mr, NULL);
    if (!rc && (w->info->domain_attr->mr_mode & FI_MR_ENDPOINT) &&
        ((rc = fi_mr_bind(*mr, &w->ep->fid, 0)) || (rc = fi_mr_enable(*mr))))
        fi_close(&(*mr)->fid);
    if (rc) {
        *mr = NULL;
        return glex_wire_fail("fi_mr_reg", rc);
    }
    *key = fi_mr_key(*mr);
    return GLEX_OK;
}

int glex_wire_expose(glex_fabric_t *f, void *base, uint64_t len, uint64_t *key)
{
    struct glex_wire *w = f->wire;
    *key = 0;
    if (!w || w->mr) /* one exposed region; glex_wire_reg checks for FI_RMA */
        return GLEX_ENOTSUP;
    return glex_wire_reg(f, base, len, RING_KEY, &w->mr, key);
}

/* sends complete on a CQ of their own without a wait object: a send's
 * completion wakes no thread (one CQ for both woke the progress thread at
 * every send, 2 context switches and a futex hand-off a message).  Their
 * buffers return here; any thread may call it.  How many */
static int reap_sends(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    if (!atomic_load_explicit(&w->sends_out, memory_order_relaxed))
        return 0;
    int n = 0;
    for (;;) {
        struct fi_cq_msg_entry e[16];
        ssize_t got = fi_cq_read(w->txcq, e, 16);
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(w->txcq, &err, 0) == 1 && err.op_context) {
                if (!is_write(w, err.op_context))
                    glex_wire_mark_dead(f, ((wbuf_t *)err.op_context)->node,
                                        fi_strerror(err.err));
                done_send(w, err.op_context, 1);
            }
            n++;
            continue;
        }
        if (got <= 0)
            return n;
        for (ssize_t i = 0; i < got; i++)
            done_send(w, e[i].op_context, 0);
        n += (int)got;
    }
}

/* read and handle completions; block: wait for cq_mu, else give up when
 * another thread reads.  Returns how many were handled. */
static int drain(glex_fabric_t *f, int block, int serve)
{
    struct glex_wire *w = f->wire;
    int n = reap_sends(f);
    if (block)
        pthread_mutex_lock(&w->cq_mu);
    else if (pthread_mutex_trylock(&w->cq_mu))
        return n;
    w->serve_after = serve;
    for (;;) {
        struct fi_cq_msg_entry e[16];
        ssize_t got = fi_cq_read(w->cq, e, 16);
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(w->cq, &err, 0) == 1 && err.op_context && !atomic_load(&w->stop))
                post_recv(f, err.op_context);
            n++;
            continue;
        }
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; i++) {
            wbuf_t *b = e[i].op_context;
            apply(f, (const wmsg_t *)(void *)b->data, e[i].len);
            if (!atomic_load(&w->stop))
                post_recv(f, b);
        }
        n += (int)got;
    }
    if (w->held)
        n += w->rx->retry(f);
    w->serve_after = 0;
    pthread_mutex_unlock(&w->cq_mu);
    return n;
}

int glex_wire_drain(glex_fabric_t *f, int block) { return drain(f, block, 0); }

int glex_wire_drain_serve(glex_fabric_t *f, int block)
{
    int n = drain(f, block, 1);
    if (n)
        f->wire->rx->services(f);
    return n;
}

/* while processes share a core, the shortest gap between two reads of the
 * CQ by the threads in glex_progress */
enum { WIRE_POLL_GAP_NS = 20000 };

int glex_wire_poll(glex_fabric_t *f) /* f->wire set: the caller looks, off the one-host path */
{
    struct glex_wire *w = f->wire;
    if (!atomic_load(&w->connected))
        return 0;
    /* the progress thread wakes on the CQ's fd when something arrives.  A
     * process with a core of its own also reads the CQ at every call, as a
     * NIC's receive port is always watched (2 ranks on 2 hosts: 8-byte
     * latency 37 us against 90 when it left arrivals to the woken thread).
     * Where processes share a core the threads in glex_progress (an
     * application spinning in MPI_Test, the engine thread) read it at most
     * every WIRE_POLL_GAP_NS: each read is an epoll_wait in the tcp
     * provider, and polled at every call a 5-rank job across 2 hosts spent
     * half its time in the kernel (MPICH's nonblocking3 ran 97 s, 71 s with
     * the gap) */
    uint64_t now = glex_now_ns();
    if (glex_procs_per_cpu_here(f) > 1 &&
        now - atomic_load_explicit(&w->polled_ns, memory_order_relaxed) < WIRE_POLL_GAP_NS)
        return 0;
    atomic_store_explicit(&w->polled_ns, now, memory_order_relaxed);
    /* a request that came (an RDMA get's target, above all) is answered
     * here, by the thread that read it: waking the progress thread for it
     * cost a context switch per get */
    return glex_wire_drain_serve(f, 0);
}

/* A thread in glex_progress read the CQ this recently: the progress
 * thread leaves what arrives to it and looks again once that is older (or
 * when that thread says it sleeps), instead of waking at each message.
 * With a core per process (2 ranks on 2 hosts) 2 ms: 8-byte latency 17-29
 * us against 35-40 with 200 us, when the progress thread drained the CQ
 * at every look.  Where processes share a core, hosts read every 20 us at
 * most and yield between, and a host that yields may not run again for a
 * scheduler tick: 500 us (2 x 2 ranks: 8-byte allreduce 92-161 us against
 * 160-310 when the thread woke for every message; with 2 ms one run in
 * three took 0.85-1.1 ms a call). */
static uint64_t host_polls_ns(glex_fabric_t *f)
{
    return glex_procs_per_cpu_here(f) > 1 ? 500000ull : 2000000ull;
}

/* a thread that read the CQ in glex_progress goes to sleep: the progress
 * thread watches the CQ again from now on */
void glex_wire_unwatched(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    if (!w || !atomic_exchange(&w->polled_ns, 0))
        return;
    glex_wire_wake_thread(w); /* else it looks again within host_polls_ns */
}

void glex_wire_wake_thread(struct glex_wire *w)
{
    uint64_t one = 1;
    if (write(w->evfd, &one, sizeof one) < 0) { /* it polls on a timeout anyway */
    }
}

/* sleep on the eventfd (glex_wire_wake_thread) and, where cq, on the CQ's
 * fd for up to ns */
static void thread_sleep(struct glex_wire *w, int cq, uint64_t ns)
{
    struct pollfd pf[2] = { { .fd = w->evfd, .events = POLLIN }, { .fd = w->cq_fd,
                                                                  .events = POLLIN } };
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull) };
    if (ppoll(pf, cq ? 2 : 1, &ts, NULL) > 0 && (pf[0].revents & POLLIN)) {
        uint64_t v;
        if (read(w->evfd, &v, sizeof v) < 0) { /* drained either way */
        }
    }
}

static void *progress_thread(void *arg)
{
    glex_fabric_t *f = arg;
    struct glex_wire *w = f->wire;
    while (!atomic_load(&w->stop) && !atomic_load(&w->connected))
        usleep(1000); /* the job's token first: the provider keeps what arrives */
    while (!atomic_load(&w->stop)) {
        /* a host reads the CQ: this thread stays off it (no drain racing
         * the host for the CQ) until the host has not read it for
         * host_polls_ns or says it sleeps; what a plain drain leaves to
         * answer wakes it (service) */
        uint64_t last = atomic_load(&w->polled_ns), now = glex_now_ns();
        uint64_t window = host_polls_ns(f);
        if (last && now - last < window) {
            w->rx->services(f);
            thread_sleep(w, 0, window - (now - last));
            continue;
        }
        int n = glex_wire_drain_serve(f, 1);
        w->rx->services(f); /* those another thread's plain drain left to this one */
        if (n)
            continue;
        /* sends in flight or messages held: look again soon */
        uint64_t wait_ns = atomic_load(&w->sends_out) || atomic_load(&w->nheld) ? 1000000ull
                                                                                 : 100000000ull;
        int cq = 0;
        if (w->cq_fd >= 0) {
            struct fid *fids[1] = { &w->cq->fid };
            if (fi_trywait(w->fabric, fids, 1) != FI_SUCCESS)
                continue;
            cq = 1;
        } else if (wait_ns > 1000000ull) {
            wait_ns = 1000000ull;
        }
        thread_sleep(w, cq, wait_ns);
    }
    return NULL;
}

/* ------------------------------------------------------------ set-up */

/* The eager pages of a job on several hosts: at each node R the upper half
 * of a unit's eager pages is cut into equal partitions, one per node of the
 * other hosts in node order; GLEX_EAGER_PAGES / 2 partitions at most (more
 * senders: none, they ask for credit). */
static int eager_partitions(glex_fabric_t *f, struct glex_wire *w)
{
    uint32_t n = f->nnodes, half = f->hdr->eager_pages - GLEX_EAGER_LOCAL(f);
    uint32_t *on_host = calloc(f->nhosts, sizeof *on_host), *below = calloc(f->nhosts,
                                                                               sizeof *below);
    w->eg_pages = calloc(n, sizeof *w->eg_pages);
    w->eg_first = calloc(n, sizeof *w->eg_first);
    w->eg_taken = calloc((size_t)n * f->p.units, sizeof *w->eg_taken);
    w->eg_owner = calloc(n, sizeof *w->eg_owner);
    w->eg_ret = calloc((size_t)n * f->p.units, sizeof *w->eg_ret);
    if (!on_host || !below || !w->eg_pages || !w->eg_first || !w->eg_taken || !w->eg_owner ||
        !w->eg_ret) {
        free(on_host);
        free(below);
        return glex_error(GLEX_ENOMEM, "out of memory for the eager partitions of %u nodes", n);
    }
    for (uint32_t i = 0; i < n; i++) {
        on_host[f->host_of[i]]++;
        if (i < f->node)
            below[f->host_of[i]]++;
        if (glex_remote(f, i))
            w->eg_owner[w->eg_nrem++] = i;
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t senders = n - on_host[f->host_of[r]]; /* partitions at r */
        if (!glex_remote(f, r) && r != f->node)
            continue;
        w->eg_pages[r] = (uint16_t)(senders ? half / senders : 0);
        /* this node's index among r's senders: the nodes before it not on r's host */
        w->eg_first[r] = (uint16_t)(GLEX_EAGER_LOCAL(f) +
                                    (f->node - below[f->host_of[r]]) * w->eg_pages[r]);
    }
    free(on_host);
    free(below);
    return GLEX_OK;
}

/* The payload of one message: what the provider sends eagerly.  ofi_rxm
 * sends a message larger than its buffer (FI_OFI_RXM_BUFFER_SIZE, 16 KiB
 * by default) by a rendezvous of its own, a round trip more (2 ranks on 2
 * hosts over a veth pair: 16 KiB latency 83 against 45 us, 32 KiB 102
 * against 54); raising the buffer instead cost 250 MB more per process at
 * 2 x 2 ranks.  Room is left for rxm's header. */
static uint32_t wire_chunk(const struct fi_info *info)
{
    const char *name = info->fabric_attr->prov_name;
    if (!name || !strstr(name, "ofi_rxm"))
        return CHUNK;
    uint64_t buf = 16384;
    const char *v = glex_env("FI_OFI_RXM_BUFFER_SIZE");
    if (v && *v) {
        char *end;
        unsigned long long x = strtoull(v, &end, 0);
        if (!*end && x)
            buf = x;
    }
    uint64_t room = sizeof(wmsg_t) + 256u;
    uint64_t n = buf > room + 4096u ? buf - room : 4096u;
    return n < CHUNK ? (uint32_t)(n & ~63ull) : CHUNK;
}

int glex_wire_start(glex_fabric_t *f, const struct glex_wire_rx *rx)
{
    struct glex_wire *w = calloc(1, sizeof *w);
    if (!w)
        return glex_error(GLEX_ENOMEM, "out of memory for the fabric endpoint");
    f->wire = w;
    w->rx = rx;
    w->cq_fd = w->evfd = -1;
    w->nonce = (glex_now_ns() ^ (uint64_t)getpid() << 40) * 0x9e3779b97f4a7c15ull;
    pthread_mutex_init(&w->cq_mu, NULL);
    pthread_mutex_init(&w->send_mu, NULL);
    pthread_mutex_init(&w->svc_mu, NULL);
    pthread_mutex_init(&w->job_mu, NULL);
    pthread_cond_init(&w->job_cv, NULL);
    w->ping_ns = calloc(f->nnodes, sizeof *w->ping_ns);
    w->pong_ns = calloc(f->nnodes, sizeof *w->pong_ns);
    w->dead = calloc(f->nnodes, sizeof *w->dead);
    w->talked = calloc(f->nnodes, sizeof *w->talked);
    w->heard_ns = calloc(f->nnodes, sizeof *w->heard_ns);
    w->rx_next = calloc(f->nnodes, sizeof *w->rx_next);
    w->tx_seq = calloc(f->nnodes, sizeof *w->tx_seq);
    w->rg_base = calloc(f->nnodes, sizeof *w->rg_base);
    w->rg_len = calloc(f->nnodes, sizeof *w->rg_len);
    w->rg_key = calloc(f->nnodes, sizeof *w->rg_key);
    pthread_mutex_init(&w->order_mu, NULL);
    w->bufs = aligned_alloc(64, sizeof(wbuf_t) * (NRECV + NSEND));
    if (!w->ping_ns || !w->pong_ns || !w->dead || !w->bufs || !w->rx_next || !w->tx_seq ||
        !w->talked || !w->heard_ns || !w->rg_base || !w->rg_len || !w->rg_key)
        return glex_error(GLEX_ENOMEM, "out of memory for the fabric endpoint");
    int rc = eager_partitions(f, w);
    if (rc)
        return rc;

    if ((rc = glex_fi_load()))
        return rc;
    struct fi_info *hints = fi_allocinfo();
    if (!hints)
        return glex_error(GLEX_ENOMEM, "out of memory for libfabric hints");
    hints->ep_attr->type = FI_EP_RDM;
    /* RDMA writes where the provider has them and delivers a send after a
     * write before it (FI_ORDER_SAW: a ring's data, then its MP) */
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = FI_CONTEXT;
    hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
    hints->rx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->domain_attr->av_type = FI_AV_TABLE;
    hints->domain_attr->mr_mode = 0;
    const char *prov = glex_env("FI_PROVIDER");
    hints->fabric_attr->prov_name = strdup(prov && *prov ? prov : "tcp;ofi_rxm");
    rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &w->info);
    if (rc) { /* messages only */
        hints->caps = FI_MSG;
        hints->tx_attr->msg_order = hints->rx_attr->msg_order = FI_ORDER_SAS;
        rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &w->info);
    }
    fi_freeinfo(hints);
    /* a source buffer must not need registering (user memory) */
    w->rma = !rc && (w->info->caps & FI_RMA) &&
             !(w->info->domain_attr->mr_mode & (FI_MR_LOCAL | FI_MR_RAW | FI_MR_MMU_NOTIFY));
    w->rma_virt = !rc && (w->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    if (rc)
        return glex_error(GLEX_ESYS, "libfabric: no provider '%s' with reliable datagrams and "
                          "ordered messages (fi_getinfo: %s); set FI_PROVIDER to one fi_info "
                          "lists", prov && *prov ? prov : "tcp;ofi_rxm", fi_strerror(-rc));
    w->chunk = wire_chunk(w->info);
    struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_MSG, .size = 4 * (NRECV + NSEND),
                              .wait_obj = FI_WAIT_FD };
    struct fi_av_attr ava = { .type = FI_AV_TABLE, .count = f->nnodes };
    if ((rc = fi_fabric(w->info->fabric_attr, &w->fabric, NULL)))
        return glex_wire_fail("fi_fabric", rc);
    if ((rc = fi_domain(w->fabric, w->info, &w->domain, NULL)))
        return glex_wire_fail("fi_domain", rc);
    if ((rc = fi_cq_open(w->domain, &cqa, &w->cq, NULL))) { /* no wait object: poll */
        cqa.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(w->domain, &cqa, &w->cq, NULL)))
            return glex_wire_fail("fi_cq_open", rc);
    } else if (fi_control(&w->cq->fid, FI_GETWAIT, &w->cq_fd)) {
        w->cq_fd = -1;
    }
    struct fi_cq_attr txa = { .format = FI_CQ_FORMAT_MSG, .size = 2 * NSEND,
                              .wait_obj = FI_WAIT_NONE };
    if ((rc = fi_cq_open(w->domain, &txa, &w->txcq, NULL)))
        return glex_wire_fail("fi_cq_open", rc);
    if ((rc = fi_av_open(w->domain, &ava, &w->av, NULL)))
        return glex_wire_fail("fi_av_open", rc);
    if ((rc = fi_endpoint(w->domain, w->info, &w->ep, NULL)))
        return glex_wire_fail("fi_endpoint", rc);
    if ((rc = fi_ep_bind(w->ep, &w->cq->fid, FI_RECV)) ||
        (rc = fi_ep_bind(w->ep, &w->txcq->fid, FI_TRANSMIT)) ||
        (rc = fi_ep_bind(w->ep, &w->av->fid, 0)))
        return glex_wire_fail("fi_ep_bind", rc);
    if ((rc = fi_enable(w->ep)))
        return glex_wire_fail("fi_enable", rc);
    for (uint32_t i = 0; i < NRECV + NSEND; i++) {
        wbuf_t *b = &w->bufs[i];
        b->is_recv = i < NRECV;
        if (b->is_recv) {
            post_recv(f, b);
        } else {
            b->next = w->free_send;
            w->free_send = b;
        }
    }
    w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->evfd < 0)
        return glex_error(GLEX_ESYS, "eventfd: %s", strerror(errno));
    if ((rc = pthread_create(&w->th, NULL, progress_thread, f)))
        return glex_error(GLEX_ESYS, "the fabric's progress thread: %s", strerror(rc));
    w->have_thread = 1;
    return GLEX_OK;
}

void glex_wire_stop(glex_fabric_t *f)
{
    struct glex_wire *w = f->wire;
    if (!w)
        return;
    /* the other hosts' nodes learn that this one left (not failed), and
     * what this process sent must leave before its endpoint closes */
    atomic_store(&w->closing, 1);
    if (atomic_load(&w->connected))
        for (uint32_t i = 0; i < f->nnodes; i++)
            if (glex_remote(f, i) && atomic_load(&w->talked[i]) && !atomic_load(&w->dead[i])) {
                wmsg_t m;
                memset(&m, 0, sizeof m);
                m.type = W_BYE;
                (void)glex_wire_send(f, i, &m, NULL, 0);
            }
    uint64_t end = glex_now_ns() + 2000000000ull;
    while (w->have_thread && atomic_load(&w->sends_out) && glex_now_ns() < end)
        if (!glex_wire_drain(f, 0))
            sched_yield();
    atomic_store(&w->stop, 1);
    if (w->have_thread) {
        glex_wire_wake_thread(w);
        pthread_join(w->th, NULL);
    }
    if (w->mr)
        fi_close(&w->mr->fid);
    for (uint32_t i = 0; i < NGETS; i++)
        if (w->get_mr[i])
            fi_close(&w->get_mr[i]->fid);
    if (w->ep)
        fi_close(&w->ep->fid);
    if (w->av)
        fi_close(&w->av->fid);
    if (w->cq)
        fi_close(&w->cq->fid);
    if (w->txcq)
        fi_close(&w->txcq->fid);
    if (w->domain)
        fi_close(&w->domain->fid);
    if (w->fabric)
        fi_close(&w->fabric->fid);
    if (w->info)
        fi_freeinfo(w->info);
    if (w->evfd >= 0)
        close(w->evfd);
    held_t **lists[] = { &w->held, &w->svc, &w->early };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        while (*lists[i]) {
            held_t *e = *lists[i];
            *lists[i] = e->next;
            free(e);
        }
    free(w->rx_next);
    free(w->tx_seq);
    free(w->rg_base);
    free(w->rg_len);
    free(w->rg_key);
    free(w->eg_pages);
    free(w->eg_first);
    free((void *)w->eg_taken);
    free(w->eg_owner);
    free((void *)w->eg_ret);
    pthread_mutex_destroy(&w->order_mu);
    free(w->bufs);
    free((void *)w->ping_ns);
    free((void *)w->pong_ns);
    free((void *)w->dead);
    free((void *)w->talked);
    free((void *)w->heard_ns);
    pthread_mutex_destroy(&w->cq_mu);
    pthread_mutex_destroy(&w->send_mu);
    pthread_mutex_destroy(&w->svc_mu);
    pthread_mutex_destroy(&w->job_mu);
    pthread_cond_destroy(&w->job_cv);
    free(w);
    f->wire = NULL;
}

int glex_fabric_address(glex_fabric_t *f, void *buf, size_t *len)
{
    if (!f->wire) {
        *len = 0;
        return GLEX_OK;
    }
    /* the endpoint's name, then this process's nonce */
    size_t n = GLEX_ADDR_MAX - sizeof f->wire->nonce;
    int rc = fi_getname(&f->wire->ep->fid, buf, &n);
    if (rc)
        return rc == -FI_ETOOSMALL
                   ? glex_error(GLEX_EINVAL, "the fabric address is %zu bytes, more than %zu", n,
                                GLEX_ADDR_MAX - sizeof f->wire->nonce)
                   : glex_wire_fail("fi_getname", rc);
    memcpy((uint8_t *)buf + n, &f->wire->nonce, sizeof f->wire->nonce);
    *len = n + sizeof f->wire->nonce;
    return GLEX_OK;
}

/* The nodes on this machine: those of the hosts whose segment this process
 * sees in /dev/shm (every process opened its host's before its address was
 * exchanged).  Hosts emulated on one machine see each other's; real separate
 * machines do not, and their processes do not share cores. */
static uint32_t nodes_on_machine(const glex_fabric_t *f)
{
    const char *dot = strrchr(f->name, '.');
    uint32_t n = 0;
    for (uint32_t h = 0; dot && h < f->nhosts; h++) {
        char name[sizeof f->name + 16];
        snprintf(name, sizeof name, "%.*s.h%u", (int)(dot - f->name), f->name, h);
        int fd = h == f->host ? -1 : shm_open(name, O_RDONLY, 0);
        if (fd >= 0)
            close(fd);
        if (h == f->host || fd >= 0)
            for (uint32_t i = 0; i < f->nnodes; i++)
                n += f->host_of[i] == h;
    }
    return n ? n : f->nnodes;
}

int glex_fabric_connect(glex_fabric_t *f, const void *addrs, size_t stride, const size_t *len)
{
    struct glex_wire *w = f->wire;
    if (!w)
        return GLEX_OK;
    if (atomic_load(&w->connected))
        return glex_error(GLEX_EBUSY, "node %u: the fabric addresses are set already", f->node);
    uint64_t token = 0xcbf29ce484222325ull; /* FNV-1a over every address and nonce */
    for (uint32_t i = 0; i < f->nnodes; i++) {
        size_t most = stride < GLEX_ADDR_MAX ? stride : (size_t)GLEX_ADDR_MAX;
        if (len[i] <= sizeof w->nonce || len[i] > most)
            return glex_error(GLEX_EINVAL, "address of node %u: %zu bytes, allowed %zu..%zu", i,
                              len[i], sizeof w->nonce + 1, most);
        const uint8_t *a8 = (const uint8_t *)addrs + i * stride;
        for (size_t k = 0; k < len[i]; k++)
            token = (token ^ a8[k]) * 0x100000001b3ull;
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        int n = fi_av_insert(w->av, a8, 1, &a, 0, NULL);
        if (n != 1 || a != (fi_addr_t)i)
            return glex_error(GLEX_ESYS, "libfabric fi_av_insert of node %u's address: %s", i,
                              n < 0 ? fi_strerror(-n) : "not inserted in node order");
    }
    w->token = token;
    atomic_store_explicit(&f->machine_nodes, nodes_on_machine(f), memory_order_relaxed);
    atomic_store(&w->connected, 1);
    return GLEX_OK;
}

#endif /* GLEX_HAVE_LIBFABRIC */
