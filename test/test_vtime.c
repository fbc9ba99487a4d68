/* test_vtime.c - virtual time (GLEX_VTIME=1): with a parameter file of
 * round numbers, the modeled times of a 2-node transfer and of the first
 * paper's flat gather (counter trigger over a node range, 5 nodes) are
 * exactly what the model's rules give; the fat tree's routes; a bad
 * parameter file is refused naming file, line and parameter; two runs of
 * the same collectives give identical modeled times; host-based costs the
 * host more than offload; GLEX_VTIME_COMPUTE counts the host's own time. */
#define _GNU_SOURCE
#include "glex_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* the parameter file of the exact cases: every number round */
static const char round_params[] =
    "# test_vtime.c\n"
    "host_post_ns = 100\nhost_poll_ns = 50\nhost_reduce_startup_ns = 300\n"
    "host_reduce_elem_ns = 2\nio_ns = 1000\nnic_task_ns = 500\nnic_desc_ns = 10\n"
    "nic_tx_ns = 20\nnic_rx_ns = 30   # a comment after a value\nnic_trigger_ns = 40\n"
    "alu_int_ns = 3\nalu_float_ns = 4\nalu_double_ns = 5\nalu_pair_ns = 6\n"
    "link_ns = 7\nrouter_ns = 11\nlink_gbps = 1\nradix = 4\n";
enum { P = 100, H = 50, IO = 1000, TASK = 500, D = 10, TX = 20, RX = 30, G = 40, ALU_D = 5,
       LINK = 7, ROUTER = 11 };

static char param_path[64];

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp || fputs(text, fp) < 0 || fclose(fp)) {
        perror(path);
        exit(3);
    }
}

/* a COLL descriptor combining doubles by sum */
static glex_desc_t coll(uint8_t job) { return glex_test_coll_desc(job, GLEX_DOUBLE, GLEX_OP_SUM); }

/* post the sequence d[0..n) and wait for its CQE; the host's clock after */
static double run_seq(glex_tctx_t *c, glex_desc_t *d, int n, int id)
{
    d[0].ch = 1;
    d[n - 1].ct = d[n - 1].coll_end_flag = 1;
    glex_cqe_t e = { 0 };
    int rc = glex_vp_post(c->vp, d, (size_t)n), got = 0;
    if (!rc)
        got = glex_test_wait_cqe(c->f, c->vp, &e, 10000);
    if (rc || !got || e.status) {
        glex_case_fail(c, id, "rank %d: post rc %d, CQE %s, status %d: %s", c->rank, rc,
                       got ? "in" : "never came", e.status,
                       e.status ? glex_vp_failure(c->vp) : glex_last_error());
        return -1;
    }
    return glex_vtime_host_ns(c->f);
}

/* every member is through with the JobID before any releases it (a member
 * that released first would let a late one take it anew, with other keys) */
static void release_job(glex_tctx_t *c, int job)
{
    glex_coll_args_t bar = { .kind = GLEX_COLL_BARRIER };
    glex_coll_run(c->g, &bar);
    glex_job_release(c->f, job);
}

static void expect(glex_tctx_t *c, int id, const char *what, double got, double want)
{
    if (fabs(got - want) > 0.001)
        glex_case_fail(c, id, "rank %d: %s: modeled %.3f ns, the rules give %.3f", c->rank, what,
                       got, want);
}

/* 2 nodes: rank 0 sends 16 bytes, rank 1 receives them */
static int two_nodes(glex_tctx_t *c)
{
    int id = glex_case(c, "2 nodes, 16 B: sender and receiver clocks are the rules' sums");
    int job = glex_job_acquire(c->f, 42, 2);
    static double buf[2] = { 1, 2 };
    glex_desc_t d = coll((uint8_t)job);
    d.count = 2;
    if (c->rank == 0) {
        d.cp = 1, d.send_count = 2, d.dest_id = 1, d.local_addr = (uint64_t)(uintptr_t)buf;
    } else {
        d.branch = 1, d.recv_id = 0, d.recv_addr = (uint64_t)(uintptr_t)buf;
    }
    double t = run_seq(c, &d, 1, id);
    /* nodes 0 and 1 share a leaf router: 2 links, 1 router */
    double sent = P + IO + TASK + D + TX + 16.0; /* 16 bytes at 1 byte/ns */
    double route = 2 * LINK + ROUTER;
    if (c->rank == 0)
        expect(c, id, "sender", t, sent + IO + H);
    else
        expect(c, id, "receiver", t, sent + route + G + RX + IO + H);
    release_job(c, job);
    return 0;
}

