/* glex_am.c - ch4 active messages over the emulated NIC.
 *
 * Every message is one MP descriptor (inline payload <= GLEX_MP_CAP,
 * 296 bytes) from this node's AM VP to the target's AM VP:
 *   EAGER  wire header + AM header + data, when all of it fits inline;
 *   RING   data that does not fit one descriptor, up to
 *          GLEX_RDMA_EAGER bytes (and a quarter ring): an RDMA put of the
 *          data into this sender's receive ring at the target (glex_ring.c;
 *          memory the target registered with its NIC, written in place),
 *          then the EAGER layout
 *          without data but with where it lies; the MP descriptor asks for a
 *          CQE, which completes the send (the data has left the buffer);
 *          the receiver hands the data to MPICH from its ring and returns
 *          what it consumed every quarter ring as a
 *   CREDIT (wire header only);
 *   FRAG   up to FRAG_MAX bytes of contiguous or packed data that do not fit
 *          one descriptor and that no ring takes (rings off, or no room
 *          in this one): the EAGER layout with the data's first bytes,
 *          then CONT descriptors (a kind byte + data) with the rest, all
 *          posted at once; the receiver reassembles per source (a VP's MP
 *          descriptors are delivered in posting order) - a few 296-byte
 *          packets cost less than a rendezvous's RDMA get and ACK;
 *   LMT    wire header + AM header + the address of the data: the receiver
 *          hands the header to MPICH as an asynchronous rendezvous; once
 *          the receive buffer is known (at once for a matched receive, at
 *          MPI_Recv for an unexpected one) it reads the data with RDMA-get
 *          descriptors (cross-memory attach) straight into that buffer
 *          (contiguous, or a few large pieces; small pieces are read into
 *          a bounce buffer and unpacked) and answers with
 *   ACK    which completes the sender's request.
 * The NIC model delivers a VP's MP descriptors in posting order, so
 * messages between two processes are never reordered (MPI's
 * non-overtaking rule); an LMT message is handled completely (data read,
 * handler run) before the next message from the receive queue. */
#include "glex_impl.h"
#include <sched.h>
#include <stdio.h>

enum { WIRE_EAGER = 1, WIRE_LMT = 2, WIRE_ACK = 3, WIRE_FRAG = 4, WIRE_CONT = 5, WIRE_RING = 6,
    WIRE_CREDIT = 7, WIRE_SPLIT = 8, WIRE_SYNC_ACK = 9
};

typedef struct {
    uint8_t kind;
    uint8_t handler_id;
    uint8_t src_vci, dst_vci;
    uint32_t am_hdr_sz;
    uint64_t data_sz;
    uint64_t addr;     /* LMT: where the sender's data is; RING: its offset in the ring */
    uint64_t cookie;   /* LMT, ACK, SYNC_ACK: the sender's request; RING: ring bytes taken;
                        * CREDIT: ring bytes consumed, ever */
} wire_t;

#define WIRE_SZ ((MPI_Aint) sizeof(wire_t))
/* an EAGER message's wire header: the fields before data_sz (its data is
 * what the MP has after the AM header; addr and cookie mean nothing) */
#define EAGER_SZ ((MPI_Aint) offsetof(wire_t, data_sz))
/* an MP descriptor's payload (its data field, whatever GLEX_INLINE_MAX says:
 * that sizes the collectives' packets) */
#define MP_INLINE ((MPI_Aint) GLEX_MP_CAP)

/* messages every receive call handles at most (keeps progress calls short) */
#define RQ_BATCH 64
/* the eager limit the netmod reports (MPICH 4.0.2 asks am_check_eager
 * instead, and every send is one active message) */
#define AM_EAGER_LIMIT (64 * 1024)
/* data up to this size that does not fit one descriptor goes in fragments
 * (FRAG + CONT descriptors) instead of a rendezvous */
#define FRAG_MAX 2048
#define FRAG_DESCS 16   /* at most this many descriptors a message */

/* a FRAG message being reassembled: one per source node at most */
typedef struct {
    uint8_t *buf;       /* AM header, then the data */
    wire_t w;
    uint64_t have;      /* data bytes in */
} frag_t;
static frag_t *frags;   /* per source node, allocated at the first FRAG */

/* Receive-queue entries taken off the NIC while this process could not post
 * (descriptor queue full); handled in order before the queue itself. */
typedef struct held {
    struct held *next;
    glex_rqe_long_t r;
} held_t;
static held_t *held_head, *held_tail;
/* 1 inside MPIDI_GLEX_am_poll's batch of handlers (which may send) */
static int in_batch;

static int post_error(int rc)
{
    char msg[512];
    snprintf(msg, sizeof msg, "ch4:glex: %s", glex_last_error());
    return MPIDI_GLEX_error(rc, msg);
}

/* Take what arrived aside, to be handled after what is in hand (wait_pass). */
static void hold_incoming(void)
{
    static held_t *spare;       /* polled into; allocated before, so nothing taken is lost */
    while ((spare || (spare = MPL_malloc(sizeof *spare, MPL_MEM_BUFFER))) &&
           glex_vp_poll_rq_long(MPIDI_GLEX_global.am_vp, &spare->r) == 1) {
        spare->next = NULL;
        if (held_tail)
            held_tail->next = spare;
        else
            held_head = spare;
        held_tail = spare;
        spare = NULL;
    }
}

/* One pass of a wait of this process for its own NIC's work: run the
 * engine, and take what arrived aside.  A VP executes its descriptors in
 * order, so a post, a get or a put waits behind MPs to a peer whose receive
 * queue is full, and that peer may be waiting likewise for room in ours
 * (MPICH's rma test strided_acc_onelock: two processes accumulating into
 * each other, each reading a rendezvous in its handler, hung). */
static void wait_pass(void)
{
    glex_progress(MPIDI_GLEX_global.fabric);
    hold_incoming();
}

/* One post on the AM VP: descriptors (glex_vp_post), an MP of gathered
 * pieces (glex_vp_post_mp), or a put and such an MP with a CQE
 * (glex_vp_post_put_mp). */
typedef struct {
    enum { POST_DESCS, POST_MP, POST_PUT_MP } kind;
    const glex_desc_t *d;
    size_t n;
    uint32_t node;
    const glex_piece_t *p;
    uint32_t np;
    unsigned flags;     /* POST_MP: glex_vp_post_mp_flags' */
    const void *src;
    uint64_t remote, len, cookie;
} am_post_t;

static int post_once(const am_post_t * a)
{
    glex_vp_t *vp = MPIDI_GLEX_global.am_vp;
    switch (a->kind) {
        case POST_DESCS:
            return glex_vp_post(vp, a->d, a->n);
        case POST_MP:
            return glex_vp_post_mp_flags(vp, a->node, MPIDI_GLEX_AM_VP, a->p, a->np, a->flags);
        default:
            return glex_vp_post_put_mp(vp, a->node, MPIDI_GLEX_AM_VP, a->src, a->remote, a->len,
                                       a->p, a->np, a->cookie);
    }
}

/* post at once (nothing of this process comes between a post's
 * descriptors); while the descriptor queue is full, wait_pass */
static int post_retry(const am_post_t * a)
{
    for (;;) {
        int rc = post_once(a);
        if (rc != GLEX_EAGAIN)
            return rc ? post_error(rc) : MPI_SUCCESS;
        wait_pass();
    }
}

/* n descriptors */
static int post(const glex_desc_t * d, size_t n)
{
    am_post_t a = {.kind = POST_DESCS,.d = d,.n = n };
    return post_retry(&a);
}

/* one MP of n payload pieces to node's AM VP */
static int post_mp_flags(uint32_t node, const glex_piece_t * p, uint32_t n, unsigned flags)
{
    am_post_t a = {.kind = POST_MP,.node = node,.p = p,.np = n,.flags = flags };
    return post_retry(&a);
}

static int post_mp(uint32_t node, const glex_piece_t * p, uint32_t n)
{
    return post_mp_flags(node, p, n, 0);
}

/* len bytes of src put at remote on node, then an MP of n pieces whose CQE
 * carries cookie */
