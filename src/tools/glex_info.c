/* glex_info.c - glex-info: hwloc topology summary, the NIC parameters and
 * the schedule compiler's policy in force (defaults overlaid with GLEX_*
 * variables), and the counters of a running job's segment.  A tool over
 * both layers of libglex, so it lives outside src/emu and src/offload. */
#include "glex_coll.h"
#include "glex_emu.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *o)
{
    fprintf(o,
            "usage: glex-info [--job NAME [--all]] [--list] [--cleanup [--dry-run]] [--vtime]\n"
            "                 [--help]\n"
            "  (no option)   hwloc topology summary and the NIC parameters in force\n"
            "  --list        the GLEX segments of this user in /dev/shm\n"
            "  --cleanup     remove this user's stale segments (jobs killed before they\n"
            "                could remove theirs: no creator or attached process alive),\n"
            "                one line per segment removed; --dry-run only lists them\n"
            "  --job NAME    also the per-VP and per-unit counters of job NAME's segment,\n"
            "                the modeled routers' multicast tables and link counters, and\n"
            "                each node's traffic with other hosts (a job across hosts has\n"
            "                a segment per host: NAME.h0, NAME.h1, ...; doc/multinode.md)\n"
            "  --all         with --job: every unit, also idle ones\n"
            "  --vtime       the virtual-time model's parameters in force (defaults and\n"
            "                GLEX_VTIME_PARAMS), as a parameter file (doc/vtime.md)\n"
            "NIC parameters (environment, see doc/user-guide.md):\n"
            "  GLEX_UNITS (8, 1..64)  GLEX_UNIT_BUFFER_KB (512)  GLEX_TABLE_SLOTS (2048)\n"
            "  GLEX_INLINE_MAX (48, 40..256)  GLEX_VPS_PER_NODE (4)  GLEX_DQ_DEPTH (1024)\n"
            "  GLEX_CQ_DEPTH (1024)  GLEX_PULSES (4)  GLEX_TIMEOUT (30 s)  GLEX_SPIN_US (auto)\n"
            "  GLEX_YIELD_US (auto)  GLEX_ENGINE_BIND (process|rr|none|pu:N)\n"
            "  GLEX_ENGINE_THREAD (1|0)  GLEX_MAILBOXES (16, 0..1024)\n"
            "  GLEX_MAILBOX_KB (64, 1..1024)  GLEX_VTIME (0, 0..1)\n"
            "  GLEX_VTIME_PARAMS (file; its radix also shapes the routers)\n"
            "  GLEX_VTIME_COMPUTE (0, 0..1e6)  GLEX_MCAST_ENTRIES (64, 1..4096)\n"
            "  GLEX_MCAST_MEMBERS (4096, 2..16777216)  GLEX_MCAST_AGE_S (300, 1..86400)\n"
            "Across hosts (doc/multinode.md): GLEX_SPLIT_HOSTS (1..ranks: emulated hosts of\n"
            "  consecutive ranks on this machine)  FI_PROVIDER (tcp;ofi_rxm)\n"
            "Schedule compiler policy (environment, see doc/user-guide.md):\n"
            "  GLEX_COLL_SEGMENT_KB (auto, 1..65536)  GLEX_COLL_PLAN_CACHE (256, 1..1000000)\n"
            "  GLEX_RDMA_KB (auto, 0..1024)  GLEX_STAGE_KB (auto, 0..4194304)\n"
            "  GLEX_STAGE_MAP (1, 0..1)  GLEX_READ_KB (auto, 0..65536)\n"
            "MPI netmod (environment, see doc/user-guide.md):\n"
            "  GLEX_OFFLOAD (1, 0..1)  GLEX_VERBOSE (0, 0..2)  GLEX_NAP_US (50, 0..1000000)\n"
            "  GLEX_RDMA_EAGER (auto, 0..65536: largest point-to-point message through the\n"
            "  receiver's ring; auto 64 KiB, 8 KiB to a running process of this host where\n"
            "  the DMA read costs at most 4 copies)  GLEX_MP_LONG (1, 0..1: messages of\n"
            "  273-2456 data bytes to this host as one long MP)  GLEX_ALLREDUCE_ALGO, GLEX_REDUCE_ALGO,\n"
            "  GLEX_BCAST_ALGO, GLEX_BARRIER_ALGO (auto, an algorithm, host or mpich)\n");
}

/* a setting whose -1 means auto */
static void print_budget(const char *what, int32_t v, const char *unit, const char *env)
{
    if (v < 0)
        printf("  %-24s auto (%s)\n", what, env);
    else
        printf("  %-24s %d %s (%s)\n", what, (int)v, unit, env);
}

