/* glex_emu_calib.c - what this machine's DMA costs, measured once per job
 * by the process that creates the job's segment, so that every process of
 * the job decides alike: the NIC's DMA read of another process's memory
 * (cross-memory attach, process_vm_readv) against the host's copy of the
 * same bytes (glex_copy, what an eager message costs the sender).  The
 * ratio differs by machine: at 64 KiB 2.2 on an Intel Xeon VM, 7.7-8.1 on
 * an AMD EPYC VM, where the kernel's page pinning is slower, and the
 * collectives that read in place win on the first only (bcast 8-64 KiB at 2
 * ranks on the AMD VM: 2.8-8.4 us read, 0.55-2.35 through unit RAM).  At 1
 * MiB the copy leaves the L2 cache and the two machines drew close (1.7
 * against 2.2-3.9 from run to run: the read in place taken or not by
 * chance); 64 KiB is a message of some KiB, as the reads chosen by it are
 * (bench/results/2026-12-02/NOTES.md). */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CALIB_BYTES (64u << 10) /* per-page costs dominate, as in a message of some KiB */
#define CALIB_ROUNDS 20         /* the best of each: about 0.15 ms in all */

uint32_t glex_calib_dma_read(void)
{
    uint8_t *a = malloc(CALIB_BYTES), *b = malloc(CALIB_BYTES);
    uint64_t best_read = UINT64_MAX, best_copy = UINT64_MAX;
    uint32_t ratio = 0;
    if (!a || !b)
        goto out;
    memset(a, 1, CALIB_BYTES);
    memset(b, 2, CALIB_BYTES);
    for (int i = 0; i < CALIB_ROUNDS; i++) {
        struct iovec local = { b, CALIB_BYTES }, remote = { a, CALIB_BYTES };
        uint64_t t0 = glex_now_ns();
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)CALIB_BYTES)
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

uint32_t glex_dma_read_cost(const glex_fabric_t *f) { return f->hdr->dma_read_x100; }

int glex_dma_read_cheap(const glex_fabric_t *f)
{
    uint32_t cost = glex_dma_read_cost(f);
    return cost && cost <= GLEX_DMA_READ_CHEAP_X100;
}
