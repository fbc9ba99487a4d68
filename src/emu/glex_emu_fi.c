/* glex_emu_fi.c - libfabric, loaded when a job first spans hosts.
 *
 * Linking libfabric would load its providers' libraries into every process
 * of every job, one host or many, and run their constructors: Debian's
 * libfabric pulls in PSM (libinfinipath, libpsm2), whose clock calibration
 * sleeps about 0.2 s at each process start.  So nothing links it: the first
 * endpoint dlopen()s libfabric.so.1 (the ABI of the headers we build
 * against, found as the dynamic loader finds any library: LD_LIBRARY_PATH,
 * then the system's) and takes the few functions that are not inline calls
 * through an object's operations.  doc/multinode.md. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#ifdef GLEX_HAVE_LIBFABRIC
#include "glex_emu_wire.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define GLEX_FI_SONAME "libfabric.so.1"

struct glex_fi_lib glex_fi;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty: loaded */

static void load(void)
{
    void *h = dlopen(GLEX_FI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "dlopen %s: %s", GLEX_FI_SONAME, dlerror());
        return;
    }
    /* one entry per function: its name, where it goes */
    const struct {
        const char *name;
        void **slot;
    } fn[] = {
        { "fi_getinfo", (void **)&glex_fi.getinfo },
        { "fi_freeinfo", (void **)&glex_fi.freeinfo },
        { "fi_dupinfo", (void **)&glex_fi.dupinfo },
        { "fi_fabric", (void **)&glex_fi.fabric },
        { "fi_strerror", (void **)&glex_fi.strerror },
    };
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        *fn[i].slot = dlsym(h, fn[i].name);
        if (!*fn[i].slot) {
            snprintf(why, sizeof why, "%s has no %s", GLEX_FI_SONAME, fn[i].name);
            memset(&glex_fi, 0, sizeof glex_fi);
            return; /* the handle stays: a provider may have started threads */
        }
    }
}

int glex_fi_load(void)
{
    pthread_once(&once, load);
    if (why[0])
        return glex_error(GLEX_ESYS, "a job across hosts needs libfabric: %s (install the Debian "
                          "package libfabric1, or put its directory in LD_LIBRARY_PATH)", why);
    return GLEX_OK;
}

const char *glex_fi_strerror(int err)
{
    return glex_fi.strerror ? glex_fi.strerror(err) : "libfabric not loaded";
}
#endif /* GLEX_HAVE_LIBFABRIC */
