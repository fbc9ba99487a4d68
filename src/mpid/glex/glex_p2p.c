/* glex_p2p.c - point-to-point natively: the netmod matches.
 *
 * A send is one message of the AM VP (glex_am.c chooses inline, ring,
 * fragments or rendezvous) with handler id MPIDI_GLEX_P2P_HANDLER and a
 * MPIDI_GLEX_p2p_hdr_t (rank, tag, context id).  The receiver matches it
 * against its posted receives in the order they were posted; one that
 * matches nothing waits in the unexpected queue, in arrival order (a copy
 * of its data, or for a rendezvous where the data is), until a receive or
 * a matched probe takes it.  The NIC delivers a VP's messages from one
 * sender in posting order, so MPI's non-overtaking rule holds.
 *
 * A synchronous send completes when the receiver has the data (an ACK
 * after the match).  Sends cannot be cancelled (as with MPICH's own active
 * messages); receives can until matched.  MPI_PROC_NULL and MPI_COMM_SELF
 * never reach the netmod.
 *
 * A request's netmod fields (MPIDI_GLEX_request_t) serve a posted receive
 * and an unexpected message; a send keeps the active-message state
 * (MPIDI_GLEX_AMREQ) glex_am.c uses for every protocol.  Everything runs
 * under VCI 0's lock, as the progress loop does. */
#include "glex_impl.h"
#include <sys/mman.h>

_Static_assert(sizeof(MPIDI_GLEX_request_t) <= offsetof(MPIDIG_req_t, req),
               "MPIDI_GLEX_request_t overlaps MPIDIG's request pointer");

/* a queue of requests linked through MPIDI_GLEX_REQ(r).next */
typedef struct {
    MPIR_Request *head, *tail;
} queue_t;

static queue_t posted, unexpected;

#define NEXT(r) (*(MPIR_Request **) &MPIDI_GLEX_REQ(r).next)

/* an unexpected message's flags: MPIDI_GLEX_P2P_* and this one */
#define RNDV 0x80u
/* a posted receive's flags: for MPIDI_GLEX_BIDIR_MIN bytes or more */
#define BIG 0x01u

/* a posted receive leaves the posted queue */
static void posted_gone(MPIR_Request * r)
{
    if (MPIDI_GLEX_REQ(r).flags & BIG)
        MPIDI_GLEX_global.p2p_big_posted--;
    MPIDI_GLEX_REQ(r).flags = 0;
}

static void enqueue(queue_t * q, MPIR_Request * r)
{
    NEXT(r) = NULL;
    if (q->tail)
        NEXT(q->tail) = r;
    else
        q->head = r;
    q->tail = r;
}

/* r, which follows prev (NULL: r is the head), taken off q */
static void unlink_req(queue_t * q, MPIR_Request * prev, MPIR_Request * r)
{
    if (prev)
        NEXT(prev) = NEXT(r);
    else
        q->head = NEXT(r);
    if (q->tail == r)
        q->tail = prev;
    NEXT(r) = NULL;
}

/* a message (rank, tag) of context_id matches a receive for (want_rank, want_tag) */
static inline int matches(int want_rank, int want_tag, int rank, int tag)
{
    return (want_rank == rank || want_rank == MPI_ANY_SOURCE) &&
        (want_tag == tag || want_tag == MPI_ANY_TAG);
}

/* the first request of q whose (rank, tag, context) pair with the given
 * one matches, taken off q (NULL: none).  A posted receive keeps what it
 * wants in its status until matched; an unexpected message its source and
 * tag. */
static MPIR_Request *dequeue(queue_t * q, int rank, int tag, uint32_t context_id, int posted_q,
                             int take)
{
    MPIR_Request *prev = NULL;
    for (MPIR_Request * r = q->head; r; prev = r, r = NEXT(r)) {
        if (MPIDI_GLEX_REQ(r).context_id != context_id)
            continue;
        int ok = posted_q ? matches(r->status.MPI_SOURCE, r->status.MPI_TAG, rank, tag)
            : matches(rank, tag, r->status.MPI_SOURCE, r->status.MPI_TAG);
        if (!ok)
            continue;
        if (take)
            unlink_req(q, prev, r);
        return r;
    }
    return NULL;
}

