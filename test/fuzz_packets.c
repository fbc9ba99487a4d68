/* fuzz_packets.c - libFuzzer target on the NIC model's validation of what
 * comes from outside a node: descriptors (glex_desc_check, every field),
 * control packets (glex_ctrl_check: unit RAM offsets, pulse ranges) and the
 * hash buffer (insert/take of arbitrary keys and payloads, checked against
 * a model).  Accepted input must satisfy the documented invariants; any
 * violation aborts.
 *
 *   clang -fsanitize=fuzzer,address,undefined ...   (make fuzz; doc/reliability.md)
 *   without libFuzzer: fuzz_packets [-runs N] [-seed S] feeds N random inputs
 */
#define _GNU_SOURCE
#include "glex_emu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static glex_fabric_t *fab;
static glex_vp_t *vp;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_packets: invariant broken: %s (%s)\n", what, glex_last_error());
    abort();
}

static void setup(void)
{
    if (fab)
        return;
    glex_params_t p;
    glex_params_default(&p);
    p.units = 2;
    p.table_slots = 128;
    p.vps_per_node = 2;
    p.dq_depth = 16;
    p.cq_depth = 16;
    char job[64];
    snprintf(job, sizeof job, "fuzz-%d", (int)getpid());
    setenv("GLEX_ENGINE_THREAD", "0", 1); /* nothing runs the posted-never descriptors */
    if (glex_fabric_open(job, 4, 0, &p, &fab) || glex_vp_open(fab, 1, &vp)) {
        fprintf(stderr, "fuzz_packets: setup: %s\n", glex_last_error());
        exit(1);
    }
}

static void one_desc(const uint8_t *data, size_t size)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    memcpy(&d, data, size < sizeof d ? size : sizeof d);
    if (glex_desc_check(vp, &d) != GLEX_OK)
        return;
    const glex_params_t *p = glex_fabric_params(fab);
    if (d.kind < GLEX_DESC_MP || d.kind > GLEX_DESC_COLL)
        die("kind");
    if (d.source_vp != 1 || d.dest_vp >= p->vps_per_node || d.dest_id >= 4)
        die("vp or node out of range");
    if (d.kind == GLEX_DESC_MP && d.inline_len > GLEX_MP_CAP)
        die("inline_len");
    uint8_t flags[] = { d.c, d.ch, d.ct, d.cp, d.reduce_flag, d.coll_end_flag, d.swap_local_data,
                        d.swap_local_vp, d.swap_remote_data, d.swap_remote_addr, d.src_range };
    for (size_t i = 0; i < sizeof flags; i++)
        if (flags[i] > 1)
            die("flag not 0/1");
    if (d.branch > (d.kind != GLEX_DESC_COLL ? 0u
                    : d.src_range                ? GLEX_MAX_RANGE_BRANCH
                                                 : GLEX_MAX_BRANCH))
        die("branch");
    if (d.src_range) { /* counter trigger over a node range: in the job, inline-sized */
        if (d.kind != GLEX_DESC_COLL || d.branch < 2 || d.recv_id + d.branch > 4 ||
            d.count * glex_type_size((glex_type_t)d.type) > p->inline_max)
            die("counter trigger over a node range out of range");
    } else if (d.branch > 1) { /* counter trigger: listed sources in range, inline-sized */
        const glex_src_t *src = glex_desc_srcs_c(&d);
        for (uint32_t i = 0; i < d.branch; i++)
            if (src[i].node >= 4 || src[i].vp >= p->vps_per_node || src[i].seq >= GLEX_MAX_SEQ)
                die("counter-trigger source out of range");
        if (d.count * glex_type_size((glex_type_t)d.type) > p->inline_max)
            die("counter-trigger receive larger than a packet");
    }
    if (d.kind == GLEX_DESC_COLL) {
        if (d.type >= GLEX_TYPE_COUNT || d.seq_id >= GLEX_MAX_SEQ || d.cp_count >= GLEX_MAX_SEQ)
            die("type or step tag");
        if (d.reduce_flag && !glex_alu_supported((glex_op_t)d.op, (glex_type_t)d.type))
            die("op x type");
        uint64_t es = glex_type_size((glex_type_t)d.type);
        if (d.count > (1ull << 40) / es || d.send_count > (1ull << 40) / es)
            die("count");
        if (d.branch && d.recv_id >= 4)
            die("recv_id");
    }
}

