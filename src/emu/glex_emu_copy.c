/* glex_emu_copy.c - the DMA engine's byte mover.
 *
 * memcpy moves larger blocks with rep movsb, which on this machine's CPUs
 * (and many x86 ones) runs 15-30x slower when the destination lies 1-31
 * bytes past the source modulo 4 KiB: a store then seems to overlap a load
 * of the next bytes.  The NIC model meets that all the time, copying
 * between line-aligned NIC memory (stages, unit RAM, packet slots) and
 * buffers malloc puts 16 bytes into a page (4 KiB in 1.2 us instead of 0.04;
 * 64 KiB in 19 us instead of 1).  Such a copy here goes as a loop of 16-byte
 * loads and stores, which keeps its speed at any distance, as does every
 * copy of 513 B - 4 KiB (below); every other one is memcpy's.
 * bench/results/2026-11-27/NOTES.md, 2026-12-02/NOTES.md. */
#include "glex_emu_internal.h"

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* rep movsb's ground: glibc's threshold is 2 KiB and up; 1 KiB leaves room */
#define GLEX_COPY_LOOP_MIN 1024u
/* Copies of 513 B up to the job's loop_max (4 KiB at most) go by the loop
 * at any distance: what the NIC model copies is mostly lines another core
 * wrote last (a packet's data, a ring message), and on some CPUs memcpy's
 * vector loop above 8 vectors is the slower one there.  Two threads on two
 * CPUs copying a buffer back and forth, per round trip (Intel Xeon VM):
 * 768 B 0.71 us by memcpy, 0.50 by the loop; 1 KiB 0.72 / 0.53; 2 KiB 1.0
 * / 0.71; 4 KiB 1.41 / 1.35; 8 KiB the same; up to 512 B memcpy loads all
 * before it stores and ties.  On an AMD EPYC VM memcpy (AVX-512) is as fast
 * at 1-2 KiB and faster at 4 KiB (osu_latency 4 KiB 0.37 -> 0.30 us), so
 * the job's first process measures it (glex_emu_calib.c) and every
 * process of the job sets it at open (glex_copy_set_loop_max). */
#define GLEX_COPY_SMALL_MIN 513u
static _Atomic uint32_t small_max = GLEX_COPY_LOOP_MAX;

void glex_copy_set_loop_max(uint32_t max)
{
    atomic_store_explicit(&small_max, max > GLEX_COPY_LOOP_MAX ? GLEX_COPY_LOOP_MAX : max,
                          memory_order_relaxed);
}

int glex_copy_slow_distance(const void *dst, const void *src)
{
    uintptr_t dist = ((uintptr_t)dst - (uintptr_t)src) & 4095u;
    return dist >= 1 && dist < 64;
}

/* the loop's copies (disjoint ones only) */
static int by_loop(const void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    return n >= GLEX_COPY_SMALL_MIN &&
           (n <= atomic_load_explicit(&small_max, memory_order_relaxed) ||
            (n >= GLEX_COPY_LOOP_MIN && glex_copy_slow_distance(dst, src))) &&
           (d + n <= s || s + n <= d);
}

#if defined(__x86_64__)
/* the whole 64-byte lines of n: four loads, then four stores (streamed past
 * the caches when stream); returns how many bytes it copied */
static inline size_t copy_lines(uint8_t *d, const uint8_t *s, size_t n, int stream)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        if (stream) {
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        } else {
            _mm_storeu_si128((__m128i *)(d + i), a);
            _mm_storeu_si128((__m128i *)(d + i + 16), b);
            _mm_storeu_si128((__m128i *)(d + i + 32), c);
            _mm_storeu_si128((__m128i *)(d + i + 48), e);
        }
    }
    return i;
}

static void copy_loop(uint8_t *d, const uint8_t *s, size_t n)
{
    size_t i = copy_lines(d, s, n, 0);
    memcpy(d + i, s + i, n - i);
}
#endif

void glex_copy_loop(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    copy_loop(dst, src, n);
#else
    memcpy(dst, src, n);
#endif
}

/* An aligned 8-byte copy lands as one store, as a NIC's aligned write
 * does (memcpy and memmove store 8 bytes twice: a flag word another process
 * rewrites between the two would get its old value back).  1 when done. */
static int one_word(void *dst, const void *src, size_t n)
{
    if (n != 8 || (((uintptr_t)dst | (uintptr_t)src) & 7u))
        return 0;
    __atomic_store_n((uint64_t *)dst, __atomic_load_n((const uint64_t *)src, __ATOMIC_RELAXED),
                     __ATOMIC_RELEASE);
    return 1;
}

void glex_copy(void *dst, const void *src, size_t n)
{
    if (one_word(dst, src, n))
        return;
#if defined(__x86_64__)
    if (by_loop(dst, src, n)) {
        copy_loop(dst, src, n);
        return;
    }
#endif
    memcpy(dst, src, n);
}

void glex_move(void *dst, const void *src, size_t n)
{
    if (one_word(dst, src, n))
        return;
#if defined(__x86_64__)
    if (by_loop(dst, src, n)) { /* disjoint: by_loop said so */
        copy_loop(dst, src, n);
        return;
    }
#endif
    memmove(dst, src, n);
}

/* Streaming stores (past the caches) for a large copy into memory other
 * cores read next: a plain store there first asks every core that read
 * the line for it.  Two processes on two CPUs taking turns, one writing a
 * buffer the other then reads (AMD EPYC VM): 1 MiB written in 139 us by
 * memcpy, 26 by streaming stores (512 KiB: 12 / 14; the reader's copy
 * 31 / 37 us).  Disjoint buffers, dst 16-byte aligned, else memcpy. */
void glex_copy_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (!((uintptr_t)d & 15u) && ((uintptr_t)d + n <= (uintptr_t)s || (uintptr_t)s + n <= (uintptr_t)d)) {
        size_t i = copy_lines(d, s, n, 1);
        _mm_sfence();
        if (i < n)
            memcpy(d + i, s + i, n - i);
        return;
    }
#endif
    memcpy(dst, src, n);
}