/* rreq taken off the posted queue: 0 when it was not there */
static int remove_posted(MPIR_Request * rreq)
{
    MPIR_Request *prev = NULL;
    for (MPIR_Request * r = posted.head; r; prev = r, r = NEXT(r))
        if (r == rreq) {
            unlink_req(&posted, prev, r);
            posted_gone(r);
            return 1;
        }
    return 0;
}

/* ------------------------------------------- unexpected messages' data */

/* A message that arrives before its receive keeps a copy of its data (at
 * most a ring message's 64 KiB; a rendezvous keeps none) until a receive
 * takes it.  Taken from malloc and freed each time, those copies came from
 * fresh pages whenever glibc had trimmed its heap in between: OSU bibw at
 * 32 KiB, where one side's window arrives before the other posts its
 * receives, faulted in 2 MiB a window and kept its peer waiting 1-6 ms
 * (page faults are dear in a VM).  So they are kept for the next ones, by
 * size class (powers of two from 256 B), up to UBUF_KEEP bytes in all; a
 * larger copy comes from malloc and goes back to it.  Copies of 4 KiB and
 * more are carved first from one arena of UBUF_ARENA bytes that asks for
 * transparent huge pages (MADV_HUGEPAGE): its first touch faults 2 MiB at
 * once.  This VM's first touch of 64 MiB: 11.5-12.7 us a 4 KiB page, with
 * huge pages 0.27-7 us a 4 KiB page's worth (a memset after it 30 against
 * 50 us a MiB).  Where the kernel gives none the arena is plain pages. */
#define UBUF_MIN_SHIFT 8
#define UBUF_MAX_SHIFT 16
#define UBUF_KEEP ((size_t) 8 << 20)
#define UBUF_ARENA_SHIFT 12     /* the classes carved from the arena: 4 KiB up */
#define UBUF_ARENA ((size_t) 8 << 20)
#define HUGE_PAGE ((size_t) 2 << 20)
#define ARENA_MAP (UBUF_ARENA + HUGE_PAGE) /* room to start it at a huge-page boundary */

typedef struct ubuf {
    struct ubuf *next;
} ubuf_t;

static ubuf_t *ubuf_free[UBUF_MAX_SHIFT + 1];
static size_t ubuf_kept;        /* bytes on the lists that came from malloc */
static struct {
    void *map;                  /* the mapping (NULL: none yet; MAP_FAILED: none to be had) */
    char *base;                 /* its first huge-page boundary */
    size_t used;                /* bytes of it carved */
} arena;

/* the size class of an n-byte copy (UBUF_MAX_SHIFT + 1: none) */
static unsigned ubuf_class(size_t n)
{
    unsigned c = UBUF_MIN_SHIFT;
    while (c <= UBUF_MAX_SHIFT && ((size_t) 1 << c) < n)
        c++;
    return c;
}

static int in_arena(const void *p)
{
    return arena.base && (const char *) p >= arena.base &&
        (const char *) p < arena.base + UBUF_ARENA;
}

