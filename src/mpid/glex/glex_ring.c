/* glex_ring.c - the receive rings of the RDMA-eager protocol (glex_am.c).
 *
 * Each process registers one region with its NIC (glex_region_publish): a
 * ring of RING bytes per source node.  A message too large for one MP
 * descriptor but up to ring_max bytes goes as an RDMA put of its data into
 * the sender's ring at the receiver, then an MP descriptor naming where it
 * lies; the receiver hands the data to MPICH from there (one copy into the
 * receive buffer) and returns the bytes it consumed to the sender as a
 * credit message every quarter ring.  The sender keeps a ring's write
 * position and the last credit; a message that does not fit goes by the
 * other protocols instead (nothing waits).  On one host the sender's NIC
 * writes the ring in place (registered memory, found in the host's
 * segment); to a process on another host the put crosses the fabric ahead
 * of the MP (an RDMA write where the provider has them, else a message
 * applied before the MP), the ring's address and key learnt at MPI_Init
 * through PMI.  A sender on another host gets a larger ring (its messages
 * cross the fabric: a rendezvous there costs a round trip before the data,
 * and OSU's window of 64 messages of 32-64 KiB overran a 1 MiB ring). */
#include "glex_impl.h"

/* ring bytes per source on this host: 8 MiB per process in all, 16 KiB -
 * 1 MiB each (larger ones were slower on one host: the ring's data is
 * copied twice, a rendezvous once) */
#define RING_TOTAL (8u << 20)
#define RING_MIN (16u << 10)
#define RING_MAX (1u << 20)
/* per source on another host: 16 MiB in all for the host with the most
 * such sources, 16 KiB - 4 MiB each (2 hosts x 1 rank, OSU bw at 32-64
 * KiB: 530-780 MB/s against 200-320 with 1 MiB) */
#define RING_FAR_TOTAL (16u << 20)
#define RING_FAR_MAX (4u << 20)
/* the region ends with a line of its own: the claim word of a rendezvous
 * whose second half this process offers its sender (glex_am.c) */
#define CLAIM_LINE 64u
/* up to this many processes per CPU the rings are touched before use (a
 * page's first touch costs a process about 6 us here, glex_touch_pages):
 * OSU mbw_mr at 4 processes on 2 CPUs, 256 B, its first ring size: 446
 * MB/s touched on use, 916 before (NOTES 2026-11-29); MPI_Init at 16
 * processes 30-100 ms longer */
#define PREFAULT_PER_CPU_MAX 8u
/* messages through a ring: at most GLEX_RDMA_EAGER bytes (read with the
 * other settings, glex_init.c) and a quarter ring.  auto: 64 KiB, but to a
 * process of this host at most NEAR_READ_MAX where its NIC's DMA read
 * (cross-memory attach) pays from NEAR_READ_FROM_KB or less (the segment
 * measured it, glex_dma_read_from_kb) and the receiver is running, or can
 * at once (glex_node_has_cpu): a ring message crosses the CPUs twice (into the
 * ring, out of it), a rendezvous once, and reads a send buffer that stays
 * in both caches.  Intel Xeon VM (2.2), 2 ranks, OSU latency 16/32/64
 * KiB 3.1/5.2/8.5 us by the ring, 2.1/3.1/4.2 read (Open MPI 2.2/3.2/5.0);
 * bw 16 KiB 10.4 GB/s by the ring, 5.7-6.4 read (Open MPI 6.1-6.7), 8 KiB
 * 12 against 3.9-6.4, so 8 KiB stays in the ring.  Not in virtual time
 * (the model keeps the protocol it was calibrated with), nor to a
 * receiver asleep or waiting for a CPU (OSU mbw_mr at 4 processes on 2
 * CPUs, 16 KiB: 5-6 GB/s read against 8.5 by the ring: a rendezvous waits
 * for its receiver to run, a ring message does not).  Where the read pays
 * only from 32 KiB (a second AMD EPYC VM, its CPUs exchanging lines
 * slowly) the ring still won at 64 KiB: latency 5.1-5.5 us against 8.4-8.8
 * read, bw 19 GB/s against 7-16 (NOTES 2026-12-02, third session). */
