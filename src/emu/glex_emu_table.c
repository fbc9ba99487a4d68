/* glex_emu_table.c - the trigger unit's packet buffer: a hash table keyed by
 * JobID+NodeID+VP+SeqID (open addressing, linear probing, valid bitmap, 10%
 * of the slots kept free), and the unit RAM that backs pulsed credits. */
#include "glex_emu_internal.h"

#include <string.h>

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static inline uint32_t home_slot(glex_key_t k, uint32_t slots)
{
    return (uint32_t)(mix(k.hi ^ ((uint64_t)k.lo << 48) ^ ((uint64_t)k.lo >> 16)) % slots);
}

static inline int bit_get(const uint64_t *bm, uint32_t i) { return (bm[i >> 6] >> (i & 63)) & 1; }
static inline void bit_set(uint64_t *bm, uint32_t i) { bm[i >> 6] |= 1ull << (i & 63); }
static inline void bit_clr(uint64_t *bm, uint32_t i) { bm[i >> 6] &= ~(1ull << (i & 63)); }
static inline int key_eq(glex_key_t a, glex_key_t b) { return a.hi == b.hi && a.lo == b.lo; }

static inline glex_pkt_hdr_t *entry(uint8_t *tab, uint32_t esz, uint32_t i)
{
    return (glex_pkt_hdr_t *)(tab + (size_t)i * esz);
}

static void remove_slot(glex_unit_shm_t *u, uint64_t *bm, uint8_t *tab, uint32_t esz,
                        uint32_t slots, uint32_t i);

/* Drop packets of an earlier use of their JobID (left by a failed task:
 * the generation in their key is not the JobID's current one).  Called with
 * the unit locked when the table is full; returns how many went. */
static uint32_t sweep_stale(glex_fabric_t *f, glex_unit_shm_t *u, uint64_t *bm, uint8_t *tab)
{
    uint32_t slots = f->p.table_slots, esz = f->hdr->entry_size, n = 0;
    for (uint32_t i = 0; i < slots;) {
        glex_pkt_hdr_t *e = entry(tab, esz, i);
        uint32_t job = (uint32_t)(e->key.hi >> 40) & 0xffu, gen = (uint32_t)(e->key.hi >> 48);
        if (bit_get(bm, i) && gen != atomic_load(&f->hdr->jobs[job].gen)) {
            remove_slot(u, bm, tab, esz, slots, i); /* slot i may now hold a shifted entry */
            n++;
        } else {
            i++;
        }
    }
    atomic_fetch_add_explicit(&u->stale_dropped, n, memory_order_relaxed);
    return n;
}

int glex_table_insert(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                      const void *payload, uint32_t len)
{
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    uint64_t *bm = glex_unit_bitmap(f, node, unit);
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t slots = f->p.table_slots, esz = f->hdr->entry_size;
    uint32_t limit = glex_params_table_usable(&f->p);
    uint32_t probes = 0;
    if (len > f->p.inline_max)
        return glex_error(GLEX_EINVAL, "packet payload %u is out of range 0..%u", len,
                          f->p.inline_max);
    glex_lock(&u->lock);
    if (u->used >= limit && !sweep_stale(f, u, bm, tab)) { /* the caller parks, counts the stall */
        glex_unlock(&u->lock);
        return GLEX_EAGAIN;
    }
    uint32_t i = home_slot(key, slots);
    for (;; i = (i + 1) % slots) {
        probes++;
        if (!bit_get(bm, i))
            break;
        if (key_eq(entry(tab, esz, i)->key, key)) { /* never overwrite: sender retries */
            glex_unlock(&u->lock);
            atomic_fetch_add_explicit(&u->hash_probes, probes, memory_order_relaxed);
            return GLEX_EAGAIN;
        }
    }
    glex_pkt_hdr_t *e = entry(tab, esz, i);
    e->key = key;
    e->len = (uint16_t)len;
    if (len)
        memcpy(e + 1, payload, len);
    bit_set(bm, i);
    uint32_t used = ++u->used;
    glex_unlock(&u->lock);
    if (used > atomic_load_explicit(&u->table_high_water, memory_order_relaxed))
        atomic_store_explicit(&u->table_high_water, used, memory_order_relaxed);
    atomic_fetch_add_explicit(&u->packets_buffered, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&u->hash_probes, probes, memory_order_relaxed);
    return GLEX_OK;
}

/* remove slot i keeping every probe chain intact (backward shift) */
static void remove_slot(glex_unit_shm_t *u, uint64_t *bm, uint8_t *tab, uint32_t esz,
                        uint32_t slots, uint32_t i)
{
    uint32_t k = i;
    for (;;) {
        k = (k + 1) % slots;
        if (!bit_get(bm, k))
            break;
        uint32_t h = home_slot(entry(tab, esz, k)->key, slots);
        /* entry k may move to i only if its home is not in the cyclic range (i, k] */
        int stays = (i <= k) ? (h > i && h <= k) : (h > i || h <= k);
        if (stays)
            continue;
        memcpy(entry(tab, esz, i), entry(tab, esz, k), esz);
        i = k;
    }
    bit_clr(bm, i);
    u->used--;
}

