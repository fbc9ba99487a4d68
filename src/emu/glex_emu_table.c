/* glex_emu_table.c - the trigger unit's packet buffer: a hash table keyed by
 * JobID+NodeID+VP+SeqID (buckets of slots claimed without a lock, 10% of the
 * slots kept free), and the unit RAM that backs pulsed credits. */
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

static inline int bit_get(const uint64_t *bm, uint32_t i) { return (bm[i >> 6] >> (i & 63)) & 1; }
static inline void bit_set(uint64_t *bm, uint32_t i) { bm[i >> 6] |= 1ull << (i & 63); }
static inline void bit_clr(uint64_t *bm, uint32_t i) { bm[i >> 6] &= ~(1ull << (i & 63)); }
static inline int key_eq(glex_key_t a, glex_key_t b) { return a.hi == b.hi && a.lo == b.lo; }

/* ---- the packet buffer, without a lock ----
 * Slots are grouped in buckets of GLEX_BUCKET.  A packet goes to a free slot
 * of its key's home bucket, else of one of the next GLEX_REACH - 1 buckets,
 * else of GLEX_REACH buckets found by a second hash (probe_bucket; it is
 * then "displaced", and the home bucket's over count says so).  A slot
 * is claimed by compare-and-swap of its state byte (EMPTY -> BUSY), written,
 * then published (FULL, release order), so senders never take a lock and a
 * small packet touches the one or two cache lines of its slot.  Only the
 * owning node's engine takes packets out (BUSY while it copies, then EMPTY);
 * a lookup reads the home bucket, and the next ones only while the home's
 * over count is not zero.  No chain runs through a slot, so a slot is simply
 * emptied: no tombstones, no shifting. */

static inline uint32_t nbuckets(const glex_fabric_t *f)
{
    return (f->p.table_slots + GLEX_BUCKET - 1) / GLEX_BUCKET;
}

static inline uint32_t key_bucket(uint64_t hi, uint32_t lo, uint32_t nb)
{
    return (uint32_t)(mix(hi ^ ((uint64_t)lo << 48) ^ ((uint64_t)lo >> 16)) % nb);
}

/* the JobID's generation in a key (glex_make_key): one a call under a lease */
#define KEY_GEN_BITS (0xffffull << 48)

/* a key's fields (glex_make_key): JobID, its generation, both as the tag of
 * the task they belong to, and the destination VP */
static inline uint32_t key_job(glex_key_t k) { return (uint32_t)(k.hi >> 40) & 0xffu; }
static inline uint32_t key_gen(glex_key_t k) { return (uint32_t)(k.hi >> 48); }
static inline uint32_t key_tag(glex_key_t k) { return (uint32_t)(k.hi >> 40); }
static inline uint32_t key_dvp(glex_key_t k) { return (uint32_t)k.lo & 0x7ffu; }

/* A key's home bucket, hashed from the key without the generation, so a
 * call's packets land where the same call's did last time: their lines stay
 * in cache, and a run's first calls do not each reach new pages of every
 * unit's buffer (2 processes, 8-byte allreduce, in turn: calls 2-100 took
 * 10.9-11.7 us each on average with the generation hashed, 0.44-0.52
 * without). */
static inline uint32_t home_bucket(glex_key_t k, uint32_t nb)
{
    return key_bucket(k.hi & ~KEY_GEN_BITS, k.lo, nb);
}

/* The buckets a packet may lie in, in the order they are tried: its home
 * and the next GLEX_REACH - 1, then GLEX_REACH from a bucket hashed with
 * the generation too (alt, worked out at the first need).  A root that runs
 * calls ahead of a slow member (a bcast, processes sharing a core) would
 * fill the home's reach with packets that differ only in their generation,
 * and so block every other key homed there; the second run of buckets
 * spreads those over the whole buffer. */