/* The first paper's experiment on 5 nodes: every leaf sends its 2 doubles
 * to the root and waits; the root's counter trigger (a node range) fires
 * once 4 packets are in and combines them in node order, then sends the
 * result to each leaf. */
static int flat_gather(glex_tctx_t *c)
{
    int id = glex_case(c, "flat gather, 5 nodes: counter trigger over nodes 1..4, result right, "
                          "every clock the rules' sum");
    int n = c->n, job = glex_job_acquire(c->f, 43, (uint32_t)n);
    static double mine[2], acc[2];
    mine[0] = c->rank + 1, mine[1] = 10 * (c->rank + 1);
    glex_desc_t d[16];
    int k = 0;
    double t;
    if (c->rank == 0) {
        acc[0] = mine[0], acc[1] = mine[1];
        d[k] = coll((uint8_t)job);
        d[k].branch = (uint8_t)(n - 1), d[k].src_range = 1, d[k].recv_id = 1;
        d[k].reduce_flag = 1, d[k].count = 2, d[k].recv_addr = (uint64_t)(uintptr_t)acc;
        k++;
        for (int leaf = 1; leaf < n; leaf++, k++) {
            d[k] = coll((uint8_t)job);
            d[k].cp = 1, d[k].send_count = 2, d[k].dest_id = (uint32_t)leaf, d[k].seq_id = 1;
            d[k].local_addr = (uint64_t)(uintptr_t)acc;
        }
        t = run_seq(c, d, k, id);
    } else {
        d[k] = coll((uint8_t)job);
        d[k].cp = 1, d[k].send_count = 2, d[k].dest_id = 0;
        d[k].local_addr = (uint64_t)(uintptr_t)mine;
        k++;
        d[k] = coll((uint8_t)job);
        d[k].branch = 1, d[k].recv_id = 0, d[k].cp_count = 1, d[k].count = 2;
        d[k].recv_addr = (uint64_t)(uintptr_t)acc;
        k++;
        t = run_seq(c, d, k, id);
    }
    double want_sum = n * (n + 1) / 2.0;
    if (acc[0] != want_sum || acc[1] != 10 * want_sum)
        glex_case_fail(c, id, "rank %d: result %g %g, expected %g %g", c->rank, acc[0], acc[1],
                       want_sum, 10 * want_sum);
    /* routes from node 0 with k = 2: node 1 one level up, 2 and 3 two, 4 three */
    double route[5];
    for (int i = 1; i < n; i++) {
        uint32_t links, routers;
        glex_vtime_route(c->f, 0, (uint32_t)i, &links, &routers);
        route[i] = links * LINK + routers * ROUTER;
    }
    double leaf_sent = P + IO + TASK + D + TX + 16.0;
    double root = P + IO + TASK + D; /* its receive descriptor started */
    for (int i = 1; i < n; i++) { /* packets taken in node order, each when there */
        double arrive = leaf_sent + route[i];
        root = (root > arrive ? root : arrive) + (i == 1 ? G : 0) + RX + 2 * ALU_D;
    }
    double leaf_done[5];
    for (int i = 1; i < n; i++) {
        root += D + TX + 16.0;
        double arrive = root + route[i], leaf = leaf_sent + D;
        leaf_done[i] = (leaf > arrive ? leaf : arrive) + G + RX + IO + H;
    }
    if (c->rank == 0)
        expect(c, id, "root", t, root + IO + H);
    else
        expect(c, id, "leaf", t, leaf_done[c->rank]);
    release_job(c, job);
    return 0;
}

