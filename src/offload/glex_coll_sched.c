/* glex_coll_sched.c - descriptor emitters and tree shapes used by every
 * algorithm.  Emitters fill a template: JobID and buffer addresses are
 * patched at post time. */
#include "glex_coll_internal.h"

#include <stdlib.h>
#include <string.h>

static glex_desc_t *emit(glex_sched_t *s)
{
    if (s->err)
        return NULL;
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        glex_desc_t *d = realloc(s->d, sizeof *d * cap);
        if (!d) {
            s->err = glex_error(GLEX_ENOMEM, "out of memory compiling a schedule");
            return NULL;
        }
        s->d = d;
        s->cap = cap;
    }
    glex_desc_t *d = &s->d[s->n++];
    memset(d, 0, sizeof *d);
    d->kind = GLEX_DESC_COLL;
    d->c = 1;
    d->op = (uint8_t)(s->a->kind == GLEX_COLL_BARRIER ? GLEX_OP_SUM : s->a->op);
    d->type = (uint8_t)(s->a->kind == GLEX_COLL_BARRIER ? GLEX_INT32 : s->a->type);
    d->source_vp = (uint16_t)glex_vp_index(s->g->vp);
    return d;
}

static void set_dest(const glex_sched_t *s, glex_desc_t *d, uint32_t peer, uint32_t seq)
{
    d->cp = 1;
    d->dest_id = s->g->nodes[peer];
    d->dest_vp = s->g->vps[peer];
    d->seq_id = (uint8_t)(seq % GLEX_MAX_SEQ);
}

static void set_src(const glex_sched_t *s, glex_desc_t *d, uint32_t peer, uint32_t seq, bool red)
{
    d->branch = 1;
    d->recv_id = s->g->nodes[peer];
    d->recv_vp = s->g->vps[peer];
    d->cp_count = (uint8_t)(seq % GLEX_MAX_SEQ);
    d->reduce_flag = red;
}

void glex_sc_send(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_dest(s, d, peer, seq);
    d->local_addr = ref;
    d->send_count = cnt;
}

void glex_sc_recv(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt, bool red)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_src(s, d, peer, seq, red);
    d->recv_addr = ref;
    d->count = cnt;
}

void glex_sc_xchg(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t sref, uint64_t scnt,
             uint64_t rref, uint64_t rcnt, bool red)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_dest(s, d, peer, seq);
    set_src(s, d, peer, seq, red);
    d->local_addr = sref;
    d->send_count = scnt;
    d->recv_addr = rref;
    d->count = rcnt;
}

void glex_sc_fwd(glex_sched_t *s, uint32_t src, uint32_t rseq, uint32_t dst, uint32_t sseq,
            uint64_t ref, uint64_t cnt, bool red)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_src(s, d, src, rseq, red);
    set_dest(s, d, dst, sseq);
    d->swap_remote_data = 1;
    d->local_addr = d->recv_addr = ref;
    d->count = d->send_count = cnt;
}

bool glex_sc_many_fits(const glex_sched_t *s, uint64_t cnt, int k)
{
    return k > 1 && (uint32_t)k <= GLEX_MAX_BRANCH &&
           cnt * s->es <= glex_fabric_params(s->g->f)->inline_max;
}

void glex_sc_combine_many(glex_sched_t *s, const uint32_t *peers, const uint32_t *seqs, int k,
                     uint64_t ref, uint64_t cnt, int64_t dst, uint32_t dseq)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_src(s, d, peers[0], seqs[0], true); /* the first source, for diagnostics */
    d->branch = (uint8_t)k;
    glex_src_t *src = glex_desc_srcs(d);
    for (int i = 0; i < k; i++) {
        src[i].node = s->g->nodes[peers[i]];
        src[i].vp = s->g->vps[peers[i]];
        src[i].seq = (uint8_t)(seqs[i] % GLEX_MAX_SEQ);
    }
    d->recv_addr = ref;
    d->count = cnt;
    if (dst >= 0) {
        set_dest(s, d, (uint32_t)dst, dseq);
        d->swap_remote_data = 1;
        d->local_addr = ref;
        d->send_count = cnt;
    }
}