#define PROBE_BUCKETS (2u * GLEX_REACH)
static inline uint32_t probe_bucket(glex_key_t k, uint32_t home, uint32_t r, uint32_t nb,
                                    int64_t *alt)
{
    if (r < GLEX_REACH) { /* a compare, not a division, but past the end */
        uint32_t b = home + r;
        return b < nb ? b : b % nb;
    }
    if (*alt < 0) { /* not the home's own reach again */
        uint32_t a = key_bucket(k.hi, k.lo, nb);
        *alt = (a + nb - home) % nb < GLEX_REACH ? (a + GLEX_REACH) % nb : a;
    }
    return (uint32_t)(*alt + r - GLEX_REACH) % nb;
}

static inline glex_pkt_hdr_t *entry(uint8_t *tab, uint32_t esz, uint32_t i)
{
    return (glex_pkt_hdr_t *)(tab + (size_t)i * esz);
}

/* per-bucket count of packets homed there but kept in a later bucket (one
 * byte a bucket, in the unit's bitmap area) */
static inline _Atomic uint8_t *over_counts(glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    return (_Atomic uint8_t *)glex_unit_bitmap(f, node, unit);
}

/* the slots of bucket b: [*lo, *hi) */
static inline void bucket_slots(const glex_fabric_t *f, uint32_t b, uint32_t *lo, uint32_t *hi)
{
    *lo = b * GLEX_BUCKET;
    *hi = *lo + GLEX_BUCKET < f->p.table_slots ? *lo + GLEX_BUCKET : f->p.table_slots;
}

/* empty a slot the caller owns (state BUSY); home is the bucket its key hashes to */
static void release_slot(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_pkt_hdr_t *e,
                         uint32_t bucket, uint32_t home)
{
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    uint8_t probes = e->probes;
    if (bucket != home)
        atomic_fetch_sub_explicit(&over_counts(f, node, unit)[home], 1, memory_order_relaxed);
    atomic_store_explicit(&e->state, GLEX_SLOT_EMPTY, memory_order_release);
    /* counted as it leaves, on the unit's third line (glex_unit_shm_t): the
     * slot is free once counted (release: after it is EMPTY) */
    atomic_fetch_add_explicit(&u->packets_left, 1, memory_order_release);
    atomic_fetch_add_explicit(&u->probes_left, probes, memory_order_relaxed);
}

/* Empty every slot holding a packet for which drop(f, key, arg) says so;
 * returns how many went. */
static uint32_t drop_where(glex_fabric_t *f, uint32_t node, uint32_t unit,
                           int (*drop)(const glex_fabric_t *, glex_key_t, const void *),
                           const void *arg)
{
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t esz = f->hdr->entry_size, nb = nbuckets(f), n = 0;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t lo, hi;
        bucket_slots(f, b, &lo, &hi);
        for (uint32_t i = lo; i < hi; i++) {
            glex_pkt_hdr_t *e = entry(tab, esz, i);
            uint8_t st = GLEX_SLOT_FULL;
            if (atomic_load_explicit(&e->state, memory_order_acquire) != GLEX_SLOT_FULL ||
                !drop(f, e->key, arg) ||
                !atomic_compare_exchange_strong(&e->state, &st, GLEX_SLOT_BUSY))
                continue;
            glex_ctrl_t c; /* a READY of eager data: its pages too */
            if ((e->key.lo >> 11 & 3u) == GLEX_PKT_READY && e->len == sizeof c) {
                memcpy(&c, e + 1, sizeof c);
                glex_eager_return(f, node, unit, &c);
            }
            release_slot(f, node, unit, e, b, home_bucket(e->key, nb));
            n++;
        }
    }
    return n;
}

/* a packet of an earlier use of its JobID (left by a failed task: the
 * generation in its key is not the JobID's current one); a leased JobID's
 * tasks each have their own generation, so none of theirs is stale */
static int stale(const glex_fabric_t *f, glex_key_t k, const void *arg)
{
    (void)arg;
    uint32_t job = key_job(k);
    return key_gen(k) != atomic_load(&f->hdr->jobs[job].gen) &&
           !__atomic_load_n(&f->hdr->jobs[job].lease, __ATOMIC_RELAXED);
}