#define NEAR_READ_MAX 8192
#define NEAR_READ_FROM_KB 16u

typedef struct {
    uint64_t remote;    /* our ring at the destination (its address there); 0: none yet */
    uint64_t len;       /* its bytes */
    uint64_t wpos;      /* bytes handed out, ever */
    uint64_t credit;    /* bytes the destination consumed, ever (its last credit) */
} ring_tx_t;

typedef struct {
    uint64_t off, len;  /* the source's ring in our region */
    uint64_t consumed;  /* bytes of the source's ring taken, ever */
    uint64_t credited;  /* of these, returned to it */
} ring_rx_t;

static struct {
    glex_region_t region;
    uint32_t nnodes;
    uint64_t ring;      /* bytes per source on the same host */
    uint64_t ring_far;  /* per source on another host */
    MPI_Aint msg_max;   /* 0: rings off (none published) */
    MPI_Aint near_max;  /* to a running process of this host (auto: less) */
    ring_tx_t *tx;
    ring_rx_t *rx;
    uint64_t *base;     /* a job on several hosts: every process's region (0: none) */
    uint32_t *per;      /* processes per host */
} R;

/* the ring of src in dst's region: every process lays out the same way */
static uint64_t ring_len(uint32_t src, uint32_t dst)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    return glex_fabric_host_of(f, src) == glex_fabric_host_of(f, dst) ? R.ring : R.ring_far;
}

/* the bytes of dst's region */
static uint64_t ring_total(uint32_t dst)
{
    uint32_t near = R.per[glex_fabric_host_of(MPIDI_GLEX_global.fabric, dst)];
    return near * R.ring + (R.nnodes - near) * R.ring_far + CLAIM_LINE;
}

static uint64_t ring_off(uint32_t src, uint32_t dst)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < src; i++)
        off += ring_len(i, dst);
    return off;
}

/* a job on several hosts: every process's ring region and the key of its
 * RDMA writes through PMI (each process takes part, with 0 where it has
 * no ring); a node whose ring takes RDMA writes (FI_RMA) is told to the
 * NIC model */
