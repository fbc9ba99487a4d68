/* glex_impl.h - ch4:glex netmod internals: global state and the functions the
 * function table (func_table.c) points at.  The netmod is a thin adapter:
 * src/emu (the NIC model) carries every byte, src/offload compiles the
 * collectives. */
#ifndef GLEX_IMPL_H_INCLUDED
#define GLEX_IMPL_H_INCLUDED

#include <mpidimpl.h>
#include "glex_coll.h"

#define MPIDI_GLEX_COMM(comm) ((comm)->dev.ch4.netmod.glex)
#define MPIDI_GLEX_AMREQ(req) ((req)->dev.ch4.am.netmod_am.glex)
#define MPIDI_GLEX_REQ(req) ((req)->dev.ch4.netmod.glex)

/* VPs of every node (= MPI process) */
#define MPIDI_GLEX_AM_VP 0      /* messages: point-to-point, probe, MPIDIG's RMA */
#define MPIDI_GLEX_COLL_VP 1    /* offloaded collectives */

/* how one collective kind runs (GLEX_<KIND>_ALGO) */
typedef struct {
    int mpich;            /* 1: MPICH's own algorithms (GLEX_*_ALGO=mpich or GLEX_OFFLOAD=0) */
    int host;             /* 1: host-based mode of the engine */
    glex_algo_t algo;     /* asked-for algorithm (auto when host) */
} MPIDI_GLEX_choice_t;

typedef struct MPIDI_GLEX_nbc MPIDI_GLEX_nbc_t;

typedef struct {
    glex_fabric_t *fabric;
    glex_vp_t *am_vp;
    glex_vp_t *coll_vp;
    int verbose;                       /* GLEX_VERBOSE */
    MPI_Aint rdma_eager;               /* GLEX_RDMA_EAGER (0: rings off, -1: auto) */
    int mp_long;                       /* GLEX_MP_LONG: 1 long MPs on, 0 off */
    MPIDI_GLEX_choice_t choice[GLEX_COLL_KIND_COUNT];
    MPIDI_GLEX_nbc_t *nbc_head;        /* nonblocking collectives in flight */
    char *json_path;                   /* collective selection file, removed after init */
    int am_idle;                       /* consecutive progress calls without work */
    uint64_t idle_since_ns;            /* progress without work since (0: busy) */
    uint64_t nap_ns;                   /* GLEX_NAP_US: idle this long, a process sharing
                                        * its core sleeps in the progress loop */
    uint64_t turn_end_ns;              /* when the last idle turn ended (0: busy since) */
    uint64_t wait_since_ns;            /* idle, and the program posted nothing, since
                                        * (0: busy since the last idle turn); naps */
    int posted;                        /* a send or receive posted since the last idle turn */
    uint64_t next_peer_check_ns;       /* idle past GLEX_TIMEOUT: next look at the peers */
    uint64_t am_sent[5];               /* active messages sent by protocol (MPIDI_GLEX_AM_*;
                                        * GLEX_VERBOSE=2 prints them at MPI_Finalize) */
    uint64_t lmt_offered;              /* rendezvous received with the second half
                                        * offered to the sender's NIC */
    uint64_t lmt_split;                /* ... of them, the halves it wrote */
    uint64_t lmt_waiting;              /* rendezvous sends posted whose ACK has not come */
    uint64_t p2p_big_posted;           /* receives posted for MPIDI_GLEX_BIDIR_MIN bytes or
                                        * more, not yet matched (glex_p2p.c) */
    /* the handlers of point-to-point messages (glex_p2p.c registers them;
     * the transport, glex_am.c, calls them as MPIDIG's) */
    int (*p2p_arrived) (uint32_t node, const void *hdr, uint32_t hdr_sz, const void *data,
                        uint64_t data_sz, uint64_t addr, uint64_t cookie);
    int (*p2p_arrived_view) (uint32_t node, const void *hdr, uint32_t hdr_sz,
                             const glex_rq_view_t * v, uint32_t off, uint64_t data_sz);
    void (*p2p_send_done) (MPIR_Request * sreq);
    uint64_t p2p_received;              /* point-to-point messages received (glex_p2p.c) */
    uint64_t p2p_unexpected;           /* ... of them, before their receive */
} MPIDI_GLEX_global_t;