/* Drop stale packets; called by a sender that found the buffer full. */
static uint32_t sweep_stale(glex_fabric_t *f, uint32_t node, uint32_t unit)
{
    if (f->nhosts > 1) /* JobIDs are agreed at node 0: this segment's generations lag */
        return 0;
    uint32_t n = drop_where(f, node, unit, stale, NULL);
    atomic_fetch_add_explicit(&glex_unit_shm(f, node, unit)->stale_dropped, n,
                              memory_order_relaxed);
    return n;
}

/* GLEX_VTIME: a slot's last 8 bytes hold its packet's virtual send time */
static inline uint64_t *slot_vt(glex_pkt_hdr_t *e, uint32_t esz)
{
    return (uint64_t *)(void *)((uint8_t *)e + esz - sizeof(uint64_t));
}

/* A packet for a call its receiver has not reached: its generation is not
 * that of the receiving VP's task of its JobID.  A member that needs nobody
 * (a leaf of a reduce) runs calls ahead of a slow subtree, and its packets
 * (one key but for the generation, so one home) would pack the buckets
 * around their home and fill the buffer, until the packet the receiver
 * waits for finds no room in its own two runs (a binomial reduce at 9
 * processes: the root waited for a slow child whose packet waited for room,
 * for ever).  So an early packet lies in its home bucket or else in its
 * second run (hashed with the generation: spread over the buffer), and
 * early packets take at most EARLY_SHARE of the usable slots and EARLY_OVER
 * displaced packets of a home: the rest is kept for the calls receivers
 * run.  Looked at only when the home bucket is full or the buffer that
 * full: no line of the receiver's VP is read on the common path. */
#define EARLY_SHARE(usable) ((usable) - (usable) / 4u)
#define EARLY_OVER 192u
static int early(const glex_fabric_t *f, uint32_t node, glex_key_t k)
{
    uint32_t dvp = key_dvp(k);
    if (dvp >= f->p.vps_per_node)
        return 0;
    return atomic_load_explicit(&glex_vp_shm(f, node, dvp)->coll_gen[key_job(k)],
                                memory_order_acquire) != key_gen(k);
}

/* early(), read at the first need of an insert and kept (*seen: -1 until then) */
static int early_once(const glex_fabric_t *f, uint32_t node, glex_key_t k, int *seen)
{
    if (*seen < 0)
        *seen = early(f, node, k);
    return *seen;
}

/* The slots in use after a claim that made the count claimed: by the count
 * of packets gone this process saw last, a bound from above that costs no
 * look at the owner's line; exact (both counts read again, the packets
 * gone first: never more than the claims) when the bound reaches above, a
 * level the caller acts on.  2 ranks, 8 B, back to back, 200000 calls:
 * read again once in 80 inserts of a bcast or reduce, but every other one
 * of an allreduce or barrier (both send: the high-water mark is 2, and the
 * bound passes it at the second insert after a read). */
static uint32_t slots_used(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t claimed,
                           uint32_t above)
{
    _Atomic uint32_t *seen = &f->table_left_seen[(size_t)node * f->p.units + unit];
    uint32_t used = claimed - atomic_load_explicit(seen, memory_order_relaxed);
    if (used <= above)
        return used;
    uint64_t left;
    used = glex_unit_slots_used(glex_unit_shm(f, node, unit), &left);
    atomic_store_explicit(seen, (uint32_t)left, memory_order_relaxed);
    return used;
}

/* a claim given back (no room for it after all) */
static void unclaim(glex_unit_shm_t *u)
{
    atomic_fetch_sub_explicit(&u->claimed, 1, memory_order_relaxed);
}