static void print_params(const glex_params_t *p)
{
    printf("NIC parameters:\n");
    printf("  offload units per node   %u   (GLEX_UNITS)\n", p->units);
    printf("  unit buffer              %u KiB (GLEX_UNIT_BUFFER_KB)\n", p->unit_buffer_kb);
    printf("  hash-buffer slots/unit   %u   (GLEX_TABLE_SLOTS, %u usable: 10%% reserve)\n",
           p->table_slots, glex_params_table_usable(p));
    printf("  inline payload           %u bytes (GLEX_INLINE_MAX)\n", p->inline_max);
    printf("  VPs per node             %u   (GLEX_VPS_PER_NODE)\n", p->vps_per_node);
    printf("  DQ / CQ depth            %u / %u (GLEX_DQ_DEPTH / GLEX_CQ_DEPTH)\n", p->dq_depth,
           p->cq_depth);
    printf("  pulses in flight (k)     %u   (GLEX_PULSES)\n", p->pulses);
    printf("  timeout                  %.3f s (GLEX_TIMEOUT)\n", p->timeout_ms / 1000.0);
    print_budget("spin before blocking", p->spin_us, "us", "GLEX_SPIN_US");
    print_budget("yield before blocking", p->yield_us, "us", "GLEX_YIELD_US");
    printf("  mailboxes per node       %u x 2 slots of %u KiB (GLEX_MAILBOXES, GLEX_MAILBOX_KB)\n",
           p->mailboxes, p->mailbox_kb);
    printf("  virtual time             %s (GLEX_VTIME; the model: glex-info --vtime)\n",
           p->vtime ? "on" : "off");
    printf("  multicast                %u table entries a router, groups up to %u members, "
           "entries age out after %u s (GLEX_MCAST_ENTRIES, GLEX_MCAST_MEMBERS, "
           "GLEX_MCAST_AGE_S)\n", p->mcast_entries, p->mcast_members, p->mcast_age_s);
    const char *b = glex_env("GLEX_ENGINE_BIND");
    printf("  engine thread placement  %s (GLEX_ENGINE_BIND)\n", b ? b : "process");
    printf("  JobIDs / NodeIDs / VPs / SeqIDs  %u / %u / %u / %u\n", GLEX_MAX_JOBS,
           GLEX_MAX_NODES, GLEX_MAX_VPS, GLEX_MAX_SEQ);
}

static void print_policy(const glex_coll_policy_t *p)
{
    printf("Schedule compiler policy:\n");
    print_budget("pipelining segment", (int32_t)p->segment_kb, "KiB", "GLEX_COLL_SEGMENT_KB");
    printf("  plans cached per group   %llu (GLEX_COLL_PLAN_CACHE)\n",
           (unsigned long long)p->plan_cache);
    print_budget("direct path RDMA above", (int32_t)p->rdma_kb, "KiB", "GLEX_RDMA_KB");
    print_budget("stage messages up to", (int32_t)p->stage_kb, "KiB", "GLEX_STAGE_KB");
    printf("  staged calls             %s (GLEX_STAGE_MAP)\n",
           p->stage_map ? "reduce, allreduce, bcast; stages mapped (memfd), else by RDMA"
                        : "reduce only; its root reads the stages by RDMA");
    if (p->read_kb == 0)
        printf("  read in place            never (GLEX_READ_KB)\n");
    else
        print_budget("read in place from", (int32_t)p->read_kb, "KiB", "GLEX_READ_KB");
}

static int list_segments(void)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "glex-%u-", (unsigned)getuid());
    DIR *d = opendir("/dev/shm");
    if (!d) {
        perror("glex-info: /dev/shm");
        return 1;
    }
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            printf("  %s  (job %s)\n", e->d_name, e->d_name + strlen(prefix)), n++;
    closedir(d);
    if (!n)
        printf("  no GLEX segments for uid %u\n", (unsigned)getuid());
    return 0;
}

/* the modeled routers: multicast table use, and the links multicast and
 * set-up packets crossed (doc/multicast.md) */