/* A send of at least this many bytes to a process of this host, while
 * this one has receives of at least as many posted, goes by rendezvous
 * rather than through the ring (MPIDI_GLEX_ring_reserve) */
#define MPIDI_GLEX_BIDIR_MIN (48 * 1024)

enum { MPIDI_GLEX_AM_INLINE, MPIDI_GLEX_AM_RING, MPIDI_GLEX_AM_FRAG, MPIDI_GLEX_AM_RNDV,
    MPIDI_GLEX_AM_LONG };

extern MPIDI_GLEX_global_t MPIDI_GLEX_global;

/* world rank (= NodeID) of a communicator rank */
static inline uint32_t MPIDI_GLEX_node_of(MPIR_Comm * comm, int rank)
{
    int lpid = 0, avtid = 0;
    MPIDIU_comm_rank_to_pid(comm, rank, &lpid, &avtid);
    return (uint32_t) lpid;
}

/* glex_error.c (which also holds MPIDI_GLEX_global): an MPI error code
 * carrying the NIC model's last error text */
int MPIDI_GLEX_error(int glex_rc, const char *what);
/* a line on stderr that MPI_Init's failure (an abort) follows: out to the launcher first */
void MPIDI_GLEX_say_fatal(const char *msg);

/* glex_init.c */
int MPIDI_GLEX_init_local(int *tag_bits);
int MPIDI_GLEX_init_world(void);
int MPIDI_GLEX_post_init(void);
int MPIDI_GLEX_mpi_finalize_hook(void);

/* glex_progress.c */
int MPIDI_GLEX_progress(int vci, int blocking);

/* glex_am.c */
int MPIDI_GLEX_am_poll(int *work);
int MPIDI_GLEX_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                           MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
int MPIDI_GLEX_am_isend(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                        MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                        MPI_Datatype datatype, int src_vci, int dst_vci, MPIR_Request * sreq);
int MPIDI_GLEX_am_send_hdr_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                                 const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
int MPIDI_GLEX_am_isend_reply(MPIR_Comm * comm, int src_rank, int handler_id, const void *am_hdr,
                              MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                              MPI_Datatype datatype, int src_vci, int dst_vci,
                              MPIR_Request * sreq);
/* one message of the AM VP's protocols (inline, ring, fragments, rendezvous;
 * the top of glex_am.c) to node with a header for handler_id (MPIDIG's, or
 * MPIDI_GLEX_P2P_HANDLER) and data (sreq NULL: a header only) */
int MPIDI_GLEX_send_msg(uint32_t node, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                        const void *data, MPI_Aint count, MPI_Datatype datatype, int src_vci,
                        int dst_vci, MPIR_Request * sreq);
/* data bytes one MP has room for beside an am_hdr_sz-byte header (inline,
 * or a long MP to this host), and such a message of contiguous data, no
 * request: *sent 1 when it went (done when this returns; an inline one
 * always goes), 0 when it could not go at once (the caller sends
 * otherwise) */
MPI_Aint MPIDI_GLEX_mp_room(MPI_Aint am_hdr_sz);
int MPIDI_GLEX_send_mp(uint32_t node, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                       const void *data, MPI_Aint data_sz, int *sent);
/* a rendezvous's n bytes from node's addr into contiguous data (with the
 * sender's NIC's help where that pays); then MPIDI_GLEX_send_ack(node,
 * cookie) completes the sender's request */
int MPIDI_GLEX_lmt_read(uint32_t node, uint64_t addr, void *data, uint64_t n, uint64_t cookie);
/* the same for a non-contiguous receive buffer, in pieces through a staging
 * buffer: take(ctx, piece, len) unpacks each, in order */
