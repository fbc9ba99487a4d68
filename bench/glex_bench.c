/* glex_bench.c - OSU-style latency sweep of the offload engine without MPI:
 * N forked processes on one fabric, each collective and algorithm, offload or
 * host-based.  Per size: warm-up calls excluded, then -i timed calls; each
 * rank's average per call; the table shows the average over ranks and the
 * min and max of the rank averages (as OSU does).  See --help. */
#define _GNU_SOURCE
#include "glex_coll.h"
#include "glex_test.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int n, iters, warmup, host, csv;
    uint64_t min_size, max_size;
    glex_coll_kind_t kind;
    glex_algo_t algo;
} opts_t;

static void usage(FILE *o)
{
    fprintf(o,
            "usage: glex-bench [options]\n"
            "  -n N          processes (emulated nodes), default 4\n"
            "  -c COLL       bcast|reduce|allreduce|barrier, default allreduce\n"
            "  -a ALGO       auto|binomial|recursive_doubling|rabenseifner|double_tree|direct|\n                multicast|two_level|flat_read|flat (GLEX_SPLIT_HOSTS: emulated hosts;\n                flat_read: bcast only)\n"
            "  -H            host-based mode (host posts every step)\n"
            "  -m MIN:MAX    message sizes in bytes, default 8:4194304 (doubles)\n"
            "  -i ITERS      timed iterations per size, default 200 (fewer above 1 MB)\n"
            "  -x WARMUP     warm-up iterations per size, default 20\n"
            "  --csv         print CSV rows: coll,algo,mode,n,size,avg,min,max,iters\n"
            "  -h, --help    this text\n"
            "NIC parameters come from GLEX_* variables (see doc/user-guide.md); with\n"
            "GLEX_VTIME=1 the times are the model's virtual time (doc/vtime.md).\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = { { "csv", no_argument, 0, 'C' },
                                         { "help", no_argument, 0, 'h' },
                                         { 0, 0, 0, 0 } };
    *o = (opts_t){ .n = 4, .iters = 200, .warmup = 20, .min_size = 8, .max_size = 4u << 20,
                   .kind = GLEX_COLL_ALLREDUCE, .algo = GLEX_ALGO_AUTO };
    const char *algo = "auto";
    int c;
    while ((c = getopt_long(argc, argv, "n:c:a:Hm:i:x:h", lo, NULL)) != -1) {
        switch (c) {
        case 'n': o->n = atoi(optarg); break;
        case 'c': {
            int k;
            for (k = 0; k < GLEX_COLL_KIND_COUNT; k++)
                if (!strcmp(optarg, glex_coll_kind_name((glex_coll_kind_t)k)))
                    break;
            if (k == GLEX_COLL_KIND_COUNT) {
                fprintf(stderr, "glex-bench: -c %s: allowed bcast|reduce|allreduce|barrier\n",
                        optarg);
                return 2;
            }
            o->kind = (glex_coll_kind_t)k;
            break;
        }
        case 'a': algo = optarg; break;
        case 'H': o->host = 1; break;
        case 'm': {
            unsigned long long a, b;
            if (sscanf(optarg, "%llu:%llu", &a, &b) != 2 || a > b || b > (1ull << 32)) {
                fprintf(stderr, "glex-bench: -m %s: expected MIN:MAX with MIN <= MAX <= 4 GiB\n",
                        optarg);
                return 2;
            }
            o->min_size = a, o->max_size = b;
            break;
        }
        case 'i': o->iters = atoi(optarg); break;
        case 'x': o->warmup = atoi(optarg); break;
        case 'C': o->csv = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (o->n < 1 || o->n > 4096) {
        fprintf(stderr, "glex-bench: -n %d is out of range 1..4096\n", o->n);
        return 2;
    }
    if (o->iters < 1 || o->warmup < 0) {
        fprintf(stderr, "glex-bench: -i %d / -x %d: allowed -i >= 1, -x >= 0\n", o->iters,
                o->warmup);
        return 2;
    }
    if (glex_algo_parse(o->kind, algo, &o->algo)) {
        fprintf(stderr, "glex-bench: %s\n", glex_last_error());
        return 2;
    }
    return 0;
}

/* the clock of a timing: this host's virtual time with GLEX_VTIME=1
 * (doc/vtime.md), else real time */
static double now_us(glex_fabric_t *f)
{
    return glex_vtime_on(f) ? glex_vtime_host_ns(f) / 1000.0 : glex_test_now_us();
}

#define MAX_SIZES 64
typedef struct {
    double avg[MAX_SIZES][4096];
    int iters[MAX_SIZES];
    char algo[MAX_SIZES][24];
    int failed;
} shared_t;

static int rank_main(const opts_t *o, int rank, shared_t *sh, const char *job)
{
    glex_fabric_t *f;
    glex_vp_t *vp;
    glex_group_t *g, *sync;
    glex_params_t p;
    glex_params_default(&p);
    if (glex_params_from_env(&p) || glex_fabric_open(job, (uint32_t)o->n, (uint32_t)rank, &p, &f) ||
        glex_vp_open(f, 0, &vp)) {
        fprintf(stderr, "glex-bench rank %d: %s\n", rank, glex_last_error());
        return 1;
    }
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)o->n);
    uint16_t *vps = calloc((size_t)o->n, sizeof *vps);
    for (int i = 0; i < o->n; i++)
        nodes[i] = (uint32_t)i;
    if (glex_group_create(vp, 1, (uint32_t)o->n, (uint32_t)rank, nodes, vps, &g) ||
        glex_group_create(vp, 2, (uint32_t)o->n, (uint32_t)rank, nodes, vps, &sync)) {
        fprintf(stderr, "glex-bench rank %d: %s\n", rank, glex_last_error());
        return 1;
    }
    size_t maxb = o->max_size ? o->max_size : 8;
    double *sbuf = malloc(maxb + 64), *rbuf = malloc(maxb + 64);
    memset(sbuf, 1, maxb + 64);
    memset(rbuf, 0, maxb + 64);
    glex_coll_args_t bar = { .kind = GLEX_COLL_BARRIER };
    int si = 0;
    for (uint64_t size = o->min_size; size <= o->max_size && si < MAX_SIZES;
         size = size ? size * 2 : 1, si++) {
        glex_coll_args_t a = { .kind = o->kind, .algo = o->algo, .host_mode = o->host,
                               .count = size / sizeof(double), .type = GLEX_DOUBLE,
                               .op = GLEX_OP_SUM, .sendbuf = sbuf, .recvbuf = rbuf };
        if (o->kind == GLEX_COLL_BARRIER && si > 0)
            break;
        int iters = size > (1u << 20) ? (o->iters + 9) / 10 : o->iters;
        if (iters < 1)
            iters = 1;
        glex_algo_t chosen;
        glex_coll_args_t asked = a; /* glex_coll_run takes 'direct' as blocking */
        asked.blocking = a.algo == GLEX_ALGO_DIRECT;
        glex_coll_resolve(g, &asked, &chosen);
        for (int i = 0; i < o->warmup; i++)
            if (glex_coll_run(g, &a))
                goto fail;
        if (glex_coll_run(sync, &bar))
            goto fail;
        double t0 = now_us(f);
        for (int i = 0; i < iters; i++)
            if (glex_coll_run(g, &a))
                goto fail;
        double t = (now_us(f) - t0) / iters;
        sh->avg[si][rank] = t;
        if (rank == 0) {
            sh->iters[si] = iters;
            snprintf(sh->algo[si], sizeof sh->algo[si], "%s", glex_algo_name(chosen));
        }
        if (glex_coll_run(sync, &bar))
            goto fail;
    }
    glex_group_free(g);
    glex_group_free(sync);
    glex_fabric_close(f);
    free(sbuf);
    free(rbuf);
    free(nodes);
    free(vps);
    return 0;
fail:
    fprintf(stderr, "glex-bench rank %d: %s\n", rank, glex_last_error());
    sh->failed = 1;
    return 1;
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    char job[64];
    snprintf(job, sizeof job, "bench%d", (int)getpid());
    for (int r = 0; r < o.n; r++)
        if (fork() == 0)
            _exit(rank_main(&o, r, sh, job));
    int bad = 0, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st);
    if (bad || sh->failed) {
        fprintf(stderr, "glex-bench: a rank failed\n");
        return 1;
    }
    const char *mode = o.host ? "host" : "offload";
    if (!o.csv)
        printf("# glex-bench %s n=%d mode=%s requested=%s\n# %-10s %-20s %12s %12s %12s %8s\n",
               glex_coll_kind_name(o.kind), o.n, mode, glex_algo_name(o.algo), "Size",
               "Algorithm", "Avg(us)", "Min(us)", "Max(us)", "Iters");
    int si = 0;
    for (uint64_t size = o.min_size; size <= o.max_size && si < MAX_SIZES;
         size = size ? size * 2 : 1, si++) {
        if (!sh->iters[si])
            break;
        double sum = 0, mn = 1e300, mx = 0;
        for (int r = 0; r < o.n; r++) {
            double v = sh->avg[si][r];
            sum += v;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        uint64_t shown = o.kind == GLEX_COLL_BARRIER ? 0 : size;
        if (o.csv)
            printf("%s,%s,%s,%d,%llu,%.2f,%.2f,%.2f,%d\n", glex_coll_kind_name(o.kind),
                   sh->algo[si], mode, o.n, (unsigned long long)shown, sum / o.n, mn, mx,
                   sh->iters[si]);
        else
            printf("  %-10llu %-20s %12.2f %12.2f %12.2f %8d\n", (unsigned long long)shown,
                   sh->algo[si], sum / o.n, mn, mx, sh->iters[si]);
    }
    return 0;
}