static void show_network(glex_fabric_t *f, int all)
{
    glex_net_shape_t sh;
    glex_link_stats_t inj, tot;
    glex_net_shape(f, &sh);
    glex_net_totals(f, &inj, &tot);
    printf("Network: %u routers of %u ports, %u level(s); multicast and set-up packets: %llu "
           "injected, %llu link crossings (head flits %llu, bytes %llu)\n", sh.routers, sh.radix,
           sh.levels, (unsigned long long)inj.packets, (unsigned long long)tot.packets,
           (unsigned long long)tot.head_flits, (unsigned long long)tot.bytes);
    printf("  %6s %5s %8s %6s %4s %10s %10s %12s\n", "router", "level", "entries", "port",
           "dir", "packets", "head_flits", "bytes");
    for (uint32_t r = 0; r < sh.routers; r++) {
        uint32_t used = glex_net_entries_used(f, r);
        for (uint32_t q = 0; q < sh.radix; q++)
            for (int d = 0; d < 2; d++) {
                glex_link_stats_t l;
                if (glex_net_link(f, r, q, d, &l) || (!all && !l.packets))
                    continue;
                printf("  %6u %5u %8u %6u %4s %10llu %10llu %12llu\n", r,
                       glex_net_router_level(f, r), used, q, d ? "in" : "out",
                       (unsigned long long)l.packets, (unsigned long long)l.head_flits,
                       (unsigned long long)l.bytes);
            }
    }
}

/* traffic with other hosts (doc/multinode.md): the nodes of this segment
 * that had any */
static void show_fabric(glex_fabric_t *f, int all)
{
    int header = 0;
    for (uint32_t n = 0; n < glex_fabric_nnodes(f); n++) {
        glex_wire_stats_t w;
        if (glex_fabric_wire_stats(f, n, &w) || (!all && !w.msgs_sent && !w.msgs_received))
            continue;
        if (!header++)
            printf("Fabric between hosts (libfabric):\n  %5s %10s %14s %10s %14s %6s %10s "
                   "%10s\n", "node", "msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv",
                   "held", "held_ever", "rdma_wr");
        printf("  %5u %10llu %14llu %10llu %14llu %6llu %10llu %10llu\n", n,
               (unsigned long long)w.msgs_sent, (unsigned long long)w.bytes_sent,
               (unsigned long long)w.msgs_received, (unsigned long long)w.bytes_received,
               (unsigned long long)w.held, (unsigned long long)w.held_total,
               (unsigned long long)w.writes);
    }
}

static int show_job(const char *job, int all)
{
    glex_fabric_t *f;
    if (glex_fabric_observe(job, &f)) {
        fprintf(stderr, "glex-info: %s\n", glex_last_error());
        return 1;
    }
    const glex_params_t *p = glex_fabric_params(f);
    printf("Job %s: segment %s, %u nodes\n", job, glex_fabric_name(f), glex_fabric_nnodes(f));
    uint32_t cost = glex_dma_read_cost(f);
    uint32_t pair = glex_dma_pair_cost(f), from = glex_dma_read_from_kb(f);
    char from_s[32] = "never";
    if (from)
        snprintf(from_s, sizeof from_s, "from %u KiB", from);
    if (cost && pair)
        printf("  DMA read of another process's 64 KiB: %.2fx the host's copy, %.2fx a copy "
               "across CPUs and back out (measured when the segment was created); read in "
               "place %s\n", cost / 100.0, pair / 100.0, from_s);
    else if (cost)
        printf("  DMA read of another process's 64 KiB: %.2fx the host's copy (measured when "
               "the segment was created; not against a copy across CPUs: one CPU, or the other "
               "busy past the measurement's 10 ms); read in place %s\n",
               cost / 100.0, from_s);
    else
        printf("  DMA read of another process's memory: refused (cross-memory attach "
               "not permitted)\n");
    uint32_t loop = glex_copy_loop_max(f);
    if (loop > 512)
        printf("  copies of 513-%u B by the model's own loop, larger by memcpy\n", loop);
    else
        printf("  copies by memcpy (faster here than the model's own loop at 1 KiB)\n");
    print_params(p);
    printf("VP counters (open VPs):\n  %5s %4s %10s %10s %9s %9s %10s %10s %10s %12s %8s %8s\n",
           "node", "vp", "posted", "executed", "tasks", "failed", "pkts_sent", "pkts_recv",
           "alu_ops", "bytes_sent", "trig_w", "cred_st");
    for (uint32_t n = 0; n < glex_fabric_nnodes(f); n++)
        for (uint32_t v = 0; v < p->vps_per_node; v++) {
            glex_vp_counters_t c;
            if (!glex_vp_is_open(f, n, v) || glex_vp_counters(f, n, v, &c))
                continue;
            printf("  %5u %4u %10llu %10llu %9llu %9llu %10llu %10llu %10llu %12llu %8llu %8llu\n",
                   n, v, (unsigned long long)c.desc_posted, (unsigned long long)c.desc_executed,
                   (unsigned long long)c.tasks_completed, (unsigned long long)c.tasks_failed,
                   (unsigned long long)c.packets_sent, (unsigned long long)c.packets_received,
                   (unsigned long long)c.alu_ops, (unsigned long long)c.bytes_sent, (unsigned long long)c.trigger_waits,
                   (unsigned long long)c.credit_stalls);
        }
    printf("Unit counters%s:\n  %5s %4s %10s %12s %8s %6s %9s %8s %8s %8s %6s %9s %7s %9s %11s %7s\n",
           all ? "" : " (units that saw traffic)", "node", "unit", "buffered", "hash_probes",
           "tbl_hw", "used", "ram_hw_kb", "cred_st", "trig_w", "tasks", "stale", "eager",
           "asked", "dma_reads", "eager_hw_kb", "staged");
    for (uint32_t n = 0; n < glex_fabric_nnodes(f); n++)
        for (uint32_t u = 0; u < p->units; u++) {
            glex_unit_counters_t c;
            if (glex_unit_counters(f, n, u, &c) || (!all && !c.packets_buffered && !c.tasks_admitted))
                continue;
            printf("  %5u %4u %10llu %12llu %8llu %6llu %9llu %8llu %8llu %8llu %6llu %9llu %7llu %9llu %11llu %7llu\n",
                   n, u, (unsigned long long)c.packets_buffered,
                   (unsigned long long)c.hash_probes, (unsigned long long)c.table_high_water,
                   (unsigned long long)c.table_used, (unsigned long long)c.ram_high_water_kb,
                   (unsigned long long)c.credit_stalls, (unsigned long long)c.trigger_waits,
                   (unsigned long long)c.tasks_admitted, (unsigned long long)c.stale_dropped,
                   (unsigned long long)c.eager_taken, (unsigned long long)c.eager_asked,
                   (unsigned long long)c.dma_reads, (unsigned long long)c.eager_high_water_kb,
                   (unsigned long long)c.dma_staged);
        }
    show_network(f, all);
    show_fabric(f, all);
    glex_fabric_close(f);
    return 0;
}