static void one_ctrl(const uint8_t *data, size_t size)
{
    glex_ctrl_t c;
    memset(&c, 0, sizeof c);
    memcpy(&c, data, size < sizeof c ? size : sizeof c);
    int len = size >= sizeof c + 1 ? data[sizeof c] : (int)sizeof c;
    if (glex_ctrl_check(fab, &c, len) != GLEX_OK)
        return;
    uint64_t ram = (uint64_t)glex_fabric_params(fab)->unit_buffer_kb * 1024u;
    if (!c.dst && (uint64_t)c.ram_off + c.len > ram)
        die("pulse outside unit RAM");
    if (c.off + c.len > c.total)
        die("pulse outside the message");
}

/* insert/take arbitrary packets; a small model says what must come back */
static void one_table(const uint8_t *data, size_t size)
{
    enum { MAXK = 64 };
    glex_key_t keys[MAXK];
    uint8_t lens[MAXK];
    int n = 0;
    uint32_t imax = glex_fabric_params(fab)->inline_max;
    uint8_t payload[GLEX_INLINE_CAP], back[GLEX_INLINE_CAP];
    for (size_t at = 0; at + 8 <= size && n < MAXK; at += 8) {
        const uint8_t *b = data + at;
        glex_key_t k = glex_make_key(b[0], b[1] % 4, b[2] % 2, b[3] % 32, b[4] % 2, b[5] % 3,
                                     b[6]);
        uint32_t len = b[7];
        memset(payload, b[7], sizeof payload);
        int rc = glex_table_insert(fab, 0, b[0] % 2, k, payload, len);
        if (len > imax) {
            if (rc != GLEX_EINVAL)
                die("oversized payload accepted");
            continue;
        }
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= keys[i].hi == k.hi && keys[i].lo == k.lo;
        if (rc == GLEX_OK) {
            if (dup)
                die("a key held twice");
            keys[n] = k, lens[n] = (uint8_t)len, n++;
        } else if (rc != GLEX_EAGAIN) {
            die("insert");
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        uint32_t unit = (uint32_t)(keys[i].hi >> 40 & 0xffu) % 2;
        int got = glex_table_take(fab, 0, unit, keys[i], back, sizeof back);
        if (got != lens[i])
            die("taken length differs");
        for (int j = 0; j < got; j++)
            if (back[j] != lens[i])
                die("payload differs");
        if (glex_table_take(fab, 0, unit, keys[i], back, sizeof back) != -1)
            die("a key taken twice");
    }
    for (uint32_t u = 0; u < 2; u++)
        if (glex_unit_slots_used(glex_unit_shm(fab, 0, u), NULL) != 0)
            die("table not empty after taking everything");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0: one_desc(data + 1, size - 1); break;
    case 1: one_ctrl(data + 1, size - 1); break;
    default: one_table(data + 1, size - 1); break;
    }
    return 0;
}

#ifndef GLEX_LIBFUZZER
/* plain build (gcc, make check): random inputs, then the segment is closed */
int main(int argc, char **argv)
{
    long runs = 20000;
    uint64_t s = 88172645463325252ull;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-runs"))
            runs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-seed"))
            s = strtoull(argv[i + 1], NULL, 10) | 1;
    }
    uint8_t buf[512];
    for (long r = 0; r < runs; r++) {
        size_t n = (size_t)(s % sizeof buf);
        for (size_t i = 0; i < n; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            buf[i] = (uint8_t)(s >> 24);
            if (i < sizeof(glex_desc_t) && (s >> 60) < 8)
                buf[i] &= 1; /* plenty of valid flags, so descriptors get past the first checks */
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    glex_fabric_close(fab);
    printf("1..1\nok 1 - fuzz_packets: %ld random inputs, every invariant held\n", runs);
    return 0;
}
#endif
