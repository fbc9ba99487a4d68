/* glex_emu_calib.c - what this machine's DMA costs, measured once per job
 * by the process that creates the job's segment, so that every process of
 * the job decides alike.  Two measurements:
 *
 * - the NIC's DMA read of another process's memory (cross-memory attach,
 *   process_vm_readv) of 64 KiB against the host's copy of the same bytes
 *   (glex_copy, what an eager message costs the sender): 2.2 on an Intel
 *   Xeon VM, 7.7-11 on one AMD EPYC VM, 5 on another.  Printed, and the
 *   rule where the second measurement cannot be taken.
 * - the choice itself: at 8, 16, 32 and 64 KiB, the DMA read of a buffer
 *   another CPU just wrote against the route it replaces, one CPU copying
 *   into memory both see and the other copying it out (the eager path: two
 *   crossings of the CPUs).  The read pays from the smallest size at which
 *   it is at most the copy pair there and at every larger size.  The copy
 *   ratio alone misjudged a machine whose CPUs exchange lines slowly: the
 *   second AMD VM's read costs 5 copies, but 0.9 of the pair at 64 KiB, and
 *   its 1 MiB bcast took 145 us in 64 KiB eager segments, 65 read in place
 *   (Open MPI 80; bench/results/2026-12-02/NOTES.md, third session).
 *
 * - glex_copy's loop against memcpy at 1-4 KiB, copying out what the
 *   other CPU just wrote (loop_choice): memcpy's vector loop was the slower
 *   one on the Xeon VM, the faster one at 4 KiB on the AMD VM.
 *
 * The pair needs a second CPU: a helper thread is placed on another online
 * CPU (and this thread on its own) for the measurement only, then this
 * thread's CPU set is restored.  Without one (a single CPU, placement
 * refused, the measurement not done within PAIR_BUDGET_NS: the other CPU
 * busy) the copy ratio decides: the read pays from 8 KiB where it is at
 * most GLEX_DMA_READ_CHEAP_X100 / 100. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CALIB_BYTES (64u << 10) /* per-page costs dominate, as in a message of some KiB */
#define CALIB_ROUNDS 20         /* the best of each: about 0.15 ms in all */
#define PAIR_MIN_KB 8u          /* the sizes the pair is measured at: 8 .. 64 KiB */
#define PAIR_ROUNDS 12
/* the whole pair measurement takes about 0.5 ms with the other CPU free; a
 * helper that cannot get it (many processes starting at once) must not
 * hold the job's start: past this, the copy ratio decides */
#define PAIR_BUDGET_NS 10000000ull

static int read_self(void *dst, const void *src, size_t n)
{
    struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)src, n };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* the read against the host's copy, 64 KiB, x100; 0 when refused */
static uint32_t copy_ratio(void)
{
    uint8_t *a = malloc(CALIB_BYTES), *b = malloc(CALIB_BYTES);
    uint64_t best_read = UINT64_MAX, best_copy = UINT64_MAX;
    uint32_t ratio = 0;
    if (!a || !b)
        goto out;
    memset(a, 1, CALIB_BYTES);
    memset(b, 2, CALIB_BYTES);
    for (int i = 0; i < CALIB_ROUNDS; i++) {
        uint64_t t0 = glex_now_ns();
        if (read_self(b, a, CALIB_BYTES))
            goto out; /* refused (no ptrace permission): the NIC cannot read in place */
        uint64_t t1 = glex_now_ns();
        glex_copy(b, a, CALIB_BYTES);
        uint64_t t2 = glex_now_ns();
        best_read = t1 - t0 < best_read ? t1 - t0 : best_read;
        best_copy = t2 - t1 < best_copy ? t2 - t1 : best_copy;
    }
    if (best_copy)
        ratio = best_read * 100 / best_copy > UINT32_MAX ? UINT32_MAX
                                                         : (uint32_t)(best_read * 100 / best_copy);
out:
    free(a);
    free(b);
    return ratio;
}

/* the helper on the other CPU: 1 = write the source (a peer producing its
 * buffer), 2 = copy the shared buffer out (a receiver's eager copy); it
 * answers 0, and ends at -1 (also one set while it worked) */
typedef struct {
    _Atomic int cmd;
    size_t n;
    uint8_t *src, *shared, *out;
} pair_t;

static void *pair_helper(void *arg)
{
    pair_t *p = arg;
    for (;;) {
        int c;
        while ((c = atomic_load_explicit(&p->cmd, memory_order_acquire)) == 0)
            ;
        if (c < 0)
            return NULL;
        if (c == 1)
            memset(p->src, (int)(p->n >> 10), p->n);
        else
            glex_copy(p->out, p->shared, p->n);
        /* answered only if still asked: a stop (-1) set meanwhile, when the
         * asker gave up waiting, must not be overwritten (it would spin on) */
        if (!atomic_compare_exchange_strong_explicit(&p->cmd, &c, 0, memory_order_acq_rel,
                                                     memory_order_acquire))
            return NULL;
    }
}

static int pair_ask(pair_t *p, int c, uint64_t deadline)
{
    atomic_store_explicit(&p->cmd, c, memory_order_release);
    while (atomic_load_explicit(&p->cmd, memory_order_acquire) != 0)
        if (glex_now_ns() > deadline)
            return -1;
    return 0;
}

static int place_on(pthread_t th, int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(th, sizeof s, &s);
}

/* glex_copy's loop against memcpy, copying out lines the other CPU just
 * wrote (a ring message, a packet's data), at 1, 2 and 4 KiB: the loop up
 * to the largest size from 1 KiB on at which it is at least 3% faster
 * than memcpy and at every smaller one (*loop_max 512: at none); nothing
 * set when the helper does not answer in time */
