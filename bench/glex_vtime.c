/* glex_vtime.c - glex-vtime: the papers' experiments run on the NIC model in
 * virtual time (GLEX_VTIME=1, doc/vtime.md).
 *
 *   paper-a: the first paper's reduce of doubles on N nodes, one process a
 *     node.  Offload: the root posts a counter-triggered reduce over the N-1
 *     leaves (it fires once their packets are in) and then one send of the
 *     result to each leaf; each leaf posts its send to the root and its
 *     receive of the result at once.  No offload: each leaf's host sends its
 *     data as a message (MP), the root's host takes the N-1 messages,
 *     combines them in software and sends the result back as N-1 messages.
 *     Completion: all start at 0, until the last node has the result.
 *   paper-b: the second paper's offload against host-based comparison: T
 *     concurrent bcasts (double tree) or reduces (Rabenseifner) on N nodes,
 *     per message size; completion from the last call until the last finish,
 *     and the hash buffer's peak use.
 *   mcast: one bcast from node 0 on N nodes by binomial tree, double tree
 *     and multicast in the modeled routers (doc/multicast.md), every node
 *     calling at virtual time 0; completion: the last node has the data.
 *   mcast-flits: an all-to-all of M packets (each node multicasts M packets
 *     to the others in turn); head flits injected and link crossings, from
 *     the routers' counters, set-up packets included, against the
 *     multi-head scheme where every packet carries N-1 heads.
 * Every result is checked.  See --help. */
#define _GNU_SOURCE
#include "glex_coll.h"
#include "glex_test.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NODES 1024

typedef struct {
    glex_link_stats_t inj[2], all[2]; /* mcast-flits: before and after (node 0 reads) */
    double done_ns[MAX_NODES];  /* each node's host clock when it had the result */
    double start_ns[MAX_NODES]; /* paper-b: when it called */
    double util[MAX_NODES];     /* paper-b: its units' peak hash-buffer use, 0..1 */
    int bad[MAX_NODES];         /* 1: a wrong result or an error */
} shared_t;

static void usage(FILE *o)
{
    fprintf(o,
            "usage: glex-vtime paper-a [-n NODES] [-b BYTES] [-m offload|host|both] [--csv]\n"
            "       glex-vtime paper-b [-n NODES] [-c bcast|reduce] [-t TASKS] [-s MIN:MAX]\n"
            "       glex-vtime mcast [-n NODES] [-s MIN:MAX]\n"
            "       glex-vtime mcast-flits [-n NODES] [-p PACKETS]\n"
            "  paper-a       the first paper's reduce of doubles: counter-triggered flat\n"
            "                reduce + result sent to every leaf (offload) against the\n"
            "                hosts doing it with messages (host); modeled completion, us\n"
            "  paper-b       T concurrent bcasts (double tree) or reduces (Rabenseifner),\n"
            "                offload against host-based per size: modeled completion, the\n"
            "                speedup, the hash buffer's peak use\n"
            "  mcast         one bcast from node 0: binomial, double tree and multicast in\n"
            "                the routers (doc/multicast.md); modeled completion, us\n"
            "  mcast-flits   all-to-all of P packets by multicast: head flits injected\n"
            "                and link crossings (the routers' counters) against the\n"
            "                multi-head scheme (N-1 heads a packet)\n"
            "  -n NODES      processes, one a node: 2..%d (paper-a 16, paper-b 16)\n"
            "  -p PACKETS    mcast-flits: packets each node multicasts, 1..4096 (16)\n"
            "  -b BYTES      paper-a: bytes of doubles, 8..192, 48 a descriptor (16)\n"
            "  -m MODE       paper-a: offload, host or both (both)\n"
            "  -c COLL       paper-b: bcast or reduce (bcast)\n"
            "  -t TASKS      paper-b: concurrent tasks, 1..64 (1)\n"
            "  -s MIN:MAX    paper-b: message sizes, bytes (256:1048576)\n"
            "  --csv         paper-a: nodes,bytes,no_offload_us,offload_us (both modes)\n"
            "The model's parameters: GLEX_VTIME_PARAMS (doc/vtime.md); the NIC's: GLEX_*\n"
            "(doc/user-guide.md); unset, this tool uses 1 VP a node, no mailboxes, one\n"
            "offload unit (paper-a), so that 256 nodes fit in /dev/shm, and no engine\n"
            "thread (every wait drives its NIC).\n",
            MAX_NODES);
}

