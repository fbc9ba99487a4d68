/* glex_emu_place.c - engine thread placement (hwloc for rr and pu:N).
 * GLEX_ENGINE_BIND: process (default) = the CPU set the host thread is bound
 * to; rr = PU (node id mod number of PUs); pu:N = logical PU N; none. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <pthread.h>
#include <sched.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_policy(const char *s, int *pu)
{
    if (!s || !strcmp(s, "process"))
        return 0;
    if (!strcmp(s, "none"))
        return 1;
    if (!strcmp(s, "rr"))
        return 2;
    if (!strncmp(s, "pu:", 3)) {
        char *end;
        long v = strtol(s + 3, &end, 10);
        if (end != s + 3 && !*end && v >= 0 && v < 65536) {
            *pu = (int)v;
            return 3;
        }
    }
    return -1;
}

int glex_place_check_env(void)
{
    int pu;
    const char *s = glex_env("GLEX_ENGINE_BIND");
    if (parse_policy(s, &pu) < 0)
        return glex_error(GLEX_EINVAL,
                          "GLEX_ENGINE_BIND=%s is invalid: allowed process, rr, none, pu:N", s);
    return GLEX_OK;
}

int glex_place_engine_thread(glex_fabric_t *f, pthread_t th)
{
    int pu = 0;
    const char *s = glex_env("GLEX_ENGINE_BIND");
    int pol = parse_policy(s, &pu);
    if (pol < 0)
        return glex_place_check_env();
    if (pol == 1)
        return GLEX_OK;
    if (pol == 0) {
        /* the host thread's own CPU set, without loading a topology: hwloc's
         * load moves the calling thread over every PU to read it, which here
         * cost the first calls of a job milliseconds */
        cpu_set_t set;
        if (!sched_getaffinity(0, sizeof set, &set))
            pthread_setaffinity_np(th, sizeof set, &set);
        return GLEX_OK;
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo))
        return GLEX_OK; /* no topology: leave the thread where the OS puts it */
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int rc = GLEX_OK;
    int idx = pol == 2 ? (int)(f->node % (uint32_t)(npu > 0 ? npu : 1)) : pu;
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)idx);
    if (!o)
        rc = glex_error(GLEX_EINVAL, "GLEX_ENGINE_BIND=%s: PU %d is out of range 0..%d", s,
                        idx, npu - 1);
    else
        hwloc_bitmap_copy(set, o->cpuset);
    if (!rc)
        hwloc_set_thread_cpubind(topo, th, set, 0);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}

int glex_topology_summary(char *buf, size_t len)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo))
        return snprintf(buf, len, "hwloc: topology unavailable");
    int pk = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    int co = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int pu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int l3 = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L3CACHE, 0);
    if (!c)
        c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L2CACHE, 0);
    int n = snprintf(buf, len,
                     "packages %d, NUMA nodes %d, cores %d, PUs %d, L3 caches %d, "
                     "largest cache %llu KiB",
                     pk, nn, co, pu, l3,
                     c && c->attr ? (unsigned long long)c->attr->cache.size / 1024 : 0ull);
    hwloc_topology_destroy(topo);
    return n;
}