static int post_put_mp(uint32_t node, const void *src, uint64_t remote, uint64_t len,
                       const glex_piece_t * p, uint32_t n, uint64_t cookie)
{
    am_post_t a = {.kind = POST_PUT_MP,.node = node,.p = p,.np = n,.src = src,.remote = remote,
        .len = len,.cookie = cookie
    };
    return post_retry(&a);
}

static void mp_init(glex_desc_t * d, uint32_t node)
{
    memset(d, 0, offsetof(glex_desc_t, data));
    d->kind = GLEX_DESC_MP;
    d->ch = d->ct = 1;
    d->source_vp = MPIDI_GLEX_AM_VP;
    d->dest_vp = MPIDI_GLEX_AM_VP;
    d->dest_id = node;
}

/* an RDMA put of len bytes from local to remote of node, from the AM VP */
static void rdma_init(glex_desc_t * d, uint32_t node, uint64_t local, uint64_t remote,
                      uint64_t len)
{
    memset(d, 0, offsetof(glex_desc_t, data));
    d->kind = GLEX_DESC_RDMA;
    d->ch = d->ct = 1;
    d->source_vp = d->dest_vp = MPIDI_GLEX_AM_VP;
    d->dest_id = node;
    d->length = len;
    d->local_addr = local;
    d->remote_addr = remote;
}

/* Packed copies of non-contiguous messages.  A buffer freed is kept for
 * the next (one, up to PACK_KEEP_MAX bytes): a fresh malloc of megabytes
 * is fresh pages, and faulting them in cost more than the copy (a strided
 * MPI_Sendrecv of 4 MB: page faults the largest part of the time). */
#define PACK_KEEP_MAX ((size_t) 64 << 20)
#define PACK_HDR 64     /* the buffer's capacity, in a header of a cache line */
static void *pack_kept;

static size_t pack_cap(const void *p)
{
    return *(const size_t *) ((const char *) p - PACK_HDR);
}

static void *pack_alloc(size_t n)
{
    if (pack_kept && pack_cap(pack_kept) >= n) {
        void *p = pack_kept;
        pack_kept = NULL;
        return p;
    }
    char *b = MPL_malloc(n + PACK_HDR, MPL_MEM_BUFFER);
    if (!b)
        return NULL;
    *(size_t *) b = n;
    return b + PACK_HDR;
}

static void pack_free(void *p)
{
    if (!p)
        return;
    size_t cap = pack_cap(p);
    if (cap <= PACK_KEEP_MAX && (!pack_kept || pack_cap(pack_kept) < cap)) {
        void *old = pack_kept;
        pack_kept = p;
        p = old;
    }
    if (p)
        MPL_free((char *) p - PACK_HDR);
}

/* a message's bytes: in place when contiguous, else a packed copy (*pack,
 * the caller's to pack_free; NULL when none) */