int glex_table_insert_vt(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                         const void *payload, uint32_t len, uint64_t vt)
{
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t esz = f->hdr->entry_size, nb = nbuckets(f);
    uint32_t limit = glex_params_table_usable(&f->p), probes = 0;
    if (len > f->p.inline_max)
        return glex_error(GLEX_EINVAL, "packet payload %u is out of range 0..%u", len,
                          f->p.inline_max);
    /* the line of the slot it will most likely claim (its home bucket's
     * first, which the receiver emptied last and does not poll) is asked
     * for now: its request overlaps the count's below instead of following
     * it.  2 ranks, 8 B, 7 runs in turn: barrier 0.62 -> 0.53 us, reduce
     * 0.59 -> 0.56, bcast and allreduce the same.  (Asking so for the CP
     * counter's line too lost 20%: the receiver polls it, and took it
     * back before the count.) */
    uint32_t home = home_bucket(key, nb);
    glex_prefetch_write(entry(tab, esz, home * GLEX_BUCKET));
    /* the levels acted on: the early share (below the limit) and the
     * high-water mark, read while this line is the sender's own */
    uint64_t high = atomic_load_explicit(&u->table_high_water, memory_order_relaxed);
    uint32_t above = EARLY_SHARE(limit) < high ? EARLY_SHARE(limit) : (uint32_t)high;
    uint32_t claimed = atomic_fetch_add_explicit(&u->claimed, 1, memory_order_relaxed) + 1;
    uint32_t used = slots_used(f, node, unit, claimed, above);
    if (used > limit) {
        unclaim(u);
        if (!sweep_stale(f, node, unit))
            return GLEX_EAGAIN; /* the caller parks, counts the stall */
        claimed = atomic_fetch_add_explicit(&u->claimed, 1, memory_order_relaxed) + 1;
        used = slots_used(f, node, unit, claimed, 0);
    }
    int is_early = -1; /* not looked at yet */
    if (used > EARLY_SHARE(limit) && early_once(f, node, key, &is_early)) {
        unclaim(u);
        return GLEX_EAGAIN; /* the caller parks, counts the stall */
    }
    if (used > high)
        atomic_store_explicit(&u->table_high_water, used, memory_order_relaxed);
    _Atomic uint8_t *over = over_counts(f, node, unit);
    /* a packet of the same key still here (the sender's previous task's, not
     * consumed yet): never overwrite; the sender retries once the receiver
     * takes that packet and rings it (the waiter mark) */
    int look_on;
    glex_pkt_hdr_t *slot;
    uint32_t at;
retry:
    look_on = 1;
    slot = NULL;
    at = home;
    int64_t alt = -1;
    for (uint32_t r = 0; r < PROBE_BUCKETS && (look_on || !slot); r++) {
        int claim = 1; /* an early packet takes no slot of its home's reach */
        if (r > 0 && r < GLEX_REACH && !slot)
            claim = !early_once(f, node, key, &is_early);
        uint32_t b = probe_bucket(key, home, r, nb, &alt), lo, hi;
        bucket_slots(f, b, &lo, &hi);
        for (uint32_t i = lo; i < hi; i++) {
            glex_pkt_hdr_t *e = entry(tab, esz, i);
            probes++;
            uint8_t st = GLEX_SLOT_EMPTY;
            /* the first slot that may be claimed is claimed by CAS alone,
             * not read first: one request for its line, which the receiver
             * emptying it last holds (a read, then the CAS, made two); a
             * failed CAS leaves the slot's state in st */
            if (!slot && claim) {
                if (atomic_compare_exchange_strong(&e->state, &st, GLEX_SLOT_BUSY)) {
                    slot = e;
                    at = b;
                    continue;
                }
            } else {
                st = atomic_load_explicit(&e->state, memory_order_acquire);
            }
            if (st == GLEX_SLOT_FULL && key_eq(e->key, key)) {
                if (slot)
                    atomic_store_explicit(&slot->state, GLEX_SLOT_EMPTY, memory_order_release);
                atomic_store(&e->waiter, 1);
                atomic_thread_fence(memory_order_seq_cst);
                if (atomic_load(&e->state) != GLEX_SLOT_FULL || !key_eq(e->key, key))
                    goto retry; /* taken meanwhile: the mark may have come too late */
                unclaim(u);
                atomic_fetch_add_explicit(&u->probes_failed, probes, memory_order_relaxed);
                return GLEX_EAGAIN;
            }
        }
        /* keys homed here may lie further on only while the over count says so */
        if (r == 0)
            look_on = atomic_load_explicit(&over[home], memory_order_acquire) != 0;
    }
    /* a displaced packet counts in its home's over count, a byte: at 255
     * the home takes no more displaced packets until one is taken (an
     * early packet: at EARLY_OVER) */
    if (slot && at != home) {
        uint8_t o = atomic_load_explicit(&over[home], memory_order_relaxed);
        do {
            if (o == UINT8_MAX || (o >= EARLY_OVER && early_once(f, node, key, &is_early))) {
                atomic_store_explicit(&slot->state, GLEX_SLOT_EMPTY, memory_order_release);
                slot = NULL;
                break;
            }
        } while (!atomic_compare_exchange_weak_explicit(&over[home], &o, (uint8_t)(o + 1),
                                                        memory_order_relaxed,
                                                        memory_order_relaxed));
    }
    if (!slot) { /* every slot within reach is taken: the sender retries later */
        unclaim(u);
        atomic_fetch_add_explicit(&u->probes_failed, probes, memory_order_relaxed);
        return GLEX_EAGAIN;
    }
    slot->key = key;
    slot->len = (uint16_t)len;
    slot->probes = (uint8_t)(probes < UINT8_MAX ? probes : UINT8_MAX);
    atomic_store_explicit(&slot->waiter, 0, memory_order_relaxed);
    if (len)
        glex_copy(slot + 1, payload, len);
    if (f->p.vtime)
        *slot_vt(slot, esz) = vt;
    atomic_store_explicit(&slot->state, GLEX_SLOT_FULL, memory_order_release);
    return GLEX_OK;
}