/* modeled times of a fixed mix of collectives, per rank, into arg */
#define MIX 8
static int collective_mix(glex_tctx_t *c)
{
    int id = glex_case(c, "a mix of collectives in virtual time: every call costs modeled time");
    double *out = (double *)c->arg + (size_t)c->rank * MIX * 2;
    static double buf[2][1 << 17];
    static const struct { glex_coll_kind_t kind; uint64_t count; int host; } mix[MIX] = {
        { GLEX_COLL_ALLREDUCE, 1, 0 },     { GLEX_COLL_ALLREDUCE, 128, 0 },
        { GLEX_COLL_ALLREDUCE, 1 << 17, 0 }, { GLEX_COLL_BCAST, 4096, 0 },
        { GLEX_COLL_REDUCE, 1 << 15, 0 },  { GLEX_COLL_BARRIER, 0, 0 },
        { GLEX_COLL_REDUCE, 1 << 15, 1 },  { GLEX_COLL_ALLREDUCE, 128, 1 },
    };
    for (int i = 0; i < MIX; i++) {
        glex_coll_args_t a = { .kind = mix[i].kind, .algo = GLEX_ALGO_AUTO,
                               .host_mode = mix[i].host, .count = mix[i].count,
                               .type = GLEX_DOUBLE, .op = GLEX_OP_SUM, .sendbuf = buf[0],
                               .recvbuf = buf[1] };
        if (a.kind == GLEX_COLL_BCAST)
            a.sendbuf = NULL;
        double t0 = glex_vtime_host_ns(c->f);
        if (glex_coll_run(c->g, &a))
            glex_case_fail(c, id, "rank %d call %d: %s", c->rank, i, glex_last_error());
        out[2 * i] = glex_vtime_host_ns(c->f);
        out[2 * i + 1] = out[2 * i] - t0;
        if (!(out[2 * i + 1] > 0))
            glex_case_fail(c, id, "rank %d call %d cost no modeled time", c->rank, i);
    }
    /* 1 MiB takes longer than 8 bytes; host-based reduce longer than offload */
    if (c->rank == 0 && !(out[2 * 2 + 1] > out[2 * 0 + 1]))
        glex_case_fail(c, id, "1 MiB allreduce %.0f ns, 8 B %.0f ns", out[5], out[1]);
    if (c->rank == 0 && !(out[2 * 6 + 1] > out[2 * 4 + 1]))
        glex_case_fail(c, id, "host-based reduce %.0f ns, offload %.0f ns", out[13], out[9]);
    return 0;
}

/* GLEX_VTIME_COMPUTE: the host's 30 ms outside the library counted (x1) or not (0) */
static int compute_scale(glex_tctx_t *c)
{
    int id = glex_case(c, "GLEX_VTIME_COMPUTE=%s: the host's own time %s", (char *)c->arg,
                       strcmp(c->arg, "0") ? "is counted" : "is not counted");
    double t0 = glex_vtime_host_ns(c->f);
    usleep(30000);
    double dt = glex_vtime_host_ns(c->f) - t0;
    if (strcmp(c->arg, "0") ? dt < 30e6 : dt != 0)
        glex_case_fail(c, id, "rank %d: 30 ms of compute advanced the clock by %.0f ns", c->rank,
                       dt);
    return 0;
}

static int routes(glex_tctx_t *c)
{
    int id = glex_case(c, "8 nodes, radix 4 (k = 2): routes of 1, 2 and 3 levels");
    static const uint32_t pairs[][4] = { { 0, 1, 2, 1 }, { 0, 2, 4, 3 }, { 3, 2, 2, 1 }, { 1, 2, 4, 3 },
                                         { 0, 7, 6, 5 }, { 5, 5, 0, 0 }, { 6, 7, 2, 1 } };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        uint32_t links, routers;
        glex_vtime_route(c->f, pairs[i][0], pairs[i][1], &links, &routers);
        if (links != pairs[i][2] || routers != pairs[i][3])
            glex_case_fail(c, id, "%u -> %u: %u links %u routers, expected %u and %u", pairs[i][0],
                           pairs[i][1], links, routers, pairs[i][2], pairs[i][3]);
    }
    return 0;
}

