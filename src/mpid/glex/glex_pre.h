/* glex_pre.h - ch4:glex types embedded in MPICH's request, communicator,
 * datatype, op, window and address-vector objects (included by MPICH's
 * netmodpre.h before those objects are defined: keep it free of MPIR types). */
#ifndef GLEX_PRE_H_INCLUDED
#define GLEX_PRE_H_INCLUDED

#include <stdint.h>

/* active-message state: a send's, kept until the receiver acknowledges a
 * rendezvous (RDMA-read) transfer; a receive's, where the rendezvous data
 * is to be read from once the receive buffer is known */
typedef struct {
    int handler_id;
    void *pack_buffer;   /* packed copy of non-contiguous data, or NULL */
    uint32_t lmt_node;   /* receive: the sender's node */
    uint64_t lmt_addr;   /* receive: where the sender's data is */
    uint64_t lmt_cookie; /* receive: the sender's request, for the ACK */
    uint64_t lmt_done;   /* send: the claim word's value its NIC writes once it has
                          * put the second half the receiver offered */
} MPIDI_GLEX_am_request_t;

/* a native point-to-point request (glex_p2p.c): a posted receive, or a
 * message that arrived before its receive; a send uses the active-message
 * state above.  It must end before MPIDIG's own fields, which ch4 reads at
 * every request's completion (glex_p2p.c checks). */
typedef struct {
    void *next;          /* the posted or unexpected queue (an MPIR_Request *) */
    void *buf;           /* posted: the receive buffer; unexpected: a copy of the data
                          * (NULL: none, or a rendezvous) */
    int64_t count;       /* posted: the receive count; unexpected rendezvous: where the
                          * sender's data is */
    uint64_t cookie;     /* unexpected: the sender's request (rendezvous or synchronous) */
    int32_t datatype;    /* posted: the receive datatype (an MPI_Datatype) */
    uint32_t node;       /* unexpected: the sender's node */
    uint32_t context_id; /* the receive's or the message's */
    uint8_t flags;       /* unexpected: MPIDI_GLEX_P2P_* of the message */
} MPIDI_GLEX_request_t;

/* per-communicator offload state (a glex_group_t and what GLEX_VERBOSE has
 * already reported) */
typedef struct {
    void *group;                 /* glex_group_t *, NULL: no offload */
    uint32_t verbose_seen[4];    /* per collective kind: bit per algorithm reported */
} MPIDI_GLEX_comm_t;

typedef struct {
    int dummy;
} MPIDI_GLEX_dt_t;

typedef struct {
    int dummy;
} MPIDI_GLEX_op_t;

typedef struct {
    int dummy;
} MPIDI_GLEX_win_t;

typedef struct {
    int dummy;
} MPIDI_GLEX_addr_t;

typedef struct {
    int dummy;
} MPIDI_GLEX_part_t;

#endif /* GLEX_PRE_H_INCLUDED */
