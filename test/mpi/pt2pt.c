/* pt2pt.c - point-to-point through the netmod's active messages: ping-pong
 * from 0 bytes to 4 MiB (inline, the RDMA-eager ring or with
 * GLEX_RDMA_EAGER=0 fragments, rendezvous by RDMA read), long MPs read in
 * place (posted, strided, truncated, unexpected, synchronous), a non-contiguous
 * large message, rendezvous between strided layouts (in place, unexpected,
 * truncated), a stream through the RDMA-eager rings (wrapping, full,
 * credited), MPI_ANY_SOURCE and probe, synchronous send, the netmod's
 * matching (unexpected messages of each protocol, matched probes,
 * truncation, a cancelled receive, a strided receive), 1800 unexpected
 * messages of 4096 and 8000 B at once (twice), a flood of small
 * messages (queue back-pressure), message ordering, one-sided
 * put/get/accumulate, and floods both ways at once of rendezvous messages
 * and accumulates (more than a receive queue holds).
 *
 * usage: pt2pt                 all of the above
 *        pt2pt stream BYTES N  only N messages of BYTES from rank 0 to the
 *                              last rank, each checked (with GLEX_VERBOSE=2
 *                              the protocol counts say how they went)
 *        pt2pt window BYTES N  rank 0 posts N MPI_Isend of BYTES to the last
 *                              rank (its receives posted first) and waits,
 *                              then, 0.1 s later, N more; each checked (the
 *                              second window must take the credits the
 *                              receiver returned meanwhile for the ring)
 *        pt2pt both BYTES N    ranks 0 and the last each post N receives of
 *                              BYTES from the other, then N MPI_Isend of
 *                              BYTES to it, and wait; each checked (both
 *                              CPUs have data to move: large ones go by
 *                              rendezvous, not offered to the sender)
 *        pt2pt unacked BYTES N rank 0 posts N MPI_Isend of BYTES to the
 *                              last rank, which receives them only after
 *                              rank 0 has received N of BYTES from it: rank
 *                              0 reads with its own rendezvous unacknowledged
 *                              (so offers no half), the last rank with none
 *        pt2pt busy FILE       rank 0 sends 1 MiB with MPI_Isend, then computes
 *                              outside MPI until the last rank has received it
 *                              (it creates FILE), at most 20 s: a receiver
 *                              that offered the sender half the rendezvous
 *                              must not wait for a sender busy elsewhere
 *        pt2pt crowd BYTES N FILE  the stream of N messages of BYTES while
 *                              the ranks between compute outside MPI until
 *                              the last has them all (it creates FILE), at
 *                              most 20 s: with them as many as the CPUs, no
 *                              CPU is left to a sender that waits
 *        pt2pt wait MS         rank 0 sends to each other rank MS ms after
 *                              a barrier; with more ranks than CPUs each
 *                              waiting rank must spend less than a quarter
 *                              of the wait on a CPU (it sleeps, GLEX_NAP_US)
 *        pt2pt barrier_idle N  N rounds: a barrier, then ranks 0 and 1
 *                              exchange messages for 2 ms while the others
 *                              wait in the next barrier; with more ranks
 *                              than CPUs those must spend under 15%
 *                              of the time on a CPU (they give the cores up)
 *        pt2pt testloop N      each rank makes N updates for random ranks,
 *                              sent in buckets of 1024, polling its receive
 *                              with MPI_Test between updates (HPCC's
 *                              RandomAccess); every update counted and
 *                              summed; with more ranks than CPUs the ranks
 *                              must keep the CPUs at least a quarter busy
 *                              (a loop of tests with work between is no
 *                              wait to sleep in: 1-2% when they napped) */
#define _POSIX_C_SOURCE 200809L /* nanosleep, sysconf, getrusage */
#include "mt.h"
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static unsigned char pattern(long i, int salt)
{
    return (unsigned char) (i * 131 + salt * 17 + (i >> 8));
}

/* message k's pattern, filled in / the first wrong byte of it (-1: none) */
static void fill_pattern(unsigned char *b, long len, int k)
{
    for (long i = 0; i < len; i++)
        b[i] = pattern(i, k);
}

static long first_wrong(const unsigned char *b, long len, int k)
{
    for (long i = 0; i < len; i++)
        if (b[i] != pattern(i, k))
            return i;
    return -1;
}