static void set_default(const char *name, const char *value)
{
    if (!getenv(name))
        setenv(name, value, 0);
}

static int open_node(const char *job, int n, int rank, glex_fabric_t **f, glex_vp_t **vp)
{
    glex_params_t p;
    glex_params_default(&p);
    if (glex_params_from_env(&p))
        return -1;
    p.vtime = 1;
    if (glex_fabric_open(job, (uint32_t)n, (uint32_t)rank, &p, f) || glex_vp_open(*f, 0, vp))
        return -1;
    return 0;
}

/* ------------------------------------------------------------- paper A */

/* a COLL descriptor combining doubles by sum */
static glex_desc_t coll(uint8_t job) { return glex_test_coll_desc(job, GLEX_DOUBLE, GLEX_OP_SUM); }

static int cqe_in(void *arg)
{
    void **a = arg;
    return glex_vp_poll_cq(a[0], a[1]);
}

static int rq_has(void *arg)
{
    void **a = arg;
    return glex_vp_rq_pending(a[0]) >= *(uint32_t *)a[1];
}

/* leaf values: node r contributes r + 1 + i/8 in element i */
static double value(int r, int i) { return r + 1 + i / 8.0; }

/* the expected sum of element i over n nodes */
static double expected(int n, int i) { return n * (n + 1) / 2.0 + n * (i / 8.0); }

/* a descriptor carries at most this many bytes of reduce data (the first
 * paper's 48): larger vectors go in chunks, a descriptor (and a packet)
 * each */
#define CHUNK_ELEMS 6
#define MAX_ELEMS (4 * CHUNK_ELEMS)
static int chunks(int elems) { return (elems + CHUNK_ELEMS - 1) / CHUNK_ELEMS; }
static int chunk_len(int elems, int c)
{
    return elems - c * CHUNK_ELEMS < CHUNK_ELEMS ? elems - c * CHUNK_ELEMS : CHUNK_ELEMS;
}

static int paper_a_offload(glex_fabric_t *f, glex_vp_t *vp, int n, int rank, int elems,
                           double *t, double *result)
{
    int job = glex_job_acquire(f, 0xa, (uint32_t)n);
    if (job < 0)
        return -1;
    static glex_desc_t d[4 * MAX_NODES + 8];
    static double mine[MAX_ELEMS], acc[MAX_ELEMS];
    int k = 0, nc = chunks(elems);
    for (int i = 0; i < elems; i++)
        mine[i] = acc[i] = value(rank, i);
    for (int c = 0; c < nc; c++) {
        uint64_t len = (uint64_t)chunk_len(elems, c);
        if (rank == 0) { /* the reduce descriptor: fires on its counter, N-1 leaves */
            d[k] = coll((uint8_t)job);
            d[k].branch = (uint8_t)(n - 1), d[k].src_range = 1, d[k].recv_id = 1;
            d[k].cp_count = (uint8_t)c, d[k].reduce_flag = 1, d[k].count = len;
            d[k].recv_addr = (uint64_t)(uintptr_t)(acc + c * CHUNK_ELEMS);
            k++;
            for (int leaf = 1; leaf < n; leaf++, k++) { /* then the result to every leaf */
                d[k] = coll((uint8_t)job);
                d[k].cp = 1, d[k].send_count = len, d[k].dest_id = (uint32_t)leaf;
                d[k].seq_id = (uint8_t)(8 + c);
                d[k].local_addr = (uint64_t)(uintptr_t)(acc + c * CHUNK_ELEMS);
            }
        } else { /* a leaf: its data up at once */
            d[k] = coll((uint8_t)job);
            d[k].cp = 1, d[k].send_count = len, d[k].dest_id = 0, d[k].seq_id = (uint8_t)c;
            d[k].local_addr = (uint64_t)(uintptr_t)(mine + c * CHUNK_ELEMS);
            k++;
        }
    }
    for (int c = 0; rank != 0 && c < nc; c++, k++) { /* then the result's receives */
        d[k] = coll((uint8_t)job);
        d[k].branch = 1, d[k].recv_id = 0, d[k].cp_count = (uint8_t)(8 + c);
        d[k].count = (uint64_t)chunk_len(elems, c);
        d[k].recv_addr = (uint64_t)(uintptr_t)(acc + c * CHUNK_ELEMS);
    }
    d[0].ch = 1;
    d[k - 1].ct = d[k - 1].coll_end_flag = 1;
    glex_cqe_t e;
    void *arg[2] = { vp, &e };
    if (glex_vp_post(vp, d, (size_t)k) || glex_wait_until(f, cqe_in, arg, 60000) || e.status)
        return -1;
    *t = glex_vtime_host_ns(f);
    memcpy(result, acc, sizeof acc);
    glex_job_release(f, job);
    return 0;
}