static int share_bases(void)
{
    int mpi_errno = MPI_SUCCESS;
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    uint64_t mine[3] = { 0, 0, 0 };     /* base, key, 1: the key is good */
    if (R.msg_max) {
        mine[0] = (uint64_t) (uintptr_t) R.region.base;
        mine[2] = glex_fabric_expose(f, R.region.base, ring_total(glex_fabric_node(f)),
                                     &mine[1]) == GLEX_OK;
    }
    uint64_t *all = MPL_calloc(R.nnodes, sizeof mine, MPL_MEM_BUFFER);
    R.base = MPL_calloc(R.nnodes, sizeof *R.base, MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDJUMP1(!all || !R.base, mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                         "the ring addresses of the job");
    mpi_errno = MPIR_pmi_allgather(mine, sizeof mine, all, sizeof mine, MPIR_PMI_DOMAIN_ALL);
    MPIR_ERR_CHECK(mpi_errno);
    for (uint32_t i = 0; i < R.nnodes; i++) {
        R.base[i] = all[3 * i];
        if (R.msg_max && all[3 * i] && all[3 * i + 2] && !glex_fabric_same_host(f, i))
            (void) glex_fabric_remote_region(f, i, all[3 * i], ring_total(i), all[3 * i + 1]);
    }
  fn_fail:
    MPL_free(all);
    return mpi_errno;
}

/* are the rings' pages touched before use (PREFAULT_PER_CPU_MAX)? */
static int touch_early(glex_fabric_t * f)
{
    return glex_procs_per_cpu_here(f) <= PREFAULT_PER_CPU_MAX;
}

int MPIDI_GLEX_ring_init(void)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    R.nnodes = glex_fabric_nnodes(f);
    uint32_t nh = glex_fabric_nhosts(f), me = glex_fabric_node(f), most = 0;
    if (!MPIDI_GLEX_global.rdma_eager || R.nnodes < 2)
        return MPI_SUCCESS;     /* off, or a job of one process */
    R.ring = RING_MAX;
    while (R.ring > RING_MIN && R.ring * R.nnodes > RING_TOTAL)
        R.ring /= 2;
    R.per = MPL_calloc(nh, sizeof *R.per, MPL_MEM_BUFFER);
    R.tx = MPL_calloc(R.nnodes, sizeof *R.tx, MPL_MEM_BUFFER);
    R.rx = MPL_calloc(R.nnodes, sizeof *R.rx, MPL_MEM_BUFFER);
    if (!R.per || !R.tx || !R.rx)
        goto no_rings;
    for (uint32_t i = 0; i < R.nnodes; i++)
        R.per[glex_fabric_host_of(f, i)]++;
    for (uint32_t h = 0; h < nh; h++)   /* the most sources on other hosts a process has */
        most = MPL_MAX(most, R.nnodes - R.per[h]);
    R.ring_far = RING_FAR_MAX;
    while (R.ring_far > RING_MIN && R.ring_far * most > RING_FAR_TOTAL)
        R.ring_far /= 2;
    uint64_t off = 0;
    for (uint32_t i = 0; i < R.nnodes; i++) {
        R.rx[i].off = off;
        R.rx[i].len = ring_len(i, me);
        off += R.rx[i].len;
    }
    if (glex_region_alloc(&R.region, (size_t) ring_total(me)) != GLEX_OK ||
        glex_region_publish(f, &R.region) != GLEX_OK)
        goto no_rings;  /* no memfd or no room */
    /* the rings' pages are touched now, at most 8 MiB (12 ms), not on the
     * first pass of messages (OSU latency at 256 B, the first ring size:
     * 1.2 us with OSU's warm-up, 0.76 warm); with many processes per CPU,
     * on use (the time and memory of every process's 8 MiB) */
    if (touch_early(f))
        glex_region_prefault(&R.region);
    MPI_Aint limit = MPIDI_GLEX_global.rdma_eager;
    R.msg_max = MPL_MIN(limit < 0 ? MPIDI_GLEX_RDMA_EAGER_MAX : limit,
                        (MPI_Aint) (MPL_MAX(R.ring, R.ring_far) / 4));
    uint32_t read_from = glex_dma_read_from_kb(f);
    R.near_max = limit < 0 && !glex_fabric_params(f)->vtime && read_from &&
        read_from <= NEAR_READ_FROM_KB ? MPL_MIN(R.msg_max, NEAR_READ_MAX) : R.msg_max;
    return nh > 1 ? share_bases() : MPI_SUCCESS;
  no_rings:    /* the other protocols carry everything */
    MPIDI_GLEX_ring_finalize();
    R.nnodes = glex_fabric_nnodes(f);
    return nh > 1 ? share_bases() : MPI_SUCCESS;
}

void MPIDI_GLEX_ring_finalize(void)
{
    glex_region_withdraw(MPIDI_GLEX_global.fabric, &R.region);    /* if published */
    glex_region_free(&R.region);
    MPL_free(R.tx);
    MPL_free(R.rx);
    MPL_free(R.per);
    MPL_free(R.base);
    memset(&R, 0, sizeof R);
}

/* the destination's region: on another host as PMI told, on this one once
 * it has published it (laid out as ours) */
static uint64_t remote_ring(uint32_t node)
{
    ring_tx_t *t = &R.tx[node];
    if (t->remote)
        return t->remote;
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    uint32_t me = glex_fabric_node(f);
    t->len = ring_len(me, node);
    if (!glex_fabric_same_host(f, node)) {
        if (R.base && R.base[node])
            t->remote = R.base[node] + ring_off(me, node);
        return t->remote;
    }
    for (uint32_t i = 0; i < GLEX_PUBLISH_MAX; i++) {
        uint64_t base, bytes;
        if (glex_region_published(f, node, i, &base, &bytes) == GLEX_OK &&
            bytes == ring_total(node)) {
            t->remote = base + ring_off(me, node);
            /* where this NIC will write, touched here once (as above) */
            if (touch_early(f))
                glex_dma_prefault(f, node, t->remote, t->len);
            break;
        }
    }
    return t->remote;
}