/* a new buffer of class c from the arena, or NULL (full, or not to be had) */
static void *arena_carve(unsigned c)
{
    size_t len = (size_t) 1 << c;
    if (!arena.map) {
        arena.map = mmap(NULL, ARENA_MAP, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (arena.map == MAP_FAILED)
            return NULL;
        arena.base = (char *) (((uintptr_t) arena.map + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
        (void) madvise(arena.base, UBUF_ARENA, MADV_HUGEPAGE); /* a hint: none is fine */
#endif
    }
    if (arena.map == MAP_FAILED || arena.used + len > UBUF_ARENA)
        return NULL;
    void *p = arena.base + arena.used;  /* powers of two from 4 KiB: each aligned to a page */
    arena.used += len;
    return p;
}

static void *ubuf_get(size_t n)
{
    unsigned c = ubuf_class(n);
    if (c > UBUF_MAX_SHIFT)
        return MPL_malloc(n, MPL_MEM_BUFFER);
    ubuf_t *b = ubuf_free[c];
    if (!b) {
        void *p = c >= UBUF_ARENA_SHIFT ? arena_carve(c) : NULL;
        return p ? p : MPL_malloc((size_t) 1 << c, MPL_MEM_BUFFER);
    }
    ubuf_free[c] = b->next;
    if (!in_arena(b))
        ubuf_kept -= (size_t) 1 << c;
    return b;
}

/* p, a copy of n bytes from ubuf_get, kept (always, when it is the
 * arena's) or freed */
static void ubuf_put(void *p, size_t n)
{
    unsigned c = ubuf_class(n);
    if (!p)
        return;
    int own = in_arena(p);
    if (!own && (c > UBUF_MAX_SHIFT || ubuf_kept + ((size_t) 1 << c) > UBUF_KEEP)) {
        MPL_free(p);
        return;
    }
    ubuf_t *b = p;
    b->next = ubuf_free[c];
    ubuf_free[c] = b;
    if (!own)
        ubuf_kept += (size_t) 1 << c;
}

void MPIDI_GLEX_p2p_finalize(void)
{
    for (unsigned c = 0; c <= UBUF_MAX_SHIFT; c++)
        while (ubuf_free[c]) {
            ubuf_t *b = ubuf_free[c];
            ubuf_free[c] = b->next;
            if (!in_arena(b))
                MPL_free(b);
        }
    ubuf_kept = 0;
    if (arena.map && arena.map != MAP_FAILED)
        munmap(arena.map, ARENA_MAP);
    arena.map = NULL;
    arena.base = NULL;
    arena.used = 0;
}

/* ---------------------------------------------------------------- sending */

static int p2p_send(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank, int tag,
                MPIR_Comm * comm, int context_offset, MPIR_Request ** req_p, int flags,
                int error_bits)
{
    int mpi_errno = MPI_SUCCESS;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_GLEX_global.posted = 1; /* the program works: its loop is not a wait (glex_progress.c) */
    uint32_t node = MPIDI_GLEX_node_of(comm, rank);
    MPIDI_GLEX_p2p_hdr_t h = {.rank = comm->rank,.tag = tag,
        .context_id = (uint32_t) (comm->context_id + context_offset),
        .flags = (uint8_t) flags,.error_bits = (uint8_t) error_bits
    };
    int contig;
    MPI_Aint data_sz, true_lb;
    MPIDI_Datatype_check_contig_size_lb(datatype, count, contig, data_sz, true_lb);
    if (contig && !(flags & MPIDI_GLEX_P2P_SYNC) &&
        data_sz <= MPIDI_GLEX_mp_room(MPIDI_GLEX_P2P_HDR_SHORT)) {
        /* one MP (inline, or long when it can go at once): the NIC has the
         * data when the post returns, so the send is done, its request one
         * of MPICH's complete ones (nothing to allocate or free) */
        int sent = 0;
        mpi_errno = MPIDI_GLEX_send_mp(node, MPIDI_GLEX_P2P_HANDLER, &h,
                                       MPIDI_GLEX_P2P_HDR_SHORT, (const char *) buf + true_lb,
                                       data_sz, &sent);
        if (sent) {
            *req_p = MPIR_Request_create_complete(MPIR_REQUEST_KIND__SEND);
            goto fn_exit;
        }
        MPIR_ERR_CHECK(mpi_errno);
    }
    MPIR_Request *sreq;
    MPIDI_CH4_REQUEST_CREATE(sreq, MPIR_REQUEST_KIND__SEND, 0, 2);
    MPIR_ERR_CHKANDSTMT(!sreq, mpi_errno, MPIX_ERR_NOREQ, goto fn_fail, "**nomemreq");
    sreq->comm = comm;
    MPIR_Comm_add_ref(comm);
    MPIDI_GLEX_AMREQ(sreq).handler_id = MPIDI_GLEX_P2P_HANDLER;
    MPIDI_GLEX_AMREQ(sreq).pack_buffer = NULL;
    if (flags & MPIDI_GLEX_P2P_SYNC) {
        int c;
        MPIR_cc_incr(sreq->cc_ptr, &c);  /* and the receiver's ACK once matched */
        h.sync_cookie = (uint64_t) (uintptr_t) sreq;
    }
    *req_p = sreq;
    mpi_errno = MPIDI_GLEX_send_msg(node, MPIDI_GLEX_P2P_HANDLER, &h,
                                    (MPI_Aint) sizeof h, buf, count, datatype, 0, 0, sreq);
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_GLEX_p2p_send_done(MPIR_Request * sreq)
{
    MPID_Request_complete(sreq);
}

void MPIDI_GLEX_p2p_init(void)
{
    MPIDI_GLEX_global.p2p_arrived = MPIDI_GLEX_p2p_arrived;
    MPIDI_GLEX_global.p2p_arrived_view = MPIDI_GLEX_p2p_arrived_view;
    MPIDI_GLEX_global.p2p_send_done = MPIDI_GLEX_p2p_send_done;
}

int MPIDI_GLEX_mpi_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                         int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                         MPIR_Request ** req_p)
{
    (void) addr;
    return p2p_send(buf, count, datatype, rank, tag, comm, context_offset, req_p, 0, MPIR_ERR_NONE);
}

int MPIDI_GLEX_mpi_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                          int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                          MPIR_Request ** req_p)
{
    (void) addr;
    return p2p_send(buf, count, datatype, rank, tag, comm, context_offset, req_p,
                MPIDI_GLEX_P2P_SYNC, MPIR_ERR_NONE);
}

int MPIDI_GLEX_isend_coll(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                          int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                          MPIR_Request ** req_p, MPIR_Errflag_t * errflag)
{
    (void) addr;
    return p2p_send(buf, count, datatype, rank, tag, comm, context_offset, req_p, 0, *errflag);
}

/* a send that has left cannot be called back: MPI_Test_cancelled says so */
int MPIDI_GLEX_mpi_cancel_send(MPIR_Request * sreq)
{
    (void) sreq;
    return MPI_SUCCESS;
}

/* -------------------------------------------------------------- receiving */

/* the receive's count and error once data_sz bytes came in: *n the bytes
 * it takes */
static void recv_status(MPIR_Request * rreq, MPI_Aint room, uint64_t data_sz, int error_bits,
                        MPI_Aint * n)
{
    *n = (MPI_Aint) data_sz;
    rreq->status.MPI_ERROR = error_bits;
    if ((MPI_Aint) data_sz > room) {
        *n = room;
        rreq->status.MPI_ERROR =
            MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                 MPI_ERR_TRUNCATE, "**truncate", "**truncate %d %d %d %d",
                                 rreq->status.MPI_SOURCE, rreq->status.MPI_TAG, (int) room,
                                 (int) data_sz);
    }
    MPIR_STATUS_SET_COUNT(rreq->status, *n);
}

/* a rendezvous piece unpacked into a non-contiguous receive buffer */
typedef struct {
    void *buf;
    MPI_Aint count, off;
    MPI_Datatype datatype;
} unpack_t;

static int unpack_piece(void *ctx, const void *piece, MPI_Aint len)
{
    unpack_t *u = ctx;
    MPI_Aint unpacked = 0;
    int mpi_errno = MPIR_Typerep_unpack(piece, len, u->buf, u->count, u->datatype, u->off,
                                        &unpacked);
    u->off += len;
    return mpi_errno;
}

/* Where a message's data arrived: at base, or in a long MP's slots seen in
 * place (view, from byte off of its payload), given back by src_done once
 * copied out; neither: a rendezvous. */
typedef struct {
    const void *base;
    const glex_rq_view_t *view;
    uint32_t off;
} src_t;

static void src_done(src_t * s)
{
    if (s->view)
        glex_vp_rq_done(MPIDI_GLEX_global.am_vp, s->view);
    s->view = NULL;
}

/* n bytes of the data into a contiguous buffer */
static void src_copy(const src_t * s, void *to, MPI_Aint n)
{
    if (s->view)
        glex_rq_view_copy(s->view, s->off, to, (uint32_t) n);
    else
        glex_copy(to, s->base, (size_t) n);     /* out of the ring: lines the sender wrote */
}

/* n bytes of the data unpacked into (buf, count, datatype) */
static int src_unpack(const src_t * s, MPI_Aint n, void *buf, MPI_Aint count,
                      MPI_Datatype datatype)
{
    MPI_Aint unpacked = 0;
    if (!s->view)
        return MPIR_Typerep_unpack(s->base, n, buf, count, datatype, 0, &unpacked);
    unpack_t u = {.buf = buf,.count = count,.datatype = datatype };
    uint32_t off = s->off;
    for (uint32_t k = 0; k < s->view->pieces && u.off < n; k++) {
        if (off >= s->view->piece_len[k]) {
            off -= s->view->piece_len[k];
            continue;
        }
        MPI_Aint len = MPL_MIN((MPI_Aint) (s->view->piece_len[k] - off), n - u.off);
        int mpi_errno = unpack_piece(&u, s->view->piece[k] + off, len);
        if (mpi_errno)
            return mpi_errno;
        off = 0;
    }
    return MPI_SUCCESS;
}

/* Data of a message into a matched receive (buf, count, datatype): from
 * src, given back then, or (a rendezvous) read from node's addr and
 * acknowledged; then the ACK of a synchronous send; the receive completes.
 * Both ACKs go to sender_req, the sender's request. */
static int fill(MPIR_Request * rreq, void *buf, MPI_Aint count, MPI_Datatype datatype,
                uint32_t node, src_t * src, uint64_t data_sz, uint64_t addr,
                uint64_t sender_req, int flags, int error_bits)
{
    const int data = src->base || src->view;
    int mpi_errno = MPI_SUCCESS;
    int contig;
    MPI_Aint room, true_lb, n;
    MPIDI_Datatype_check_contig_size_lb(datatype, count, contig, room, true_lb);
    recv_status(rreq, room, data_sz, error_bits, &n);
    char *dst = (char *) buf + true_lb;
    if (!data) {
        if (contig) {
            mpi_errno = MPIDI_GLEX_lmt_read(node, addr, dst, (uint64_t) n, sender_req);
        } else {
            int done = 0;
            mpi_errno = MPIDI_GLEX_lmt_read_typed(node, addr, (uint64_t) n, buf, count, datatype,
                                                  &done);
            unpack_t u = {.buf = buf,.count = count,.datatype = datatype };
            if (!mpi_errno && !done)
                mpi_errno = MPIDI_GLEX_lmt_read_staged(node, addr, (uint64_t) n, unpack_piece,
                                                       &u);
        }
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = MPIDI_GLEX_send_ack(node, sender_req);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (data && n) {
        if (contig)
            src_copy(src, dst, n);
        else
            mpi_errno = src_unpack(src, n, buf, count, datatype);
    }
    src_done(src);
    MPIR_ERR_CHECK(mpi_errno);
    if (flags & MPIDI_GLEX_P2P_SYNC) {
        mpi_errno = MPIDI_GLEX_send_sync_ack(node, sender_req);
        MPIR_ERR_CHECK(mpi_errno);
    }
    MPIR_Datatype_release_if_not_builtin(datatype);
    MPID_Request_complete(rreq);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int arrived(uint32_t node, const void *hdr, uint32_t hdr_sz, src_t * src,
                   uint64_t data_sz, uint64_t addr, uint64_t cookie)
{
    int mpi_errno = MPI_SUCCESS;
    const int data = src->base || src->view;
    MPIDI_GLEX_p2p_hdr_t h = { 0 };
    MPIR_ERR_CHKANDJUMP1(hdr_sz != sizeof h && hdr_sz != MPIDI_GLEX_P2P_HDR_SHORT, mpi_errno,
                         MPI_ERR_INTERN, "**fail", "**fail %s",
                         "ch4:glex: point-to-point message with a bad header");
    memcpy(&h, hdr, hdr_sz);
    MPIR_ERR_CHKANDJUMP1(hdr_sz != sizeof h && (h.flags & MPIDI_GLEX_P2P_SYNC), mpi_errno,
                         MPI_ERR_INTERN, "**fail", "**fail %s",
                         "ch4:glex: synchronous message without its request");
    MPIDI_GLEX_global.p2p_received++;
    /* a rendezvous's ACK goes to the sender's request, which is also the
     * synchronous send's */
    uint64_t sender_req = data ? h.sync_cookie : cookie;
    MPIR_Request *rreq = dequeue(&posted, h.rank, h.tag, h.context_id, 1, 1);
    if (rreq) {
        posted_gone(rreq);
        rreq->status.MPI_SOURCE = h.rank;
        rreq->status.MPI_TAG = h.tag;
        mpi_errno = fill(rreq, MPIDI_GLEX_REQ(rreq).buf, (MPI_Aint) MPIDI_GLEX_REQ(rreq).count,
                         (MPI_Datatype) MPIDI_GLEX_REQ(rreq).datatype, node, src, data_sz, addr,
                         sender_req, h.flags, h.error_bits);
        goto fn_exit;
    }
    /* unexpected: kept as a receive request of its own (which a matched
     * probe hands out as the message) */
    MPIDI_GLEX_global.p2p_unexpected++;
    void *copy = NULL;
    if (data && data_sz) {
        copy = ubuf_get(data_sz);
        MPIR_ERR_CHKANDJUMP1(!copy, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %d",
                             (int) data_sz);
        src_copy(src, copy, (MPI_Aint) data_sz);
    }
    src_done(src);
    MPIR_Request *u;
    MPIDI_CH4_REQUEST_CREATE(u, MPIR_REQUEST_KIND__RECV, 0, 2);
    if (!u)
        ubuf_put(copy, data_sz);
    MPIR_ERR_CHKANDSTMT(!u, mpi_errno, MPIX_ERR_NOREQ, goto fn_fail, "**nomemreq");
    MPIDI_GLEX_request_t *g = &MPIDI_GLEX_REQ(u);
    g->buf = copy;
    g->count = data ? 0 : (int64_t) addr;
    g->cookie = sender_req;
    g->node = node;
    g->context_id = h.context_id;
    g->flags = h.flags | (data ? 0 : RNDV);
    u->status.MPI_SOURCE = h.rank;
    u->status.MPI_TAG = h.tag;
    u->status.MPI_ERROR = h.error_bits;
    MPIR_STATUS_SET_COUNT(u->status, (MPI_Aint) data_sz);
    enqueue(&unexpected, u);
  fn_exit:
    src_done(src);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_GLEX_p2p_arrived(uint32_t node, const void *hdr, uint32_t hdr_sz, const void *data,
                           uint64_t data_sz, uint64_t addr, uint64_t cookie)
{
    src_t src = {.base = data };
    return arrived(node, hdr, hdr_sz, &src, data_sz, addr, cookie);
}

int MPIDI_GLEX_p2p_arrived_view(uint32_t node, const void *hdr, uint32_t hdr_sz,
                                const glex_rq_view_t * v, uint32_t off, uint64_t data_sz)
{
    src_t src = {.view = v,.off = off };
    return arrived(node, hdr, hdr_sz, &src, data_sz, 0, 0);
}

/* an unexpected message u (taken off its queue) into the receive buffer;
 * u is the receive's request from now on */
static int take_unexpected(MPIR_Request * u, void *buf, MPI_Aint count, MPI_Datatype datatype)
{
    static const char none;     /* the data of an empty message */
    MPIDI_GLEX_request_t *g = &MPIDI_GLEX_REQ(u);
    void *copy = g->buf;
    src_t src = {.base = (g->flags & RNDV) ? NULL : copy ? copy : &none };
    uint64_t data_sz = (uint64_t) MPIR_STATUS_GET_COUNT(u->status);
    MPIR_Datatype_add_ref_if_not_builtin(datatype);     /* fill releases it */
    int mpi_errno = fill(u, buf, count, datatype, g->node, &src, data_sz, (uint64_t) g->count,
                         g->cookie, g->flags, u->status.MPI_ERROR);
    ubuf_put(copy, (size_t) data_sz);      /* data_sz: the count before fill truncated it */
    return mpi_errno;
}

int MPIDI_GLEX_mpi_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype, int rank, int tag,
                         MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                         MPIR_Request ** req_p, MPIR_Request * partner)
{
    (void) addr, (void) partner;
    int mpi_errno = MPI_SUCCESS;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIDI_GLEX_global.posted = 1;
    uint32_t context_id = (uint32_t) (comm->recvcontext_id + context_offset);
    MPIR_Request *rreq = dequeue(&unexpected, rank, tag, context_id, 0, 1);
    if (rreq) {
        rreq->comm = comm;
        MPIR_Comm_add_ref(comm);
        *req_p = rreq;
        mpi_errno = take_unexpected(rreq, buf, count, datatype);
        goto fn_exit;
    }
    MPIDI_CH4_REQUEST_CREATE(rreq, MPIR_REQUEST_KIND__RECV, 0, 2);
    MPIR_ERR_CHKANDSTMT(!rreq, mpi_errno, MPIX_ERR_NOREQ, goto fn_fail, "**nomemreq");
    rreq->comm = comm;
    MPIR_Comm_add_ref(comm);
    MPIR_Datatype_add_ref_if_not_builtin(datatype);
    MPIDI_GLEX_request_t *g = &MPIDI_GLEX_REQ(rreq);
    g->buf = buf;
    g->count = count;
    g->datatype = (int32_t) datatype;
    g->context_id = context_id;
    MPI_Aint dt_sz;
    MPIR_Datatype_get_size_macro(datatype, dt_sz);
    g->flags = count * dt_sz >= MPIDI_GLEX_BIDIR_MIN ? BIG : 0;
    MPIDI_GLEX_global.p2p_big_posted += g->flags & BIG;
    rreq->status.MPI_SOURCE = rank;
    rreq->status.MPI_TAG = tag;
    enqueue(&posted, rreq);
    *req_p = rreq;
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_GLEX_mpi_imrecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                          MPIR_Request * message)
{
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    int mpi_errno = take_unexpected(message, buf, count, datatype);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return mpi_errno;
}

int MPIDI_GLEX_mpi_cancel_recv(MPIR_Request * rreq)
{
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    if (!MPIR_Request_is_complete(rreq) && remove_posted(rreq)) {
        MPIR_Datatype_release_if_not_builtin((MPI_Datatype) MPIDI_GLEX_REQ(rreq).datatype);
        MPIR_STATUS_SET_CANCEL_BIT(rreq->status, TRUE);
        MPIR_STATUS_SET_COUNT(rreq->status, 0);
        MPID_Request_complete(rreq);
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return MPI_SUCCESS;
}

/* a probe's answer from an unexpected message (MPI_ERROR is left alone, as
 * by every call that completes one operation) */
static void probe_status(MPIR_Request * u, MPI_Status * status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = u->status.MPI_SOURCE;
    status->MPI_TAG = u->status.MPI_TAG;
    MPIR_STATUS_SET_COUNT(*status, MPIR_STATUS_GET_COUNT(u->status));
    MPIR_STATUS_SET_CANCEL_BIT(*status, FALSE);
}

int MPIDI_GLEX_mpi_improbe(int source, int tag, MPIR_Comm * comm, int context_offset,
                           MPIDI_av_entry_t * addr, int *flag, MPIR_Request ** message_p,
                           MPI_Status * status)
{
    (void) addr;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_Request *u = dequeue(&unexpected, source, tag,
                              (uint32_t) (comm->recvcontext_id + context_offset), 0, 1);
    *flag = u != NULL;
    if (u) {
        u->kind = MPIR_REQUEST_KIND__MPROBE;
        u->comm = comm;
        MPIR_Comm_add_ref(comm);
        probe_status(u, status);
        *message_p = u;
    }
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return MPI_SUCCESS;
}

int MPIDI_GLEX_mpi_iprobe(int source, int tag, MPIR_Comm * comm, int context_offset,
                          MPIDI_av_entry_t * addr, int *flag, MPI_Status * status)
{
    (void) addr;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    MPIR_Request *u = dequeue(&unexpected, source, tag,
                              (uint32_t) (comm->recvcontext_id + context_offset), 0, 0);
    *flag = u != NULL;
    if (u)
        probe_status(u, status);
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    return MPI_SUCCESS;
}
