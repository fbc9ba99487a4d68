/* glex_emu_desc.c - range checks of every descriptor field at post time.  A bad
 * value is never truncated: the post fails and the message names the field,
 * the value and the allowed range. */
#include "glex_emu_internal.h"

#define CHECK(cond, field, val, lo, hi)                                                     \
    do {                                                                                    \
        if (!(cond))                                                                        \
            return glex_error(GLEX_EINVAL,                                                  \
                              "descriptor %zu: field %s=%llu is out of range %llu..%llu",   \
                              idx, field, (unsigned long long)(val), (unsigned long long)(lo), \
                              (unsigned long long)(hi));                                    \
    } while (0)

static inline int in_range(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v >= lo && v <= hi;
}

#define RANGE(field, lo, hi) CHECK(in_range(d->field, lo, hi), #field, d->field, lo, hi)
#define BIT(field) RANGE(field, 0, 1)
#define NONNULL(field, what)                                                               \
    do {                                                                                   \
        if (!d->field)                                                                     \
            return glex_error(GLEX_EINVAL, "descriptor %zu: field " #field                  \
                              " is null with %s; allowed a valid address",                  \
                              idx, what);                                                   \
    } while (0)

int glex_desc_validate(const glex_fabric_t *f, uint32_t vp, const glex_desc_t *d, size_t idx)
{
    const glex_params_t *p = &f->p;
    RANGE(kind, GLEX_DESC_MP, GLEX_DESC_COLL);
    BIT(c); BIT(ch); BIT(ct); BIT(cp); BIT(reduce_flag); BIT(coll_end_flag);
    BIT(swap_local_data); BIT(swap_local_vp); BIT(swap_remote_data); BIT(swap_remote_addr);
    RANGE(seq_id, 0, GLEX_MAX_SEQ - 1);
    RANGE(cp_count, 0, GLEX_MAX_SEQ - 1);
    BIT(src_range);
    BIT(mcast);
    RANGE(quiet, 0, d->kind == GLEX_DESC_MP); /* MP only */
    RANGE(branch, 0, d->src_range ? GLEX_MAX_RANGE_BRANCH : GLEX_MAX_BRANCH);
    CHECK(d->source_vp == vp, "source_vp", d->source_vp, vp, vp);
    RANGE(dest_vp, 0, p->vps_per_node - 1);
    RANGE(recv_vp, 0, p->vps_per_node - 1);
    RANGE(dest_id, 0, f->nnodes - 1);
    RANGE(recv_id, 0, f->nnodes - 1);
    if (d->kind == GLEX_DESC_COLL) {
        RANGE(c, 1, 1);
        RANGE(inline_len, 0, 0);
        RANGE(op, 0, GLEX_OP_COUNT - 1);
        RANGE(type, 0, GLEX_TYPE_COUNT - 1);
        size_t es = glex_type_size((glex_type_t)d->type);
        RANGE(count, 0, GLEX_MAX_BYTES / es);
        RANGE(send_count, 0, d->cp ? GLEX_MAX_BYTES / es : 0);
        if (d->cp && d->branch && d->swap_remote_data)
            CHECK(d->send_count == d->count, "send_count", d->send_count, d->count, d->count);
        if (d->swap_local_vp) {
            RANGE(cp, 0, 0);
            RANGE(branch, 0, 0);
        }
        if (d->src_range) { /* counter trigger over nodes recv_id .. recv_id + branch - 1 */
            RANGE(branch, 2, GLEX_MAX_RANGE_BRANCH);
            RANGE(count, 0, p->inline_max / es);
            CHECK(d->recv_id + d->branch <= f->nnodes, "recv_id + branch",
                  d->recv_id + d->branch, 2, f->nnodes);
        } else if (d->branch > 1) { /* counter trigger: inline packets from the listed sources */
            RANGE(count, 0, p->inline_max / es);
            const glex_src_t *src = glex_desc_srcs_c(d);
            for (uint32_t i = 0; i < d->branch; i++) {
                CHECK(src[i].node < f->nnodes, "data source node", src[i].node, 0, f->nnodes - 1);
                CHECK(src[i].vp < p->vps_per_node, "data source vp", src[i].vp, 0,
                      p->vps_per_node - 1);
                CHECK(src[i].seq < GLEX_MAX_SEQ, "data source seq", src[i].seq, 0,
                      GLEX_MAX_SEQ - 1);
            }
        }
        /* many destinations: a read send's offer, or an inline packet (not a
         * forward: the list takes the inline area a counter trigger's does) */
        RANGE(fanout, 0, d->cp && (d->swap_remote_addr || (!d->branch && !d->mcast &&
                                                            d->send_count * es <= p->inline_max))
                             ? GLEX_MAX_FANOUT : 1);
        if (d->fanout > 1) { /* the destinations, listed */
            const glex_src_t *dst = glex_desc_srcs_c(d);
            for (uint32_t i = 0; i < d->fanout; i++) {
                CHECK(dst[i].node < f->nnodes, "data destination node", dst[i].node, 0,
                      f->nnodes - 1);
                CHECK(dst[i].vp < p->vps_per_node, "data destination vp", dst[i].vp, 0,
                      p->vps_per_node - 1);
                CHECK(dst[i].seq < GLEX_MAX_SEQ, "data destination seq", dst[i].seq, 0,
                      GLEX_MAX_SEQ - 1);
            }
        }
        if (d->swap_remote_addr) { /* moved by the receiver's DMA read: a copy, or
                                      * combined by the reader's ALU (a receive) */
            RANGE(mcast, 0, 0);
            RANGE(swap_local_vp, 0, 0);
            RANGE(src_range, 0, 0);
            RANGE(branch, 0, 1);
            RANGE(reduce_flag, 0, d->branch ? 1 : 0);
            if (d->cp && d->branch) /* a forward offers what it read */
                RANGE(swap_remote_data, 1, 1);
            if (d->branch && !d->cp && d->length) { /* a part of the offer: its bytes fit */
                RANGE(length, 1, GLEX_MAX_BYTES);
                CHECK(d->remote_addr <= d->length && d->count * es <= d->length - d->remote_addr,
                      "read offset (remote_addr) + bytes", d->remote_addr + d->count * es, 0,
                      d->length);
            }
        }
        if (d->mcast) { /* a multicast send (cp) or the receive of one (branch = 1) */
            RANGE(swap_local_vp, 0, 0);
            RANGE(swap_remote_data, 0, 0);
            RANGE(src_range, 0, 0);
            RANGE(branch, d->cp ? 0 : 1, d->cp ? 0 : 1);
            uint64_t bytes = (d->cp ? d->send_count : d->count) * es;
            CHECK((bytes + p->inline_max - 1) / p->inline_max <= GLEX_MCAST_MAX_PACKETS,
                  "multicast bytes", bytes, 0, (uint64_t)GLEX_MCAST_MAX_PACKETS * p->inline_max);
            if (d->cp)
                CHECK(d->remote_addr != 0, "remote_addr (multicast GID)", d->remote_addr, 1,
                      UINT64_MAX);
        }
        if (d->reduce_flag && !glex_alu_supported((glex_op_t)d->op, (glex_type_t)d->type))
            return glex_error(GLEX_ENOTSUP,
                              "descriptor %zu: ALU has no op %s (%u) for type %s (%u): not "
                              "offloadable",
                              idx, glex_op_name((glex_op_t)d->op), d->op,
                              glex_type_name((glex_type_t)d->type), d->type);
        if (d->send_count && d->cp)
            NONNULL(local_addr, "a send of send_count > 0");
        if (d->count && d->swap_local_vp)
            NONNULL(local_addr, "a local step of count > 0");
        if (d->count && (d->branch || d->swap_local_vp))
            NONNULL(recv_addr, "a receive or local step of count > 0");
        if (d->swap_local_data) { /* the ALU's operand from operand_addr */
            if (!d->reduce_flag || !d->branch || d->mcast)
                return glex_error(GLEX_EINVAL,
                                  "descriptor %zu: field swap_local_data=1 with reduce_flag=%u "
                                  "branch=%u mcast=%u: allowed only on a combining receive "
                                  "(reduce_flag=1, branch>=1, mcast=0)",
                                  idx, d->reduce_flag, d->branch, d->mcast);
            if (d->count)
                NONNULL(operand_addr, "swap_local_data and count > 0");
        }
    } else {
        RANGE(c, 0, 0);
        RANGE(ch, 1, 1);
        RANGE(ct, 1, 1);
        RANGE(branch, 0, 0);
        RANGE(src_range, 0, 0);
        RANGE(reduce_flag, 0, 0);
        RANGE(swap_local_data, 0, 0);
        RANGE(mcast, 0, 0);
        RANGE(fanout, 0, 0);
        if (d->kind == GLEX_DESC_MP) { /* its payload is the descriptor's data field;
                                        * GLEX_INLINE_MAX sizes the packets of collectives */
            RANGE(inline_len, 0, GLEX_MP_CAP);
        } else {
            RANGE(inline_len, 0, 0);
            RANGE(length, 0, GLEX_MAX_BYTES);
            if (d->length) {
                NONNULL(local_addr, "an RDMA of length > 0");
                NONNULL(remote_addr, "an RDMA of length > 0");
            }
        }
    }
    return GLEX_OK;
}

int glex_ctrl_check(const glex_fabric_t *f, const glex_ctrl_t *c, int len)
{
    uint64_t ram = (uint64_t)f->p.unit_buffer_kb * 1024u;
    if (len != (int)sizeof *c)
        return glex_error(GLEX_EINVAL, "control packet of %d bytes: allowed %zu", len, sizeof *c);
    if (!c->dst && (c->len > ram || c->ram_off > ram - c->len))
        return glex_error(GLEX_EINVAL, "control packet: bytes %u+%u of unit RAM: allowed 0..%llu",
                          c->ram_off, c->len, (unsigned long long)ram);
    if (c->total > GLEX_MAX_BYTES || c->off > c->total || c->len > c->total - c->off)
        return glex_error(GLEX_EINVAL,
                          "control packet: pulse %llu+%u of a %llu-byte message: allowed 0..%llu",
                          (unsigned long long)c->off, c->len, (unsigned long long)c->total,
                          (unsigned long long)(c->total < GLEX_MAX_BYTES ? c->total : GLEX_MAX_BYTES));
    return GLEX_OK;
}
