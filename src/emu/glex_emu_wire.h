/* glex_emu_wire.h - the fabric between hosts, private to glex_emu_wire.c
 * (the transport: endpoint, messages, the progress thread) and
 * glex_emu_wire_ops.c (what the NIC model sends over it). */
#ifndef GLEX_EMU_WIRE_H
#define GLEX_EMU_WIRE_H
#ifdef GLEX_HAVE_LIBFABRIC
#include "glex_emu_internal.h"

#include <poll.h>
#include <time.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* libfabric's functions that are not inline (glex_emu_fi.c loads them when
 * a job first spans hosts; nothing links libfabric) */
struct glex_fi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
};
extern struct glex_fi_lib glex_fi;
/* load libfabric once (GLEX_ESYS with the loader's reason when it cannot) */
int glex_fi_load(void);
/* fi_strerror, or a word that says libfabric is not loaded */
const char *glex_fi_strerror(int err);
#define fi_getinfo glex_fi.getinfo
#define fi_freeinfo glex_fi.freeinfo
#define fi_dupinfo glex_fi.dupinfo
#define fi_fabric glex_fi.fabric
#define fi_strerror glex_fi_strerror
#define fi_allocinfo() glex_fi.dupinfo(NULL) /* fabric.h's inline would call fi_dupinfo */

enum {
    W_INSERT = 1, W_RAM, W_PUT, W_GET, W_GOT, W_MP, W_JOB, W_JOBREPLY, W_JOBREL, W_PING, W_PONG,
    W_BYE,
    W_EAGER, /* eager data into the sender's pages of a unit (aux: RAM offset), then its READY
              * (x, y: the key) */
    W_ERET   /* eager pages freed at the receiver: unit, y = page bits of the partition */
};

/* a message: this header, then len bytes */
typedef struct wmsg {
    uint8_t type, cp;
    uint16_t unit; /* unit (INSERT, RAM) or VP (MP: destination) */
    uint32_t len;  /* payload bytes */
    uint32_t src;  /* sending node */
    uint32_t aux;  /* job (INSERT with cp), source VP (MP), members (JOB), ticket */
    uint64_t x;    /* key hi; address (RAM offset, PUT/GET target); JobID key */
    uint64_t y;    /* key lo | dest VP << 32 (INSERT); GET reply address; result (JOBREPLY) */
    uint64_t z;    /* GET length; generation (JOBREPLY) */
    uint64_t vt;   /* virtual time; GET with cp 1: the key under which the requester
                    * registered its destination (the data comes as RDMA writes) */
    uint32_t seq;  /* per (sender, receiver): applied in this order whatever order the
                    * provider completes them in (a large message may complete after a
                    * later small one) */
    uint32_t pad;
    uint64_t token; /* the job's: a message to an address a process of an earlier job had
                     * (its port reused) is not this job's */
} wmsg_t;

_Static_assert(sizeof(wmsg_t) % 8 == 0, "a payload follows the header aligned");

#define CHUNK (64u * 1024u) /* payload bytes of one message at most (w->chunk: less) */
#define BUFSZ (sizeof(wmsg_t) + CHUNK)
#define NRECV 32u            /* receives posted */
#define NSEND 64u            /* send buffers */
#define NGETS 256u           /* RDMA gets in flight */
#define NJOBS 64u            /* JobID requests in flight */
#define NWRITES 64u          /* RDMA writes in flight */
#define RING_KEY 1u          /* the key asked for the exposed rings; a get's: GET_KEY + ticket */
#define GET_KEY 2u

typedef struct wbuf {
    struct fi_context ctx; /* first: the completion's op_context is the buffer */
    struct wbuf *next;
    uint32_t node, is_recv;
    _Alignas(64) uint8_t data[BUFSZ];
} wbuf_t;

typedef struct wwrite { /* an RDMA write in flight: its completion's op_context */
    struct fi_context ctx;
    _Atomic int state; /* 0 free, 1 in flight, 2 done, -1 failed, 3 given up (freed when done) */
} wwrite_t;

typedef struct held { /* a message that waits at its receiver (table or queue full) */
    struct held *next;
    wmsg_t m; /* payload follows */
} held_t;