static glex_desc_t mp(uint32_t dest, const double *data, int elems)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_MP;
    d.ch = d.ct = 1;
    d.dest_id = dest;
    d.inline_len = (uint16_t)(elems * sizeof(double));
    memcpy(d.data, data, d.inline_len);
    return d;
}

/* take a message and add it in: one sender's chunks come in order, so its
 * count of messages so far says which chunk this is */
static int take(glex_vp_t *vp, double *into, int elems, int *seen)
{
    glex_rqe_t e;
    if (!glex_vp_poll_rq(vp, &e) || e.len % sizeof(double))
        return -1;
    const double *in = (const double *)(const void *)e.data;
    int n = (int)(e.len / sizeof(double)), at = seen[e.src_id]++ * CHUNK_ELEMS;
    if (at + n > elems)
        return -1;
    for (int i = 0; i < n; i++)
        into[at + i] += in[i];
    return n;
}

static int paper_a_host(glex_fabric_t *f, glex_vp_t *vp, int n, int rank, int elems, double *t,
                        double *result)
{
    static int seen[MAX_NODES];
    double mine[MAX_ELEMS];
    int nc = chunks(elems);
    for (int i = 0; i < elems; i++)
        mine[i] = value(rank, i);
    if (rank == 0) {
        /* all messages in (the host then takes them in the order they
         * arrived in virtual time), each combined in software */
        uint32_t want = (uint32_t)((n - 1) * nc);
        void *arg[2] = { vp, &want };
        if (glex_wait_until(f, rq_has, arg, 60000))
            return glex_set_error(GLEX_ETIMEDOUT, "%u of %u messages in after 60 s",
                                  glex_vp_rq_pending(vp), want);
        for (uint32_t m = 0; m < want; m++) {
            int got = take(vp, mine, elems, seen);
            if (got < 0)
                return glex_set_error(GLEX_EINVAL, "a malformed message");
            glex_vtime_host_reduce(f, GLEX_DOUBLE, (uint64_t)got);
        }
        *t = glex_vtime_host_ns(f); /* the root has the result */
        for (int leaf = 1; leaf < n; leaf++)
            for (int c = 0; c < nc; c++) {
                glex_desc_t d = mp((uint32_t)leaf, mine + c * CHUNK_ELEMS, chunk_len(elems, c));
                d.coll_end_flag = 1; /* a CQE once sent: the root waits for its NIC */
                if (glex_vp_post(vp, &d, 1))
                    return -1;
            }
        glex_cqe_t cq;
        void *carg[2] = { vp, &cq };
        for (int m = 0; m < (n - 1) * nc; m++)
            if (glex_wait_until(f, cqe_in, carg, 60000) || cq.status)
                return glex_set_error(GLEX_ETIMEDOUT, "the root's sends did not complete");
        memcpy(result, mine, sizeof mine);
        return 0;
    }
    for (int c = 0; c < nc; c++) {
        glex_desc_t d = mp(0, mine + c * CHUNK_ELEMS, chunk_len(elems, c));
        if (glex_vp_post(vp, &d, 1))
            return -1;
    }
    memset(mine, 0, sizeof mine);
    uint32_t want = (uint32_t)nc;
    void *arg[2] = { vp, &want };
    if (glex_wait_until(f, rq_has, arg, 60000))
        return glex_set_error(GLEX_ETIMEDOUT, "no result from the root within 60 s");
    for (int c = 0; c < nc; c++)
        if (take(vp, mine, elems, seen) < 0)
            return glex_set_error(GLEX_EINVAL, "a malformed result");
    *t = glex_vtime_host_ns(f);
    memcpy(result, mine, sizeof mine);
    return 0;
}