void glex_sc_send_many(glex_sched_t *s, const uint32_t *peers, uint32_t k, uint32_t seq,
                       uint64_t ref, uint64_t cnt, bool read)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    set_dest(s, d, peers[0], seq); /* the first destination, for diagnostics */
    d->swap_remote_addr = read;
    if (k > 1) {
        d->fanout = (uint8_t)k;
        glex_src_t *dst = glex_desc_srcs(d);
        for (uint32_t i = 0; i < k; i++) {
            dst[i].node = s->g->nodes[peers[i]];
            dst[i].vp = s->g->vps[peers[i]];
            dst[i].seq = (uint8_t)(seq % GLEX_MAX_SEQ);
        }
    }
    d->local_addr = ref;
    d->send_count = cnt;
}

void glex_sc_read_recv(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt)
{
    glex_sc_recv(s, peer, seq, ref, cnt, false);
    if (!s->err)
        s->d[s->n - 1].swap_remote_addr = 1;
}

void glex_sc_read_part(glex_sched_t *s, uint32_t peer, uint32_t seq, uint64_t ref, uint64_t cnt,
                       uint64_t off, uint64_t total, bool red)
{
    glex_sc_recv(s, peer, seq, ref, cnt, red);
    if (s->err)
        return;
    glex_desc_t *d = &s->d[s->n - 1];
    d->swap_remote_addr = 1;
    d->length = total;
    d->remote_addr = off;
}

void glex_sc_local(glex_sched_t *s, uint64_t sref, uint64_t dref, uint64_t cnt, bool red)
{
    glex_desc_t *d = emit(s);
    if (!d)
        return;
    d->swap_local_vp = 1;
    d->reduce_flag = red;
    d->local_addr = sref;
    d->recv_addr = dref;
    d->count = cnt;
}

void glex_sc_operand(glex_sched_t *s, uint64_t ref)
{
    if (s->err || !s->n)
        return;
    glex_desc_t *d = &s->d[s->n - 1];
    d->swap_local_data = 1;
    d->operand_addr = ref;
}

uint64_t glex_block_at(uint64_t cnt, uint32_t n, uint32_t i)
{
    uint64_t q = cnt / n, rem = cnt % n;
    return i * q + (i < rem ? i : rem);
}

void glex_sc_need_tmp(glex_sched_t *s, uint64_t bytes)
{
    if (bytes > s->tmp_bytes)
        s->tmp_bytes = bytes;
}

int glex_binomial(uint32_t v, uint32_t n, int64_t *parent, uint32_t *children, uint32_t *bits)
{
    int nk = 0;
    *parent = -1;
    for (uint32_t mask = 1, b = 0; mask < n; mask <<= 1, b++) {
        if (v & mask) {
            *parent = v - mask;
            break;
        }
        if (v + mask < n) {
            children[nk] = v + mask;
            bits[nk++] = b;
        }
    }
    return nk;
}

void glex_inorder_tree(uint32_t m, uint32_t p, int64_t *parent, int64_t kids[2])
{
    uint32_t lo = 0, hi = m; /* [lo, hi) */
    *parent = -1;
    for (;;) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mid == p) {
            uint32_t l = lo + (mid - lo) / 2, r = mid + 1 + (hi - mid - 1) / 2;
            kids[0] = mid > lo ? (int64_t)l : -1;
            kids[1] = hi > mid + 1 ? (int64_t)r : -1;
            return;
        }
        *parent = mid;
        if (p < mid)
            hi = mid;
        else
            lo = mid + 1;
    }
}

void glex_segments(const glex_sched_t *s, uint64_t cnt, uint64_t *nseg, uint64_t *seg)
{
    uint64_t per = s->seg_bytes / s->es;
    if (per == 0)
        per = 1;
    if (cnt <= per) {
        *nseg = 1;
        *seg = cnt;
        return;
    }
    *seg = per;
    *nseg = (cnt + per - 1) / per;
}