struct glex_wire {
    const struct glex_wire_rx *rx;
    _Atomic uint64_t polled_ns; /* the last time glex_wire_poll read the CQ (any thread) */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;   /* receives: the progress thread waits on its fd */
    struct fid_cq *txcq; /* sends: no wait object (reap_sends) */
    int cq_fd, evfd;
    pthread_t th;
    int have_thread;
    _Atomic int stop, connected, closing;
    uint64_t token, nonce;                  /* the job's (all addresses), this process's */
    uint32_t chunk; /* payload bytes a message carries at most: what the provider sends
                     * eagerly (wire_chunk), CHUNK at most */
    _Atomic uint64_t strays;                /* messages of another job, dropped */
    pthread_mutex_t cq_mu;   /* one reader of the CQ at a time: messages applied in order */
    pthread_mutex_t send_mu; /* the free send buffers */
    wbuf_t *free_send;
    _Atomic uint32_t sends_out;
    wbuf_t *bufs;            /* NRECV + NSEND */
    held_t *held, *held_tail;            /* under cq_mu */
    held_t *early;                       /* under cq_mu: arrived before their turn */
    uint32_t *rx_next;                   /* under cq_mu: per sender, the next seq */
    pthread_mutex_t order_mu;            /* a seq and its fi_send, together */
    uint32_t *tx_seq;                    /* under order_mu: per receiver */
    pthread_mutex_t svc_mu;              /* requests to answer (rx->services) */
    held_t *svc, *svc_tail;
    int serve_after;                     /* under cq_mu: the thread draining answers
                                          * them itself next (no wake-up) */
    _Atomic int gets[NGETS];             /* 0 free, 1 in flight, 2 done, -1 failed */
    pthread_mutex_t job_mu;
    pthread_cond_t job_cv;
    int job_busy[NJOBS];
    int64_t job_result[NJOBS];
    uint64_t job_gen[NJOBS];
    int job_done[NJOBS];
    _Atomic uint64_t *ping_ns, *pong_ns; /* per node: probe sent, answer seen */
    _Atomic uint8_t *dead;               /* per node: the fabric reported it gone */
    _Atomic uint8_t *talked;             /* per node: a message went either way */
    _Atomic uint64_t *heard_ns;          /* per node: when its last message came in */
    _Atomic uint64_t nheld; /* this process's own count of held (its loop's pace) */
    /* eager pages across hosts (glex_emu_wire_ops.c): the upper half of each
     * unit's eager pages is cut into one partition per node of other hosts,
     * which that node fills without asking and this one returns once read */
    uint16_t *eg_pages;            /* per node R: pages of each partition at R (0: none) */
    uint16_t *eg_first;            /* per node R: this node's partition there (first page) */
    _Atomic uint64_t *eg_taken;    /* per node R x unit: this node's pages in use there */
    uint32_t eg_nrem;              /* nodes of other hosts: the partitions of this node */
    uint32_t *eg_owner;            /* per partition here: the node that fills it */
    _Atomic uint64_t *eg_ret;      /* per unit x partition here: pages read, to return */
    _Atomic int eg_pending;
    /* RDMA writes (FI_RMA, where the provider has it and orders a send
     * after a write): into memory a node of another host exposed */
    int rma;                       /* the endpoint does FI_RMA */
    int rma_virt;                  /* its addresses are virtual (FI_MR_VIRT_ADDR), else offsets */
    struct fid_mr *mr;             /* this process's exposed memory (one region) */
    struct fid_mr *get_mr[NGETS];  /* per get in flight: its destination, written by the
                                    * node that has the data (NULL: it sends messages) */
    uint64_t *rg_base, *rg_len, *rg_key; /* per node: the region it exposed (len 0: none) */
    wwrite_t writes[NWRITES];
};


/* the receive side (glex_emu_wire_rx.c), called by the transport: apply
 * one message in its turn (under the CQ's lock), retry what waits for room
 * (under it too; 1 if any went in), answer requests (outside it: the
 * thread that read them, or the progress thread) */
typedef struct glex_wire_rx {
    void (*apply)(glex_fabric_t *f, const wmsg_t *m);
    int (*retry)(glex_fabric_t *f);
    void (*services)(glex_fabric_t *f);
} glex_wire_rx_t;

/* glex_emu_wire.c */
int glex_wire_fail(const char *what, ssize_t rc);
/* one message of header h (type and fields set) and len payload bytes to node */
int glex_wire_send(glex_fabric_t *f, uint32_t node, wmsg_t *h, const void *p, uint32_t len);
/* read and apply completions; block: wait for the CQ's lock.  How many */
int glex_wire_drain(glex_fabric_t *f, int block);
/* the same, then answer the requests that came (GET, JOB, PING) on this
 * thread */
int glex_wire_drain_serve(glex_fabric_t *f, int block);
void glex_wire_mark_dead(glex_fabric_t *f, uint32_t node, const char *why);
/* wake the progress thread (its eventfd); it also looks again on its own */
void glex_wire_wake_thread(struct glex_wire *w);
/* an RDMA write of len bytes from src to addr in node's exposed region
 * (key), returning once src may be reused; the provider orders a later
 * send to node after it */
int glex_wire_write(glex_fabric_t *f, uint32_t node, uint64_t addr, const void *src,
                    uint64_t len);
/* the same to remote address raddr (virtual or offset, as the provider
 * addresses) of the memory node registered under key */
int glex_wire_write_key(glex_fabric_t *f, uint32_t node, uint64_t raddr, uint64_t key,
                        const void *src, uint64_t len);
/* register len bytes at base for RDMA writes from other nodes, asking for
 * key want (the provider may choose another: *key) */
int glex_wire_reg(glex_fabric_t *f, void *base, uint64_t len, uint64_t want, struct fid_mr **mr,
                  uint64_t *key);
/* a copy of message m with its payload, to keep in a list (NULL, said on
 * stderr, when out of memory); append e to the list head..tail */
held_t *glex_wire_keep(const wmsg_t *m);
void glex_wire_append(held_t **head, held_t **tail, held_t *e);
#endif
#endif