static int paper_a_node(int n, int rank, int elems, int host, shared_t *sh, const char *job)
{
    glex_fabric_t *f = NULL;
    glex_vp_t *vp;
    double t = 0, result[MAX_ELEMS] = { 0 };
    int rc = open_node(job, n, rank, &f, &vp);
    if (!rc)
        rc = host ? paper_a_host(f, vp, n, rank, elems, &t, result)
                  : paper_a_offload(f, vp, n, rank, elems, &t, result);
    for (int i = 0; !rc && i < elems; i++)
        if (result[i] != expected(n, i)) {
            glex_set_error(GLEX_EINVAL, "element %d is %g, expected %g", i, result[i],
                           expected(n, i));
            rc = -1;
        }
    if (rc) {
        fprintf(stderr, "glex-vtime paper-a node %d: %s\n", rank, glex_last_error());
        sh->bad[rank] = 1;
    }
    sh->done_ns[rank] = t;
    if (f)
        glex_fabric_close(f);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------- paper B */

typedef struct {
    glex_coll_kind_t kind;
    int tasks, host;
    uint64_t bytes;
    glex_algo_t algo; /* AUTO: the paper's (double tree, Rabenseifner) */
    int flits;        /* mcast-flits: every node multicasts in turn */
    int warm;         /* one untimed call first (a multicast group's set-up) */
} pb_t;

static int paper_b_node(int n, int rank, const pb_t *c, shared_t *sh, const char *job)
{
    glex_fabric_t *f = NULL;
    glex_vp_t *vp;
    glex_group_t *g = NULL, *sync = NULL;
    int rc = open_node(job, n, rank, &f, &vp);
    uint32_t nodes[MAX_NODES];
    uint16_t vps[MAX_NODES] = { 0 };
    for (int i = 0; i < n; i++)
        nodes[i] = (uint32_t)i;
    if (!rc)
        rc = glex_group_create(vp, 1, (uint32_t)n, (uint32_t)rank, nodes, vps, &g) ||
             glex_group_create(vp, 2, (uint32_t)n, (uint32_t)rank, nodes, vps, &sync);
    uint64_t count = c->bytes / sizeof(double);
    double *buf = calloc((size_t)c->tasks * 2 * count + 2, sizeof *buf);
    glex_req_t *req[64];
    if (!rc && !buf)
        rc = glex_set_error(GLEX_ENOMEM, "out of memory");
    glex_coll_args_t bar = { .kind = GLEX_COLL_BARRIER };
    if (!rc && c->warm) {
        glex_coll_args_t a = { .kind = c->kind, .algo = c->algo, .count = count,
                               .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .root = 0,
                               .sendbuf = buf, .recvbuf = buf + count };
        if (c->kind == GLEX_COLL_BCAST)
            a.recvbuf = buf;
        rc = glex_coll_run(g, &a);
    }
    if (!rc)
        rc = glex_coll_run(sync, &bar);
    if (!rc && c->flits) { /* every node multicasts c->bytes in turn, checked */
        if (rank == 0)
            glex_net_totals(f, &sh->inj[0], &sh->all[0]);
        rc = glex_coll_run(sync, &bar);
        for (int root = 0; !rc && root < n; root++) {
            for (uint64_t i = 0; i < count; i++)
                buf[i] = rank == root ? (double)(root + i % 7) : -1;
            glex_coll_args_t a = { .kind = GLEX_COLL_BCAST, .algo = GLEX_ALGO_MULTICAST,
                                   .count = count, .type = GLEX_DOUBLE, .root = (uint32_t)root,
                                   .recvbuf = buf };
            glex_req_t *r = NULL;
            rc = glex_coll_start(g, &a, &r);
            if (!rc && glex_coll_req_algo(r) != GLEX_ALGO_MULTICAST)
                rc = glex_set_error(GLEX_EINVAL, "the group's multicast tree was not created");
            if (r) {
                int w = glex_coll_wait(r);
                rc = rc ? rc : w;
                glex_coll_req_free(r);
            }
            for (uint64_t i = 0; !rc && i < count; i++)
                if (buf[i] != (double)(root + i % 7))
                    rc = glex_set_error(GLEX_EINVAL, "root %d element %llu is %g", root,
                                        (unsigned long long)i, buf[i]);
        }
        if (!rc)
            rc = glex_coll_run(sync, &bar);
        if (!rc && rank == 0)
            glex_net_totals(f, &sh->inj[1], &sh->all[1]);
        if (!rc)
            rc = glex_coll_run(sync, &bar);
        if (rc) {
            fprintf(stderr, "glex-vtime mcast-flits node %d: %s\n", rank, glex_last_error());
            sh->bad[rank] = 1;
        }
        free(buf);
        glex_group_free(g);
        glex_group_free(sync);
        glex_fabric_close(f);
        return rc ? 1 : 0;
    }
    if (!rc && c->warm) /* every clock at 0: the bcast starts everywhere at once */
        glex_vtime_reset(f);
    double t0 = glex_vtime_host_ns(f);
    for (int k = 0; !rc && k < c->tasks; k++) {
        double *in = buf + (size_t)k * 2 * count, *out = in + count;
        for (uint64_t i = 0; i < count; i++)
            in[i] = c->kind == GLEX_COLL_BCAST ? (rank == 0 ? (double)(k + i % 7) : -1)
                                               : (double)(rank + k + i % 5);
        glex_coll_args_t a = { .kind = c->kind, .host_mode = c->host, .count = count,
                               .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .root = 0,
                               .algo = c->algo ? c->algo
                                       : c->kind == GLEX_COLL_BCAST ? GLEX_ALGO_DOUBLE_TREE
                                                                    : GLEX_ALGO_RABENSEIFNER };
        if (c->kind == GLEX_COLL_BCAST)
            a.recvbuf = in;
        else
            a.sendbuf = in, a.recvbuf = out;
        rc = glex_coll_start(g, &a, &req[k]);
    }
    for (int k = 0; !rc && k < c->tasks; k++) {
        rc = glex_coll_wait(req[k]);
        glex_coll_req_free(req[k]);
    }
    double t1 = glex_vtime_host_ns(f);
    /* every result checked */
    for (int k = 0; !rc && k < c->tasks; k++) {
        double *in = buf + (size_t)k * 2 * count, *out = in + count;
        for (uint64_t i = 0; i < count; i++) {
            double want = c->kind == GLEX_COLL_BCAST ? (double)(k + i % 7)
                                                     : n * (n - 1) / 2.0 + n * (double)(k + i % 5);
            double got = c->kind == GLEX_COLL_BCAST ? in[i] : out[i];
            if ((c->kind == GLEX_COLL_BCAST || rank == 0) && got != want) {
                rc = glex_set_error(GLEX_EINVAL, "task %d element %llu is %g, expected %g", k,
                                    (unsigned long long)i, got, want);
                break;
            }
        }
    }
    double util = 0;
    const glex_params_t *p = f ? glex_fabric_params(f) : NULL;
    for (uint32_t u = 0; p && u < p->units; u++) {
        glex_unit_counters_t uc;
        if (!glex_unit_counters(f, (uint32_t)rank, u, &uc)) {
            double x = (double)uc.table_high_water / glex_params_table_usable(p);
            util = x > util ? x : util;
        }
    }
    if (rc) {
        fprintf(stderr, "glex-vtime paper-b node %d: %s\n", rank, glex_last_error());
        sh->bad[rank] = 1;
    }
    sh->start_ns[rank] = t0;
    sh->done_ns[rank] = t1;
    sh->util[rank] = util;
    free(buf);
    if (g)
        glex_group_free(g);
    if (sync)
        glex_group_free(sync);
    if (f)
        glex_fabric_close(f);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------- driver */

/* fork n nodes, each running one experiment; 0 when all succeeded */
static int run_nodes(int n, shared_t *sh, int (*node)(int, int, const void *, shared_t *, const char *),
                     const void *arg)
{
    static int runs;
    char job[64];
    snprintf(job, sizeof job, "vtime%d-%d", (int)getpid(), runs++);
    memset(sh, 0, sizeof *sh);
    fflush(NULL);
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("glex-vtime: fork");
            return -1;
        }
        if (pid == 0)
            _exit(node(n, r, arg, sh, job));
    }
    int bad = 0, st;
    for (int r = 0; r < n; r++)
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            bad = 1;
    return bad;
}