int MPIDI_GLEX_lmt_read_staged(uint32_t node, uint64_t addr, uint64_t n,
                               int (*take)(void *ctx, const void *piece, MPI_Aint len),
                               void *ctx);
/* ... or straight into the buffer (buf, count, datatype) by one
 * scatter-gather get where that pays: *done 1, else 0 and nothing read */
int MPIDI_GLEX_lmt_read_typed(uint32_t node, uint64_t addr, uint64_t n, void *buf,
                              MPI_Aint count, MPI_Datatype datatype, int *done);
/* the packing and staging buffers kept between messages (MPI_Finalize) */
void MPIDI_GLEX_am_buffers_free(void);
int MPIDI_GLEX_send_ack(uint32_t node, uint64_t cookie);
/* a synchronous send's ACK once its receive matched (completes the sender's
 * request as the ACK does, not counted as a rendezvous') */
int MPIDI_GLEX_send_sync_ack(uint32_t node, uint64_t cookie);
MPIDIG_recv_data_copy_cb MPIDI_GLEX_am_get_data_copy_cb(uint32_t attr);
MPI_Aint MPIDI_GLEX_am_hdr_max_sz(void);
MPI_Aint MPIDI_GLEX_am_eager_limit(void);
MPI_Aint MPIDI_GLEX_am_eager_buf_limit(void);
bool MPIDI_GLEX_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz, const void *data,
                               MPI_Aint count, MPI_Datatype datatype, MPIR_Request * sreq);
void MPIDI_GLEX_am_request_init(MPIR_Request * req);
void MPIDI_GLEX_am_request_finalize(MPIR_Request * req);

/* glex_ring.c: receive rings of the RDMA-eager protocol (after the VPs are
 * open; rings stay off where they cannot be had).  GLEX_RDMA_EAGER: its
 * largest value, and auto's limit but to a process of this host that reads
 * cheaply (glex_ring.c) */
#define MPIDI_GLEX_RDMA_EAGER_MAX (64 * 1024)
/* GLEX_NAP_US's default: an idle process sharing its core sleeps after 50 us */
#define MPIDI_GLEX_NAP_US 50
typedef struct {
    uint64_t remote;    /* where the data goes at the destination */
    uint32_t off;       /* its offset in our ring there (in the MP) */
    uint32_t used;      /* ring bytes it takes, with any skip to the ring's start */
} MPIDI_GLEX_ring_slot_t;
int MPIDI_GLEX_ring_init(void);
void MPIDI_GLEX_ring_finalize(void);
/* bytes of the ring a sender on this host / on another host has here (0: none) */
void MPIDI_GLEX_ring_sizes(uint64_t * near, uint64_t * far);
/* the largest message a ring takes: from any sender, and to a process of
 * this host that runs (auto: smaller where the DMA reads cheaply) */
void MPIDI_GLEX_ring_msg_max(MPI_Aint * any, MPI_Aint * near_running);
/* room for len bytes in our ring at node: 1 and *slot; -1 when full until
 * node's next credit; 0 otherwise (larger than GLEX_RDMA_EAGER or a quarter
 * ring, rings off or none at node); the slot starts at src's offset in a
 * cache line (src: where the data is, 0 when it is packed first) */
int MPIDI_GLEX_ring_reserve(uint32_t node, MPI_Aint len, uintptr_t src,
                            MPIDI_GLEX_ring_slot_t * slot);
/* the word in our registered region with which a rendezvous receiver
 * offers its sender the second half (NULL: rings off, no region) */
uint64_t *MPIDI_GLEX_ring_claim_word(void);
/* a credit from node: it consumed that many bytes of our ring there, ever */
void MPIDI_GLEX_ring_credit(uint32_t node, uint64_t consumed);
/* receiving: where src's message of len bytes at off lies here (NULL: not
 * inside src's ring) */
