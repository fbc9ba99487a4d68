/* glex_emu_live.c - is the process behind a node still there?  A process is
 * named by its pid and its start time (field 22 of /proc/<pid>/stat), so a
 * recycled pid is not mistaken for the original; a zombie counts as dead. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t glex_proc_start(int32_t pid)
{
    char path[48], buf[1024];
    if (pid <= 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* "pid (comm) S ppid ..." - comm may hold spaces and parentheses */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    p += 2;
    if (*p == 'Z' || *p == 'X') /* exited, not yet reaped */
        return 0;
    /* the state is field 3; the start time is field 22 */
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return 0;
        p++;
    }
    unsigned long long start = strtoull(p, NULL, 10);
    return start ? start : 1;
}

int glex_proc_alive(int32_t pid, uint64_t start)
{
    if (pid <= 0)
        return 0;
    uint64_t now = glex_proc_start(pid);
    if (now)
        return start == 0 || now == start;
    /* no /proc entry: gone, unless /proc hides it (hidepid) - then ask with a signal probe */
    if (access("/proc/self/stat", R_OK) == 0)
        return 0;
    return kill(pid, 0) == 0 || errno == EPERM;
}

void glex_proc_self(int32_t *pid, uint64_t *start)
{
    *pid = (int32_t)getpid();
    *start = glex_proc_start(*pid);
}

glex_node_state_t glex_node_state(const glex_fabric_t *f, uint32_t node)
{
    const glex_node_shm_t *n = glex_node_shm(f, node);
    uint32_t st = atomic_load(&n->state);
    if (st != GLEX_NODE_ALIVE)
        return (glex_node_state_t)st;
    if (!glex_proc_alive(atomic_load(&n->pid), atomic_load(&n->start)))
        return GLEX_NODE_DEAD;
    return GLEX_NODE_ALIVE;
}

int glex_peer_failure(const glex_fabric_t *f, uint32_t awaited, char *why, size_t len)
{
    if (awaited < f->nnodes && awaited != f->node && !glex_remote(f, awaited)) {
        glex_node_state_t s = glex_node_state(f, awaited);
        if (s == GLEX_NODE_DEAD || s == GLEX_NODE_LEFT) {
            snprintf(why, len, "node %u (pid %d) %s", awaited,
                     (int)atomic_load(&glex_node_shm(f, awaited)->pid),
                     s == GLEX_NODE_DEAD ? "died" : "left the job");
            return 1;
        }
    }
    for (uint32_t i = 0; i < f->nnodes; i++) {
        if (i == f->node || glex_node_state(f, i) != GLEX_NODE_DEAD)
            continue;
        if (glex_remote(f, i)) { /* marked by the fabric (glex_emu_wire.c) */
            snprintf(why, len, "node %u on host %u is unreachable (fabric error)", i,
                     f->host_of[i]);
            return 1;
        }
        snprintf(why, len, "node %u (pid %d) died", i, (int)atomic_load(&glex_node_shm(f, i)->pid));
        return 1;
    }
    return 0;
}

int glex_fabric_check_peers(glex_fabric_t *f)
{
    char why[128];
    if (!f || f->observer || !glex_peer_failure(f, UINT32_MAX, why, sizeof why))
        return GLEX_OK;
    return glex_error(GLEX_EDEAD, "segment %s: %s", f->name, why);
}

int glex_peer_failed(const glex_fabric_t *f, uint32_t node, char *why, size_t len)
{
    return glex_peer_failure(f, node, why, len);
}
