/* glex_emu_cleanup.c - find and remove this user's stale segments: those of
 * jobs whose processes were all killed before they could unlink them. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GLEX_SHM_DIR "/dev/shm"
#define UNSIZED_GRACE_S 60 /* a creator sizes its segment at once; older empty ones are dead */

/* 1 when some process has /dev/shm<name> mapped (or we cannot tell) */
static int mapped_by_anyone(const char *name)
{
    char want[320], line[512], path[64];
    snprintf(want, sizeof want, GLEX_SHM_DIR "%s", name);
    size_t wl = strlen(want);
    DIR *d = opendir("/proc");
    if (!d)
        return 1;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/maps", e->d_name);
        FILE *m = fopen(path, "r");
        if (!m)
            continue;
        while (!found && fgets(line, sizeof line, m)) {
            char *p = strchr(line, '/');
            found = p && !strncmp(p, want, wl) && (p[wl] == '\n' || p[wl] == ' ' || !p[wl]);
        }
        fclose(m);
    }
    closedir(d);
    return found;
}

/* NULL when somebody may still use the segment, else why it is stale */
static const char *stale_reason(const char *name, int fd, char *why, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    if ((size_t)st.st_size < sizeof(glex_shm_header_t)) {
        if (time(NULL) - st.st_mtime < UNSIZED_GRACE_S)
            return NULL;
        snprintf(why, len, "never sized (%lld bytes, %lld s old)", (long long)st.st_size,
                 (long long)(time(NULL) - st.st_mtime));
        return why;
    }
    /* read, not mapped: a mapping of ours would count as a user below */
    glex_shm_header_t *h = malloc(sizeof *h);
    glex_node_shm_t *nodes = NULL;
    if (!h || pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h) {
        free(h);
        return NULL;
    }
    const char *r = NULL;
    if (h->magic == 0) { /* sized, header not written yet: a creator is at work */
        if (time(NULL) - st.st_mtime >= UNSIZED_GRACE_S && !mapped_by_anyone(name)) {
            snprintf(why, len, "header never written (%lld s old)",
                     (long long)(time(NULL) - st.st_mtime));
            r = why;
        }
        goto out;
    }
    if (h->magic != GLEX_MAGIC || h->abi != GLEX_ABI_VERSION || h->total_size != (uint64_t)st.st_size ||
        h->off_nodes + (uint64_t)h->nnodes * sizeof(glex_node_shm_t) > (uint64_t)st.st_size) {
        /* another library version's segment: stale when no process maps it */
        if (!mapped_by_anyone(name)) {
            snprintf(why, len, "header of another version (magic %#llx, ABI %u), mapped by no process",
                     (unsigned long long)h->magic, h->abi);
            r = why;
        }
        goto out;
    }
    size_t nb = (size_t)h->nnodes * sizeof *nodes;
    nodes = malloc(nb ? nb : 1);
    if (!nodes || pread(fd, nodes, nb, (off_t)h->off_nodes) != (ssize_t)nb)
        goto out;
    /* the creator counts until it has a node (it attaches one right after
     * creating), and no longer once that node has left */
    int creator_left = 0;
    for (uint32_t i = 0; i < h->nnodes && !creator_left; i++)
        creator_left = atomic_load(&nodes[i].pid) == h->creator_pid &&
                       atomic_load(&nodes[i].state) == GLEX_NODE_LEFT;
    if (!creator_left && glex_proc_alive(h->creator_pid, h->creator_start))
        goto out;
    uint32_t dead = 0, left = 0;
    int32_t some_pid = h->creator_pid;
    for (uint32_t i = 0; i < h->nnodes; i++) {
        uint32_t s = atomic_load(&nodes[i].state);
        if (s == GLEX_NODE_LEFT)
            left++;
        if (s != GLEX_NODE_ALIVE)
            continue;
        if (glex_proc_alive(atomic_load(&nodes[i].pid), atomic_load(&nodes[i].start)))
            goto out;
        dead++;
        some_pid = atomic_load(&nodes[i].pid);
    }
    snprintf(why, len, "%u of %u nodes attached, all processes gone (e.g. pid %d), %u left cleanly",
             dead, h->nnodes, (int)some_pid, left);
    r = why;
out:
    free(nodes);
    free(h);
    return r;
}

/* 1 when segment name (with its leading '/') is stale, why filled */
static int is_stale(const char *name, char *why, size_t len)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    struct stat st;
    const char *r = NULL;
    if (fstat(fd, &st) == 0 && st.st_uid == getuid())
        r = stale_reason(name, fd, why, len);
    close(fd);
    return r != NULL;
}

static void report_removed(const char *segment, const char *why, int removed, void *arg)
{
    (void)arg;
    if (removed)
        fprintf(stderr, "glex: removed stale segment %s: %s\n", segment, why);
}

int glex_segment_remove_if_stale(const char *name)
{
    char why[200];
    if (!is_stale(name, why, sizeof why) || shm_unlink(name) != 0)
        return 0;
    report_removed(name, why, 1, NULL);
    return 1;
}

void glex_sweep_stale(void)
{
    glex_cleanup_stale(0, report_removed, NULL);
}

int glex_cleanup_stale(int dry_run, glex_cleanup_report_t report, void *arg)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "glex-%u-", (unsigned)getuid());
    DIR *d = opendir(GLEX_SHM_DIR);
    if (!d)
        return glex_error(GLEX_ESYS, "cannot list %s: %s", GLEX_SHM_DIR, strerror(errno));
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char name[300], why[200];
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (!is_stale(name, why, sizeof why))
            continue;
        found++;
        int removed = !dry_run && shm_unlink(name) == 0;
        if (report)
            report(name, why, removed, arg);
    }
    closedir(d);
    return found;
}