static void bad_files(void)
{
    static const struct { const char *text, *want; } bad[] = {
        { "io_ns = 5\nnic_rx = 3\n", ":2: unknown parameter 'nic_rx'" },
        { "link_ns = fast\n", ":1: link_ns = fast is invalid: allowed 0..1e+09" },
        { "radix = 7\n", ":1: radix = 7 is invalid: allowed 4..1024, even" },
        { "\n\nlink_gbps 3\n", ":3: 'link_gbps 3' is not 'name = value'" },
        { "link_gbps = 0\n", ":1: link_gbps = 0 is invalid: allowed 0.001..1e+06" },
    };
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/tmp/glex-vtime-bad-%d", (int)getpid());
    setenv("GLEX_VTIME_PARAMS", path, 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text);
        int rc = glex_vtime_describe_env(buf, sizeof buf);
        tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), path) &&
                   strstr(glex_last_error(), bad[i].want),
               "bad parameter file refused: %s", glex_last_error());
    }
    unlink(path);
    int rc = glex_vtime_describe_env(buf, sizeof buf);
    tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), "No such file"),
           "a missing parameter file is refused: %s", glex_last_error());
    setenv("GLEX_VTIME_PARAMS", param_path, 1);
    rc = glex_vtime_describe_env(buf, sizeof buf);
    tap_ok(rc > 0 && strstr(buf, "nic_rx_ns                = 30 ") && strstr(buf, "radix"),
           "the parameters in force are described as a parameter file");
    setenv("GLEX_VTIME_COMPUTE", "-1", 1);
    glex_params_t p;
    glex_params_default(&p);
    p.vtime = 1;
    glex_fabric_t *f;
    rc = glex_fabric_open("vtime-bad", 1, 0, &p, &f);
    tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), "GLEX_VTIME_COMPUTE=-1 is invalid"),
           "a bad GLEX_VTIME_COMPUTE is refused at open: %s", glex_last_error());
    unsetenv("GLEX_VTIME_COMPUTE");
}

int main(void)
{
    snprintf(param_path, sizeof param_path, "/tmp/glex-vtime-%d.params", (int)getpid());
    write_file(param_path, round_params);
    bad_files();
    setenv("GLEX_VTIME_PARAMS", param_path, 1);
    glex_params_t p;
    glex_params_default(&p);
    p.vtime = 1;
    glex_run_group(2, &p, two_nodes, NULL, 60, "vtime");
    glex_run_group(5, &p, flat_gather, NULL, 60, "vtime");
    glex_run_group(8, &p, routes, NULL, 60, "vtime");
    glex_run_group(2, &p, compute_scale, "0", 60, "vtime");
    setenv("GLEX_VTIME_COMPUTE", "1", 1);
    glex_run_group(2, &p, compute_scale, "1", 60, "vtime");
    unsetenv("GLEX_VTIME_COMPUTE");
    unsetenv("GLEX_VTIME_PARAMS"); /* the defaults from here on */
    size_t bytes = 2 * 4 * MIX * 2 * sizeof(double);
    double *mix = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mix == MAP_FAILED)
        return 3;
    glex_run_group(4, &p, collective_mix, mix, 120, "vtime run 1");
    glex_run_group(4, &p, collective_mix, mix + 4 * MIX * 2, 120, "vtime run 2");
    int same = !memcmp(mix, mix + 4 * MIX * 2, 4 * MIX * 2 * sizeof(double));
    tap_ok(same, "two runs of the same collectives: identical modeled times on every rank "
                 "(rank 0 last call %.3f ns / %.3f ns)", mix[2 * (MIX - 1)],
           mix[4 * MIX * 2 + 2 * (MIX - 1)]);
    unlink(param_path);
    return tap_done();
}