static void pingpong(void)
{
    if (size < 2)
        return;
    long sizes[] = { 0, 1, 8, 100, 200, 224, 256, 4096, 65536 - 64, 65536, 100000, 1 << 20,
        (4 << 20) + 3 };
    int peer = rank == 0 ? 1 : 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        long n = sizes[s];
        unsigned char *buf = malloc((size_t) n + 1);
        if (rank == 0) {
            for (long i = 0; i < n; i++)
                buf[i] = pattern(i, (int) s);
            MT_MPI(MPI_Send(buf, (int) n, MPI_BYTE, peer, (int) s, MPI_COMM_WORLD));
            memset(buf, 0, (size_t) n);
            MPI_Status st;
            MT_MPI(MPI_Recv(buf, (int) n, MPI_BYTE, peer, (int) s, MPI_COMM_WORLD, &st));
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MT_CHECK(cnt == n, "pong of %ld bytes: count %d", n, cnt);
            long bad = -1;
            for (long i = 0; i < n; i++)
                if (buf[i] != (unsigned char) (pattern(i, (int) s) + 1)) {
                    bad = i;
                    break;
                }
            MT_CHECK(bad < 0, "pong of %ld bytes: byte %ld wrong", n, bad);
        } else if (rank == 1) {
            MT_MPI(MPI_Recv(buf, (int) n, MPI_BYTE, peer, (int) s, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            for (long i = 0; i < n; i++)
                buf[i]++;
            MT_MPI(MPI_Send(buf, (int) n, MPI_BYTE, peer, (int) s, MPI_COMM_WORLD));
        }
        free(buf);
    }
}

/* Messages of 297-2432 bytes, each one long MP (up to eight slots of the
 * receive queue) whose data the receiver copies straight from the slots:
 * into a posted receive, contiguous or strided (a vector of 3 of every 4
 * bytes), into one posted too small (truncated: the part that fits, nothing
 * past it), unexpected (copied aside, then taken), and synchronous (its ACK
 * once the data is out of the slots). */
static void long_mp(void)
{
    if (size < 2)
        return;
    enum { CAP = 2432, KINDS = 5 };
    const long lens[] = { 297, 600, 1000, 1500, 2047, 2432 };
    int last = size - 1;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Datatype vec;   /* 3 of every 4 bytes: CAP bytes in 4/3 CAP */
    MPI_Type_vector(CAP / 3 + 1, 3, 4, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    unsigned char *b = malloc(2 * CAP + 64);
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (int kind = 0; kind < KINDS; kind++) {     /* posted, strided, small, unexpected, sync */
            long n = lens[l];
            int tag = 200 + (int) l * KINDS + kind, salt = tag;
            MPI_Request rq = MPI_REQUEST_NULL;
            if (rank == last) {
                memset(b, 0xee, 2 * CAP + 64);
                if (kind == 0 || kind == 4)
                    MT_MPI(MPI_Irecv(b, CAP, MPI_BYTE, 0, tag, c, &rq));
                else if (kind == 1)
                    MT_MPI(MPI_Irecv(b, 1, vec, 0, tag, c, &rq));
                else if (kind == 2)
                    MT_MPI(MPI_Irecv(b, (int) (n / 2), MPI_BYTE, 0, tag, c, &rq));
            }
            MPI_Barrier(c);    /* posted (or not) before the send */
            if (rank == 0) {
                fill_pattern(b, n, salt);
                if (kind == 4)
                    MT_MPI(MPI_Ssend(b, (int) n, MPI_BYTE, last, tag, c));
                else
                    MT_MPI(MPI_Send(b, (int) n, MPI_BYTE, last, tag, c));
            } else if (rank == last) {
                MPI_Status st;
                int rc;
                if (kind == 3) {
                    MPI_Status ps;
                    MT_MPI(MPI_Probe(0, tag, c, &ps));     /* arrived, unexpected */
                    rc = MPI_Recv(b, CAP, MPI_BYTE, 0, tag, c, &st);
                } else {
                    rc = MPI_Wait(&rq, &st);
                }
                int cls = MPI_SUCCESS, cnt = -1;
                MPI_Error_class(rc, &cls);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                long want = kind == 2 ? n / 2 : n;
                MT_CHECK(cls == (kind == 2 ? MPI_ERR_TRUNCATE : MPI_SUCCESS) && cnt == want,
                         "long MP of %ld bytes, kind %d: error class %d, count %d (expected %ld)",
                         n, kind, cls, cnt, want);
                long bad = -1; /* every byte: the message's where it lands, else untouched */
                for (long at = 0; at < 2 * CAP + 64 && bad < 0; at++) {
                    long i = kind == 1 ? (at % 4 == 3 ? -1 : at / 4 * 3 + at % 4) : at;
                    unsigned char expect = i >= 0 && i < want ? pattern(i, salt) : 0xee;
                    if (b[at] != expect)
                        bad = at;
                }
                MT_CHECK(bad < 0, "long MP of %ld bytes, kind %d: byte %ld wrong", n, kind, bad);
            }
        }
    free(b);
    MPI_Type_free(&vec);
    MPI_Comm_free(&c);
}

/* Rendezvous between strided layouts: 160 blocks of 16 KiB (the sender's
 * pieces, read where they lie through its scatter-gather list) into 5120
 * blocks of 512 B (filled in place by the receiver's NIC, in batches),
 * matched at once and unexpected; into a strided receive with room for half
 * (truncated: MPI_ERR_TRUNCATE, the half that fits right, nothing past it
 * written); and into every other int (through the staging buffer, the
 * sender's pieces cut at its 1 MiB steps). */
typedef struct {
    long blocks, len, stride;   /* ints */
} layout_t;

/* the index among the ints a layout carries of the int at position k, or -1 */
static long layout_index(const layout_t * l, long k)
{
    long blk = k / l->stride, in = k % l->stride;
    return blk < l->blocks && in < l->len ? blk * l->len + in : -1;
}

static void strided_layouts(void)
{
    if (size < 2)
        return;
    const layout_t snd = { 160, 4096, 8192 }, rcv[4] = {
        { 5120, 128, 256 }, { 5120, 128, 256 }, { 2560, 128, 256 }, { 655360, 1, 2 } };
    int last = size - 1;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Datatype st;
    MPI_Type_vector((int) snd.blocks, (int) snd.len, (int) snd.stride, MPI_INT, &st);
    MPI_Type_commit(&st);
    size_t ints = (size_t) snd.blocks * (size_t) snd.stride;      /* the largest of all */
    int *b = malloc(sizeof(int) * ints);
    for (int pass = 0; pass < 4; pass++) {     /* matched, unexpected, truncated, ints */
        if (rank == 0) {
            for (size_t i = 0; i < ints; i++)
                b[i] = (int) (i * 3 + (size_t) pass);
            MT_MPI(MPI_Send(b, 1, st, last, 80 + pass, c));
        } else if (rank == last) {
            const layout_t *l = &rcv[pass];
            MPI_Datatype rt;
            MPI_Type_vector((int) l->blocks, (int) l->len, (int) l->stride, MPI_INT, &rt);
            MPI_Type_commit(&rt);
            for (size_t i = 0; i < ints; i++)
                b[i] = -1;
            if (pass == 1) {   /* the message waits unexpected for its receive */
                MPI_Status ps;
                MT_MPI(MPI_Probe(0, 81, c, &ps));
            }
            MPI_Status s;
            int rc = MPI_Recv(b, 1, rt, 0, 80 + pass, c, &s);
            int cls = MPI_SUCCESS, cnt = -1;
            MPI_Error_class(rc, &cls);
            MPI_Get_count(&s, MPI_INT, &cnt);
            long want = l->blocks * l->len;
            MT_CHECK(cls == (pass == 2 ? MPI_ERR_TRUNCATE : MPI_SUCCESS) && cnt == want,
                     "strided rendezvous pass %d: error class %d, count %d (expected %ld)", pass,
                     cls, cnt, want);
            long bad = -1;
            for (long k = 0; k < (long) ints && bad < 0; k++) {
                long idx = layout_index(l, k);
                long src = idx < 0 ? 0 : idx / snd.len * snd.stride + idx % snd.len;
                int expect = idx < 0 ? -1 : (int) (src * 3 + pass);
                if (b[k] != expect)
                    bad = k;
            }
            MT_CHECK(bad < 0, "strided rendezvous pass %d: int %ld is %d", pass, bad,
                     bad >= 0 ? b[bad] : 0);
            MPI_Type_free(&rt);
        }
    }
    free(b);
    MPI_Type_free(&st);
    MPI_Comm_free(&c);
}

static void noncontig(void)
{
    if (size < 2)
        return;
    enum { N = 300000 };
    MPI_Datatype vec;
    MPI_Type_vector(N, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *buf = malloc(sizeof(int) * 3 * N);
    if (rank == 0) {
        for (int i = 0; i < 3 * N; i++)
            buf[i] = i;
        MT_MPI(MPI_Send(buf, 1, vec, 1, 7, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int *in = malloc(sizeof(int) * 2 * N);
        MT_MPI(MPI_Recv(in, 2 * N, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int bad = -1;
        for (int k = 0; k < N && bad < 0; k++)
            if (in[2 * k] != 3 * k || in[2 * k + 1] != 3 * k + 1)
                bad = k;
        MT_CHECK(bad < 0, "vector send: block %d wrong", bad);
        free(in);
    }
    free(buf);
    MPI_Type_free(&vec);
}

/* Messages of 300 B - 64 KiB, the RDMA-eager range (a ring per sender at
 * the receiver): a stream of many times a ring's size, unexpected (sent
 * before the receives are posted) and then expected, so that rings wrap,
 * fill (the rest goes by the other protocols) and are given back by
 * credits, in order; every other message is a non-contiguous vector. */
static void ring_stream(void)
{
    if (size < 2)
        return;
    enum { M = 400, MAXB = 65536 };
    int last = size - 1;
    MPI_Datatype vec;   /* 2 of every 3 ints */
    MPI_Type_vector(MAXB / 8, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *src = malloc(sizeof(int) * 3 * (MAXB / 8));
    unsigned char *bufs = malloc((size_t) M * MAXB);
    MPI_Request *rq = malloc(sizeof *rq * M);
    for (int pass = 0; pass < 2; pass++) {
        int expected = pass == 1;
        if (rank == last && expected)
            for (int i = 0; i < M; i++)
                MT_MPI(MPI_Irecv(bufs + (size_t) i * MAXB, MAXB, MPI_BYTE, 0, 20 + pass,
                                 MPI_COMM_WORLD, &rq[i]));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            for (int i = 0; i < M; i++) {
                int n = 300 + (i * 977 + pass * 131) % (MAXB - 300);
                if (i % 2) {    /* vector: n/8 blocks of 2 ints */
                    for (int k = 0; k < 3 * (MAXB / 8); k++)
                        src[k] = k * 7 + i;
                    MT_MPI(MPI_Send(src, 1, vec, last, 20 + pass, MPI_COMM_WORLD));
                } else {
                    unsigned char *b = bufs + (size_t) i * MAXB;
                    fill_pattern(b, n, i + pass);
                    MT_MPI(MPI_Isend(b, n, MPI_BYTE, last, 20 + pass, MPI_COMM_WORLD, &rq[i]));
                }
                if (i % 2)
                    rq[i] = MPI_REQUEST_NULL;
            }
            MPI_Status *st = malloc(sizeof *st * M);
            MT_MPI(MPI_Waitall(M, rq, st));
            free(st);
        } else if (rank == last) {
            if (!expected) {    /* everything is in (or on its way) before a receive */
                MT_MPI(MPI_Probe(0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (int i = 0; i < M; i++)
                    MT_MPI(MPI_Irecv(bufs + (size_t) i * MAXB, MAXB, MPI_BYTE, 0, 20,
                                     MPI_COMM_WORLD, &rq[i]));
            }
            MPI_Status *st = malloc(sizeof *st * M);
            MT_MPI(MPI_Waitall(M, rq, st));
            for (int i = 0; i < M; i++) {
                int n = 300 + (i * 977 + pass * 131) % (MAXB - 300), cnt, bad = -1;
                MPI_Get_count(&st[i], MPI_BYTE, &cnt);
                const unsigned char *b = bufs + (size_t) i * MAXB;
                if (i % 2) {
                    const int *v = (const int *) (const void *) b;
                    MT_CHECK(cnt == MAXB, "ring stream %d message %d: %d bytes", pass, i, cnt);
                    for (int k = 0; k < MAXB / 8 && bad < 0; k++)
                        if (v[2 * k] != 3 * k * 7 + i || v[2 * k + 1] != (3 * k + 1) * 7 + i)
                            bad = k;
                } else {
                    MT_CHECK(cnt == n, "ring stream %d message %d: %d bytes, expected %d",
                             pass, i, cnt, n);
                    bad = (int) first_wrong(b, n, i + pass);
                }
                MT_CHECK(bad < 0, "ring stream %d message %d: element %d wrong", pass, i, bad);
            }
            free(st);
        }
    }
    free(rq);
    free(bufs);
    free(src);
    MPI_Type_free(&vec);
}

static void anysource_probe(void)
{
    /* everyone sends its rank to 0, received with ANY_SOURCE after a probe */
    if (rank != 0) {
        int v[2] = { rank, rank * rank };
        MT_MPI(MPI_Send(v, 2, MPI_INT, 0, 11, MPI_COMM_WORLD));
    } else {
        int seen = 0;
        for (int k = 1; k < size; k++) {
            MPI_Status st;
            MT_MPI(MPI_Probe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st));
            int cnt, v[2];
            MPI_Get_count(&st, MPI_INT, &cnt);
            MT_CHECK(cnt == 2, "probe count %d", cnt);
            MT_MPI(MPI_Recv(v, 2, MPI_INT, st.MPI_SOURCE, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_CHECK(v[0] == st.MPI_SOURCE && v[1] == v[0] * v[0], "any-source message %d %d",
                     v[0], v[1]);
            seen |= 1 << (v[0] % 30);
        }
        MT_CHECK(size == 1 || seen != 0, "no any-source messages");
    }
}

/* the netmod's matching (glex_p2p.c), rank 0 to the last: messages that
 * arrive before their receive (inline, ring, rendezvous) taken out of
 * order by tag; synchronous sends; a matched probe of each protocol;
 * truncation; a cancelled receive; a rendezvous into a strided receive */
static void matching(void)
{
    if (size < 2)
        return;
    int last = size - 1;
    enum { BIG = 1 << 20, MID = 8000, SMALL = 40 };
    long lens[3] = { BIG, MID, SMALL };
    unsigned char *buf[3];
    for (int m = 0; m < 3; m++)
        buf[m] = malloc((size_t) lens[m]);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int pass = 0; pass < 2; pass++) {     /* 0: standard sends, 1: synchronous */
        if (rank == 0) {
            MPI_Request rq[3];
            for (int m = 0; m < 3; m++) {
                fill_pattern(buf[m], lens[m], m + pass);
                if (pass)
                    MT_MPI(MPI_Issend(buf[m], (int) lens[m], MPI_BYTE, last, 40 + m, c, &rq[m]));
                else
                    MT_MPI(MPI_Isend(buf[m], (int) lens[m], MPI_BYTE, last, 40 + m, c, &rq[m]));
            }
            MPI_Barrier(c);     /* all three are there before a receive */
            MPI_Status sts[3];
            MT_MPI(MPI_Waitall(3, rq, sts));
        } else if (rank == last) {
            MPI_Barrier(c);
            for (int m = 2; m >= 0; m--) {      /* the last sent first */
                memset(buf[m], 0, (size_t) lens[m]);
                MPI_Status st;
                MT_MPI(MPI_Recv(buf[m], (int) lens[m], MPI_BYTE, MPI_ANY_SOURCE, 40 + m, c, &st));
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                long bad = first_wrong(buf[m], lens[m], m + pass);
                MT_CHECK(cnt == lens[m] && st.MPI_SOURCE == 0 && st.MPI_TAG == 40 + m && bad < 0,
                         "unexpected message %d (pass %d): count %d source %d tag %d byte %ld",
                         m, pass, cnt, st.MPI_SOURCE, st.MPI_TAG, bad);
            }
        } else {
            MPI_Barrier(c);
        }
    }
    /* a matched probe of each protocol, then truncation (of a rendezvous too) */
    if (rank == 0) {
        for (int m = 0; m < 3; m++)
            MT_MPI(MPI_Send(buf[m], (int) lens[m], MPI_BYTE, last, 50 + m, c));
        for (int m = 0; m < 3; m++)
            MT_MPI(MPI_Send(buf[m], (int) lens[m], MPI_BYTE, last, 60, c));
    } else if (rank == last) {
        for (int m = 0; m < 3; m++) {
            MPI_Message msg;
            MPI_Status st;
            MT_MPI(MPI_Mprobe(0, MPI_ANY_TAG, c, &msg, &st));
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MT_CHECK(cnt == lens[m] && st.MPI_TAG == 50 + m, "mprobe %d: count %d tag %d", m,
                     cnt, st.MPI_TAG);
            memset(buf[m], 0, (size_t) lens[m]);
            MT_MPI(MPI_Mrecv(buf[m], cnt, MPI_BYTE, &msg, &st));
            MT_CHECK(buf[m][lens[m] - 1] == pattern(lens[m] - 1, m + 1), "mrecv %d: data", m);
        }
        for (int m = 0; m < 3; m++) {
            MPI_Status st;
            int rc = MPI_Recv(buf[m], (int) lens[m] / 2, MPI_BYTE, 0, 60, c, &st);
            int cls = -1, cnt = -1;
            MPI_Error_class(rc, &cls);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MT_CHECK(cls == MPI_ERR_TRUNCATE && cnt == lens[m] / 2,
                     "truncated receive %d: class %d, count %d", m, cls, cnt);
            MT_CHECK(buf[m][lens[m] / 2 - 1] == pattern(lens[m] / 2 - 1, m + 1),
                     "truncated receive %d: data", m);
        }
    }
    /* a cancelled receive; then a rendezvous into every other int */
    if (rank == last) {
        MPI_Request r;
        MPI_Status st;
        int v, flag = 0;
        MT_MPI(MPI_Irecv(&v, 1, MPI_INT, 0, 70, c, &r));
        MT_MPI(MPI_Cancel(&r));
        MT_MPI(MPI_Wait(&r, &st));
        MPI_Test_cancelled(&st, &flag);
        MT_CHECK(flag, "the receive was not cancelled");
    }
    int n = BIG / 8;
    int *v = malloc(sizeof(int) * 2 * (size_t) n);
    MPI_Datatype every_other;
    MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            v[i] = i * 7 + 1;
        MT_MPI(MPI_Send(v, n, MPI_INT, last, 71, c));
    } else if (rank == last) {
        for (int i = 0; i < 2 * n; i++)
            v[i] = -1;
        MT_MPI(MPI_Recv(v, 1, every_other, 0, 71, c, MPI_STATUS_IGNORE));
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (v[2 * i] != i * 7 + 1 || v[2 * i + 1] != -1)
                bad = i;
        MT_CHECK(bad < 0, "strided rendezvous receive: element %d", bad);
    }
    MPI_Type_free(&every_other);
    free(v);
    MPI_Comm_free(&c);
    for (int m = 0; m < 3; m++)
        free(buf[m]);
}

/* Many unexpected messages at once (of 4-8 KiB, up to 11 MiB: more than
 * the netmod keeps copies for in its huge-page arena, 8 MiB): rank 0 sends
 * them all before the last rank posts a receive, which then takes them
 * last first; twice,
 * so that the second round reuses the copies the first gave back (kept or
 * freed).  Every byte checked. */
static void many_unexpected(void)
{
    if (size < 2)
        return;
    enum { N = 1800 };
    static const long lens[3] = { 8000, 8000, 4096 };
    int last = size - 1;
    unsigned char *buf = malloc((size_t) N * 8000);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * N);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * N);
    for (int round = 0; round < 2; round++) {
        if (rank == 0) {
            for (int k = 0; k < N; k++) {
                long len = lens[k % 3];
                fill_pattern(buf + (size_t) k * 8000, len, k + round);
                MT_MPI(MPI_Isend(buf + (size_t) k * 8000, (int) len, MPI_BYTE, last, 100 + k,
                                 MPI_COMM_WORLD, &rq[k]));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MT_MPI(MPI_Waitall(N, rq, sts));
        } else if (rank == last) {
            MPI_Barrier(MPI_COMM_WORLD);
            memset(buf, 0, (size_t) N * 8000);
            for (int k = N - 1; k >= 0; k--) {
                long len = lens[k % 3];
                MPI_Status st;
                MT_MPI(MPI_Recv(buf + (size_t) k * 8000, 8000, MPI_BYTE, 0, 100 + k,
                                MPI_COMM_WORLD, &st));
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                long bad = first_wrong(buf + (size_t) k * 8000, len, k + round);
                MT_CHECK(cnt == len && bad < 0, "many unexpected, round %d, message %d of "
                         "%ld bytes: count %d, byte %ld wrong", round, k, len, cnt, bad);
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(sts);
    free(rq);
    free(buf);
}

static void ordering_flood(void)
{
    /* 5000 small messages 0 -> last in order, then back the other way
     * without the receiver posting first: queues fill and drain */
    if (size < 2)
        return;
    enum { M = 5000 };
    int last = size - 1;
    if (rank == 0) {
        MPI_Request *rq = malloc(sizeof *rq * M);
        int *v = malloc(sizeof(int) * M);
        for (int i = 0; i < M; i++) {
            v[i] = i;
            MT_MPI(MPI_Isend(&v[i], 1, MPI_INT, last, 3, MPI_COMM_WORLD, &rq[i]));
        }
        MPI_Status *st = malloc(sizeof *st * M);
        MT_MPI(MPI_Waitall(M, rq, st));
        free(st);
        free(rq);
        free(v);
    } else if (rank == last) {
        int bad = -1;
        for (int i = 0; i < M; i++) {
            int x;
            MT_MPI(MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (x != i && bad < 0)
                bad = i;
        }
        MT_CHECK(bad < 0, "message %d arrived out of order", bad);
    }
    /* synchronous send completes only once matched */
    if (rank == 0) {
        int x = 5;
        MT_MPI(MPI_Ssend(&x, 1, MPI_INT, last, 4, MPI_COMM_WORLD));
    } else if (rank == last) {
        int x = 0;
        MT_MPI(MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_CHECK(x == 5, "ssend payload %d", x);
    }
}

static void one_sided(void)
{
    enum { N = 100000 };
    long *base;
    MPI_Win win;
    MT_MPI(MPI_Win_allocate(sizeof(long) * N, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    for (int i = 0; i < N; i++)
        base[i] = 0;
    MPI_Win_fence(0, win);
    int right = (rank + 1) % size;
    long *src = malloc(sizeof(long) * N);
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000000L + i;
    MT_MPI(MPI_Put(src, N, MPI_LONG, right, 0, N, MPI_LONG, win));
    MPI_Win_fence(0, win);
    int left = (rank + size - 1) % size;
    int bad = -1;
    for (int i = 0; i < N && bad < 0; i++)
        if (base[i] != left * 1000000L + i)
            bad = i;
    MT_CHECK(bad < 0, "put: element %d", bad);
    /* the reads above and the accumulates below are of different epochs:
     * without this fence a rank past the last one may add to rank 0's slot 0
     * while rank 0 still checks it (seen as 'put: element 0' on 4 hosts) */
    MPI_Win_fence(0, win);
    long one = 1;
    MT_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
    MPI_Win_fence(0, win);
    long got = -1;
    MT_MPI(MPI_Get(&got, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
    MPI_Win_fence(0, win);
    long e = (long) (size - 1) * 1000000L + size;  /* rank 0's slot 0 was put by rank size-1 */
    MT_CHECK(got == e, "accumulate then get: %ld expected %ld", got, e);
    free(src);
    MPI_Win_free(&win);
}

/* Every rank floods its right neighbour while the left one floods it: more
 * messages than a receive queue holds, each read by the receiver's NIC in
 * its handler (rendezvous), so a process waits for its own get while its
 * earlier MPs wait for room at the peer.  One-sided: 8 KiB accumulates
 * under an exclusive lock (as MPICH's rma test strided_acc_onelock, which
 * hung so); two-sided: Isends against posted receives, of 2 KiB and, every
 * 16th, 128 KiB (both NICs read it: the receiver waits for the sender's
 * half, as in MPICH's rma test manyget, which hung so too). */
/* crossed_floods: element i of rank r's window and accumulate source */
static double flood_value(int r, long i)
{
    return 1.0 + r + (double) (i % 7);
}

static void crossed_floods(void)
{
    enum { ROWS = 1024, COLS = 1024, ROUNDS = 2, MSGS = 3000, SMALL = 2048, BIG = 128 * 1024 };
    if (size < 2)
        return;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *win_buf, *src = malloc(sizeof(double) * ROWS * COLS);
    MPI_Win win;
    MT_MPI(MPI_Win_allocate(sizeof(double) * ROWS * COLS, sizeof(double), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &win_buf, &win));
    for (long i = 0; i < (long) ROWS * COLS; i++)
        win_buf[i] = src[i] = flood_value(rank, i);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < ROUNDS; r++) {
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        for (int j = 0; j < ROWS; j++)
            MT_MPI(MPI_Accumulate(src + (long) j * COLS, COLS, MPI_DOUBLE, right,
                                  (MPI_Aint) j * COLS, COLS, MPI_DOUBLE, MPI_SUM, win));
        MT_MPI(MPI_Win_unlock(right, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    long bad = -1;
    for (long i = 0; i < (long) ROWS * COLS && bad < 0; i++)
        if (win_buf[i] != flood_value(rank, i) + ROUNDS * flood_value(left, i))
            bad = i;
    MT_MPI(MPI_Win_unlock(rank, win));
    MT_CHECK(bad < 0, "crossed accumulates: element %ld is %g", bad, bad < 0 ? 0.0 : win_buf[bad]);
    MPI_Win_free(&win);
    free(src);

    /* every 16th message 128 KiB (a rendezvous both NICs read, halves), the
     * others 2 KiB (the ring, or fragments and rendezvous once it is full) */
    long total = 0, *at = malloc(sizeof(long) * (MSGS + 1));
    for (int k = 0; k < MSGS; k++) {
        at[k] = total;
        total += k % 16 ? SMALL : BIG;
    }
    at[MSGS] = total;
    unsigned char *out = malloc((size_t) total), *in = malloc((size_t) total);
    MPI_Request *rq = malloc(sizeof *rq * 2 * MSGS);
    MPI_Status *st = malloc(sizeof *st * 2 * MSGS);
    fill_pattern(out, total, rank);
    for (int k = 0; k < MSGS; k++)
        MT_MPI(MPI_Irecv(in + at[k], (int) (at[k + 1] - at[k]), MPI_BYTE, left, 40,
                         MPI_COMM_WORLD, &rq[k]));
    for (int k = 0; k < MSGS; k++)
        MT_MPI(MPI_Isend(out + at[k], (int) (at[k + 1] - at[k]), MPI_BYTE, right, 40,
                         MPI_COMM_WORLD, &rq[MSGS + k]));
    MT_MPI(MPI_Waitall(2 * MSGS, rq, st));
    bad = first_wrong(in, total, left);
    MT_CHECK(bad < 0, "crossed rendezvous: byte %ld of %ld wrong", bad, total);
    free(st);
    free(rq);
    free(in);
    free(out);
    free(at);
}

/* n messages of len bytes, rank 0 to the last, in order, each checked */
static void stream(long len, int n)
{
    int last = size - 1;
    unsigned char *buf = malloc((size_t) len + 1);
    for (int k = 0; k < n && size > 1; k++) {
        if (rank == 0) {
            fill_pattern(buf, len, k);
            MT_MPI(MPI_Send(buf, (int) len, MPI_BYTE, last, 30, MPI_COMM_WORLD));
        } else if (rank == last) {
            MT_MPI(MPI_Recv(buf, (int) len, MPI_BYTE, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            long bad = first_wrong(buf, len, k);
            MT_CHECK(bad < 0, "stream message %d of %ld bytes: byte %ld wrong", k, len, bad);
        }
    }
    free(buf);
}

/* n messages of len bytes each way between rank 0 and the last: the
 * sends' requests first in req, the receives' after them */
typedef struct {
    long len;
    int n, peer;
    unsigned char *in, *out;
    MPI_Request *req;
    MPI_Status *st;
} pair_t;

/* 0: this rank is neither rank 0 nor the last (or alone) */
static int pair_open(pair_t * p, long len, int n)
{
    int last = size - 1;
    if (size < 2 || (rank != 0 && rank != last))
        return 0;
    *p = (pair_t) {.len = len,.n = n,.peer = rank ? 0 : last,
        .in = malloc((size_t) len * (size_t) n + 1),.out = malloc((size_t) len * (size_t) n + 1),
        .req = malloc(sizeof *p->req * 2 * (size_t) n),.st = malloc(sizeof *p->st * 2 * (size_t) n)
    };
    for (int k = 0; k < n; k++)
        fill_pattern(p->out + (size_t) len * (size_t) k, len, 2 * k + !!rank);
    return 1;
}

/* post the sends (recv 0) or the receives (recv 1) with tag */
static void pair_post(pair_t * p, int recv, int tag)
{
    for (int k = 0; k < p->n; k++) {
        size_t at = (size_t) p->len * (size_t) k;
        if (recv)
            MT_MPI(MPI_Irecv(p->in + at, (int) p->len, MPI_BYTE, p->peer, tag, MPI_COMM_WORLD,
                             &p->req[p->n + k]));
        else
            MT_MPI(MPI_Isend(p->out + at, (int) p->len, MPI_BYTE, p->peer, tag, MPI_COMM_WORLD,
                             &p->req[k]));
    }
}

/* every message received checked, the buffers freed */
static void pair_close(pair_t * p, const char *what)
{
    for (int k = 0; k < p->n; k++) {
        long bad = first_wrong(p->in + (size_t) p->len * (size_t) k, p->len, 2 * k + !rank);
        MT_CHECK(bad < 0, "%s: message %d of %ld bytes from rank %d: byte %ld wrong", what, k,
                 p->len, p->peer, bad);
    }
    free(p->st);
    free(p->req);
    free(p->out);
    free(p->in);
}

/* n messages of len bytes each way between rank 0 and the last at once
 * (as OSU bibw's window), every receive posted before the sends, each
 * message checked.  Nothing between runs MPI's progress (a barrier did:
 * a rank still in it could take the other's messages before sending its
 * own), so every send finds this rank's receives still posted. */
static void both_ways(long len, int n)
{
    pair_t p;
    if (!pair_open(&p, len, n))
        return;
    pair_post(&p, 1, 32);
    pair_post(&p, 0, 32);
    MT_MPI(MPI_Waitall(2 * n, p.req, p.st));
    pair_close(&p, "both ways");
}

/* n messages of len bytes from rank 0 to the last, left unmatched there
 * until rank 0 has received n from the last rank (tags 33, 34); each
 * checked */
static void unacked(long len, int n)
{
    pair_t p;
    if (!pair_open(&p, len, n)) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    pair_post(&p, 0, rank ? 34 : 33);
    if (rank)   /* rank 0 has read these: only then are rank 0's taken */
        MT_MPI(MPI_Waitall(n, p.req, p.st));
    pair_post(&p, 1, rank ? 33 : 34);
    MT_MPI(MPI_Waitall(n, p.req + n, p.st));
    if (!rank)
        MT_MPI(MPI_Waitall(n, p.req, p.st));
    pair_close(&p, "unacked");
}

/* Two windows of n sends of len bytes each, rank 0 to the last, 0.1 s
 * apart (rank 0 outside MPI in between), every receive posted before the
 * first send, each message checked.  A window that fits the ring goes by
 * it; in the pause the receiver takes it all and returns the credits,
 * which wait in rank 0's receive queue (its calls since ran no progress):
 * the second window's sends must take them to find the ring's room. */
static void window(long len, int n)
{
    int last = size - 1;
    if (size < 2 || (rank != 0 && rank != last)) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    int total = 2 * n;
    unsigned char *buf = malloc((size_t) len * (size_t) total + 1);
    MPI_Request *req = malloc(sizeof *req * (size_t) total);
    MPI_Status *st = malloc(sizeof *st * (size_t) total);
    for (int k = 0; k < total; k++) {
        unsigned char *b = buf + (size_t) len * (size_t) k;
        if (rank == 0)
            fill_pattern(b, len, k);
        else
            MT_MPI(MPI_Irecv(b, (int) len, MPI_BYTE, 0, 31, MPI_COMM_WORLD, &req[k]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int w = 0; w < 2 && rank == 0; w++) {
        for (int k = w * n; k < (w + 1) * n; k++)
            MT_MPI(MPI_Isend(buf + (size_t) len * (size_t) k, (int) len, MPI_BYTE, last, 31,
                             MPI_COMM_WORLD, &req[k]));
        MT_MPI(MPI_Waitall(n, req + w * n, st));
        if (w == 0)
            nanosleep(&(struct timespec) { 0, 100000000L }, NULL);
    }
    if (rank == last)
        MT_MPI(MPI_Waitall(total, req, st));
    for (int k = 0; k < total && rank == last; k++) {
        long bad = first_wrong(buf + (size_t) len * (size_t) k, len, k);
        MT_CHECK(bad < 0, "window message %d of %ld bytes: byte %ld wrong", k, len, bad);
    }
    free(st);
    free(req);
    free(buf);
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* compute outside MPI (no MPI call) until file exists, at most 20 s: 1 if
 * it came */
static int compute_until(const char *file)
{
    double t0 = MPI_Wtime();
    volatile double x = 1;
    int seen = 0;
    while (!seen && MPI_Wtime() - t0 < 20) {
        for (int k = 0; k < 100000; k++)
            x = x * 1.0000001 + 1e-9;
        seen = access(file, F_OK) == 0;
    }
    return seen;
}

static void create(const char *file)
{
    FILE *fp = fopen(file, "w");
    if (fp)
        fclose(fp);
}

/* a large message from a sender that computes outside MPI until the
 * receiver has it (told through a file, not through MPI) */
static void busy_sender(const char *file)
{
    enum { N = 1 << 20 };
    int last = size - 1;
    unsigned char *buf = malloc(N);
    remove(file);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Request rq;
        fill_pattern(buf, N, 5);
        MT_MPI(MPI_Isend(buf, N, MPI_BYTE, last, 50, MPI_COMM_WORLD, &rq));
        MT_CHECK(compute_until(file), "the receiver had not received 1 MiB after 20 s of "
                 "the sender computing outside MPI");
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (rank == last) {
        MT_MPI(MPI_Recv(buf, N, MPI_BYTE, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        create(file);
        long bad = first_wrong(buf, N, 5);
        MT_CHECK(bad < 0, "1 MiB from a busy sender: byte %ld wrong", bad);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        remove(file);
    free(buf);
}

/* stream(len, n) with the ranks between computing outside MPI (awake, not
 * asleep in a wait) until the last rank creates file; rank 0 starts once
 * each of them has said it computes (file.<rank>) */
static void crowd(long len, int n, const char *file)
{
    char mine[4096];
    remove(file);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int ready = 0;
        for (int t = 0; t < 20000 && !ready; t++) {
            ready = 1;
            for (int r = 1; r < size - 1 && ready; r++) {
                snprintf(mine, sizeof mine, "%s.%d", file, r);
                ready = access(mine, F_OK) == 0;
            }
            if (!ready)
                nanosleep(&(struct timespec) {0, 1000000}, NULL);
        }
        MT_CHECK(ready, "the ranks between had not started computing after 20 s");
    }
    if (rank == 0 || rank == size - 1) {
        stream(len, n);
        if (rank == size - 1)
            create(file);
    } else {
        snprintf(mine, sizeof mine, "%s.%d", file, rank);
        create(mine);
        MT_CHECK(compute_until(file), "the stream of %d messages of %ld bytes had not arrived "
                 "after 20 s", n, len);
        remove(mine);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        remove(file);
}

/* a rank blocked in MPI_Recv for ms: CPU time it used (threads included) */
/* rounds of a barrier after which ranks 0 and 1 exchange messages for 2 ms
 * while the others are in the next barrier already: with more ranks than
 * CPUs those must give the cores to the two (yield a little, then sleep),
 * spending under 15% of the time on a CPU (30% when they yielded 1 ms) */
static void barrier_idle(int rounds)
{
    int token = 0;
    double w0 = MPI_Wtime(), c0 = cpu_s();
    for (int r = 0; r < rounds; r++) {
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank > 1)
            continue;
        double until = MPI_Wtime() + 0.002;
        for (int more = 1; more;) {
            if (rank == 0) {
                more = MPI_Wtime() < until;
                MT_MPI(MPI_Send(&more, 1, MPI_INT, 1, 41, MPI_COMM_WORLD));
                MT_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Recv(&more, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MT_MPI(MPI_Send(&token, 1, MPI_INT, 0, 42, MPI_COMM_WORLD));
            }
        }
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double wall = MPI_Wtime() - w0, cpu = cpu_s() - c0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (rank > 1 && size > cpus)
        MT_CHECK(cpu < 0.15 * wall, "rank %d: %.0f ms of CPU in %.0f ms of barriers while ranks "
                 "0 and 1 exchange messages (%d ranks on %ld CPUs: it should give the cores "
                 "up)", rank, cpu * 1e3, wall * 1e3, size, cpus);
    printf("pt2pt barrier_idle: rank %d used %.0f ms of CPU in %.0f ms\n", rank, cpu * 1e3,
           wall * 1e3);
}

static void wait_cpu(int ms)
{
    int token = 7;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        struct timespec t = { ms / 1000, (long) (ms % 1000) * 1000000L };
        nanosleep(&t, NULL);
        for (int r = 1; r < size; r++)
            MT_MPI(MPI_Send(&token, 1, MPI_INT, r, 40, MPI_COMM_WORLD));
        return;
    }
    double w0 = MPI_Wtime(), c0 = cpu_s();
    MT_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    double wall = MPI_Wtime() - w0, cpu = cpu_s() - c0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (size > cpus)
        MT_CHECK(cpu < 0.25 * wall, "rank %d: %.0f ms of CPU in a %.0f ms MPI_Recv (%d ranks on "
                 "%ld CPUs: it should sleep)", rank, cpu * 1e3, wall * 1e3, size, cpus);
    printf("pt2pt wait: rank %d used %.0f ms of CPU in a %.0f ms MPI_Recv\n", rank, cpu * 1e3,
           wall * 1e3);
}

/* HPCC RandomAccess's pattern: an update, then a look at the receive */
enum { TL_BUCKET = 1024, TL_UPD = 50, TL_FIN = 51 };
typedef struct {
    MPI_Request in;
    uint64_t buf[TL_BUCKET];
    int receiving;              /* peers that have not said they are done */
    long got;                   /* updates received */
    uint64_t sum;               /* their sum */
} tl_recv_t;

static void tl_poll(tl_recv_t * r)
{
    int done = 1;
    while (done && r->receiving > 0) {
        MPI_Status st;
        MT_MPI(MPI_Test(&r->in, &done, &st));
        if (!done)
            break;
        if (st.MPI_TAG == TL_FIN) {
            r->receiving--;
        } else {
            int cnt;
            MPI_Get_count(&st, MPI_UINT64_T, &cnt);
            MT_CHECK(cnt > 0 && cnt <= TL_BUCKET, "testloop: a bucket of %d updates", cnt);
            for (int i = 0; i < cnt; i++)
                r->sum += r->buf[i];
            r->got += cnt;
        }
        if (r->receiving > 0)
            MT_MPI(MPI_Irecv(r->buf, TL_BUCKET, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG,
                             MPI_COMM_WORLD, &r->in));
    }
}

/* send one bucket: its send request polled together with the receive */
static void tl_send(tl_recv_t * r, uint64_t * bucket, int n, int dest, int tag)
{
    MPI_Request out;
    int done = 0;
    MT_MPI(MPI_Isend(bucket, n, MPI_UINT64_T, dest, tag, MPI_COMM_WORLD, &out));
    while (!done) {
        MT_MPI(MPI_Test(&out, &done, MPI_STATUS_IGNORE));
        tl_poll(r);
    }
}

static void test_loop(long n)
{
    tl_recv_t r = {.receiving = size - 1 };
    uint64_t *bucket = calloc((size_t) size * TL_BUCKET, sizeof *bucket);
    int *fill = calloc((size_t) size, sizeof *fill);
    MT_CHECK(bucket && fill, "testloop: no memory for %d buckets", size);
    if (!bucket || !fill)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long sent = 0;
    uint64_t sent_sum = 0, x = 88172645463325252ull + (uint64_t) rank;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (size > 1)
        MT_MPI(MPI_Irecv(r.buf, TL_BUCKET, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         MPI_COMM_WORLD, &r.in));
    double w0 = MPI_Wtime(), c0 = cpu_s();
    for (long i = 0; i < n; i++) {
        tl_poll(&r);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int dest = (int) (x % (uint64_t) size);
        if (dest == rank)
            continue;
        uint64_t *b = bucket + (size_t) dest * TL_BUCKET;
        b[fill[dest]++] = x;
        sent++, sent_sum += x;
        if (fill[dest] == TL_BUCKET) {
            tl_send(&r, b, TL_BUCKET, dest, TL_UPD);
            fill[dest] = 0;
        }
    }
    for (int d = 0; d < size; d++) {
        if (d == rank)
            continue;
        if (fill[d])
            tl_send(&r, bucket + (size_t) d * TL_BUCKET, fill[d], d, TL_UPD);
        tl_send(&r, NULL, 0, d, TL_FIN);
    }
    while (r.receiving > 0)
        tl_poll(&r);
    double wall = MPI_Wtime() - w0, cpu = cpu_s() - c0;
    long counts[2] = { sent, r.got }, tot[2];
    uint64_t sums[2] = { sent_sum, r.sum }, tsum[2];
    double cpu_all, wall_max;
    MT_MPI(MPI_Allreduce(counts, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    MT_MPI(MPI_Allreduce(sums, tsum, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
    MT_MPI(MPI_Allreduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    MT_MPI(MPI_Allreduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    MT_CHECK(tot[0] == tot[1] && tsum[0] == tsum[1],
             "testloop: %ld updates sent (sum %llu), %ld received (sum %llu)", tot[0],
             (unsigned long long) tsum[0], tot[1], (unsigned long long) tsum[1]);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double busy = cpu_all / (wall_max * (double) (cpus < size ? cpus : size));
    if (rank == 0) {
        if (size > cpus)
            MT_CHECK(busy >= 0.25, "testloop: the %d ranks kept the %ld CPUs %.0f%% busy (%.2f s "
                     "of CPU in %.2f s): they slept with work to do", size, cpus, busy * 100,
                     cpu_all, wall_max);
        printf("pt2pt testloop: %ld updates in %.3f s, CPUs %.0f%% busy\n", tot[0], wall_max,
               busy * 100);
    }
    free(bucket);
    free(fill);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the modes that take BYTES N */
    static const struct {
        const char *name;
        void (*run)(long, int);
    } len_n[] = { {"stream", stream}, {"window", window}, {"both", both_ways},
    {"unacked", unacked} };
    for (size_t i = 0; argc == 4 && i < sizeof len_n / sizeof len_n[0]; i++)
        if (!strcmp(argv[1], len_n[i].name)) {
            len_n[i].run(atol(argv[2]), atoi(argv[3]));
            char label[32];
            snprintf(label, sizeof label, "pt2pt %s", len_n[i].name);
            int rc = mt_finish(label);
            MPI_Finalize();
            return rc;
        }
    if (argc == 3 && !strcmp(argv[1], "busy")) {
        busy_sender(argv[2]);
        int rc = mt_finish("pt2pt busy");
        MPI_Finalize();
        return rc;
    }
    if (argc == 5 && !strcmp(argv[1], "crowd")) {
        crowd(atol(argv[2]), atoi(argv[3]), argv[4]);
        int rc = mt_finish("pt2pt crowd");
        MPI_Finalize();
        return rc;
    }
    if (argc == 3 && !strcmp(argv[1], "testloop")) {
        test_loop(atol(argv[2]));
        int rc = mt_finish("pt2pt testloop");
        MPI_Finalize();
        return rc;
    }
    if (argc == 3 && !strcmp(argv[1], "barrier_idle")) {
        barrier_idle(atoi(argv[2]));
        int rc = mt_finish("pt2pt barrier_idle");
        MPI_Finalize();
        return rc;
    }
    if (argc == 3 && !strcmp(argv[1], "wait")) {
        wait_cpu(atoi(argv[2]));
        int rc = mt_finish("pt2pt wait");
        MPI_Finalize();
        return rc;
    }
    pingpong();
    long_mp();
    noncontig();
    strided_layouts();
    ring_stream();
    anysource_probe();
    matching();
    many_unexpected();
    ordering_flood();
    one_sided();
    crossed_floods();
    int rc = mt_finish("pt2pt");
    MPI_Finalize();
    return rc;
}