static void loop_choice(pair_t *p, uint8_t *dst, uint64_t deadline, uint32_t *loop_max)
{
    uint32_t max = 512;
    for (uint32_t kb = 1; kb <= GLEX_COPY_LOOP_MAX >> 10; kb *= 2) {
        p->n = (size_t)kb << 10;
        uint64_t best[2] = { UINT64_MAX, UINT64_MAX }; /* memcpy, the loop */
        for (int i = -2; i < 2 * PAIR_ROUNDS; i++)
            for (int m = 0; m < 2; m++) {
                if (pair_ask(p, 1, deadline))
                    return;
                uint64_t t0 = glex_now_ns();
                if (m)
                    glex_copy_loop(dst, p->src, p->n);
                else
                    memcpy(dst, p->src, p->n);
                uint64_t t = glex_now_ns() - t0;
                if (i >= 0 && t < best[m])
                    best[m] = t;
            }
        if (best[1] * 100 > best[0] * 97)
            break;
        max = kb << 10;
    }
    *loop_max = max;
}

/* the pair measurement (with_read: of the DMA read too; else only the
 * copy loop's, loop_choice); 0 with *from_kb (0: the read never pays up to
 * 64 KiB) and *pair_x100 (the read against the pair at 64 KiB), -1 when
 * the read's could not be taken */
static int pair_choice(int with_read, uint32_t *from_kb, uint32_t *pair_x100, uint32_t *loop_max)
{
    int me = sched_getcpu();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (me < 0 || ncpu < 2)
        return -1;
    cpu_set_t mine;
    if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine))
        return -1;
    pair_t p = { .n = CALIB_BYTES };
    p.src = aligned_alloc(64, CALIB_BYTES);
    p.shared = aligned_alloc(64, CALIB_BYTES);
    p.out = aligned_alloc(64, CALIB_BYTES);
    uint8_t *dst = aligned_alloc(64, CALIB_BYTES);
    int rc = -1, started = 0;
    pthread_t th;
    if (!p.src || !p.shared || !p.out || !dst)
        goto out;
    memset(p.src, 1, CALIB_BYTES);
    memset(p.shared, 1, CALIB_BYTES);
    memset(p.out, 1, CALIB_BYTES);
    memset(dst, 1, CALIB_BYTES);
    if (pthread_create(&th, NULL, pair_helper, &p))
        goto out;
    started = 1;
    int other = -1;
    for (int c = 0; c < ncpu && c < CPU_SETSIZE && other < 0; c++)
        if (c != me && place_on(th, c) == 0)
            other = c;
    if (other < 0 || place_on(pthread_self(), me))
        goto out;
    /* ascending, each size after two rounds untimed (the buffers' lines in
     * their steady places: measured from 64 KiB down, the first size's
     * pair came out 30-40% fast) */
    uint32_t from = 0, last_ratio = 0;
    uint64_t deadline = glex_now_ns() + PAIR_BUDGET_NS;
    loop_choice(&p, dst, deadline, loop_max);
    for (uint32_t kb = PAIR_MIN_KB; with_read && kb <= CALIB_BYTES >> 10; kb *= 2) {
        p.n = (size_t)kb << 10;
        uint64_t best_read = UINT64_MAX, best_pair = UINT64_MAX;
        for (int i = -2; i < PAIR_ROUNDS; i++) {
            if (pair_ask(&p, 1, deadline))
                goto out;
            uint64_t t0 = glex_now_ns();
            if (read_self(dst, p.src, p.n))
                goto out;
            uint64_t t1 = glex_now_ns();
            glex_copy(p.shared, dst, p.n);
            if (pair_ask(&p, 2, deadline))
                goto out;
            uint64_t t2 = glex_now_ns();
            if (i < 0)
                continue;
            best_read = t1 - t0 < best_read ? t1 - t0 : best_read;
            best_pair = t2 - t1 < best_pair ? t2 - t1 : best_pair;
        }
        if (best_read > best_pair)
            from = 0; /* it must pay at every larger size too */
        else if (!from)
            from = kb;
        if (kb == CALIB_BYTES >> 10)
            last_ratio = best_pair ? (uint32_t)(best_read * 100 / best_pair) : UINT32_MAX;
    }
    *from_kb = from;
    *pair_x100 = last_ratio;
    rc = 0;
out:
    if (started) {
        atomic_store_explicit(&p.cmd, -1, memory_order_release);
        pthread_join(th, NULL);
        pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
    }
    free(p.src);
    free(p.shared);
    free(p.out);
    free(dst);
    return rc;
}

void glex_calib_dma(glex_dma_calib_t *c)
{
    c->read_x100 = copy_ratio(); /* 0: refused, never read in place */
    c->pair_x100 = 0;
    c->read_from_kb = 0;
    c->loop_max = GLEX_COPY_LOOP_MAX;
    if (pair_choice(c->read_x100 != 0, &c->read_from_kb, &c->pair_x100, &c->loop_max) &&
        c->read_x100)
        c->read_from_kb = c->read_x100 <= GLEX_DMA_READ_CHEAP_X100 ? PAIR_MIN_KB : 0;
}

uint32_t glex_dma_read_cost(const glex_fabric_t *f) { return f->hdr->dma.read_x100; }

uint32_t glex_dma_pair_cost(const glex_fabric_t *f) { return f->hdr->dma.pair_x100; }

uint32_t glex_dma_read_from_kb(const glex_fabric_t *f) { return f->hdr->dma.read_from_kb; }

int glex_dma_read_cheap(const glex_fabric_t *f) { return f->hdr->dma.read_from_kb != 0; }

uint32_t glex_copy_loop_max(const glex_fabric_t *f) { return f->hdr->dma.loop_max; }