static int message_bytes(const void *data, MPI_Aint count, MPI_Datatype datatype, int contig,
                         MPI_Aint true_lb, MPI_Aint data_sz, const void **src, void **pack)
{
    int mpi_errno = MPI_SUCCESS;
    *pack = NULL;
    *src = (const char *) data + true_lb;
    if (contig)
        return MPI_SUCCESS;
    void *p = pack_alloc((size_t) data_sz);
    MPIR_ERR_CHKANDJUMP1(!p, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d", (int) data_sz);
    MPI_Aint packed = 0;
    mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0, p, data_sz, &packed);
    if (mpi_errno) {
        pack_free(p);
        goto fn_fail;
    }
    *pack = p;
    *src = p;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* post a FRAG message: *first (AM header in place, node set) gets the wire
 * header and the first bytes, CONT descriptors the rest, in one post */
static int send_frags(const glex_desc_t * first, wire_t * w, MPI_Aint am_hdr_sz, const void *data,
                      MPI_Aint count, MPI_Datatype datatype, int contig, MPI_Aint true_lb,
                      MPI_Aint data_sz)
{
    int mpi_errno = MPI_SUCCESS;
    glex_desc_t d[FRAG_DESCS];
    const void *src;
    void *pack;
    mpi_errno = message_bytes(data, count, datatype, contig, true_lb, data_sz, &src, &pack);
    MPIR_ERR_CHECK(mpi_errno);
    w->kind = WIRE_FRAG;
    memcpy(&d[0], first, sizeof d[0]);
    memcpy(d[0].data, w, WIRE_SZ);
    MPI_Aint off = MPL_MIN(data_sz, MP_INLINE - WIRE_SZ - am_hdr_sz);
    memcpy(d[0].data + WIRE_SZ + am_hdr_sz, src, off);
    d[0].inline_len = (uint16_t) (WIRE_SZ + am_hdr_sz + off);
    size_t n = 1;
    while (off < data_sz) {
        MPIR_Assert(n < FRAG_DESCS);
        MPI_Aint len = MPL_MIN(data_sz - off, MP_INLINE - 1);
        mp_init(&d[n], first->dest_id);
        d[n].data[0] = WIRE_CONT;
        memcpy(d[n].data + 1, (const uint8_t *) src + off, len);
        d[n].inline_len = (uint16_t) (1 + len);
        off += len;
        n++;
    }
    mpi_errno = post(d, n);
  fn_exit:
    pack_free(pack);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* this process's rendezvous sends to each node whose ACK has not come
 * (NULL until the first): that node's NIC has them to read, so its CPU is
 * not one to offer half a read to (lmt_read_split) */
static uint32_t *lmt_to;

/* a rendezvous send to node posted (by 1) or acknowledged (by -1): counted
 * per node and in all (MPIDI_GLEX_global.lmt_waiting) */
static void lmt_pending(uint32_t node, int by)
{
    if (by < 0 && !MPIDI_GLEX_global.lmt_waiting)
        return;
    MPIDI_GLEX_global.lmt_waiting += (uint64_t) (int64_t) by;
    uint32_t n = glex_fabric_nnodes(MPIDI_GLEX_global.fabric);
    if (!lmt_to && by > 0)
        lmt_to = MPL_calloc(n, sizeof *lmt_to, MPL_MEM_BUFFER);
    if (lmt_to && node < n && (by > 0 || lmt_to[node]))
        lmt_to[node] += (uint32_t) by;
}

/* a CQE cookie that completes a RING send (requests are aligned: bit 0 is
 * free); the CQEs of rdma_read carry even numbers */
#define RING_COOKIE(sreq) ((uint64_t) (uintptr_t) (sreq) | 1u)

/* post a RING message: *first (AM header in place, node set) names the slot
 * its data is put into, in one post after the put */
static int send_ring(uint32_t node, wire_t * w, const void *am_hdr, MPI_Aint am_hdr_sz,
                     const void *data, MPI_Aint count, MPI_Datatype datatype, int contig,
                     MPI_Aint true_lb, MPI_Aint data_sz, const MPIDI_GLEX_ring_slot_t * rs,
                     int handler_id, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    const void *src;
    void *pack;
    mpi_errno = message_bytes(data, count, datatype, contig, true_lb, data_sz, &src, &pack);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_GLEX_AMREQ(sreq).handler_id = handler_id;
    MPIDI_GLEX_AMREQ(sreq).pack_buffer = pack;  /* freed at the CQE */
    w->kind = WIRE_RING;
    w->addr = rs->off;
    w->cookie = rs->used;
    /* the data into the ring, then the EAGER layout without data, whose CQE
     * completes the send */
    glex_piece_t p[2] = { {w, WIRE_SZ}, {am_hdr, (size_t) am_hdr_sz} };
    mpi_errno = post_put_mp(node, src, rs->remote, (uint64_t) data_sz, p, am_hdr_sz ? 2 : 1,
                            RING_COOKIE(sreq));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int take_cqes(int *took);

/* the data bytes an inline MP has room for beside an AM header of
 * am_hdr_sz bytes */
static MPI_Aint inline_room(MPI_Aint am_hdr_sz)
{
    return MP_INLINE - EAGER_SZ - am_hdr_sz;
}

/* the same for a long MP (glex_vp_try_mp_long); GLEX_MP_LONG=0: none
 * (data sizes are never negative) */
static MPI_Aint long_room(MPI_Aint am_hdr_sz)
{
    return MPIDI_GLEX_global.mp_long ? (MPI_Aint) GLEX_MP_LONG_CAP - EAGER_SZ - am_hdr_sz : -1;
}

MPI_Aint MPIDI_GLEX_mp_room(MPI_Aint am_hdr_sz)
{
    return MPL_MAX(inline_room(am_hdr_sz), long_room(am_hdr_sz));
}

/* An EAGER message (up to MPIDI_GLEX_mp_room bytes of contiguous data) as
 * one MP, the NIC gathering its payload (wire header w, AM header, data):
 * inline when it fits (always sent), else a long MP sent at once or not
 * at all (not: this VP has descriptors in flight, node is on another host,
 * in virtual time, or node's receive queue lacks the slots); *sent says
 * which */
static int post_eager(uint32_t node, wire_t * w, const void *am_hdr, MPI_Aint am_hdr_sz,
                      const void *data, MPI_Aint data_sz, int *sent)
{
    w->kind = WIRE_EAGER;
    glex_piece_t p[3] = { {w, EAGER_SZ}, {am_hdr, (size_t) am_hdr_sz}, {data, (size_t) data_sz} };
    uint32_t n = data_sz ? 3 : 2;
    if (data_sz <= inline_room(am_hdr_sz)) {
        *sent = 1;
        int mpi_errno = post_mp(node, p, n);
        if (!mpi_errno)
            MPIDI_GLEX_global.am_sent[MPIDI_GLEX_AM_INLINE]++;
        return mpi_errno;
    }
    int rc = glex_vp_try_mp_long(MPIDI_GLEX_global.am_vp, node, MPIDI_GLEX_AM_VP, p, n, 0);
    if (rc < 0)
        return post_error(rc);
    *sent = rc;
    if (rc)
        MPIDI_GLEX_global.am_sent[MPIDI_GLEX_AM_LONG]++;
    return MPI_SUCCESS;
}

int MPIDI_GLEX_send_mp(uint32_t node, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                       const void *data, MPI_Aint data_sz, int *sent)
{
    wire_t w = {.handler_id = (uint8_t) handler_id,.am_hdr_sz = (uint32_t) am_hdr_sz,
        .data_sz = (uint64_t) data_sz
    };
    return post_eager(node, &w, am_hdr, am_hdr_sz, data, data_sz, sent);
}

/* Pieces of a buffer that a scatter-gather list hands the NIC: at most
 * this many, of at least this many bytes on average (smaller ones cost the
 * kernel more a piece than packing or unpacking them) - in the receiver's
 * memory, and in the sender's, where the kernel pins each piece apart (a
 * strided MPI_Sendrecv of 1000 pieces: of 400 B 100 us packed, 470-600 from
 * the pieces; of 4000 B even; of 40 KiB 2.4 ms packed, 1.2-1.4 not) */
#define SGL_PIECES_MAX 65536
#define SGL_PIECE_MIN 256
#define SGL_SOURCE_PIECE_MIN 8192
/* A rendezvous address with this bit names the sender's scatter-gather
 * list (user addresses never have it): an iovec {NULL, pieces}, then the
 * pieces, read by the receiver's NIC before their data. */
#define SGL_ADDR ((uint64_t) 1 << 63)

/* n pieces holding bytes, worth a scatter-gather list at min bytes a piece */
static int pieces_pay(uint64_t bytes, MPI_Aint n, uint64_t min)
{
    return bytes && n > 0 && n <= SGL_PIECES_MAX && bytes / (uint64_t) n >= min;
}

/* The pieces of the first bytes of (buf, count, datatype), at list[skip..]
 * of a list from pack_alloc (the caller's to pack_free; *n pieces), when
 * they average min bytes or more: else NULL.  The type's own average piece
 * is looked at first: walking the type to count them costs. */
static struct iovec *typed_pieces(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                  MPI_Aint bytes, uint64_t min, MPI_Aint skip, MPI_Aint * n)
{
    MPI_Aint niov = 0, got = 0, density;
    MPIR_Datatype_get_density(datatype, density);
    if ((uint64_t) density < min ||
        MPIR_Typerep_iov_len(count, datatype, bytes, &niov) != MPI_SUCCESS ||
        !pieces_pay((uint64_t) bytes, niov, min))
        return NULL;
    struct iovec *l = pack_alloc((size_t) (niov + skip) * sizeof *l);
    if (l && (MPIR_Typerep_to_iov_offset(buf, count, datatype, 0, l + skip, niov, &got) !=
              MPI_SUCCESS || got != niov)) {
        pack_free(l);
        l = NULL;
    }
    *n = niov;
    return l;
}

/* A non-contiguous rendezvous to a process of this host, in real time,
 * whose pieces are few and large enough: its scatter-gather list (freed
 * with the request), so that the receiver's NIC reads the data from where
 * it lies, no packed copy made.  NULL when not (the caller packs). */
static void *gather_list(uint32_t node, const void *data, MPI_Aint count, MPI_Datatype datatype,
                         MPI_Aint data_sz)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    MPI_Aint niov = 0;
    if (node == glex_fabric_node(f) || !glex_fabric_same_host(f, node) ||
        glex_fabric_params(f)->vtime)
        return NULL;
    struct iovec *l = typed_pieces(data, count, datatype, data_sz, SGL_SOURCE_PIECE_MIN, 1, &niov);
    if (l)
        l[0] = (struct iovec) { NULL, (size_t) niov };
    return l;
}

/* a send's request done: MPIDIG's callback, or a point-to-point send's */
static void origin_done(int handler_id, MPIR_Request * sreq)
{
    if (handler_id == MPIDI_GLEX_P2P_HANDLER)
        MPIDI_GLEX_global.p2p_send_done(sreq);
    else
        MPIDIG_global.origin_cbs[handler_id] (sreq);
}

int MPIDI_GLEX_send_msg(uint32_t node, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                    const void *data, MPI_Aint count, MPI_Datatype datatype, int src_vci,
                    int dst_vci, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    int contig = 1;
    MPI_Aint data_sz = 0, true_lb = 0;
    if (sreq)   /* header-only messages have no request and no datatype */
        MPIDI_Datatype_check_contig_size_lb(datatype, count, contig, data_sz, true_lb);
    if (am_hdr_sz + WIRE_SZ > MP_INLINE) {
        char msg[160];
        snprintf(msg, sizeof msg, "ch4:glex: active-message header of %ld bytes; allowed 0..%ld",
                 (long) am_hdr_sz, (long) (MP_INLINE - WIRE_SZ));
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", msg);
    }

    wire_t w = {.handler_id = (uint8_t) handler_id, .src_vci = (uint8_t) src_vci,
        .dst_vci = (uint8_t) dst_vci, .am_hdr_sz = (uint32_t) am_hdr_sz,
        .data_sz = (uint64_t) data_sz
    };

    if (data_sz <= MPIDI_GLEX_mp_room(am_hdr_sz)) {
        /* one MP: inline, or long when it can go at once */
        uint8_t packed_data[GLEX_MP_LONG_CAP];
        const void *src = (const char *) data + true_lb;
        if (data_sz && !contig) {
            MPI_Aint packed = 0;
            mpi_errno = MPIR_Typerep_pack(data, count, datatype, 0, packed_data, data_sz, &packed);
            MPIR_ERR_CHECK(mpi_errno);
            src = packed_data;
        }
        int sent = 0;
        mpi_errno = post_eager(node, &w, am_hdr, am_hdr_sz, src, data_sz, &sent);
        MPIR_ERR_CHECK(mpi_errno);
        if (sent) {
            if (sreq)
                origin_done(handler_id, sreq);
            goto fn_exit;
        }
    }

    MPIDI_GLEX_ring_slot_t rs;
    uintptr_t at = contig ? (uintptr_t) data + (uintptr_t) true_lb : 0;
    int room = MPIDI_GLEX_ring_reserve(node, data_sz, at, &rs);
    if (room < 0 && !in_batch) {
        /* full until node's credit, which may wait in our receive queue: a
         * stream of sends calls no progress (OSU bibw, a window of 64 of 8
         * KiB each way: a quarter of them went by rendezvous, here a DMA
         * read at 8x a copy).  Take what arrived (as MPICH's own netmods
         * poll when a send finds no resources; not from inside a batch,
         * whose handlers may be sending this), then look again. */
        int work;
        mpi_errno = MPIDI_GLEX_am_poll(&work);
        MPIR_ERR_CHECK(mpi_errno);
        room = MPIDI_GLEX_ring_reserve(node, data_sz, at, &rs);
    }
    if (room > 0) {
        mpi_errno = send_ring(node, &w, am_hdr, am_hdr_sz, data, count, datatype, contig,
                              true_lb, data_sz, &rs, handler_id, sreq);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_GLEX_global.am_sent[MPIDI_GLEX_AM_RING]++;
        /* complete at its CQE, which the NIC has usually written by now (an
         * idle VP executes both at the post): taken at once, the request is
         * complete when the send call returns */
        int took;
        mpi_errno = take_cqes(&took);
        goto fn_exit;
    }

    glex_desc_t d;
    mp_init(&d, node);
    if (am_hdr_sz)
        memcpy(d.data + WIRE_SZ, am_hdr, am_hdr_sz);

    if (data_sz <= FRAG_MAX) {
        mpi_errno = send_frags(&d, &w, am_hdr_sz, data, count, datatype, contig, true_lb,
                               data_sz);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_GLEX_global.am_sent[MPIDI_GLEX_AM_FRAG]++;
        origin_done(handler_id, sreq);
        goto fn_exit;
    }

    /* rendezvous: the receiver reads the data from here (non-contiguous:
     * from its pieces by a scatter-gather list, or from a packed copy) */
    const void *src;
    void *pack = contig ? NULL : gather_list(node, data, count, datatype, data_sz);
    if (pack)
        src = (const void *) ((uintptr_t) pack | (uintptr_t) SGL_ADDR);
    else
        mpi_errno = message_bytes(data, count, datatype, contig, true_lb, data_sz, &src, &pack);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_GLEX_AMREQ(sreq).handler_id = handler_id;
    MPIDI_GLEX_AMREQ(sreq).pack_buffer = pack;
    w.kind = WIRE_LMT;
    w.addr = (uint64_t) (uintptr_t) src;
    w.cookie = (uint64_t) (uintptr_t) sreq;
    memcpy(d.data, &w, WIRE_SZ);
    d.inline_len = (uint16_t) (WIRE_SZ + am_hdr_sz);
    mpi_errno = post(&d, 1);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_GLEX_global.am_sent[MPIDI_GLEX_AM_RNDV]++;
    lmt_pending(node, 1);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_GLEX_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                           MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
    return MPIDI_GLEX_send_msg(MPIDI_GLEX_node_of(comm, rank), handler_id, am_hdr, am_hdr_sz, NULL, 0,
                    MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

int MPIDI_GLEX_am_isend(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                        MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                        MPI_Datatype datatype, int src_vci, int dst_vci, MPIR_Request * sreq)
{
    return MPIDI_GLEX_send_msg(MPIDI_GLEX_node_of(comm, rank), handler_id, am_hdr, am_hdr_sz, data, count,
                    datatype, src_vci, dst_vci, sreq);
}

int MPIDI_GLEX_am_send_hdr_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                                 const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
    return MPIDI_GLEX_send_msg(MPIDI_GLEX_node_of(comm, src_rank), handler_id, am_hdr, am_hdr_sz, NULL, 0,
                    MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

int MPIDI_GLEX_am_isend_reply(MPIR_Comm * comm, int src_rank, int handler_id, const void *am_hdr,
                              MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                              MPI_Datatype datatype, int src_vci, int dst_vci,
                              MPIR_Request * sreq)
{
    return MPIDI_GLEX_send_msg(MPIDI_GLEX_node_of(comm, src_rank), handler_id, am_hdr, am_hdr_sz, data,
                    count, datatype, src_vci, dst_vci, sreq);
}

static int lmt_recv(MPIR_Request * rreq);

/* an unexpected rendezvous message: MPICH calls this once a receive matched it */
MPIDIG_recv_data_copy_cb MPIDI_GLEX_am_get_data_copy_cb(uint32_t attr)
{
    return (attr & MPIDIG_AM_ATTR__IS_RNDV) ? lmt_recv : NULL;
}

MPI_Aint MPIDI_GLEX_am_hdr_max_sz(void)
{
    return MP_INLINE - WIRE_SZ;
}

MPI_Aint MPIDI_GLEX_am_eager_limit(void)
{
    return AM_EAGER_LIMIT;
}

MPI_Aint MPIDI_GLEX_am_eager_buf_limit(void)
{
    return MP_INLINE;
}

/* MPICH asks whether a send goes in one active message or by its own
 * rendezvous (an RTS, a CTS back, then the data): always the former.  Our
 * send chooses the protocol itself, and above what the inline, ring and
 * fragment protocols take that is our rendezvous, which reads the data
 * where it lies once the receive is matched: one round trip less (2 ranks
 * on 2 hosts over a veth, latency at 128 KiB - 1 MiB 243-1213 us against
 * 297-1350; on one host within the noise) */
bool MPIDI_GLEX_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz, const void *data,
                               MPI_Aint count, MPI_Datatype datatype, MPIR_Request * sreq)
{
    (void) am_hdr_sz, (void) data_sz, (void) data, (void) count, (void) datatype, (void) sreq;
    return true;
}

void MPIDI_GLEX_am_request_init(MPIR_Request * req)
{
    MPIDI_GLEX_AMREQ(req).pack_buffer = NULL;
}

void MPIDI_GLEX_am_request_finalize(MPIR_Request * req)
{
    pack_free(MPIDI_GLEX_AMREQ(req).pack_buffer);
    MPIDI_GLEX_AMREQ(req).pack_buffer = NULL;
}

/* ------------------------------------------------------------ receiving */

/* a CQE on the AM VP is the RDMA read being waited for, a RING send done,
 * or a failed descriptor (its target never drained its queue within
 * GLEX_TIMEOUT) */
static int cqe_error(const glex_cqe_t * e)
{
    char msg[512];
    snprintf(msg, sizeof msg, "ch4:glex: message descriptor failed (%s): %s",
             glex_strerror(e->status), glex_vp_failure(MPIDI_GLEX_global.am_vp));
    return MPIDI_GLEX_error(e->status, msg);
}

/* a CQE other than the one an rdma_read waits for: a RING send done (its
 * request completed), or an error */
static int cqe_take(const glex_cqe_t * e)
{
    if (e->status)
        return cqe_error(e);
    if (e->cookie & 1u) {
        MPIR_Request *sreq = (MPIR_Request *) (uintptr_t) (e->cookie & ~(uint64_t) 1u);
        MPIDI_GLEX_am_request_finalize(sreq);   /* the packed copy is put */
        origin_done(MPIDI_GLEX_AMREQ(sreq).handler_id, sreq);
    }
    return MPI_SUCCESS;
}

/* every CQE of the AM VP, each by cqe_take; *took = 1 when there was one */
static int take_cqes(int *took)
{
    glex_cqe_t c;
    *took = 0;
    while (glex_vp_poll_cq(MPIDI_GLEX_global.am_vp, &c) == 1) {
        *took = 1;
        int mpi_errno = cqe_take(&c);
        if (mpi_errno)
            return mpi_errno;
    }
    return MPI_SUCCESS;
}

/* read an LMT message's data from the sender with an RDMA-get descriptor */
static int rdma_read(uint32_t node, uint64_t remote, void *local, uint64_t len)
{
    static uint64_t seq;
    glex_desc_t d;
    rdma_init(&d, node, (uint64_t) (uintptr_t) local, remote, len);
    d.swap_remote_addr = 1;    /* get */
    d.coll_end_flag = 1;       /* completion entry wanted */
    seq += 2;   /* even: odd cookies are RING sends */
    d.cookie = seq;
    int mpi_errno = post(&d, 1);
    if (mpi_errno)
        return mpi_errno;
    for (;;) {
        glex_cqe_t e;
        while (glex_vp_poll_cq(MPIDI_GLEX_global.am_vp, &e) == 1) {
            if (!e.status && e.cookie == d.cookie)
                return MPI_SUCCESS;
            if ((mpi_errno = cqe_take(&e)))
                return mpi_errno;
        }
        wait_pass();
    }
}

static int post_ack(uint32_t node, int kind, uint64_t cookie, unsigned flags)
{
    wire_t w = {.kind = (uint8_t) kind,.cookie = cookie };
    glex_piece_t p = { &w, WIRE_SZ };
    return post_mp_flags(node, &p, 1, flags);
}

/* The ACKs sent while a batch of arrivals is handled (MPIDI_GLEX_am_poll)
 * to a sender asleep: the last to each is held to the end of the batch and
 * sent with its event, the earlier ones as they come without
 * (GLEX_MP_QUIET); to one awake, at once.  A
 * sender waiting for a window of rendezvous sends, asleep (it naps at once
 * while the others take every CPU, glex_progress.c), is woken once a batch,
 * not once a message: each wake-up costs the receiver a futex call and both
 * a context switch (OSU mbw_mr at 4 processes on 2 CPUs, 64 KiB - 512 KiB:
 * 8.2-12.2 GB/s woken each time, 15-18 quiet, NOTES 2026-11-29).  The cost:
 * a sender's ACK may come one message's handling later. */
static struct {
    uint32_t node;
    int kind;
    uint64_t cookie;
} acks_held[RQ_BATCH];
static int acks_nheld;

static int send_ack(uint32_t node, int kind, uint64_t cookie)
{
    if (!in_batch)
        return post_ack(node, kind, cookie, 0);
    int i = 0;
    while (i < acks_nheld && acks_held[i].node != node)
        i++;
    /* awake, a sender takes it now (it polls for it: OSU bibw, 64 KiB, 7.2
     * GB/s held, 10.5 not) and its event wakes nobody */
    int asleep = glex_host_asleep(MPIDI_GLEX_global.fabric, node);
    if (i < acks_nheld) {       /* the one held before: this one comes after it */
        int mpi_errno = post_ack(node, acks_held[i].kind, acks_held[i].cookie, GLEX_MP_QUIET);
        if (!asleep)
            acks_held[i] = acks_held[--acks_nheld];
        if (mpi_errno)
            return mpi_errno;
    }
    if (!asleep || (i == acks_nheld && i == RQ_BATCH))
        return post_ack(node, kind, cookie, 0);
    if (i == acks_nheld)
        acks_held[acks_nheld++].node = node;
    acks_held[i].kind = kind;
    acks_held[i].cookie = cookie;
    return MPI_SUCCESS;
}

/* the end of a batch: every held ACK, with its event */
static int send_acks_held(void)
{
    int mpi_errno = MPI_SUCCESS;
    in_batch = 0;
    for (int i = 0; i < acks_nheld; i++) {
        int rc = post_ack(acks_held[i].node, acks_held[i].kind, acks_held[i].cookie, 0);
        if (!mpi_errno)
            mpi_errno = rc;
    }
    acks_nheld = 0;
    return mpi_errno;
}

/* pieces of a non-contiguous receive buffer at least this long on average
 * are read in place, one RDMA get each; smaller ones through a bounce buffer */
#define LMT_IOV_MIN (16 * 1024)

/* A rendezvous of at least this many bytes between two processes of this
 * host is read by both NICs' DMA engines at once: the receiver's reads the
 * first half while the sender's writes the second (cross-memory attach: 1
 * MiB in 131 us by one, 67 by two here; OSU at 4 processes on 2 CPUs, 1
 * MiB: 239 -> 81 us) - when the sender has a CPU to do it with.  With every
 * CPU taken by the others (OSU mbw_mr at 4 processes on 2 CPUs: two
 * receivers copying) its half would take a CPU from another copy: 128 KiB
 * - 4 MiB 6.0-11.6 GB/s split, 8.3-13.3 not (bench/results/2026-11-29).
 * Below LMT_SPLIT_BUSY_MIN not when this process has rendezvous sends of
 * its own for the sender to read (OSU bibw, both CPUs reading: an offer is
 * a message, an atomic and a second read call, mostly for nothing; at 2
 * ranks, in turn, 128 KiB - 1 MiB 9.1-10.2 -> 11.4-11.7 GB/s not offered,
 * but 4 MiB 9.6 -> 7.9: the halves of large messages let the CPU that
 * ends its reads first take work off the other's hands). */
#define LMT_SPLIT_MIN (128 * 1024)
#define LMT_SPLIT_BUSY_MIN (2 * 1024 * 1024)

/* the claim word: who moves the second half (its generation in the bits
 * above these two) */
enum { CLAIM_OFFERED = 1, CLAIM_SENDER = 2, CLAIM_RECEIVER = 3, CLAIM_DONE = 0 };

/* a SPLIT message after its wire header (addr: where the second half goes
 * in the receive buffer, data_sz: its bytes, cookie: the sender's request) */
typedef struct {
    uint64_t src;       /* the second half in the sender's memory */
    uint64_t claim;     /* the receiver's claim word (its registered region) */
    uint64_t offered;   /* the word's value while the half is on offer */
} split_t;

static int split_possible(uint32_t node, uint64_t n)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    /* not in virtual time: the model keeps the protocol it was calibrated with */
    return n >= LMT_SPLIT_MIN && node != glex_fabric_node(f) && glex_fabric_same_host(f, node) &&
        !glex_fabric_params(f)->vtime && (n >= LMT_SPLIT_BUSY_MIN || !lmt_to || !lmt_to[node]) &&
        MPIDI_GLEX_ring_claim_word() && glex_cpu_to_spare(f, node);
}

/* Read n bytes of a rendezvous from node's addr into data with the sender's
 * help: the second half is offered to the sender (a SPLIT message naming
 * the claim word); this NIC reads the first half, then claims the second
 * by compare-and-swap.  Taken by the sender's NIC (its atomic on our word
 * won, glex_vp_atomic_cas), it is put into the receive buffer and the word
 * written DONE after it; still on offer, this NIC reads it too, so a
 * sender busy outside MPI delays nothing. */
static int lmt_read_split(uint32_t node, uint64_t addr, uint8_t * data, uint64_t n,
                          uint64_t cookie)
{
    static uint64_t gen;
    uint64_t *claim = MPIDI_GLEX_ring_claim_word();
    uint64_t half = (n / 2 + 63u) & ~(uint64_t) 63u;
    uint64_t g = ++gen << 2;
    uint64_t offered = g | CLAIM_OFFERED;
    __atomic_store_n(claim, offered, __ATOMIC_RELEASE);
    wire_t w = {.kind = WIRE_SPLIT,.addr = (uint64_t) (uintptr_t) (data + half),
        .data_sz = n - half,.cookie = cookie
    };
    split_t x = {.src = addr + half,.claim = (uint64_t) (uintptr_t) claim,.offered = offered };
    glex_piece_t p[2] = { {&w, WIRE_SZ}, {&x, sizeof x} };
    int mpi_errno = post_mp(node, p, 2);
    MPIDI_GLEX_global.lmt_offered++;
    if (!mpi_errno)
        mpi_errno = rdma_read(node, addr, data, half);
    uint64_t expect = offered;
    if (__atomic_compare_exchange_n(claim, &expect, g | CLAIM_RECEIVER, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return mpi_errno ? mpi_errno : rdma_read(node, addr + half, data + half, n - half);
    /* the sender's NIC has it: wait for its DONE (written after the data) */
    uint64_t spins = 0, since = 0;
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    int share = glex_procs_per_cpu_here(f) > 1;
    while (__atomic_load_n(claim, __ATOMIC_ACQUIRE) != (g | CLAIM_DONE)) {
        wait_pass();
        if (share)
            sched_yield();      /* the sender may need this core */
        if (++spins % 1024)
            continue;
        uint64_t now = glex_now_ns();
        if (!since)
            since = now;
        else if (now - since > glex_fabric_params(f)->timeout_ms * 1000000ull) {
            char msg[200];
            snprintf(msg, sizeof msg, "ch4:glex: rank %u took the second half of a rendezvous "
                     "(%llu bytes) and wrote nothing for GLEX_TIMEOUT", node,
                     (unsigned long long) (n - half));
            return MPIDI_GLEX_error(GLEX_ETIMEDOUT, msg);
        }
    }
    MPIDI_GLEX_global.lmt_split++;
    return mpi_errno;
}

/* the sender's side of a SPLIT: claim the offered half with an atomic on
 * the receiver's word; won, put it into the receive buffer, then DONE into
 * the word (in order: the NIC executes a VP's descriptors so) */
static int lmt_help(const glex_rqe_t * e, const uint8_t * data, const wire_t * w)
{
    int mpi_errno = MPI_SUCCESS;
    split_t x;
    MPIR_ERR_CHKANDJUMP1((MPI_Aint) e->len < WIRE_SZ + (MPI_Aint) sizeof x, mpi_errno,
                         MPI_ERR_INTERN, "**fail", "**fail %s", "ch4:glex: short SPLIT message");
    memcpy(&x, data + WIRE_SZ, sizeof x);
    uint64_t old = 0, g = x.offered & ~(uint64_t) 3u;
    int rc = glex_vp_atomic_cas(MPIDI_GLEX_global.am_vp, e->src_id, x.claim, x.offered,
                                g | CLAIM_SENDER, &old);
    if (rc != GLEX_OK || old != x.offered)
        goto fn_exit;   /* not reachable so, or the receiver read it itself */
    MPIR_Request *sreq = (MPIR_Request *) (uintptr_t) w->cookie;
    MPIDI_GLEX_AMREQ(sreq).lmt_done = g | CLAIM_DONE;
    glex_desc_t d[2];
    rdma_init(&d[0], e->src_id, x.src, w->addr, w->data_sz);
    rdma_init(&d[1], e->src_id, (uint64_t) (uintptr_t) & MPIDI_GLEX_AMREQ(sreq).lmt_done,
              x.claim, sizeof(uint64_t));
    mpi_errno = post(d, 2);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int read_into_iov(uint32_t node, uint64_t addr, uint64_t n, const struct iovec *iov,
                         MPI_Aint niov, int *done);
static int source_pieces(uint32_t node, uint64_t addr, uint64_t n, struct iovec *one,
                         struct iovec **list, uint32_t * nr);

int MPIDI_GLEX_lmt_read(uint32_t node, uint64_t addr, void *data, uint64_t n, uint64_t cookie)
{
    if (n && (addr & SGL_ADDR)) {
        struct iovec into = { data, (size_t) n };
        int done;
        return read_into_iov(node, addr, n, &into, 1, &done);
    }
    if (n && split_possible(node, n))
        return lmt_read_split(node, addr, data, n, cookie);
    return n ? rdma_read(node, addr, data, n) : MPI_SUCCESS;
}

/* Rendezvous data for a non-contiguous receive buffer: read in pieces of
 * at most LMT_STAGE bytes into a staging buffer kept for it, each handed to
 * take() (which unpacks it) before the next is read - no buffer of the
 * whole message (fresh pages every time: a strided 4 MB MPI_Sendrecv spent
 * more in page faults than in copies), and each piece still in cache when
 * it is unpacked. */
#define LMT_STAGE ((uint64_t) 1 << 20)
static void *lmt_stage;
static int lmt_stage_busy;

int MPIDI_GLEX_lmt_read_staged(uint32_t node, uint64_t addr, uint64_t n,
                               int (*take)(void *ctx, const void *piece, MPI_Aint len),
                               void *ctx)
{
    int mpi_errno = MPI_SUCCESS;
    if (!n)
        return MPI_SUCCESS;
    if (!lmt_stage && !lmt_stage_busy)
        lmt_stage = MPL_malloc(LMT_STAGE, MPL_MEM_BUFFER);
    int own = lmt_stage_busy || !lmt_stage;     /* a read inside a read: a buffer of its own */
    uint64_t room = own ? MPL_MIN(n, LMT_STAGE) : LMT_STAGE;
    void *stage = own ? MPL_malloc(room, MPL_MEM_BUFFER) : lmt_stage;
    MPIR_ERR_CHKANDJUMP1(!stage, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d", (int) room);
    if (!own)
        lmt_stage_busy = 1;
    struct iovec one, *src = NULL;
    uint32_t nr = 0;
    mpi_errno = source_pieces(node, addr, n, &one, &src, &nr);
    for (uint64_t off = 0; off < n && !mpi_errno;) {
        uint64_t len = MPL_MIN(n - off, room);
        if (addr & SGL_ADDR) {  /* the sender's pieces, from byte off on */
            struct iovec into = { stage, (size_t) len };
            uint64_t moved = 0;
            int rc = glex_vp_get_sgl(MPIDI_GLEX_global.am_vp, node, src, nr, off, &into, 1,
                                     &moved);
            if (rc != GLEX_OK || moved != len)
                MPIR_ERR_SETANDSTMT1(mpi_errno, MPI_ERR_OTHER, break, "**fail", "**fail %s",
                                     glex_last_error());
        } else {
            mpi_errno = rdma_read(node, addr + off, stage, len);
        }
        if (!mpi_errno)
            mpi_errno = take(ctx, stage, (MPI_Aint) len);
        off += len;
    }
    if (src != &one)
        MPL_free(src);
    if (own)
        MPL_free(stage);
    else
        lmt_stage_busy = 0;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Where a rendezvous's n bytes lie at node: one piece at addr, or (addr
 * with SGL_ADDR) the pieces of the sender's scatter-gather list, read by an
 * RDMA get (*list then malloc'ed: the caller frees it). */
static int source_pieces(uint32_t node, uint64_t addr, uint64_t n, struct iovec *one,
                         struct iovec **list, uint32_t * nr)
{
    int mpi_errno = MPI_SUCCESS;
    *list = one;
    *nr = 1;
    *one = (struct iovec) { (void *) (uintptr_t) addr, (size_t) n };
    if (!(addr & SGL_ADDR))
        return MPI_SUCCESS;
    uint64_t at = addr & ~SGL_ADDR;
    struct iovec head;
    mpi_errno = rdma_read(node, at, &head, sizeof head);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP1(head.iov_base || !head.iov_len || head.iov_len > SGL_PIECES_MAX,
                         mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                         "ch4:glex: a rendezvous's scatter-gather list is damaged");
    struct iovec *l = MPL_malloc(head.iov_len * sizeof *l, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP1(!l, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d",
                         (int) (head.iov_len * sizeof *l));
    mpi_errno = rdma_read(node, at + sizeof head, l, head.iov_len * sizeof *l);
    if (mpi_errno) {
        MPL_free(l);
        goto fn_fail;
    }
    *list = l;
    *nr = (uint32_t) head.iov_len;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The bytes of a rendezvous (n at node's addr) straight into the pieces of
 * a receive buffer, by one scatter-gather get (glex_vp_get_sgl): *done 1;
 * 0 (nothing read) when the sender is on another host or in virtual time
 * (it then sent no list). */
static int read_into_iov(uint32_t node, uint64_t addr, uint64_t n, const struct iovec *iov,
                         MPI_Aint niov, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    struct iovec one, *src = NULL;
    uint32_t nr = 0;
    uint64_t moved = 0;
    *done = 0;
    mpi_errno = source_pieces(node, addr, n, &one, &src, &nr);
    MPIR_ERR_CHECK(mpi_errno);
    int rc = glex_vp_get_sgl(MPIDI_GLEX_global.am_vp, node, src, nr, 0, iov, (uint32_t) niov,
                             &moved);
    if (rc == GLEX_ENOTSUP && !(addr & SGL_ADDR))
        goto fn_exit;
    MPIR_ERR_CHKANDJUMP1(rc != GLEX_OK || moved != n, mpi_errno, MPI_ERR_OTHER, "**fail",
                         "**fail %s", glex_last_error());
    *done = 1;
  fn_exit:
    if (src != &one)
        MPL_free(src);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_GLEX_lmt_read_typed(uint32_t node, uint64_t addr, uint64_t n, void *buf,
                              MPI_Aint count, MPI_Datatype datatype, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint niov = 0;
    *done = 0;
    struct iovec *iov = n ? typed_pieces(buf, count, datatype, (MPI_Aint) n, SGL_PIECE_MIN, 0,
                                         &niov) : NULL;
    if (iov)    /* else the staged read */
        mpi_errno = read_into_iov(node, addr, n, iov, niov, done);
    pack_free(iov);
    return mpi_errno;
}

void MPIDI_GLEX_am_buffers_free(void)
{
    if (pack_kept)
        MPL_free((char *) pack_kept - PACK_HDR);    /* pack_free would keep it */
    pack_kept = NULL;
    MPL_free(lmt_stage);
    lmt_stage = NULL;
    MPL_free(lmt_to);
    lmt_to = NULL;
}

int MPIDI_GLEX_send_ack(uint32_t node, uint64_t cookie)
{
    return send_ack(node, WIRE_ACK, cookie);
}

int MPIDI_GLEX_send_sync_ack(uint32_t node, uint64_t cookie)
{
    return send_ack(node, WIRE_SYNC_ACK, cookie);
}

/* a piece of a rendezvous into an MPIDIG receive, after the pieces before */
static int copy_seg(void *rreq, const void *piece, MPI_Aint len)
{
    MPIDIG_recv_copy_seg((void *) piece, len, rreq);
    return MPI_SUCCESS;
}

/* Read a rendezvous message's data into its receive buffer, acknowledge it
 * to the sender and complete the receive (MPICH's target callback). */
static int lmt_recv(MPIR_Request * rreq)
{
    int mpi_errno = MPI_SUCCESS;
    uint32_t node = MPIDI_GLEX_AMREQ(rreq).lmt_node;
    uint64_t addr = MPIDI_GLEX_AMREQ(rreq).lmt_addr;
    MPI_Aint in_sz = MPIDIG_recv_in_data_sz(rreq);
    int contig, gpu;
    void *data;
    MPI_Aint data_sz;   /* contiguous: bytes; else the number of iovecs */
    MPIDIG_get_recv_data(&contig, &gpu, &data, &data_sz, rreq);
    MPIDIG_recv_setup(rreq);    /* the status' count, or a truncation error */
    if (contig) {
        MPI_Aint n = MPL_MIN(in_sz, data_sz);
        mpi_errno = MPIDI_GLEX_lmt_read(node, addr, data, (uint64_t) n,
                                        MPIDI_GLEX_AMREQ(rreq).lmt_cookie);
    } else {
        struct iovec *iov = data;
        MPI_Aint room = 0;
        for (MPI_Aint i = 0; i < data_sz; i++)
            room += (MPI_Aint) iov[i].iov_len;
        MPI_Aint n = MPL_MIN(in_sz, room);
        int done = 0;
        if (pieces_pay((uint64_t) n, data_sz, SGL_PIECE_MIN))
            mpi_errno = read_into_iov(node, addr, (uint64_t) n, iov, data_sz, &done);
        if (!done && !mpi_errno && !(addr & SGL_ADDR) && data_sz > 0 &&
            n / data_sz >= LMT_IOV_MIN) {
            MPI_Aint off = 0;
            for (MPI_Aint i = 0; i < data_sz && off < n && !mpi_errno; i++) {
                MPI_Aint len = MPL_MIN((MPI_Aint) iov[i].iov_len, n - off);
                mpi_errno = rdma_read(node, addr + (uint64_t) off, iov[i].iov_base,
                                      (uint64_t) len);
                off += len;
            }
        } else if (!done && !mpi_errno && n) {
            mpi_errno = MPIDI_GLEX_lmt_read_staged(node, addr, (uint64_t) n, copy_seg, rreq);
        }
    }
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = send_ack(node, WIRE_ACK, MPIDI_GLEX_AMREQ(rreq).lmt_cookie);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDIG_REQUEST(rreq, req->target_cmpl_cb) (rreq);
    MPIR_ERR_CHECK(mpi_errno);
    MPID_Request_complete(rreq);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* take a FRAG or CONT descriptor (header e, payload data); *out is the
 * source's reassembly (its buf the caller's to free) once the message's
 * last byte is in, else NULL */
static int reassemble(const glex_rqe_t * e, const uint8_t * data, frag_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    *out = NULL;
    if (!frags) {
        frags = MPL_calloc(MPIR_Process.size, sizeof *frags, MPL_MEM_BUFFER);
        MPIR_ERR_CHKANDJUMP1(!frags, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d",
                             (int) (MPIR_Process.size * sizeof *frags));
    }
    MPIR_ERR_CHKANDJUMP1(e->src_id >= (uint32_t) MPIR_Process.size, mpi_errno, MPI_ERR_INTERN,
                         "**fail", "**fail %s", "ch4:glex: fragment from an unknown node");
    frag_t *f = &frags[e->src_id];
    const uint8_t *p;
    uint64_t len;
    if (data[0] == WIRE_FRAG) {
        MPIR_ERR_CHKANDJUMP1(f->buf || e->len < WIRE_SZ, mpi_errno, MPI_ERR_INTERN, "**fail",
                             "**fail %s", "ch4:glex: fragmented message out of order");
        memcpy(&f->w, data, WIRE_SZ);
        f->buf = MPL_malloc(f->w.am_hdr_sz + f->w.data_sz, MPL_MEM_BUFFER);
        MPIR_ERR_CHKANDJUMP1(!f->buf, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d",
                             (int) (f->w.am_hdr_sz + f->w.data_sz));
        memcpy(f->buf, data + WIRE_SZ, f->w.am_hdr_sz);
        f->have = 0;
        p = data + WIRE_SZ + f->w.am_hdr_sz;
        len = e->len - WIRE_SZ - f->w.am_hdr_sz;
    } else {
        MPIR_ERR_CHKANDJUMP1(!f->buf, mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                             "ch4:glex: fragment without its first part");
        p = data + 1;
        len = e->len - 1u;
    }
    MPIR_ERR_CHKANDJUMP1(f->have + len > f->w.data_sz, mpi_errno, MPI_ERR_INTERN, "**fail",
                         "**fail %s", "ch4:glex: fragmented message longer than announced");
    memcpy(f->buf + f->w.am_hdr_sz + f->have, p, len);
    f->have += len;
    if (f->have == f->w.data_sz)
        *out = f;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* a message whose data_sz bytes are at data (copied out before this
 * returns) to its handler: point-to-point's, or MPIDIG's */
/* 1 once MPIDI_GLEX_am_poll's batch handed MPIDIG a post of an exposure
 * epoch: the batch ends there.  MPI_Win_start waits in progress calls until
 * the posts it counted equal its group's size, and it counts every post
 * that arrives, the next epoch's too (from a process outside its group that
 * got that far meanwhile): two in one call stepped over the size and the
 * start waited forever (MPICH's rma test pscw_ordering_shm at 4 processes,
 * 1 run in about 80 on 2 CPUs).  One post per call, the count meets it. */
static int batch_end;

static int to_handler(uint32_t node, int handler_id, void *am_hdr, uint32_t am_hdr_sz,
                      void *data, uint64_t data_sz, int attr)
{
    if (handler_id == MPIDIG_WIN_POST)
        batch_end = 1;
    if (handler_id == MPIDI_GLEX_P2P_HANDLER)
        return MPIDI_GLEX_global.p2p_arrived(node, am_hdr, am_hdr_sz, data, data_sz, 0, 0);
    return MPIDIG_global.target_msg_cbs[handler_id] (am_hdr, data, (MPI_Aint) data_sz, attr,
                                                     NULL);
}

static int handle(glex_rqe_long_t * r)
{
    glex_rqe_t *e = &r->e;
    uint8_t *data = glex_rqe_long_data(r);
    int mpi_errno = MPI_SUCCESS;
    wire_t w;
    MPIR_ERR_CHKANDJUMP1(e->len < 1, mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                         "ch4:glex: empty active message");
    if (data[0] == WIRE_FRAG || data[0] == WIRE_CONT) {
        frag_t *f;
        mpi_errno = reassemble(e, data, &f);
        MPIR_ERR_CHECK(mpi_errno);
        if (f) {
            int a = 0;
            MPIDIG_AM_ATTR_SET_VCIS(a, f->w.src_vci, f->w.dst_vci);
            uint8_t *buf = f->buf;
            f->buf = NULL;  /* the next message from this source may start inside the handler */
            mpi_errno = to_handler(e->src_id, f->w.handler_id, buf, f->w.am_hdr_sz,
                                   buf + f->w.am_hdr_sz, f->w.data_sz, a);
            MPL_free(buf);
        }
        goto fn_exit;
    }
    /* an EAGER message's header stops before data_sz (EAGER_SZ) */
    MPI_Aint w_sz = data[0] == WIRE_EAGER ? EAGER_SZ : WIRE_SZ;
    MPIR_ERR_CHKANDJUMP1(e->len < w_sz, mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                         "ch4:glex: short active message");
    memcpy(&w, data, w_sz);
    void *am_hdr = data + w_sz;
    if (w.kind == WIRE_EAGER) {
        MPIR_ERR_CHKANDJUMP1(e->len < EAGER_SZ + (MPI_Aint) w.am_hdr_sz, mpi_errno,
                             MPI_ERR_INTERN, "**fail", "**fail %s",
                             "ch4:glex: eager message shorter than its header");
        w.data_sz = (uint64_t) (e->len - EAGER_SZ - (MPI_Aint) w.am_hdr_sz);
    }
    int attr = 0;
    MPIDIG_AM_ATTR_SET_VCIS(attr, w.src_vci, w.dst_vci);

    switch (w.kind) {
        case WIRE_EAGER:
            mpi_errno = to_handler(e->src_id, w.handler_id, am_hdr, w.am_hdr_sz,
                                   (uint8_t *) am_hdr + w.am_hdr_sz, w.data_sz, attr);
            MPIR_ERR_CHECK(mpi_errno);
            break;
        case WIRE_LMT:{
                if (w.handler_id == MPIDI_GLEX_P2P_HANDLER) {
                    mpi_errno = MPIDI_GLEX_global.p2p_arrived(e->src_id, am_hdr, w.am_hdr_sz, NULL,
                                                       w.data_sz, w.addr, w.cookie);
                    MPIR_ERR_CHECK(mpi_errno);
                    break;
                }
                MPIR_Request *rreq = NULL;
                attr |= MPIDIG_AM_ATTR__IS_ASYNC | MPIDIG_AM_ATTR__IS_RNDV;
                mpi_errno = MPIDIG_global.target_msg_cbs[w.handler_id] (am_hdr, NULL,
                                                                        (MPI_Aint) w.data_sz,
                                                                        attr, &rreq);
                MPIR_ERR_CHECK(mpi_errno);
                if (!rreq) {    /* nothing to receive the data into */
                    mpi_errno = send_ack(e->src_id, WIRE_ACK, w.cookie);
                    MPIR_ERR_CHECK(mpi_errno);
                    break;
                }
                MPIDI_GLEX_AMREQ(rreq).lmt_node = e->src_id;
                MPIDI_GLEX_AMREQ(rreq).lmt_addr = w.addr;
                MPIDI_GLEX_AMREQ(rreq).lmt_cookie = w.cookie;
                MPIR_cc_inc(rreq->cc_ptr);      /* ours until the data is in */
                if (MPIDIG_recv_initialized(rreq))
                    mpi_errno = lmt_recv(rreq);
                /* else: an unexpected message, read once a receive matches it */
                MPIR_ERR_CHECK(mpi_errno);
                break;
            }
        case WIRE_RING:{
                void *data = MPIDI_GLEX_ring_data(e->src_id, w.addr, w.data_sz);
                MPIR_ERR_CHKANDJUMP1(!data, mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                                     "ch4:glex: ring message outside the ring");
                /* copied out before it returns (not asynchronous) */
                mpi_errno = to_handler(e->src_id, w.handler_id, am_hdr, w.am_hdr_sz, data,
                                       w.data_sz, attr);
                MPIR_ERR_CHECK(mpi_errno);
                uint64_t credit = MPIDI_GLEX_ring_consumed(e->src_id, (uint32_t) w.cookie);
                if (credit)     /* nobody waits for one: at once, and quiet */
                    mpi_errno = post_ack(e->src_id, WIRE_CREDIT, credit, GLEX_MP_QUIET);
                MPIR_ERR_CHECK(mpi_errno);
                break;
            }
        case WIRE_SPLIT:
            mpi_errno = lmt_help(e, data, &w);
            MPIR_ERR_CHECK(mpi_errno);
            break;
        case WIRE_CREDIT:
            MPIDI_GLEX_ring_credit(e->src_id, w.cookie);
            break;
        case WIRE_ACK:
        case WIRE_SYNC_ACK:{
                MPIR_Request *sreq = (MPIR_Request *) (uintptr_t) w.cookie;
                if (w.kind == WIRE_ACK)
                    lmt_pending(e->src_id, -1);
                MPIDI_GLEX_am_request_finalize(sreq);   /* the packed copy is read */
                origin_done(MPIDI_GLEX_AMREQ(sreq).handler_id, sreq);
                break;
            }
        default:
            MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_INTERN, "**fail", "**fail %s",
                                 "ch4:glex: unknown active-message kind");
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A long MP seen in place (glex_vp_poll_rq_view): a point-to-point EAGER
 * message's data goes from the queue's slots straight into its receive (or
 * its unexpected copy); anything else is copied out as it would have been
 * taken, given back, and handled so. */
static int handle_view(const glex_rq_view_t * v, glex_rqe_long_t * r)
{
    const uint8_t *data = v->e->data;
    wire_t w;
    memcpy(&w, data, EAGER_SZ);
    if (w.kind == WIRE_EAGER && w.handler_id == MPIDI_GLEX_P2P_HANDLER &&
        v->e->len >= EAGER_SZ + (MPI_Aint) w.am_hdr_sz) {
        uint32_t off = (uint32_t) (EAGER_SZ + w.am_hdr_sz);
        return MPIDI_GLEX_global.p2p_arrived_view(v->e->src_id, data + EAGER_SZ, w.am_hdr_sz, v,
                                                  off, v->e->len - off);
    }
    memcpy(&r->e, v->e, offsetof(glex_rqe_t, data));
    glex_rq_view_copy(v, 0, glex_rqe_long_data(r), v->e->len);
    glex_vp_rq_done(MPIDI_GLEX_global.am_vp, v);
    return handle(r);
}

/* Handle what arrived on the AM VP (up to RQ_BATCH messages); *work = 1
 * when anything was done. */
int MPIDI_GLEX_am_poll(int *work)
{
    int mpi_errno = MPI_SUCCESS;
    glex_vp_t *vp = MPIDI_GLEX_global.am_vp;
    *work = 0;

    if ((mpi_errno = take_cqes(work)))
        return mpi_errno;

    in_batch = 1;
    batch_end = 0;
    for (int n = 0; n < RQ_BATCH && !batch_end; n++) {
        held_t *h = held_head;
        if (h) {
            held_head = h->next;
            if (!held_head)
                held_tail = NULL;
            mpi_errno = handle(&h->r);
            MPL_free(h);
        } else {
            glex_rqe_long_t r;
            glex_rq_view_t v;
            int got = glex_vp_poll_rq_view(vp, &r, &v);
            if (got < 0) {
                mpi_errno = post_error(got);
                break;
            }
            if (!got)
                break;
            mpi_errno = got == 2 ? handle_view(&v, &r) : handle(&r);
        }
        *work = 1;
        if (mpi_errno)
            break;
    }
    int rc = send_acks_held();
    return mpi_errno ? mpi_errno : rc;
}