typedef struct {
    int elems, host;
} pa_t;

static int pa_node(int n, int rank, const void *arg, shared_t *sh, const char *job)
{
    const pa_t *a = arg;
    return paper_a_node(n, rank, a->elems, a->host, sh, job);
}

static int pb_node(int n, int rank, const void *arg, shared_t *sh, const char *job)
{
    return paper_b_node(n, rank, arg, sh, job);
}

static double max_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static int paper_a(int n, int bytes, int modes, int csv, shared_t *sh)
{
    double us[2] = { NAN, NAN }; /* no offload, offload */
    for (int host = 1; host >= 0; host--) {
        if (!(modes & (host ? 1 : 2)))
            continue;
        pa_t a = { bytes / 8, host };
        if (run_nodes(n, sh, pa_node, &a))
            return 1;
        us[host ? 0 : 1] = max_of(sh->done_ns, n) / 1000.0;
    }
    if (csv)
        printf("%d,%d,%.3f,%.3f\n", n, bytes, us[0], us[1]);
    else
        printf("paper-a: %d nodes, %d B of doubles: no offload %.3f us, offload %.3f us%s\n", n,
               bytes, us[0], us[1],
               modes == 3 ? "" : " (one mode)");
    return 0;
}

static int paper_b(int n, glex_coll_kind_t kind, int tasks, uint64_t lo, uint64_t hi,
                   shared_t *sh)
{
    printf("# paper-b: %s (%s), %d nodes, %d concurrent task(s); modeled completion, us\n",
           glex_coll_kind_name(kind), kind == GLEX_COLL_BCAST ? "double tree" : "Rabenseifner", n,
           tasks);
    printf("%-10s %12s %12s %8s %14s\n", "bytes", "host-based", "offload", "speedup",
           "buffer peak %");
    for (uint64_t b = lo; b <= hi; b *= 2) {
        double us[2], util = 0;
        for (int host = 1; host >= 0; host--) {
            pb_t c = { kind, tasks, host, b, GLEX_ALGO_AUTO, 0, 0 };
            if (run_nodes(n, sh, pb_node, &c))
                return 1;
            us[host] = (max_of(sh->done_ns, n) - max_of(sh->start_ns, n)) / 1000.0;
            if (!host)
                util = max_of(sh->util, n) * 100.0;
        }
        printf("%-10llu %12.3f %12.3f %8.2f %14.1f\n", (unsigned long long)b, us[1], us[0],
               us[1] / us[0], util);
        fflush(stdout);
    }
    return 0;
}