int MPIDI_GLEX_ring_reserve(uint32_t node, MPI_Aint len, uintptr_t src,
                            MPIDI_GLEX_ring_slot_t * slot)
{
    if (!R.msg_max || len > R.msg_max || node >= R.nnodes || !remote_ring(node))
        return 0;
    ring_tx_t *t = &R.tx[node];
    if ((uint64_t) len > t->len / 4)
        return 0;       /* a quarter ring at most */
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    if (len > R.near_max && glex_node_has_cpu(f, node))
        return 0;       /* read in place instead (a running process of this host) */
    /* A ring message crosses the CPUs twice (the sender's copy into the
     * ring, the receiver's out of it), one read in place once: the ring
     * wins where the sender's CPU would otherwise wait (OSU bw at 64 KiB:
     * 23 GB/s against 5.4), the read where both CPUs have data of their own
     * to move.  A sender with large receives of its own posted is such a
     * CPU (OSU bibw at 64 KiB, in turn: 8.95 -> 11.0 GB/s; at 32 KiB the
     * ring still led, 9.3-13.8 against 6.3-9.0); a ping-pong posts its
     * receive after its send and keeps the ring (64 KiB: 5.0 us, 7.4 read) */
    if (len >= MPIDI_GLEX_BIDIR_MIN && MPIDI_GLEX_global.p2p_big_posted &&
        glex_fabric_same_host(f, node) && !glex_fabric_params(f)->vtime)
        return 0;
    /* the data starts as far into its first line as the source does: both
     * copies (into the ring, out to a receive buffer aligned as the send
     * buffer) then move whole-line distances.  memcpy's rep movsb runs 20-30x
     * slower when its destination lies 1-31 bytes past the source modulo 4
     * KiB (a line-aligned slot read into a malloc'd buffer, 16 bytes into
     * its page: 4 KiB in 0.8 us instead of 0.05, doc/performance.md) */
    uint64_t lead = src % 64u;
    uint64_t need = (lead + (uint64_t) len + 63u) & ~(uint64_t) 63u;        /* lines of their own */
    uint64_t off = t->wpos % t->len;
    uint64_t skip = off + need > t->len ? t->len - off : 0;     /* to the ring's start */
    if (t->wpos + skip + need - t->credit > t->len)
        return -1;      /* full until the next credit */
    slot->off = (uint32_t) ((off + skip) % t->len + lead);
    slot->used = (uint32_t) (skip + need);
    slot->remote = t->remote + slot->off;
    t->wpos += skip + need;
    return 1;
}

uint64_t *MPIDI_GLEX_ring_claim_word(void)
{
    if (!R.msg_max)
        return NULL;
    return (uint64_t *) ((uint8_t *) R.region.base +
                         ring_total(glex_fabric_node(MPIDI_GLEX_global.fabric)) - CLAIM_LINE);
}

void MPIDI_GLEX_ring_sizes(uint64_t * near, uint64_t * far)
{
    *near = R.msg_max ? R.ring : 0;
    *far = R.msg_max && glex_fabric_nhosts(MPIDI_GLEX_global.fabric) > 1 ? R.ring_far : 0;
}

void MPIDI_GLEX_ring_msg_max(MPI_Aint * any, MPI_Aint * near_running)
{
    *any = R.msg_max;
    *near_running = R.msg_max ? R.near_max : 0;
}

void MPIDI_GLEX_ring_credit(uint32_t node, uint64_t consumed)
{
    if (node < R.nnodes && R.tx && consumed > R.tx[node].credit)
        R.tx[node].credit = consumed;
}

void *MPIDI_GLEX_ring_data(uint32_t src, uint64_t off, uint64_t len)
{
    if (!R.msg_max || src >= R.nnodes || off > R.rx[src].len || len > R.rx[src].len - off)
        return NULL;
    return (uint8_t *) R.region.base + R.rx[src].off + off;
}

uint64_t MPIDI_GLEX_ring_consumed(uint32_t src, uint32_t used)
{
    ring_rx_t *r = &R.rx[src];
    r->consumed += used;
    if (r->consumed - r->credited < r->len / 4)
        return 0;
    r->credited = r->consumed;
    return r->consumed;
}