static void report_stale(const char *segment, const char *why, int removed, void *arg)
{
    int dry = *(int *)arg;
    printf("  %s %s: %s\n", dry ? "stale" : removed ? "removed" : "could not remove", segment, why);
}

static int cleanup(int dry)
{
    printf("Stale segments of uid %u%s:\n", (unsigned)getuid(), dry ? " (dry run)" : "");
    int n = glex_cleanup_stale(dry, report_stale, &dry);
    if (n < 0) {
        fprintf(stderr, "glex-info: %s\n", glex_last_error());
        return 1;
    }
    printf("  %d stale segment%s%s\n", n, n == 1 ? "" : "s", dry ? " found" : " removed");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = { { "job", required_argument, 0, 'j' },
                                         { "list", no_argument, 0, 'l' },
                                         { "all", no_argument, 0, 'a' },
                                         { "cleanup", no_argument, 0, 'c' },
                                         { "dry-run", no_argument, 0, 'n' },
                                         { "vtime", no_argument, 0, 'v' },
                                         { "help", no_argument, 0, 'h' },
                                         { 0, 0, 0, 0 } };
    const char *job = NULL;
    int list = 0, all = 0, clean = 0, dry = 0, vtime = 0, c;
    while ((c = getopt_long(argc, argv, "j:lacnvh", lo, NULL)) != -1) {
        switch (c) {
        case 'j': job = optarg; break;
        case 'l': list = 1; break;
        case 'a': all = 1; break;
        case 'c': clean = 1; break;
        case 'n': dry = 1; break;
        case 'v': vtime = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "glex-info: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (clean || dry)
        return cleanup(dry);
    if (vtime) { /* the virtual-time model in force, as a parameter file */
        static char text[8192];
        if (glex_vtime_describe_env(text, sizeof text) < 0) {
            fprintf(stderr, "glex-info: %s\n", glex_last_error());
            return 2;
        }
        fputs(text, stdout);
        return 0;
    }
    char topo[256];
    glex_topology_summary(topo, sizeof topo);
    printf("Topology (hwloc): %s\n", topo);
    if (list) {
        printf("Segments:\n");
        return list_segments();
    }
    if (job)
        return show_job(job, all);
    glex_params_t p;
    glex_coll_policy_t pol;
    glex_params_default(&p);
    glex_coll_policy_default(&pol);
    if (glex_params_from_env(&p) || glex_coll_policy_from_env(&pol)) {
        fprintf(stderr, "glex-info: %s\n", glex_last_error());
        return 2;
    }
    print_params(&p);
    print_policy(&pol);
    return 0;
}