void *MPIDI_GLEX_ring_data(uint32_t src, uint64_t off, uint64_t len);
/* src's message taken: the credit to return to src, or 0 (not yet) */
uint64_t MPIDI_GLEX_ring_consumed(uint32_t src, uint32_t used);
/* glex_p2p.c: point-to-point natively (the netmod matches; MPIDIG carries
 * RMA and partitioned communication only).  Its messages are the AM VP's,
 * with this handler id and this header. */
#define MPIDI_GLEX_P2P_HANDLER 255
enum { MPIDI_GLEX_P2P_SYNC = 1 };
typedef struct {
    int32_t rank;          /* the sender's rank in the communicator */
    int32_t tag;
    uint32_t context_id;
    uint8_t flags;         /* MPIDI_GLEX_P2P_* */
    uint8_t error_bits;    /* a collective's MPIR_Errflag_t */
    uint16_t unused;
    uint64_t sync_cookie;  /* MPIDI_GLEX_P2P_SYNC: the sender's request */
} MPIDI_GLEX_p2p_hdr_t;
/* the header of a message without MPIDI_GLEX_P2P_SYNC: the fields before
 * sync_cookie (a small message then fits one cache line of the receive
 * queue's slot) */
#define MPIDI_GLEX_P2P_HDR_SHORT ((MPI_Aint) offsetof(MPIDI_GLEX_p2p_hdr_t, sync_cookie))
/* registers the two handlers below with the transport (at MPI_Init) */
void MPIDI_GLEX_p2p_init(void);
/* the unexpected messages' kept buffers freed (MPI_Finalize) */
void MPIDI_GLEX_p2p_finalize(void);
/* a message with this header arrived from node: its data_sz bytes at data,
 * or (data NULL) a rendezvous to read from addr, acknowledged to cookie */
int MPIDI_GLEX_p2p_arrived(uint32_t node, const void *hdr, uint32_t hdr_sz, const void *data,
                           uint64_t data_sz, uint64_t addr, uint64_t cookie);
/* the same for a long MP seen in place on the AM VP (glex_vp_poll_rq_view):
 * its data_sz data bytes from byte off of v's payload; v is given back
 * (glex_vp_rq_done) once they are copied out, before anything is posted */
int MPIDI_GLEX_p2p_arrived_view(uint32_t node, const void *hdr, uint32_t hdr_sz,
                                const glex_rq_view_t * v, uint32_t off, uint64_t data_sz);
/* a send's message is out (or its synchronous receive matched) */
void MPIDI_GLEX_p2p_send_done(MPIR_Request * sreq);
int MPIDI_GLEX_mpi_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                         int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                         MPIR_Request ** req_p);
int MPIDI_GLEX_mpi_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                          int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                          MPIR_Request ** req_p);
int MPIDI_GLEX_isend_coll(const void *buf, MPI_Aint count, MPI_Datatype datatype, int rank,
                          int tag, MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                          MPIR_Request ** req_p, MPIR_Errflag_t * errflag);
int MPIDI_GLEX_mpi_cancel_send(MPIR_Request * sreq);
int MPIDI_GLEX_mpi_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype, int rank, int tag,
                         MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * addr,
                         MPIR_Request ** req_p, MPIR_Request * partner);
int MPIDI_GLEX_mpi_imrecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                          MPIR_Request * message);
int MPIDI_GLEX_mpi_cancel_recv(MPIR_Request * rreq);
int MPIDI_GLEX_mpi_improbe(int source, int tag, MPIR_Comm * comm, int context_offset,
                           MPIDI_av_entry_t * addr, int *flag, MPIR_Request ** message_p,
                           MPI_Status * status);
int MPIDI_GLEX_mpi_iprobe(int source, int tag, MPIR_Comm * comm, int context_offset,
                          MPIDI_av_entry_t * addr, int *flag, MPI_Status * status);