static int mcast(int n, uint64_t lo, uint64_t hi, shared_t *sh)
{
    static const glex_algo_t algos[3] = { GLEX_ALGO_BINOMIAL, GLEX_ALGO_DOUBLE_TREE,
                                          GLEX_ALGO_MULTICAST };
    printf("# mcast: bcast from node 0, %d nodes, every node calling at 0; modeled completion "
           "(the last node has the data), us\n", n);
    printf("%-10s %12s %12s %12s\n", "bytes", "binomial", "double_tree", "multicast");
    for (uint64_t b = lo; b <= hi; b *= 2) {
        double us[3];
        for (int i = 0; i < 3; i++) {
            pb_t c = { GLEX_COLL_BCAST, 1, 0, b, algos[i], 0, 1 };
            if (run_nodes(n, sh, pb_node, &c))
                return 1;
            us[i] = (max_of(sh->done_ns, n) - max_of(sh->start_ns, n)) / 1000.0;
        }
        printf("%-10llu %12.3f %12.3f %12.3f\n", (unsigned long long)b, us[0], us[1], us[2]);
        fflush(stdout);
    }
    return 0;
}

static int mcast_flits(int n, int packets, shared_t *sh)
{
    const char *s = getenv("GLEX_INLINE_MAX");
    uint64_t pkt = s ? (uint64_t)atoi(s) : 48, bytes = (uint64_t)packets * pkt / 8 * 8;
    pb_t c = { GLEX_COLL_BCAST, 1, 0, bytes, GLEX_ALGO_MULTICAST, 1, 0 };
    if (run_nodes(n, sh, pb_node, &c))
        return 1;
    uint64_t m = (uint64_t)packets, nn = (uint64_t)n;
    uint64_t inj = sh->inj[1].head_flits - sh->inj[0].head_flits;
    uint64_t all = sh->all[1].head_flits - sh->all[0].head_flits;
    printf("mcast-flits: %d nodes, each multicasts %d packets of %llu bytes to the others\n", n,
           packets, (unsigned long long)pkt);
    printf("  multicast (one head a packet, copied in the routers): %llu head flits injected "
           "(M*N = %llu, the rest the group's set-up), %llu link crossings\n",
           (unsigned long long)inj, (unsigned long long)(m * nn), (unsigned long long)all);
    printf("  multi-head (every packet names its N-1 destinations): %llu head flits injected "
           "(M*N*(N-1)); %.1fx ours\n", (unsigned long long)(m * nn * (nn - 1)),
           (double)(m * nn * (nn - 1)) / (double)(inj ? inj : 1));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *what = argv[1];
    int is_a = !strcmp(what, "paper-a"), is_b = !strcmp(what, "paper-b");
    int is_m = !strcmp(what, "mcast"), is_f = !strcmp(what, "mcast-flits");
    if (!is_a && !is_b && !is_m && !is_f) {
        fprintf(stderr, "glex-vtime: '%s': allowed paper-a, paper-b, mcast or mcast-flits (see "
                        "--help)\n", what);
        return 2;
    }
    static const struct option lo[] = { { "csv", no_argument, 0, 'C' },
                                         { "help", no_argument, 0, 'h' },
                                         { 0, 0, 0, 0 } };
    int n = 16, bytes = 16, modes = 3, csv = 0, tasks = 1, packets = 16, c;
    glex_coll_kind_t kind = GLEX_COLL_BCAST;
    unsigned long long smin = 256, smax = 1u << 20;
    optind = 2;
    while ((c = getopt_long(argc, argv, "n:b:m:c:t:s:p:h", lo, NULL)) != -1) {
        switch (c) {
        case 'p':
            packets = atoi(optarg);
            if (packets < 1 || packets > 4096) {
                fprintf(stderr, "glex-vtime: -p %s is out of range 1..4096\n", optarg);
                return 2;
            }
            break;
        case 'n': n = atoi(optarg); break;
        case 'b': bytes = atoi(optarg); break;
        case 'm':
            modes = !strcmp(optarg, "host") ? 1 : !strcmp(optarg, "offload") ? 2
                    : !strcmp(optarg, "both") ? 3 : 0;
            if (!modes) {
                fprintf(stderr, "glex-vtime: -m %s: allowed offload, host or both\n", optarg);
                return 2;
            }
            break;
        case 'c':
            if (strcmp(optarg, "bcast") && strcmp(optarg, "reduce")) {
                fprintf(stderr, "glex-vtime: -c %s: allowed bcast or reduce\n", optarg);
                return 2;
            }
            kind = !strcmp(optarg, "bcast") ? GLEX_COLL_BCAST : GLEX_COLL_REDUCE;
            break;
        case 't': tasks = atoi(optarg); break;
        case 's':
            if (sscanf(optarg, "%llu:%llu", &smin, &smax) != 2 || smin < 8 || smin > smax ||
                smax > (64ull << 20)) {
                fprintf(stderr, "glex-vtime: -s %s: allowed MIN:MAX with 8 <= MIN <= MAX <= "
                                "67108864\n", optarg);
                return 2;
            }
            break;
        case 'C': csv = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (n < 2 || n > MAX_NODES) {
        fprintf(stderr, "glex-vtime: -n %d is out of range 2..%d\n", n, MAX_NODES);
        return 2;
    }
    if (is_a && n - 1 > (int)GLEX_MAX_RANGE_BRANCH) {
        fprintf(stderr, "glex-vtime: paper-a -n %d is out of range 2..%u (a counter trigger "
                        "waits for at most %u packets)\n", n, GLEX_MAX_RANGE_BRANCH + 1,
                GLEX_MAX_RANGE_BRANCH);
        return 2;
    }
    if (bytes < 8 || bytes > MAX_ELEMS * 8 || bytes % 8) {
        fprintf(stderr, "glex-vtime: -b %d is invalid: allowed 8..%d, a multiple of 8 (doubles; "
                        "48 bytes a descriptor)\n", bytes, MAX_ELEMS * 8);
        return 2;
    }
    if (tasks < 1 || tasks > 64) {
        fprintf(stderr, "glex-vtime: -t %d is out of range 1..64\n", tasks);
        return 2;
    }
    /* lean NIC defaults, so that hundreds of nodes fit in /dev/shm */
    set_default("GLEX_VPS_PER_NODE", "1");
    if (is_a) /* one task: one unit, its buffer room for every leaf's chunks */
        set_default("GLEX_UNITS", "1");
    set_default("GLEX_ENGINE_THREAD", "0"); /* every wait drives its NIC inline */
    set_default("GLEX_MAILBOXES", "0");     /* no direct path here */
    shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("glex-vtime: mmap");
        return 1;
    }
    int rc = is_a ? paper_a(n, bytes, modes, csv, sh)
             : is_m ? mcast(n, smin, smax, sh)
             : is_f ? mcast_flits(n, packets, sh)
                    : paper_b(n, kind, tasks, smin, smax, sh);
    for (int r = 0; r < n; r++)
        if (sh->bad[r])
            rc = 1;
    return rc;
}