static int take(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key, void *payload,
                uint32_t cap, uint64_t *vt, int present);

int glex_table_take_vt(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                       void *payload, uint32_t cap, uint64_t *vt)
{
    return take(f, node, unit, key, payload, cap, vt, 0);
}

int glex_table_take_present(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key,
                            void *payload, uint32_t cap, uint64_t *vt)
{
    return take(f, node, unit, key, payload, cap, vt, 1);
}

/* present: the caller knows the packet is in (counted on its CP counter),
 * so each slot looked at is asked for in a state to write before it is
 * read: the claim then costs no second request for the line its sender
 * wrote last */
static int take(glex_fabric_t *f, uint32_t node, uint32_t unit, glex_key_t key, void *payload,
                uint32_t cap, uint64_t *vt, int present)
{
    uint8_t *tab = glex_unit_table(f, node, unit);
    uint32_t esz = f->hdr->entry_size, nb = nbuckets(f);
    uint32_t home = home_bucket(key, nb);
    int look_on = 1;
    int64_t alt = -1;
    for (uint32_t r = 0; r < PROBE_BUCKETS && look_on; r++) {
        uint32_t b = probe_bucket(key, home, r, nb, &alt), lo, hi;
        bucket_slots(f, b, &lo, &hi);
        for (uint32_t i = lo; i < hi; i++) {
            glex_pkt_hdr_t *e = entry(tab, esz, i);
            uint8_t st = GLEX_SLOT_FULL;
            if (present)
                glex_prefetch_write(e);
            if (atomic_load_explicit(&e->state, memory_order_acquire) != GLEX_SLOT_FULL ||
                !key_eq(e->key, key) ||
                !atomic_compare_exchange_strong(&e->state, &st, GLEX_SLOT_BUSY))
                continue;
            int len = e->len < cap ? e->len : (int)cap;
            glex_copy(payload, e + 1, (size_t)len);
            if (vt)
                *vt = f->p.vtime ? *slot_vt(e, esz) : 0;
            int waiter = atomic_exchange(&e->waiter, 0);
            release_slot(f, node, unit, e, b, home);
            uint32_t sender = (uint32_t)(key.hi >> 16) & 0xffffffu;
            if (waiter && sender < f->nnodes) /* its sender waits to insert the same key again */
                glex_ring(f, sender);
            return len;
        }
        if (r == 0)
            look_on = atomic_load_explicit(&over_counts(f, node, unit)[home],
                                           memory_order_acquire) != 0;
    }
    return -1;
}