/* glex_comm.c */
int MPIDI_GLEX_mpi_comm_commit_pre_hook(MPIR_Comm * comm);
int MPIDI_GLEX_mpi_comm_commit_post_hook(MPIR_Comm * comm);
int MPIDI_GLEX_mpi_comm_free_hook(MPIR_Comm * comm);
int MPIDI_GLEX_comm_set_hints(MPIR_Comm * comm, MPIR_Info * info);
int MPIDI_GLEX_comm_get_gpid(MPIR_Comm * comm, int idx, uint64_t * gpid, bool is_remote);
int MPIDI_GLEX_rank_is_local(int rank, MPIR_Comm * comm);
int MPIDI_GLEX_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids);
int MPIDI_GLEX_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                              uint64_t * remote_gpids);
int MPIDI_GLEX_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size,
                            int timeout);
int MPIDI_GLEX_dynamic_recv(int tag, void *buf, int size, int timeout);

/* glex_coll.c: offered first, MPICH's algorithms when not offloadable */
int MPIDI_GLEX_mpi_barrier(MPIR_Comm * comm, MPIR_Errflag_t * errflag);
int MPIDI_GLEX_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                         MPIR_Comm * comm, MPIR_Errflag_t * errflag);
int MPIDI_GLEX_mpi_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                             MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                             MPIR_Errflag_t * errflag);
int MPIDI_GLEX_mpi_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                          MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                          MPIR_Errflag_t * errflag);
int MPIDI_GLEX_mpi_ibarrier(MPIR_Comm * comm, MPIR_Request ** req);
int MPIDI_GLEX_mpi_ibcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                          MPIR_Comm * comm, MPIR_Request ** req);
int MPIDI_GLEX_mpi_iallreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                              MPIR_Request ** req);
int MPIDI_GLEX_mpi_ireduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                           MPIR_Request ** req);
/* drive nonblocking collectives; sets *made_progress */
int MPIDI_GLEX_nbc_progress(int *made_progress);
/* "MPI_Bcast", ... per glex_coll_kind_t (messages and GLEX_VERBOSE reports) */
extern const char *const MPIDI_GLEX_kind_mpi_name[GLEX_COLL_KIND_COUNT];

/* glex_misc.c: hooks the netmod has nothing to add to */
int MPIDI_GLEX_win_hook(MPIR_Win * win);
int MPIDI_GLEX_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_GLEX_win_detach_hook(MPIR_Win * win, const void *base);
int MPIDI_GLEX_type_hook(MPIR_Datatype * dt);
int MPIDI_GLEX_op_hook(MPIR_Op * op);
void *MPIDI_GLEX_mpi_alloc_mem(MPI_Aint size, MPIR_Info * info);
int MPIDI_GLEX_mpi_free_mem(void *ptr);
int MPIDI_GLEX_mpi_win_set_info(MPIR_Win * win, MPIR_Info * info);
int MPIDI_GLEX_mpi_win_get_info(MPIR_Win * win, MPIR_Info ** info_p);
int MPIDI_GLEX_mpi_win_free(MPIR_Win ** win_p);
int MPIDI_GLEX_mpi_win_create(void *base, MPI_Aint length, int disp_unit, MPIR_Info * info,
                              MPIR_Comm * comm, MPIR_Win ** win_p);
int MPIDI_GLEX_mpi_win_attach(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_GLEX_mpi_win_allocate_shared(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                       MPIR_Comm * comm, void **baseptr, MPIR_Win ** win_p);
int MPIDI_GLEX_mpi_win_detach(MPIR_Win * win, const void *base);
int MPIDI_GLEX_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                MPIR_Comm * comm, void *baseptr, MPIR_Win ** win_p);
int MPIDI_GLEX_mpi_win_create_dynamic(MPIR_Info * info, MPIR_Comm * comm, MPIR_Win ** win_p);
int MPIDI_GLEX_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                              MPI_Datatype datatype, int rank, int tag, MPIR_Comm * comm,
                              MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** req);
int MPIDI_GLEX_mpi_precv_init(void *buf, int partitions, MPI_Aint count, MPI_Datatype datatype,
                              int rank, int tag, MPIR_Comm * comm, MPIR_Info * info,
                              MPIDI_av_entry_t * av, MPIR_Request ** req);

#endif /* GLEX_IMPL_H_INCLUDED */