int glex_table_take(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                    void *payload, uint32_t cap)
{
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    uint64_t *bm = glex_unit_bitmap(f, node, unit);
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t slots = f->p.table_slots, esz = f->hdr->entry_size, probes = 0;
    int len = -1;
    glex_lock(&u->lock);
    for (uint32_t i = home_slot(key, slots);; i = (i + 1) % slots) {
        probes++;
        if (!bit_get(bm, i))
            break;
        glex_pkt_hdr_t *e = entry(tab, esz, i);
        if (key_eq(e->key, key)) {
            len = e->len < cap ? e->len : (int)cap;
            memcpy(payload, e + 1, (size_t)len);
            remove_slot(u, bm, tab, esz, slots, i);
            break;
        }
    }
    glex_unlock(&u->lock);
    atomic_fetch_add_explicit(&u->hash_probes, probes, memory_order_relaxed);
    return len;
}

void glex_table_purge(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t job, uint32_t dvp)
{
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    uint64_t *bm = glex_unit_bitmap(f, node, unit);
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t slots = f->p.table_slots, esz = f->hdr->entry_size;
    glex_lock(&u->lock);
    for (uint32_t i = 0; i < slots;) {
        glex_pkt_hdr_t *e = entry(tab, esz, i);
        if (bit_get(bm, i) && ((e->key.hi >> 40) & 0xffu) == job && (e->key.lo & 0x7ffu) == dvp)
            remove_slot(u, bm, tab, esz, slots, i); /* slot i may now hold a shifted entry */
        else
            i++;
    }
    glex_unlock(&u->lock);
}

/* ---- unit RAM: guaranteed per-(JobID, VP) area + a shared pool ---- */

static uint64_t *pool_bitmap(glex_fabric_t *f, uint32_t unit)
{
    return glex_unit_bitmap(f, f->node, unit) + f->hdr->table_words;
}

static void note_ram(glex_unit_shm_t *u, int64_t delta)
{
    u->ram_used += (uint64_t)delta;
    if (u->ram_used > atomic_load_explicit(&u->ram_high_water, memory_order_relaxed))
        atomic_store_explicit(&u->ram_high_water, u->ram_used, memory_order_relaxed);
}

/* first run of n free pages in the pool, or -1 */
static int64_t find_run(const uint64_t *bm, uint32_t npages, uint32_t n)
{
    uint32_t run = 0;
    for (uint32_t i = 0; i < npages; i++) {
        run = bit_get(bm, i) ? 0 : run + 1;
        if (run == n)
            return (int64_t)i + 1 - n;
    }
    return -1;
}

void glex_ram_acquire(glex_fabric_t *f, uint32_t unit, uint32_t job, uint32_t vp, uint64_t want,
                      glex_area_t *a)
{
    glex_shm_header_t *h = f->hdr;
    glex_unit_shm_t *u = glex_unit_shm(f, f->node, unit);
    uint32_t guar_bytes = h->guar_pages * GLEX_PAGE;
    uint32_t pool_pages = h->ram_pages - h->pool_first_page;
    a->pool = 0;
    a->off = ((job / f->p.units) * f->p.vps_per_node + vp) * guar_bytes;
    a->bytes = guar_bytes;
    if (want > guar_bytes && pool_pages >= 2) {
        uint64_t need = (want + GLEX_PAGE - 1) / GLEX_PAGE;
        uint32_t n = (uint32_t)(need < pool_pages / 2 ? need : pool_pages / 2);
        uint64_t *bm = pool_bitmap(f, unit);
        glex_lock(&u->lock);
        for (; n > h->guar_pages; n /= 2) {
            int64_t at = find_run(bm, pool_pages, n);
            if (at >= 0) {
                for (uint32_t i = 0; i < n; i++)
                    bit_set(bm, (uint32_t)at + i);
                a->pool = 1;
                a->off = (h->pool_first_page + (uint32_t)at) * GLEX_PAGE;
                a->bytes = n * GLEX_PAGE;
                break;
            }
        }
        note_ram(u, a->bytes);
        glex_unlock(&u->lock);
        return;
    }
    glex_lock(&u->lock);
    note_ram(u, a->bytes);
    glex_unlock(&u->lock);
}

void glex_ram_release(glex_fabric_t *f, uint32_t unit, const glex_area_t *a)
{
    glex_unit_shm_t *u = glex_unit_shm(f, f->node, unit);
    glex_lock(&u->lock);
    if (a->pool) {
        uint64_t *bm = pool_bitmap(f, unit);
        uint32_t first = a->off / GLEX_PAGE - f->hdr->pool_first_page;
        for (uint32_t i = 0; i < a->bytes / GLEX_PAGE; i++)
            bit_clr(bm, first + i);
    }
    note_ram(u, -(int64_t)a->bytes);
    glex_unlock(&u->lock);
}