/* a packet of task tag (JobID | generation << 8) addressed to VP arg[1] */
static int of_task(const glex_fabric_t *f, glex_key_t k, const void *arg)
{
    (void)f;
    const uint32_t *a = arg;
    return key_tag(k) == a[0] && key_dvp(k) == a[1];
}

void glex_table_purge(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t tag, uint32_t dvp)
{
    const uint32_t arg[2] = { tag, dvp };
    drop_where(f, node, unit, of_task, arg);
}

/* ---- unit RAM: guaranteed per-(JobID, VP) area + a shared pool ---- */

static uint64_t *pool_bitmap(glex_fabric_t *f, uint32_t unit)
{
    return glex_unit_bitmap(f, f->node, unit) + f->hdr->table_words;
}

static void note_ram(glex_unit_shm_t *u, int64_t delta)
{
    uint64_t now = atomic_fetch_add_explicit(&u->ram_used, (uint64_t)delta, memory_order_relaxed) +
                   (uint64_t)delta;
    uint64_t hw = atomic_load_explicit(&u->ram_high_water, memory_order_relaxed);
    while (now > hw && !atomic_compare_exchange_weak_explicit(&u->ram_high_water, &hw, now,
                                                             memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
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
                      glex_ram_share_t share, glex_area_t *a)
{
    glex_shm_header_t *h = f->hdr;
    glex_unit_shm_t *u = glex_unit_shm(f, f->node, unit);
    uint32_t guar_bytes = h->guar_pages * GLEX_PAGE;
    uint32_t pool_pages = h->eager_first_page - h->pool_first_page;
    a->pool = 0;
    a->off = ((job / f->p.units) * f->p.vps_per_node + vp) * guar_bytes;
    a->bytes = guar_bytes;
    if (want > guar_bytes && pool_pages >= 2) {
        uint64_t need = (want + GLEX_PAGE - 1) / GLEX_PAGE;
        uint32_t cap = share == GLEX_RAM_ALONE ? pool_pages : pool_pages / 2;
        uint32_t n = (uint32_t)(need < cap ? need : cap);
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

/* The eager pages' high water, on the senders' line of the unit with the
 * pages' bits, not with the RAM lent to tasks on the owner's line: a sender
 * that counted its pages there took that line from the owner, and the
 * owner took it back at the release (2 ranks, 64-256 B, in turn: reduce
 * and bcast 11-17% faster without).  The two areas of the RAM are apart,
 * and so are their high waters (glex-info: ram_hw_kb, eager_hw_kb). */
static void note_eager(glex_unit_shm_t *u, uint64_t bits)
{
    uint32_t now = (uint32_t)__builtin_popcountll(bits) +
                   atomic_load_explicit(&u->eager_remote, memory_order_relaxed);
    uint16_t hw = atomic_load_explicit(&u->eager_high_water, memory_order_relaxed);
    while (now > hw && !atomic_compare_exchange_weak_explicit(&u->eager_high_water, &hw,
                                                             (uint16_t)now, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

static int give_back(glex_unit_shm_t *u);

/* pages held back at most (of GLEX_EAGER_PAGES), and a message's at most
 * that may be held */
#define EAGER_HELD 8u
#define EAGER_HELD_MSG 2u

int64_t glex_eager_acquire(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t bytes)
{
    const glex_shm_header_t *h = f->hdr;
    uint32_t n = (bytes + GLEX_PAGE - 1) / GLEX_PAGE, pages = GLEX_EAGER_LOCAL(f);
    if (!pages || !n || n > pages)
        return -1;
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    /* Small messages (whose pages the owner may hold back) from the bottom,
     * bigger ones from the top: held-back pages among them would cut the
     * free pages into runs too short for a big message even once given
     * back (7 held small pages, then two of 30 pages in 64: the second
     * asked for credit) */
    int top = n > EAGER_HELD_MSG;
    int64_t at = glex_pages_claim(&u->eager_bits, n, pages, top);
    if (at < 0 && give_back(u)) /* the owner's held-back pages first */
        at = glex_pages_claim(&u->eager_bits, n, pages, top);
    if (at < 0) {
        atomic_fetch_add_explicit(&u->eager_asked, 1, memory_order_relaxed);
        return -1;
    }
    atomic_fetch_add_explicit(&u->eager_taken, 1, memory_order_relaxed);
    note_eager(u, atomic_load_explicit(&u->eager_bits, memory_order_relaxed));
    return (int64_t)(h->eager_first_page + (uint64_t)at) * GLEX_PAGE;
}

void glex_eager_landed(glex_fabric_t *f, uint32_t unit, uint32_t bytes)
{
    glex_unit_shm_t *u = glex_unit_shm(f, f->node, unit);
    atomic_fetch_add_explicit(&u->eager_taken, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&u->eager_remote, (uint16_t)((bytes + GLEX_PAGE - 1) / GLEX_PAGE),
                              memory_order_relaxed);
    note_eager(u, atomic_load_explicit(&u->eager_bits, memory_order_relaxed));
}

void glex_eager_release(glex_fabric_t *f, uint32_t node, uint32_t unit, uint32_t ram_off,
                        uint32_t bytes)
{
    uint32_t n = (bytes + GLEX_PAGE - 1) / GLEX_PAGE, page = ram_off / GLEX_PAGE -
                                                              f->hdr->eager_first_page;
    glex_unit_shm_t *u = glex_unit_shm(f, node, unit);
    if (!n)
        return;
    if (page >= GLEX_EAGER_LOCAL(f)) { /* another host's sender's: back to it */
        atomic_fetch_sub_explicit(&u->eager_remote, (uint16_t)n, memory_order_relaxed);
        if (node == f->node)
            glex_wire_eager_freed(f, unit, page, n);
        return;
    }
    uint64_t mask = glex_page_mask(n, page);
    if (node == f->node) {
        /* The owner gives back a few small messages' pages at once: each
         * give-back takes the pages' line from the senders, whose next
         * claim (and slot claim count, on the same line) takes it back.
         * At most EAGER_HELD pages wait so, on the line the owner counts
         * packets leaving on, none past a sleep of this node's
         * (glex_eager_give_back); a sender that finds no room takes them
         * back itself (glex_eager_acquire), as another host's senders'
         * pages go back in batches.  2 ranks,
         * medians of 5-7 in turn: 512 B - 2 KiB 2-16% faster (reduce 1
         * KiB 0.76-0.87 -> 0.58-0.64 us), 64-256 B within 4%
         * (bench/results/2026-12-03/NOTES.md, third session). */
        uint64_t held = atomic_fetch_or_explicit(&u->eager_held, mask, memory_order_relaxed) | mask;
        if (n <= EAGER_HELD_MSG && (uint32_t)__builtin_popcountll(held) < EAGER_HELD)
            return;
        mask = atomic_exchange_explicit(&u->eager_held, 0, memory_order_relaxed);
        if (!mask)
            return;
    }
    atomic_fetch_and_explicit(&u->eager_bits, ~mask, memory_order_release);
}

/* the pages held back at unit u given back; 1 if there were any */
static int give_back(glex_unit_shm_t *u)
{
    if (!atomic_load_explicit(&u->eager_held, memory_order_relaxed))
        return 0;
    uint64_t mask = atomic_exchange_explicit(&u->eager_held, 0, memory_order_relaxed);
    atomic_fetch_and_explicit(&u->eager_bits, ~mask, memory_order_release);
    return mask != 0;
}

void glex_eager_give_back(glex_fabric_t *f)
{
    for (uint32_t unit = 0; f->node < f->nnodes && unit < f->p.units; unit++)
        give_back(glex_unit_shm(f, f->node, unit));
}

int glex_eager_area(const glex_fabric_t *f, uint32_t ram_off)
{
    return f->hdr->eager_pages && ram_off / GLEX_PAGE >= f->hdr->eager_first_page;
}

int glex_eager_return(glex_fabric_t *f, uint32_t node, uint32_t unit, const glex_ctrl_t *c)
{
    if (c->dst || !glex_eager_area(f, c->ram_off))
        return 0;
    glex_eager_release(f, node, unit, c->ram_off, c->len);
    return 1;
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
