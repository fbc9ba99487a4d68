/* test_emu.c - the NIC model on its own: segment lifecycle and checks,
 * parameters, descriptor range checks, the hash buffer, MP and RDMA, full
 * buffers (back-pressure, nothing lost), late peers waited for, pulsed
 * transfers larger than the unit RAM, JobID agreement and counters,
 * regions a peer maps, memory published for the NIC's DMA. */
#define _GNU_SOURCE
#include "glex_emu_internal.h"
#include "glex_test.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint8_t shared_area[1 << 20]; /* same address in every forked rank */

static glex_desc_t coll_desc(uint32_t vp)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_COLL;
    d.c = d.ch = d.ct = d.coll_end_flag = 1;
    d.source_vp = (uint16_t)vp;
    d.type = GLEX_INT32;
    return d;
}

/* rank 0 -> rank 1 transfer of `bytes` as one COLL step; both check */
static int xfer(glex_tctx_t *c, uint8_t job, uint64_t bytes, int reduce, int *status)
{
    glex_desc_t d = coll_desc(0);
    uint8_t *buf = shared_area;
    d.job_id = job;
    d.type = GLEX_UINT8;
    d.op = GLEX_OP_BXOR;
    if (c->rank == 0) {
        for (uint64_t i = 0; i < bytes; i++)
            buf[i] = (uint8_t)(i * 7 + job);
        d.cp = 1;
        d.dest_id = 1;
        d.send_count = bytes;
        d.local_addr = (uint64_t)(uintptr_t)buf;
    } else {
        memset(buf, reduce ? 0xff : 0, bytes);
        d.branch = 1;
        d.recv_id = 0;
        d.count = bytes;
        d.reduce_flag = (uint8_t)reduce;
        d.recv_addr = (uint64_t)(uintptr_t)buf;
    }
    if (glex_vp_post(c->vp, &d, 1))
        return -1;
    glex_cqe_t e;
    if (!glex_test_wait_cqe(c->f, c->vp, &e, 20000))
        return -2;
    *status = e.status;
    if (c->rank == 1 && e.status == GLEX_OK)
        for (uint64_t i = 0; i < bytes; i++)
            if (buf[i] != (uint8_t)((i * 7 + job) ^ (reduce ? 0xff : 0)))
                return -3;
    return 0;
}

/* ---------------------------------------------------------- single process */

static void test_segment_lifecycle(void)
{
    glex_fabric_t *f;
    char path[160];
    int rc = glex_fabric_open("lifecycle", 1, 0, NULL, &f);
    tap_ok(rc == 0, "fabric_open creates a segment");
    if (rc)
        return;
    snprintf(path, sizeof path, "/dev/shm%s", glex_fabric_name(f));
    struct stat st;
    tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == getuid(),
           "segment %s is mode 0600 and owned by the user", path);
    tap_ok(strstr(glex_fabric_name(f), "lifecycle") != NULL &&
               strstr(glex_fabric_name(f), "glex-") != NULL,
           "segment name holds user and job (%s)", glex_fabric_name(f));
    glex_fabric_t *f2;
    rc = glex_fabric_open("lifecycle", 1, 0, NULL, &f2);
    tap_ok(rc == GLEX_EBUSY && strstr(glex_last_error(), "already attached"),
           "a second process on the same node is refused: %s", glex_last_error());
    glex_vp_t *vp, *vp2;
    tap_ok(glex_vp_open(f, 0, &vp) == 0, "vp 0 opens");
    tap_ok(glex_vp_open(f, 0, &vp2) == GLEX_EBUSY, "vp 0 cannot open twice");
    tap_ok(glex_vp_open(f, 4, &vp2) == GLEX_EINVAL && strstr(glex_last_error(), "vp=4") &&
               strstr(glex_last_error(), "0..3"),
           "vp out of range: %s", glex_last_error());
    glex_fabric_close(f);
    tap_ok(stat(path, &st) != 0, "segment unlinked when the last process leaves");
    tap_ok(glex_fabric_open("bad/name", 1, 0, NULL, &f) == GLEX_EINVAL &&
               strstr(glex_last_error(), "'/'"),
           "bad job name rejected: %s", glex_last_error());
    tap_ok(glex_fabric_open("x", 4, 4, NULL, &f) == GLEX_EINVAL &&
               strstr(glex_last_error(), "node_id=4"),
           "node id out of range: %s", glex_last_error());
}

static void test_segment_mismatch(void)
{
    /* a segment with a wrong magic */
    char name[96];
    snprintf(name, sizeof name, "/glex-%u-badmagic", (unsigned)getuid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    glex_shm_header_t h;
    memset(&h, 0, sizeof h);
    h.magic = 0x1234;
    h.ready = 1;
    h.refcount = 1;
    void *keep = MAP_FAILED; /* mapped, i.e. in use: refused, not swept as stale */
    if (fd >= 0) {
        ftruncate(fd, 1 << 16);
        pwrite(fd, &h, sizeof h, 0);
        keep = mmap(NULL, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
    }
    glex_fabric_t *f;
    int rc = glex_fabric_open("badmagic", 1, 0, NULL, &f);
    tap_ok(rc == GLEX_EMISMATCH && strstr(glex_last_error(), "magic"),
           "wrong magic refused: %s", glex_last_error());
    /* wrong ABI */
    fd = shm_open(name, O_RDWR, 0600);
    h.magic = GLEX_MAGIC;
    h.abi = GLEX_ABI_VERSION + 1;
    pwrite(fd, &h, sizeof h, 0);
    close(fd);
    rc = glex_fabric_open("badmagic", 1, 0, NULL, &f);
    tap_ok(rc == GLEX_EMISMATCH && strstr(glex_last_error(), "ABI"), "wrong ABI refused: %s",
           glex_last_error());
    /* mode other than 0600 */
    fd = shm_open(name, O_RDWR, 0600);
    fchmod(fd, 0644);
    close(fd);
    rc = glex_fabric_open("badmagic", 1, 0, NULL, &f);
    tap_ok(rc == GLEX_EMISMATCH && strstr(glex_last_error(), "mode"),
           "segment with mode 0644 refused: %s", glex_last_error());
    if (keep != MAP_FAILED)
        munmap(keep, 1 << 16);
    shm_unlink(name);
    /* different parameters or node count than the creator */
    glex_fabric_t *a;
    glex_params_t p;
    glex_params_default(&p);
    rc = glex_fabric_open("mismatch", 2, 0, &p, &a);
    pid_t pid = fork();
    if (pid == 0) {
        glex_params_t q = p;
        q.units = 4;
        int r1 = glex_fabric_open("mismatch", 2, 1, &q, &f);
        int ok1 = r1 == GLEX_EMISMATCH && strstr(glex_last_error(), "GLEX_UNITS=8");
        int r2 = glex_fabric_open("mismatch", 3, 1, &p, &f);
        int ok2 = r2 == GLEX_EMISMATCH && strstr(glex_last_error(), "nodes");
        q = p;
        q.mailbox_kb = 32;
        int r3 = glex_fabric_open("mismatch", 2, 1, &q, &f);
        int ok3 = r3 == GLEX_EMISMATCH && strstr(glex_last_error(), "GLEX_MAILBOX_KB=64") &&
                  strstr(glex_last_error(), "this process has 32");
        _exit(ok1 && ok2 && ok3 ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    tap_ok(rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "attach with other GLEX_UNITS, GLEX_MAILBOX_KB or node count refused with the "
           "differing value");
    glex_fabric_close(a);
}

static void test_params(void)
{
    struct { const char *var, *val, *want; } bad[] = {
        { "GLEX_UNITS", "0", "1..64" }, { "GLEX_UNITS", "65", "1..64" },
        { "GLEX_UNIT_BUFFER_KB", "8", "16.." }, { "GLEX_TABLE_SLOTS", "10", "64.." },
        { "GLEX_INLINE_MAX", "300", "..256" }, { "GLEX_VPS_PER_NODE", "abc", "1..2048" },
        { "GLEX_DQ_DEPTH", "-5", "16..65536" }, { "GLEX_PULSES", "0", "1..64" },
        { "GLEX_TIMEOUT", "0", "0.001..86400" }, { "GLEX_SPIN_US", "x", "auto or 0..100000" },
        { "GLEX_UNIT_BUFFER_KB", "64", "GLEX_UNITS=8" }, { "GLEX_VTIME", "2", "range 0..1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        glex_params_t p;
        glex_params_default(&p);
        setenv(bad[i].var, bad[i].val, 1);
        int rc = glex_params_from_env(&p);
        unsetenv(bad[i].var);
        tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), bad[i].var) &&
                   strstr(glex_last_error(), bad[i].want),
               "%s=%s rejected: %s", bad[i].var, bad[i].val, glex_last_error());
    }
    glex_params_t p;
    glex_params_default(&p);
    setenv("GLEX_TIMEOUT", "2.5", 1);
    setenv("GLEX_UNITS", "4", 1);
    int rc = glex_params_from_env(&p);
    unsetenv("GLEX_TIMEOUT");
    unsetenv("GLEX_UNITS");
    tap_ok(rc == 0 && p.timeout_ms == 2500 && p.units == 4, "valid GLEX_TIMEOUT/GLEX_UNITS applied");
    glex_params_default(&p);
    tap_ok(p.units == 8 && p.unit_buffer_kb == 512 && p.inline_max == 48,
           "defaults: 8 units, 512 KB per unit, 48-byte inline limit");
    /* the auto-or-number knobs set in the structure (not from the
     * environment): -1 is auto, below it and above the top are refused */
    static const struct { const char *var; size_t off; int32_t hi; } knobs[] = {
        { "GLEX_SPIN_US", offsetof(glex_params_t, spin_us), 100000 },
        { "GLEX_YIELD_US", offsetof(glex_params_t, yield_us), 100000 },
    };
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "is out of range auto(-1)..%d", knobs[i].hi);
        int32_t vals[] = { -1, knobs[i].hi, -2, knobs[i].hi + 1 };
        for (int j = 0; j < 4; j++) {
            glex_params_default(&p);
            *(int32_t *)((char *)&p + knobs[i].off) = vals[j];
            rc = glex_params_check(&p);
            if (j < 2)
                tap_ok(rc == 0, "%s=%d accepted", knobs[i].var, vals[j]);
            else
                tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), knobs[i].var) &&
                           strstr(glex_last_error(), want),
                       "%s=%d refused: %s", knobs[i].var, vals[j], glex_last_error());
        }
    }
}

static void test_descriptor_checks(void)
{
    glex_fabric_t *f;
    glex_vp_t *vp;
    if (glex_fabric_open("descs", 2, 0, NULL, &f) || glex_vp_open(f, 0, &vp)) {
        tap_ok(0, "descriptor checks: open: %s", glex_last_error());
        return;
    }
    int x;
    static const struct { const char *field; int code; } cases[] = {
        { "kind", GLEX_EINVAL }, { "c", GLEX_EINVAL }, { "cp", GLEX_EINVAL },
        { "reduce_flag", GLEX_EINVAL }, { "coll_end_flag", GLEX_EINVAL },
        { "swap_local_data", GLEX_EINVAL }, { "swap_local_vp", GLEX_EINVAL },
        { "swap_remote_data", GLEX_EINVAL }, { "swap_remote_addr", GLEX_EINVAL },
        { "seq_id", GLEX_EINVAL }, { "cp_count", GLEX_EINVAL }, { "branch", GLEX_EINVAL },
        { "source_vp", GLEX_EINVAL }, { "dest_vp", GLEX_EINVAL }, { "recv_vp", GLEX_EINVAL },
        { "dest_id", GLEX_EINVAL }, { "recv_id", GLEX_EINVAL }, { "op", GLEX_EINVAL },
        { "type", GLEX_EINVAL }, { "count", GLEX_EINVAL }, { "send_count", GLEX_EINVAL },
        { "inline_len", GLEX_EINVAL }, { "not offloadable", GLEX_ENOTSUP },
        { "recv_addr", GLEX_EINVAL }, { "local_addr", GLEX_EINVAL },
        { "data source node=9", GLEX_EINVAL }, { "data source seq=32", GLEX_EINVAL },
        { "count=7", GLEX_EINVAL }, { "swap_local_data=1 with reduce_flag=0", GLEX_EINVAL },
        { "operand_addr", GLEX_EINVAL }, { "fanout=2", GLEX_EINVAL },
        { "data destination node=9", GLEX_EINVAL }, { "fanout=33", GLEX_EINVAL },
        { "reduce_flag=1", GLEX_EINVAL }, { "swap_remote_data=0", GLEX_EINVAL },
        { "ch", GLEX_EINVAL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        glex_desc_t d = coll_desc(0);
        d.recv_addr = d.local_addr = (uint64_t)(uintptr_t)&x;
        switch (i) {
        case 0: d.kind = 9; break;
        case 1: d.c = 2; break;
        case 2: d.cp = 3; break;
        case 3: d.reduce_flag = 2; break;
        case 4: d.coll_end_flag = 2; break;
        case 5: d.swap_local_data = 2; break;
        case 6: d.swap_local_vp = 2; break;
        case 7: d.swap_remote_data = 2; break;
        case 8: d.swap_remote_addr = 2; break;
        case 9: d.seq_id = 32; break;
        case 10: d.cp_count = 40; break;
        case 11: d.branch = GLEX_MAX_BRANCH + 1; break;
        case 12: d.source_vp = 1; break;
        case 13: d.dest_vp = 2047; break;
        case 14: d.recv_vp = 4; break;
        case 15: d.dest_id = 2; break;
        case 16: d.recv_id = 1u << 24; break;
        case 17: d.op = GLEX_OP_COUNT; break;
        case 18: d.type = GLEX_TYPE_COUNT; break;
        case 19: d.count = 1ull << 60; break;
        case 20: d.send_count = 5; break;
        case 21: d.inline_len = 4; break;
        case 22: d.reduce_flag = d.branch = 1, d.op = GLEX_OP_BAND, d.type = GLEX_DOUBLE; break;
        case 23: d.branch = 1, d.count = 4, d.recv_addr = 0; break;
        case 24: d.cp = 1, d.send_count = 4, d.local_addr = 0; break;
        /* a counter-trigger receive: its listed sources, its inline size */
        case 25: d.branch = 3, glex_desc_srcs(&d)[2].node = 9; break;
        case 26: d.branch = 2, glex_desc_srcs(&d)[1].seq = 32; break;
        case 27: d.branch = 2, d.type = GLEX_DOUBLE, d.count = 7; break;
        /* the ALU's operand from operand_addr: a combining receive, an address */
        case 28: d.branch = 1, d.swap_local_data = 1, d.operand_addr = d.recv_addr; break;
        case 29: d.branch = d.reduce_flag = d.swap_local_data = 1, d.count = 2; break;
        /* a read send's destinations (listed only with swap_remote_addr), a read
         * send combines nothing (a read receive may: the reader's ALU), a read
         * forward (what it read) */
        case 30: d.cp = d.branch = 1, d.fanout = 2; break;
        case 31: d.cp = d.swap_remote_addr = 1, d.fanout = 3, glex_desc_srcs(&d)[2].node = 9; break;
        case 32: d.cp = d.swap_remote_addr = 1, d.fanout = GLEX_MAX_FANOUT + 1; break;
        case 33: d.cp = d.swap_remote_addr = d.reduce_flag = 1; break;
        case 34: d.cp = d.branch = d.swap_remote_addr = 1; break;
        default: d.ch = 0; break;
        }
        int rc = glex_vp_post(vp, &d, 1);
        tap_ok(rc == cases[i].code && strstr(glex_last_error(), cases[i].field) != NULL,
               "bad %s rejected: %s", cases[i].field, glex_last_error());
    }
    glex_desc_t seq[2] = { coll_desc(0), coll_desc(0) };
    seq[0].ct = 0;
    seq[1].ch = 0;
    seq[1].job_id = 3;
    tap_ok(glex_vp_post(vp, seq, 2) == GLEX_EINVAL && strstr(glex_last_error(), "job_id=3"),
           "sequence with two JobIDs rejected: %s", glex_last_error());
    tap_ok(glex_vp_post(vp, seq, 1) == GLEX_EINVAL && strstr(glex_last_error(), "ct=0"),
           "post ending inside a sequence rejected: %s", glex_last_error());
    glex_desc_t mp;
    memset(&mp, 0, sizeof mp);
    mp.kind = GLEX_DESC_MP;
    mp.ch = mp.ct = 1;
    mp.inline_len = GLEX_MP_CAP + 1;
    tap_ok(glex_vp_post(vp, &mp, 1) == GLEX_EINVAL && strstr(glex_last_error(), "inline_len=297") &&
               strstr(glex_last_error(), "0..296"),
           "MP payload above the inline limit rejected: %s", glex_last_error());
    mp.kind = GLEX_DESC_RDMA;
    mp.inline_len = 0;
    mp.length = 64;
    tap_ok(glex_vp_post(vp, &mp, 1) == GLEX_EINVAL && strstr(glex_last_error(), "local_addr"),
           "RDMA with null address rejected: %s", glex_last_error());
    glex_vp_counters_t vc;
    glex_vp_counters(f, 0, 0, &vc);
    tap_ok(vc.desc_posted == 0, "nothing was posted by the rejected descriptors");
    glex_desc_t ok = coll_desc(0); /* local no-op: the VP is still usable */
    ok.swap_local_vp = 1;
    glex_cqe_t e;
    int got = 0;
    if (glex_vp_post(vp, &ok, 1) == 0)
        for (int i = 0; i < 1000 && !got; i++, usleep(1000))
            glex_progress(f), got = glex_vp_poll_cq(vp, &e);
    tap_ok(got && e.status == 0, "a valid descriptor completes after the rejected ones");
    glex_fabric_close(f);
}

static void test_engine_bind(void)
{
    glex_fabric_t *f;
    const char *good[] = { "process", "none", "rr", "pu:0" };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("GLEX_ENGINE_BIND", good[i], 1);
        int rc = glex_fabric_open("bind", 1, 0, NULL, &f);
        tap_ok(rc == 0, "GLEX_ENGINE_BIND=%s accepted", good[i]);
        if (!rc)
            glex_fabric_close(f);
    }
    setenv("GLEX_ENGINE_BIND", "pu:4096", 1);
    int rc = glex_fabric_open("bind", 1, 0, NULL, &f);
    tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), "PU 4096 is out of range"),
           "a PU beyond the machine is refused: %s", glex_last_error());
    if (!rc)
        glex_fabric_close(f);
    setenv("GLEX_ENGINE_BIND", "cores", 1);
    rc = glex_fabric_open("bind", 1, 0, NULL, &f);
    tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), "process, rr, none, pu:N"),
           "an unknown policy is refused with the valid ones: %s", glex_last_error());
    unsetenv("GLEX_ENGINE_BIND");
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/glex-%u-bind", (unsigned)getuid());
    tap_ok(access(path, F_OK) != 0, "failed opens leave no segment behind");
}

/* glex_vp_rq_pending counts the entries ready to be taken: a slot a sender
 * has claimed (the tail past it) but not yet written holds back itself and
 * those behind it (glex-vtime waited for the count, then found nothing to
 * take when a sender was preempted between its claim and its write) */
static void test_rq_pending(void)
{
    glex_fabric_t *f;
    glex_vp_t *vp;
    if (glex_fabric_open("rqpending", 1, 0, NULL, &f) || glex_vp_open(f, 0, &vp)) {
        tap_ok(0, "rq pending: open: %s", glex_last_error());
        return;
    }
    glex_vp_shm_t *s = glex_vp_shm(f, 0, 0);
    atomic_fetch_add(&s->rq_tail, 1); /* slot 0 claimed, not written */
    uint32_t one = 1, two = 2;
    int rc = glex_rq_deliver(f, 0, 0, 0, 0, &two, sizeof two, 0); /* slot 1 written */
    uint32_t held = glex_vp_rq_pending(vp);
    glex_rq_slot_t *rq = glex_rq_ring(f, 0, 0);
    rq[0].e.src_id = 0, rq[0].e.src_vp = 0, rq[0].e.len = sizeof one, rq[0].e.vt = 0;
    memcpy(rq[0].e.data, &one, sizeof one);
    atomic_store_explicit(&rq[0].seq, 1, memory_order_release); /* now written */
    uint32_t ready = glex_vp_rq_pending(vp);
    glex_rqe_t a, b;
    int took = glex_vp_poll_rq(vp, &a) && glex_vp_poll_rq(vp, &b) && !glex_vp_poll_rq(vp, &b);
    tap_ok(rc == 0 && held == 0 && ready == 2 && took && glex_vp_rq_pending(vp) == 0 &&
               !memcmp(a.data, &one, sizeof one),
           "rq pending: 0 while the head's slot is claimed but unwritten (%u), 2 once written "
           "(%u), both taken in order",
           held, ready);
    glex_vp_close(vp);
    glex_fabric_close(f);
}

/* a one-node fabric whose units have slots hash-buffer slots, or NULL
 * (the failure reported) */
static glex_fabric_t *open_table(const char *name, uint32_t slots, glex_params_t *p)
{
    glex_fabric_t *f;
    glex_params_default(p);
    p->table_slots = slots;
    if (glex_fabric_open(name, 1, 0, p, &f)) {
        tap_ok(0, "%s: open: %s", name, glex_last_error());
        return NULL;
    }
    return f;
}

/* A long MP (glex_vp_try_mp_long) takes slots in a row of the receive
 * queue, in order with short ones, round the ring's end; a short poll
 * refuses it and leaves it there; a queue without room for its slots
 * sends nothing */
static uint8_t long_byte(uint32_t m, uint32_t j) { return (uint8_t)(m * 131u + j * 7u + 1u); }
static void test_mp_long(void)
{
    glex_params_t q;
    glex_params_default(&q);
    q.cq_depth = 16; /* the receive queue's depth too */
    glex_fabric_t *f;
    glex_vp_t *tx, *rx;
    if (glex_fabric_open("mplong", 1, 0, &q, &f) || glex_vp_open(f, 0, &tx) ||
        glex_vp_open(f, 1, &rx)) {
        tap_ok(0, "long MP: open: %s", glex_last_error());
        return;
    }
    static uint8_t buf[GLEX_MP_LONG_CAP];
    static glex_rqe_long_t r;
    uint32_t bad = 0, lens[] = { 1000, 8, GLEX_MP_CAP + 1, GLEX_MP_LONG_CAP, 297 + 312, 2 };
    glex_vp_counters_t c0, c1;
    glex_vp_counters(f, 0, 1, &c0);
    uint32_t slots = 0;
    for (uint32_t m = 0; m < 40 && !bad; m++) { /* round the 16 slots many times */
        uint32_t len = lens[m % 6], half = len / 3;
        for (uint32_t j = 0; j < len; j++)
            buf[j] = long_byte(m, j);
        glex_piece_t p[2] = { { buf, half }, { buf + half, len - half } };
        int rc = glex_vp_try_mp_long(tx, 0, 1, p, 2, 0);
        slots += len <= GLEX_MP_CAP ? 1 : 1 + (len - GLEX_MP_CAP + 311) / 312;
        glex_rqe_t shortq;
        int refused = len > GLEX_MP_CAP ? glex_vp_poll_rq(rx, &shortq) : GLEX_EINVAL;
        uint32_t pending = glex_vp_rq_pending(rx);
        memset(&r, 0, sizeof r);
        int got = glex_vp_poll_rq_long(rx, &r);
        const uint8_t *d = glex_rqe_long_data(&r);
        for (uint32_t j = 0; got == 1 && j < len; j++)
            bad += d[j] != long_byte(m, j);
        if (rc != 1 || refused != GLEX_EINVAL || pending != 1 || got != 1 || r.e.len != len ||
            r.e.src_id != 0 || r.e.src_vp != 0) {
            tap_ok(0, "long MP %u of %u bytes: sent %d, short poll %d, pending %u, taken %d "
                      "(%u bytes)", m, len, rc, refused, pending, got, r.e.len);
            bad++;
        }
    }
    glex_vp_counters(f, 0, 1, &c1);
    tap_ok(!bad && c1.packets_received - c0.packets_received == slots,
           "long MPs of 2..%u bytes taken whole and in order, round a 16-slot queue (%llu "
           "packets: a slot each, %u expected)", GLEX_MP_LONG_CAP,
           (unsigned long long)(c1.packets_received - c0.packets_received), slots);
    /* two of 8 slots fill the queue: the third is not sent, a short one is */
    memset(buf, 0x5a, sizeof buf);
    glex_piece_t full = { buf, GLEX_MP_LONG_CAP }, one = { buf, 8 };
    int a = glex_vp_try_mp_long(tx, 0, 1, &full, 1, 0);
    int b = glex_vp_try_mp_long(tx, 0, 1, &full, 1, 0);
    int c = glex_vp_try_mp_long(tx, 0, 1, &full, 1, 0);
    uint32_t pending = glex_vp_rq_pending(rx);
    int took = glex_vp_poll_rq_long(rx, &r) == 1 && glex_vp_poll_rq_long(rx, &r) == 1 &&
               glex_vp_try_mp_long(tx, 0, 1, &one, 1, GLEX_MP_QUIET) == 1 &&
               glex_vp_poll_rq_long(rx, &r) == 1 && r.e.len == 8 &&
               glex_vp_poll_rq_long(rx, &r) == 0;
    tap_ok(a == 1 && b == 1 && c == 0 && pending == 2 && took,
           "a long MP without room for its slots is not sent (%d %d %d, %u pending), then the "
           "queue takes more", a, b, c, pending);
    /* seen in place: a long one as pieces of its slots (round the queue),
     * nothing taken past it until done, a short one copied as before */
    uint32_t vbad = 0;
    static uint8_t out[GLEX_MP_LONG_CAP];
    for (uint32_t m = 0; m < 24; m++) {
        uint32_t len = lens[m % 6];
        for (uint32_t j = 0; j < len; j++)
            buf[j] = long_byte(m + 100, j);
        glex_piece_t p1 = { buf, len };
        glex_rq_view_t v;
        glex_rqe_long_t r2;
        int sent = glex_vp_try_mp_long(tx, 0, 1, &p1, 1, 0) == 1 &&
                   glex_vp_try_mp_long(tx, 0, 1, &one, 1, 0) == 1;
        int got = glex_vp_poll_rq_view(rx, &r, &v);
        uint32_t off = len / 5, n = len - off;
        if (got == 2) {
            int blocked = glex_vp_poll_rq_long(rx, &r2) == 0 && glex_vp_poll_rq_view(rx, &r2, &v) == 0;
            uint32_t sum = 0;
            for (uint32_t k = 0; k < v.pieces; k++)
                sum += v.piece_len[k];
            memset(out, 0, sizeof out);
            glex_rq_view_copy(&v, off, out, n);
            for (uint32_t j = 0; j < n; j++)
                vbad += out[j] != long_byte(m + 100, off + j);
            vbad += !blocked || sum != len || v.e->len != len || v.pieces != glex_mp_slots(len);
            glex_vp_rq_done(rx, &v);
        } else {
            const uint8_t *d = glex_rqe_long_data(&r);
            for (uint32_t j = 0; got == 1 && j < len; j++)
                vbad += d[j] != long_byte(m + 100, j);
        }
        int after = glex_vp_poll_rq_view(rx, &r2, &v);
        vbad += !sent || got != (len > GLEX_MP_CAP ? 2 : 1) || after != 1 || r2.e.len != 8 ||
                glex_vp_rq_pending(rx) != 0;
    }
    tap_ok(!vbad, "long MPs seen in place: their slots as pieces, any part copied out, nothing "
                  "taken past one until it is done; short ones copied (%u wrong)", vbad);
    glex_piece_t over = { buf, GLEX_MP_LONG_CAP + 1 };
    int rc = glex_vp_try_mp_long(tx, 0, 1, &over, 1, 0);
    char want[32];
    snprintf(want, sizeof want, "0..%u bytes", GLEX_MP_LONG_CAP);
    tap_ok(rc == GLEX_EINVAL && strstr(glex_last_error(), want),
           "a long MP over GLEX_MP_LONG_CAP is refused with the range: %s", glex_last_error());
    glex_vp_close(rx);
    glex_vp_close(tx);
    glex_fabric_close(f);
}

static void test_hash_table(void)
{
    glex_params_t p;
    glex_fabric_t *f = open_table("hash", 128, &p);
    if (!f)
        return;
    int ok = 1, n = 0;
    uint32_t limit = p.table_slots - p.table_slots * 10 / 100;
    for (uint32_t i = 0;; i++) {
        glex_key_t k = glex_make_key(i % 7, i, i % 3, i % 32, 0, GLEX_PKT_DATA, i);
        uint32_t v = i * 31;
        int rc = glex_table_insert(f, 0, 0, k, &v, sizeof v);
        if (rc == GLEX_EAGAIN)
            break;
        ok &= rc == 0;
        n++;
    }
    tap_ok(ok && (uint32_t)n == limit, "table accepts %d of %u slots (10%% reserve) then pushes back",
           n, p.table_slots);
    glex_key_t k0 = glex_make_key(0, 0, 0, 0, 0, GLEX_PKT_DATA, 0);
    uint32_t v = 0;
    glex_table_take(f, 0, 0, k0, &v, sizeof v);
    uint32_t dup = 99;
    glex_key_t k1 = glex_make_key(1 % 7, 1, 1 % 3, 1, 0, GLEX_PKT_DATA, 1);
    tap_ok(glex_table_insert(f, 0, 0, k1, &dup, sizeof dup) == GLEX_EAGAIN,
           "a duplicate key is refused, never overwritten");
    /* take the rest in a scrambled order */
    for (int j = 0; j < n - 1; j++) {
        uint32_t i = 1 + (uint32_t)((j * 37) % (n - 1));
        glex_key_t k = glex_make_key(i % 7, i, i % 3, i % 32, 0, GLEX_PKT_DATA, i);
        ok &= glex_table_take(f, 0, 0, k, &v, sizeof v) == 4 && v == i * 31;
    }
    tap_ok(ok, "every packet comes back with its payload, in any order");
    tap_ok(glex_table_take(f, 0, 0, k1, &v, sizeof v) == -1, "absent key is not found");
    glex_unit_counters_t uc;
    glex_unit_counters(f, 0, 0, &uc);
    tap_ok(uc.packets_buffered == (uint64_t)n && uc.table_high_water == limit &&
               uc.table_used == 0 && uc.hash_probes >= 2ull * n,
           "unit counters: %llu buffered, high water %llu, %llu probes, %llu in use",
           (unsigned long long)uc.packets_buffered, (unsigned long long)uc.table_high_water,
           (unsigned long long)uc.hash_probes, (unsigned long long)uc.table_used);
    glex_fabric_close(f);
}

/* A root that runs calls ahead of a slow member: packets that differ only
 * in their JobID's generation share a home bucket (a call's packets land
 * where the last call's did), and must not fill its reach (64 slots) and
 * so lock out other keys homed there: past the reach they spread. */
static void test_hash_run_ahead(void)
{
    glex_params_t p;
    glex_fabric_t *f = open_table("ahead", 1024, &p);
    if (!f)
        return;
    enum { CALLS = 200 }; /* within the over count (255 displaced a home) */
    int ok = 1;
    for (uint32_t g = 0; g < CALLS; g++) {
        glex_key_t k = glex_make_key(5u | g << 8, 3, 0, 1, 0, GLEX_PKT_DATA, 0);
        uint32_t v = g * 7u;
        ok &= glex_table_insert(f, 0, 0, k, &v, sizeof v) == GLEX_OK;
    }
    tap_ok(ok, "%d packets differing only in their generation all go in", CALLS);
    glex_key_t other = glex_make_key(5u, 3, 0, 1, 0, GLEX_PKT_CREDIT, 0);
    uint32_t v = 12345;
    tap_ok(glex_table_insert(f, 0, 0, other, &v, sizeof v) == GLEX_OK,
           "another key of the same call still goes in");
    for (uint32_t g = CALLS; g-- > 0;) { /* taken last call first */
        glex_key_t k = glex_make_key(5u | g << 8, 3, 0, 1, 0, GLEX_PKT_DATA, 0);
        ok &= glex_table_take(f, 0, 0, k, &v, sizeof v) == 4 && v == g * 7u;
    }
    ok &= glex_table_take(f, 0, 0, other, &v, sizeof v) == 4 && v == 12345;
    glex_unit_counters_t uc;
    glex_unit_counters(f, 0, 0, &uc);
    tap_ok(ok && uc.table_used == 0, "each comes back with its payload, the buffer empty after");
    glex_fabric_close(f);
}

static void test_jobs(void)
{
    glex_fabric_t *f;
    if (glex_fabric_open("jobs", 1, 0, NULL, &f)) {
        tap_ok(0, "jobs: open");
        return;
    }
    int a = glex_job_acquire(f, 42, 3), b = glex_job_acquire(f, 42, 3), c = glex_job_acquire(f, 42, 3);
    int d = glex_job_acquire(f, 43, 1);
    tap_ok(a >= 0 && a == b && b == c && d >= 0 && d != a, "members agree on a JobID by key");
    int got = 2, last = 0;
    for (int i = 0; i < 300; i++) {
        last = glex_job_acquire(f, 1000 + (uint64_t)i, 1);
        if (last < 0)
            break;
        got++;
    }
    tap_ok(got == 256 && last == GLEX_EAGAIN, "256 JobIDs, then back-pressure (%d)", got);
    glex_job_release(f, a);
    glex_job_release(f, a);
    tap_ok(glex_job_acquire(f, 5000, 1) == GLEX_EAGAIN, "a JobID stays taken until every member left");
    glex_job_release(f, a);
    tap_ok(glex_job_acquire(f, 5001, 1) == a, "and is free after the last member");
    glex_fabric_close(f);
}

/* A unit's eager pages with small messages' pages held back by their owner
 * (each read, not yet given back): two messages of 30 pages still fit in the
 * 64, the second taking the held pages back, however the held ones lie. */
static void test_eager_held(void)
{
    glex_fabric_t *f;
    if (glex_fabric_open("eagerheld", 1, 0, NULL, &f)) {
        tap_ok(0, "eager held: open");
        return;
    }
    const uint32_t small = 200, big = 30000;
    int64_t at[7], b0, b1;
    int got = 1;
    for (int i = 0; i < 7; i++) /* each read and held back before the next */
        if ((at[i] = glex_eager_acquire(f, 0, 0, small)) < 0)
            got = 0;
        else
            glex_eager_release(f, 0, 0, (uint32_t)at[i], small);
    glex_unit_shm_t *u = glex_unit_shm(f, 0, 0);
    int held = __builtin_popcountll(atomic_load(&u->eager_held));
    b0 = glex_eager_acquire(f, 0, 0, big);
    b1 = glex_eager_acquire(f, 0, 0, big);
    tap_ok(got && held == 7 && b0 >= 0 && b1 >= 0 && atomic_load(&u->eager_asked) == 0,
           "eager pages: 7 small messages' pages held back (%d), then two of %u bytes both fit "
           "(offsets %lld, %lld; %llu asked)",
           held, big, (long long)b0, (long long)b1, (unsigned long long)atomic_load(&u->eager_asked));
    if (b0 >= 0)
        glex_eager_release(f, 0, 0, (uint32_t)b0, big);
    if (b1 >= 0)
        glex_eager_release(f, 0, 0, (uint32_t)b1, big);
    glex_eager_give_back(f);
    tap_ok(atomic_load(&u->eager_bits) == 0 && atomic_load(&u->eager_held) == 0,
           "eager pages: all free once released and given back");
    glex_fabric_close(f);
}

/* ------------------------------------------------------------ two ranks */

/* rank 0's RDMA with rank 1 (a put, or a get: get=1) of len bytes, posted
 * and waited for; 0 when its CQE came back good */
static int rdma_with_1(glex_tctx_t *c, void *local, void *remote, uint64_t len, int get)
{
    glex_desc_t d;
    glex_cqe_t e;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_RDMA;
    d.ch = d.ct = d.coll_end_flag = 1;
    d.dest_id = 1;
    d.length = len;
    d.swap_remote_addr = (uint8_t)get;
    d.local_addr = (uint64_t)(uintptr_t)local;
    d.remote_addr = (uint64_t)(uintptr_t)remote;
    return glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000) || e.status;
}

static int rank_mp_rdma(glex_tctx_t *c)
{
    int id = glex_case(c, "MP delivers inline payload to the RQ, CQE to the sender");
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    if (c->rank == 0) {
        d.kind = GLEX_DESC_MP;
        d.ch = d.ct = d.coll_end_flag = 1;
        d.dest_id = 1;
        d.inline_len = 48;
        for (int i = 0; i < 48; i++)
            d.data[i] = (uint8_t)(i + 1);
        glex_cqe_t e;
        if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000) || e.status)
            glex_case_fail(c, id, "MP send: %s", glex_last_error());
    } else {
        glex_rqe_t r;
        int got = 0;
        for (int i = 0; i < 5000 && !got; i++, usleep(1000))
            got = glex_vp_poll_rq(c->vp, &r);
        if (!got || r.len != 48 || r.src_id != 0 || r.data[47] != 48)
            glex_case_fail(c, id, "MP receive: got=%d len=%u", got, got ? r.len : 0);
    }
    id = glex_case(c, "RDMA put and get by cross-memory attach");
    uint8_t *area = shared_area;
    memset(area, c->rank == 0 ? 0x11 : 0x22, 4096);
    glex_desc_t bar = coll_desc(0); /* a two-rank exchange used as a barrier */
    bar.cp = bar.branch = 1;
    bar.dest_id = bar.recv_id = (uint32_t)(1 - c->rank);
    glex_cqe_t e;
    if (glex_vp_post(c->vp, &bar, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier 1");
    if (c->rank == 0) {
        if (rdma_with_1(c, area, area + 2048, 2048, 0)) /* my first half into its second */
            glex_case_fail(c, id, "put: %s", glex_last_error());
        if (rdma_with_1(c, area + 2048, area, 2048, 1)) /* its first half into my second */
            glex_case_fail(c, id, "get: %s", glex_last_error());
        if (area[0] != 0x11 || area[2048] != 0x22 || area[4095] != 0x22)
            glex_case_fail(c, id, "get data wrong");
    }
    bar.seq_id = bar.cp_count = 1;
    if (glex_vp_post(c->vp, &bar, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier 2");
    if (c->rank == 1 && (area[0] != 0x22 || area[2048] != 0x11 || area[4095] != 0x11))
        glex_case_fail(c, id, "put data wrong: %x %x", area[0], area[2048]);

    /* 100000 bytes into a destination 16 bytes further into its page than
     * the source: the engine's cross-memory copy goes through its bounce
     * buffer (memcpy's slow distance) in 64 KiB steps */
    id = glex_case(c, "RDMA put and get of 100000 B to 16 bytes past the source's page offset");
    enum { BIG = 100000, AT = 262144 }; /* the destination: shared_area + AT + 16 */
    uint8_t *src = shared_area + 8192, *dst = shared_area + AT + 16;
    for (uint32_t k = 0; k < BIG; k++)
        src[k] = (uint8_t)(k * 13 + 7 + 101 * c->rank);
    memset(dst, 0, BIG);
    bar.seq_id = bar.cp_count = 2; /* sent and awaited: the step's tag */
    if (glex_vp_post(c->vp, &bar, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier 3");
    if (c->rank == 0) {
        if (rdma_with_1(c, src, dst, BIG, 0))
            glex_case_fail(c, id, "put: %s", glex_last_error());
        if (rdma_with_1(c, dst, src, BIG, 1)) /* its source into my destination */
            glex_case_fail(c, id, "get: %s", glex_last_error());
    }
    bar.seq_id = bar.cp_count = 3;
    if (glex_vp_post(c->vp, &bar, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier 4");
    for (uint32_t k = 0; k < BIG; k++) /* each holds the other's source */
        if (dst[k] != (uint8_t)(k * 13 + 7 + 101 * (1 - c->rank))) {
            glex_case_fail(c, id, "byte %u: %u, expected %u", k, dst[k],
                           (uint8_t)(k * 13 + 7 + 101 * (1 - c->rank)));
            break;
        }
    return 0;
}

/* run across emulated hosts (GLEX_SPLIT_HOSTS > 1: test_hosts.sh)? */
static int split_hosts(void)
{
    const char *h = getenv("GLEX_SPLIT_HOSTS");
    return h && atoi(h) > 1;
}

static int rank_pulses(glex_tctx_t *c)
{
    /* unit RAM of 64 KB: a 1 MB transfer must go through in pulses */
    int st = -99;
    int id = glex_case(c, "1 MB copy through a 64 KB unit RAM in pulses");
    int rc = xfer(c, 5, 1 << 20, 0, &st);
    if (rc || st)
        glex_case_fail(c, id, "rc %d status %d", rc, st);
    id = glex_case(c, "1 MB reduction through a 64 KB unit RAM in pulses");
    rc = xfer(c, 6, 1 << 20, 1, &st);
    if (rc || st)
        glex_case_fail(c, id, "rc %d status %d", rc, st);
    /* 64 pages: 32 guaranteed (a page for each of 32 JobID slots x 1 VP),
     * 32 pooled, no eager pages; the step, alone on its unit, borrows the
     * whole pool */
    id = glex_case(c, "RAM high-water mark inside the unit RAM: a step alone takes the whole pool");
    glex_unit_counters_t uc;
    glex_unit_counters(c->f, (uint32_t)c->rank, 6 % 8, &uc);
    if (c->rank == 1 && uc.ram_high_water_kb != 32)
        glex_case_fail(c, id, "high water %llu KB, expected 32 (the pool)",
                       (unsigned long long)uc.ram_high_water_kb);
    id = glex_case(c, "pulsed transfer counters");
    glex_vp_counters_t vc;
    glex_vp_counters(c->f, (uint32_t)c->rank, 0, &vc);
    if (vc.desc_executed != 2 || (c->rank == 0 ? vc.packets_sent : vc.packets_received) < 16)
        glex_case_fail(c, id, "executed %llu sent %llu received %llu",
                       (unsigned long long)vc.desc_executed, (unsigned long long)vc.packets_sent,
                       (unsigned long long)vc.packets_received);
    return 0;
}

static int rank_late_peer(glex_tctx_t *c)
{
    /* GLEX_TIMEOUT=0.3 s, and rank 0 sends 1 s late: a live peer that is
     * late (imbalance, oversubscription) does not fail the task */
    int id = glex_case(c, "a live peer later than GLEX_TIMEOUT does not fail the transfer");
    if (c->rank == 0)
        usleep(1000000);
    int st = -1;
    int rc = xfer(c, 9, 64, 0, &st);
    if (rc || st)
        glex_case_fail(c, id, "rc %d status %d", rc, st);
    id = glex_case(c, "nor a pulsed one");
    if (c->rank == 1)
        usleep(1000000);
    rc = xfer(c, 10, 100000, 0, &st);
    if (rc || st)
        glex_case_fail(c, id, "rc %d status %d", rc, st);
    return 0;
}

static int rank_backpressure(glex_tctx_t *c)
{
    /* one unit with 64 slots: rank 0 sends 100 small packets (100 JobIDs)
     * before rank 1 posts any receive.  Senders stall; nothing is lost. */
    enum { NJOB = 100 };
    int id = glex_case(c, "a full packet buffer pushes back and loses nothing");
    glex_desc_t *d = calloc(NJOB, sizeof *d);
    int32_t *vals = (int32_t *)shared_area;
    for (int j = 0; j < NJOB; j++) {
        d[j] = coll_desc(0);
        d[j].job_id = (uint8_t)j;
        if (c->rank == 0) {
            vals[j] = j * 3 + 1;
            d[j].cp = 1;
            d[j].dest_id = 1;
            d[j].send_count = 1;
            d[j].local_addr = (uint64_t)(uintptr_t)&vals[j];
        } else {
            vals[j] = -1;
            d[j].branch = 1;
            d[j].recv_id = 0;
            d[j].count = 1;
            d[j].recv_addr = (uint64_t)(uintptr_t)&vals[j];
        }
    }
    if (c->rank == 1)
        usleep(300000);
    if (glex_vp_post(c->vp, d, NJOB))
        glex_case_fail(c, id, "post: %s", glex_last_error());
    int done = 0, bad = 0;
    glex_cqe_t e;
    while (done < NJOB && glex_test_wait_cqe(c->f, c->vp, &e, 10000))
        done++, bad += e.status != 0;
    if (done != NJOB || bad)
        glex_case_fail(c, id, "%d of %d completed, %d failed", done, NJOB, bad);
    for (int j = 0; c->rank == 1 && j < NJOB; j++)
        if (vals[j] != j * 3 + 1)
            glex_case_fail(c, id, "value %d is %d", j, vals[j]);
    id = glex_case(c, "the stall shows in the sender's credit-stall counter, the receiver's "
                      "table fills to its 90%% limit");
    glex_unit_counters_t snd, rcv;
    glex_unit_counters(c->f, 0, 0, &snd);
    glex_unit_counters(c->f, 1, 0, &rcv);
    glex_wire_stats_t ws;
    glex_fabric_wire_stats(c->f, 1, &ws);
    if (glex_fabric_nhosts(c->f) > 1) { /* across hosts the receiver holds what does not fit */
        if (c->rank == 1 && (ws.held_total == 0 || rcv.table_high_water != 64 - 64 * 10 / 100))
            glex_case_fail(c, id, "held %llu, high water %llu",
                           (unsigned long long)ws.held_total,
                           (unsigned long long)rcv.table_high_water);
    } else if (c->rank == 1 && (snd.credit_stalls == 0 || snd.credit_stalls > NJOB ||
                                rcv.table_high_water != 64 - 64 * 10 / 100))
        glex_case_fail(c, id, "stalls %llu, high water %llu", (unsigned long long)snd.credit_stalls,
                       (unsigned long long)rcv.table_high_water);
    free(d);
    return 0;
}

/* rank 1's three words to rank 0, and a barrier: an allreduce (max) to
 * which rank 0 gives the least values */
static int from_rank1(glex_tctx_t *c, int64_t w[3])
{
    if (c->rank == 0)
        w[0] = w[1] = w[2] = INT64_MIN;
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .type = GLEX_INT64, .op = GLEX_OP_MAX,
                           .count = 3, .sendbuf = GLEX_IN_PLACE, .recvbuf = w };
    return glex_coll_run(c->g, &a);
}

static int rank_regions(glex_tctx_t *c)
{
    int id = glex_case(c, "a peer maps an exported region and reads what its owner wrote; "
                          "one that replaced it (larger, then smaller) is mapped anew");
    glex_region_t r = { 0 };
    glex_rmap_t m = { 0 };
    int64_t w[3] = { -1, 0, 0 };
    size_t sizes[3] = { 8192, 3u << 20, 4096 };
    unsigned mul[3] = { 7, 3, 5 };
    for (int k = 0; k < 3; k++) {
        if (c->rank == 1) {
            glex_region_free(&r);
            if (glex_region_alloc(&r, sizes[k]))
                glex_case_fail(c, id, "alloc %zu: %s", sizes[k], glex_last_error());
            for (size_t i = 0; r.base && i < sizes[k]; i++)
                ((uint8_t *)r.base)[i] = (uint8_t)(i * mul[k] + 1u);
            w[0] = r.fd;
            w[1] = (int64_t)sizes[k];
            w[2] = (int64_t)r.id;
        }
        if (from_rank1(c, w))
            glex_case_fail(c, id, "bcast: %s", glex_last_error());
        if (c->rank == 0 && w[0] >= 0) {
            int rc = glex_rmap_get(c->f, 1, (int32_t)w[0], (uint64_t)w[2], (size_t)w[1], &m);
            if (rc || !m.base || m.bytes < (size_t)w[1])
                glex_case_fail(c, id, "map %lld bytes: rc %d %s", (long long)w[1], rc,
                               glex_last_error());
            for (size_t i = 0; !rc && i < (size_t)w[1]; i++)
                if (((const uint8_t *)m.base)[i] != (uint8_t)(i * mul[k] + 1u)) {
                    glex_case_fail(c, id, "size %lld: byte %zu differs", (long long)w[1], i);
                    break;
                }
            const void *now = m.base;
            if (!rc &&
                (glex_rmap_get(c->f, 1, (int32_t)w[0], (uint64_t)w[2], 16, &m) || m.base != now))
                glex_case_fail(c, id, "a second look at the same region mapped it again");
        }
        int64_t keep[3] = { w[0], w[1], w[2] };
        if (from_rank1(c, w)) /* rank 0 is through with it */
            glex_case_fail(c, id, "barrier: %s", glex_last_error());
        memcpy(w, keep, sizeof keep);
    }
    id = glex_case(c, "mapping a descriptor the peer does not have, or a node out of range, "
                      "says which");
    if (c->rank == 0) {
        glex_rmap_t bad = { 0 };
        int rc = glex_rmap_get(c->f, 1, 9999, (uint64_t)w[2], 64, &bad);
        if (rc != GLEX_ESYS || !strstr(glex_last_error(), "descriptor 9999") || bad.base)
            glex_case_fail(c, id, "bad descriptor: rc %d '%s'", rc, glex_last_error());
        rc = glex_rmap_get(c->f, 7, (int32_t)w[0], (uint64_t)w[2], 64, &bad);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "node 7: allowed 0..1"))
            glex_case_fail(c, id, "bad node: rc %d '%s'", rc, glex_last_error());
        rc = glex_rmap_get(c->f, 1, (int32_t)w[0], (uint64_t)w[2], (size_t)w[1] + 4096, &bad);
        if (rc != GLEX_ESYS || !strstr(glex_last_error(), "it is smaller"))
            glex_case_fail(c, id, "too small: rc %d '%s'", rc, glex_last_error());
        glex_rmap_drop(&m);
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    glex_region_free(&r);
    return 0;
}

/* one RDMA descriptor, a whole sequence with a CQE: a put of len bytes from
 * local to node's remote address */
static glex_desc_t rdma_put_desc(uint32_t node, const void *local, uint64_t remote, uint64_t len)
{
    glex_desc_t d;
    memset(&d, 0, sizeof d);
    d.kind = GLEX_DESC_RDMA;
    d.ch = d.ct = d.coll_end_flag = 1;
    d.dest_id = node;
    d.length = len;
    d.local_addr = (uint64_t)(uintptr_t)local;
    d.remote_addr = remote;
    return d;
}

/* memory registered for the NIC's DMA: a peer's engine puts into and gets
 * from it in place; the registry's limits and withdrawal */
static int rank_published(glex_tctx_t *c)
{
    int id = glex_case(c, "RDMA put and get into a published region land in place, to its "
                          "last byte; its owner sees the put");
    glex_region_t r = { 0 };
    int64_t w[3] = { 0, 0, 0 };
    enum { BYTES = 8192 };
    if (c->rank == 1) {
        if (glex_region_alloc(&r, BYTES) || glex_region_publish(c->f, &r))
            glex_case_fail(c, id, "alloc/publish: %s", glex_last_error());
        for (size_t i = 0; r.base && i < BYTES; i++)
            ((uint8_t *)r.base)[i] = (uint8_t)(i * 3u + 1u);
        w[0] = (int64_t)(uintptr_t)r.base;
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "bcast: %s", glex_last_error());
    uint8_t buf[4096];
    glex_cqe_t e;
    if (c->rank == 0) {
        uint64_t base = 0, bytes = 0;
        uint32_t i = 0;
        while (i < GLEX_PUBLISH_MAX && glex_region_published(c->f, 1, i, &base, &bytes))
            i++;
        if (i == GLEX_PUBLISH_MAX || base != (uint64_t)w[0] || bytes != BYTES)
            glex_case_fail(c, id, "published: index %u base %llx bytes %llu", i,
                           (unsigned long long)base, (unsigned long long)bytes);
        glex_desc_t d = rdma_put_desc(1, buf, base, sizeof buf);
        d.swap_remote_addr = 1; /* a get: its first half here */
        if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000) || e.status)
            glex_case_fail(c, id, "get: %s", glex_last_error());
        for (size_t k = 0; k < sizeof buf; k++)
            if (buf[k] != (uint8_t)(k * 3u + 1u)) {
                glex_case_fail(c, id, "get: byte %zu is %u", k, buf[k]);
                break;
            }
        memset(buf, 0x5a, sizeof buf); /* into its second half, up to the end */
        d.swap_remote_addr = 0;
        d.remote_addr = base + BYTES - sizeof buf;
        if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000) || e.status)
            glex_case_fail(c, id, "put: %s", glex_last_error());
        glex_vp_counters_t vc;
        glex_vp_counters(c->f, 0, glex_vp_index(c->vp), &vc);
        if (vc.bytes_sent < 2 * sizeof buf)
            glex_case_fail(c, id, "the NIC counted %llu bytes", (unsigned long long)vc.bytes_sent);
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    if (c->rank == 1)
        for (size_t k = 0; r.base && k < BYTES; k++) {
            uint8_t want = k < BYTES - sizeof buf ? (uint8_t)(k * 3u + 1u) : 0x5a;
            if (((uint8_t *)r.base)[k] != want) {
                glex_case_fail(c, id, "byte %zu is %u, expected %u", k, ((uint8_t *)r.base)[k],
                               want);
                break;
            }
        }
    if (from_rank1(c, w)) /* rank 1 has looked before rank 0's atomics change the word */
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    id = glex_case(c, "a NIC atomic compare-and-swap on a published word: swaps only on a "
                      "match, returns the old word; misaligned or unregistered addresses refused");
    if (c->rank == 0) {
        uint64_t base = (uint64_t)w[0], want = 0, old = 0;
        for (int k = 7; k >= 0; k--) /* the word as rank 1 wrote it */
            want = want << 8 | (uint8_t)(k * 3u + 1u);
        int rc = glex_vp_atomic_cas(c->vp, 1, base, want + 1, 42, &old);
        if (rc || old != want)
            glex_case_fail(c, id, "mismatch: rc %d old %#llx, expected %#llx", rc,
                           (unsigned long long)old, (unsigned long long)want);
        rc = glex_vp_atomic_cas(c->vp, 1, base, want, 0x1122334455667788ull, &old);
        if (rc || old != want)
            glex_case_fail(c, id, "match: rc %d old %#llx", rc, (unsigned long long)old);
        rc = glex_vp_atomic_cas(c->vp, 1, base + 4, 0, 1, &old);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "8-byte aligned"))
            glex_case_fail(c, id, "misaligned: rc %d '%s'", rc, glex_last_error());
        rc = glex_vp_atomic_cas(c->vp, 1, base + BYTES, 0, 1, &old);
        if (rc != GLEX_ENOTSUP || !strstr(glex_last_error(), "registered"))
            glex_case_fail(c, id, "past the region: rc %d '%s'", rc, glex_last_error());
        rc = glex_vp_atomic_cas(c->vp, 9, base, 0, 1, &old);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "allowed nodes 0..1"))
            glex_case_fail(c, id, "node 9: rc %d '%s'", rc, glex_last_error());
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    if (c->rank == 1 && r.base && *(volatile uint64_t *)r.base != 0x1122334455667788ull)
        glex_case_fail(c, id, "the word is %#llx after the swap",
                       (unsigned long long)*(volatile uint64_t *)r.base);
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    id = glex_case(c, "a scatter-gather get: three pieces of the peer's memory into 1350 "
                      "pieces here (two batches), in order, and from a byte offset into them; "
                      "bad lists, itself and a node out of range refused");
    if (c->rank == 0) {
        uint64_t base = (uint64_t)w[0], moved = 0;
        struct iovec rem[3] = { { (void *)(uintptr_t)(base + 100), 300 },
                                { (void *)(uintptr_t)(base + 2000), 1000 },
                                { (void *)(uintptr_t)(base + 4096), 50 } };
        enum { NL = 1350 };
        static struct iovec loc[NL];
        memset(buf, 0, sizeof buf);
        for (int k = 0; k < NL; k++)
            loc[k] = (struct iovec){ buf + 2 * k, 1 };
        int rc = glex_vp_get_sgl(c->vp, 1, rem, 3, 0, loc, NL, &moved);
        if (rc || moved != NL)
            glex_case_fail(c, id, "rc %d moved %llu: %s", rc, (unsigned long long)moved,
                           glex_last_error());
        for (int k = 0; k < NL; k++) {
            size_t at = k < 300 ? 100u + (size_t)k : k < 1300 ? 2000u + (size_t)k - 300 : 0;
            uint8_t want = k < 1300 ? (uint8_t)(at * 3u + 1u) : 0x5a;
            if (buf[2 * k] != want || buf[2 * k + 1]) {
                glex_case_fail(c, id, "piece %d is %u (next byte %u), expected %u", k,
                               buf[2 * k], buf[2 * k + 1], want);
                break;
            }
        }
        memset(buf, 0, sizeof buf); /* from byte 250 of the remote pieces on: 50 + 50 */
        rc = glex_vp_get_sgl(c->vp, 1, rem, 3, 250, loc, 100, &moved);
        if (rc || moved != 100)
            glex_case_fail(c, id, "skip 250: rc %d moved %llu: %s", rc,
                           (unsigned long long)moved, glex_last_error());
        for (int k = 0; k < 100; k++) {
            size_t at = k < 50 ? 350u + (size_t)k : 2000u + (size_t)k - 50;
            if (buf[2 * k] != (uint8_t)(at * 3u + 1u)) {
                glex_case_fail(c, id, "skip 250: piece %d is %u, expected %u", k, buf[2 * k],
                               (uint8_t)(at * 3u + 1u));
                break;
            }
        }
        rc = glex_vp_get_sgl(c->vp, 1, rem, 0, 0, loc, NL, &moved);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "1..1048576 pieces"))
            glex_case_fail(c, id, "no remote pieces: rc %d '%s'", rc, glex_last_error());
        rc = glex_vp_get_sgl(c->vp, 0, rem, 3, 0, loc, NL, &moved);
        if (rc != GLEX_ENOTSUP || !strstr(glex_last_error(), "another node of this host"))
            glex_case_fail(c, id, "itself: rc %d '%s'", rc, glex_last_error());
        rc = glex_vp_get_sgl(c->vp, 9, rem, 3, 0, loc, NL, &moved);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "allowed nodes 0..1"))
            glex_case_fail(c, id, "node 9: rc %d '%s'", rc, glex_last_error());
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    id = glex_case(c, "a node publishes at most GLEX_PUBLISH_MAX regions and says so; a "
                      "withdrawn region is no longer found");
    if (c->rank == 1) {
        for (uint32_t k = 1; k < GLEX_PUBLISH_MAX; k++)
            if (glex_region_publish(c->f, &r))
                glex_case_fail(c, id, "publish %u: %s", k, glex_last_error());
        int rc = glex_region_publish(c->f, &r);
        if (rc != GLEX_EBUSY || !strstr(glex_last_error(), "allowed 4"))
            glex_case_fail(c, id, "one too many: rc %d '%s'", rc, glex_last_error());
        glex_region_t none = { 0 };
        none.fd = -1;
        if (glex_region_publish(c->f, &none) != GLEX_EINVAL)
            glex_case_fail(c, id, "an empty region was published");
        glex_region_withdraw(c->f, &r);
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    uint64_t base, bytes;
    for (uint32_t i = 0; i < GLEX_PUBLISH_MAX; i++)
        if (glex_region_published(c->f, 1, i, &base, &bytes) != GLEX_ENOENT)
            glex_case_fail(c, id, "index %u still published", i);
    if (glex_region_published(c->f, 5, 0, &base, &bytes) != GLEX_ENOENT)
        glex_case_fail(c, id, "node 5 of 2 has a region");
    if (from_rank1(c, w)) /* rank 0 is through before the memory goes */
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    glex_region_free(&r);
    return 0;
}

/* a published region its peers cannot map (its descriptor closed after
 * publishing: what a kernel without pidfd_getfd, a seccomp filter or
 * valgrind gives): RDMA into it lands by cross-memory attach, and the
 * peer's engine tries the mapping once, not again for every transfer */
static int rank_unmappable(glex_tctx_t *c)
{
    int id = glex_case(c, "RDMA puts into a published region that cannot be mapped land by "
                          "cross-memory attach; the mapping is tried at the first, not again");
    glex_region_t r = { 0 };
    int64_t w[3] = { 0, 0, 0 };
    enum { BYTES = 4096, PIECE = 256 };
    if (c->rank == 1) {
        if (glex_region_alloc(&r, BYTES) || glex_region_publish(c->f, &r))
            glex_case_fail(c, id, "alloc/publish: %s", glex_last_error());
        close(r.fd); /* still mapped here; the number no longer names it */
        r.fd = -1;
        w[0] = (int64_t)(uintptr_t)r.base;
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "bcast: %s", glex_last_error());
    if (c->rank == 0) {
        uint8_t buf[PIECE];
        glex_cqe_t e;
        glex_rmap_t none = { 0 };
        for (int k = 0; k < 3; k++) {
            if (k) /* a known text: a mapping tried again would replace it */
                (void)glex_rmap_get(c->f, 7, 0, 1, 64, &none);
            memset(buf, k + 1, sizeof buf);
            glex_desc_t d = rdma_put_desc(1, buf, (uint64_t)w[0] + (uint64_t)k * PIECE, sizeof buf);
            if (glex_vp_post(c->vp, &d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000) ||
                e.status) {
                glex_case_fail(c, id, "put %d: %s", k, glex_last_error());
                break;
            }
            const char *want = k ? "node 7: allowed" : "pidfd_getfd";
            if (!strstr(glex_last_error(), want)) {
                glex_case_fail(c, id, "put %d: error text '%s', expected '%s' (%s)", k,
                               glex_last_error(), want,
                               k ? "the mapping was tried again" : "no mapping tried");
                break;
            }
        }
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    for (size_t i = 0; c->rank == 1 && r.base && i < 3 * PIECE; i++)
        if (((uint8_t *)r.base)[i] != (uint8_t)(i / PIECE + 1)) {
            glex_case_fail(c, id, "byte %zu is %u, expected %u", i, ((uint8_t *)r.base)[i],
                           (unsigned)(i / PIECE + 1));
            break;
        }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    glex_region_withdraw(c->f, &r);
    glex_region_free(&r);
    return 0;
}

/* GLEX_YIELD_US auto: polling with sched_yield up to GLEX_YIELD_MAX_PER_CPU
 * processes per online CPU, sleeping at once above (and with a CPU each) */
static void test_yield_auto(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const uint32_t k[] = { 1, 2, GLEX_YIELD_MAX_PER_CPU, GLEX_YIELD_MAX_PER_CPU + 1 };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint32_t nodes = k[i] * (uint32_t)(ncpu > 0 ? ncpu : 1);
        int want = k[i] > 1 && k[i] <= GLEX_YIELD_MAX_PER_CPU ? 1000 : 0;
        glex_fabric_t *f;
        int rc = glex_fabric_open("yieldauto", nodes, 0, NULL, &f);
        int got = rc ? -1 : glex_yield_us(f);
        tap_ok(got == want, "%u processes on %ld CPUs (%u per CPU): GLEX_YIELD_US auto %d us "
                            "(expected %d)%s%s", nodes, ncpu, k[i], got, want, rc ? ": " : "",
               rc ? glex_last_error() : "");
        if (!rc)
            glex_fabric_close(f);
    }
}

/* the processes per CPU collectives are chosen by: the job's over this
 * machine's CPUs until the job's busiest machine is told (across hosts);
 * out of range refused with the value */
static void test_job_per_cpu(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nodes = 3 * (uint32_t)(ncpu > 0 ? ncpu : 1);
    glex_fabric_t *f;
    if (glex_fabric_open("jobpercpu", nodes, 0, NULL, &f)) {
        tap_ok(0, "job per CPU: open %u nodes: %s", nodes, glex_last_error());
        return;
    }
    unsigned before = glex_procs_per_cpu(f);
    int r0 = glex_fabric_set_job_per_cpu(f, 0);
    int rbig = glex_fabric_set_job_per_cpu(f, nodes + 1);
    const char *e = glex_last_error();
    int named = strstr(e, "allowed 1..") != NULL;
    int r1 = glex_fabric_set_job_per_cpu(f, 1);
    unsigned after = glex_procs_per_cpu(f), here = glex_procs_per_cpu_here(f);
    tap_ok(before == 3 && r0 == GLEX_EINVAL && rbig == GLEX_EINVAL && named && r1 == GLEX_OK &&
               after == 1 && here == 3,
           "%u processes on %ld CPUs: %u per CPU, 0 and %u refused (%d, %d: %s), the busiest "
           "machine's 1 then chooses (%u) while waits keep this machine's %u",
           nodes, ncpu, before, nodes + 1, r0, rbig, e, after, here);
    glex_fabric_close(f);
}

/* glex_cpu_to_spare: the processes of this host not asleep on their bell,
 * one left out, against the CPUs; a CPU each always spares one */
static void test_cpu_to_spare(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t cpus = (uint32_t)(ncpu > 0 ? ncpu : 1), nodes = 3 * cpus;
    glex_fabric_t *f, *g;
    if (glex_fabric_open("cpuspare", nodes, 0, NULL, &f)) {
        tap_ok(0, "CPU to spare: open %u nodes: %s", nodes, glex_last_error());
        return;
    }
    int all_awake = glex_cpu_to_spare(f, 0);
    /* all asleep but cpus of them (node 0 among them): none to spare for
     * another; leaving one of the awake out, one */
    for (uint32_t i = cpus; i < nodes; i++)
        atomic_store(&glex_node_shm(f, i)->host_sleepers, 1);
    int for_sleeper = glex_cpu_to_spare(f, nodes - 1), for_awake = glex_cpu_to_spare(f, 0);
    atomic_store(&glex_node_shm(f, 0)->host_sleepers, 1);
    int one_asleep = glex_cpu_to_spare(f, nodes - 1);
    for (uint32_t i = 0; i < nodes; i++)
        atomic_store(&glex_node_shm(f, i)->host_sleepers, 0);
    glex_fabric_close(f);
    int fits = -1;
    if (glex_fabric_open("cpuspare1", cpus, 0, NULL, &g) == GLEX_OK) {
        fits = glex_cpu_to_spare(g, 0);
        glex_fabric_close(g);
    }
    tap_ok(!all_awake && !for_sleeper && for_awake && one_asleep && fits == 1,
           "%u processes on %u CPUs: all awake, none to spare (%d); %u awake: none for a "
           "sleeper (%d), one for an awake one (%d), one once one of them sleeps (%d); "
           "%u processes: always (%d)",
           nodes, cpus, all_awake, cpus, for_sleeper, for_awake, one_asleep, cpus, fits);
}

/* glex_copy / glex_move: every distance modulo 64 and sizes around the
 * loop's threshold give memcpy's bytes; overlapping moves keep memmove's */
static void test_copy(void)
{
    enum { MAXN = 5000, PAD = 4096, TOTAL = 16384 }; /* TOTAL >= MAXN + 2 * PAD, 4 KiB pages */
    uint8_t *src = aligned_alloc(4096, TOTAL), *dst = aligned_alloc(4096, TOTAL);
    uint8_t *ref = malloc(MAXN + 2 * PAD);
    const size_t sizes[] = { 0, 1, 63, 1023, 1024, 1025, 2048, 4096, 4097, MAXN };
    unsigned bad = 0, cases = 0;
    for (size_t k = 0; k < MAXN + 2 * PAD; k++)
        src[k] = (uint8_t)(k * 7 + 3);
    for (uint32_t loop_max = 512; loop_max <= 4096; loop_max *= 8) /* memcpy, the loop */
    for (unsigned dist = 0; dist < 4096; dist += dist < 80 ? 1 : 509)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            glex_copy_set_loop_max(loop_max);
            size_t n = sizes[i];
            memset(dst, 0xee, MAXN + 2 * PAD);
            memset(ref, 0xee, MAXN + 2 * PAD);
            glex_copy(dst + dist, src + 32, n);
            memcpy(ref + dist, src + 32, n);
            bad += memcmp(dst, ref, MAXN + 2 * PAD) != 0;
            /* moves within one buffer, the destination dist and 4 KiB +
             * dist bytes on (overlapping, and apart up to 4 KiB + dist) */
            for (size_t far = 0; far <= PAD; far += PAD) {
                memcpy(dst, src, MAXN + 2 * PAD);
                memcpy(ref, src, MAXN + 2 * PAD);
                glex_move(dst + far + dist, dst, n);
                memmove(ref + far + dist, ref, n);
                bad += memcmp(dst, ref, MAXN + 2 * PAD) != 0;
            }
            cases += 3;
        }
    glex_copy_set_loop_max(GLEX_COPY_LOOP_MAX);
    tap_ok(!bad, "glex_copy and glex_move give memcpy's and memmove's bytes: %u of %u cases "
                 "differ (distances 0-79 and to 4 KiB, 0-%d bytes, overlapping moves; "
                 "small copies by the loop and by memcpy)",
           bad, cases, MAXN);
    free(src);
    free(dst);
    free(ref);
}

/* the sender's counts of a case: desc descriptors posted and executed,
 * packets packets sent between before and after */
static void check_counts(glex_tctx_t *c, int id, const glex_vp_counters_t *before,
                         const glex_vp_counters_t *after, uint64_t desc, uint64_t packets)
{
    uint64_t posted = after->desc_posted - before->desc_posted;
    uint64_t executed = after->desc_executed - before->desc_executed;
    uint64_t sent = after->packets_sent - before->packets_sent;
    if (posted != desc || executed != desc || sent != packets)
        glex_case_fail(c, id, "counted %llu posted, %llu executed, %llu packets sent (want "
                              "%llu, %llu, %llu)",
                       (unsigned long long)posted, (unsigned long long)executed,
                       (unsigned long long)sent, (unsigned long long)desc,
                       (unsigned long long)desc, (unsigned long long)packets);
}

/* the next receive-queue entry, waiting up to 5 s: 1, or 0 when none came */
static int wait_rqe(glex_vp_t *vp, glex_rqe_t *r)
{
    for (int t = 0; t < 5000; t++, usleep(1000))
        if (glex_vp_poll_rq(vp, r))
            return 1;
    return 0;
}

/* the bytes of message i of rank_post_mp: piece k's byte j */
static uint8_t mp_byte(uint32_t i, int k, uint32_t j)
{
    return (uint8_t)(i * 31u + (uint32_t)k * 7u + j * 3u + 1u);
}

/* glex_vp_post_mp: its checks, and messages through a receive queue too
 * small for them, mixed with whole descriptors: the first 16 of 24 go at
 * their post, the rest wait in the DQ (no engine thread: GLEX_ENGINE_THREAD=0
 * in main); once the receiver has emptied its queue 16 more are posted,
 * which must queue behind those (the VP is not idle) until the sender's
 * progress calls run them, in order */
static int rank_post_mp(glex_tctx_t *c)
{
    enum { N = 40, HDR = 20 };
    int id = glex_case(c, "glex_vp_post_mp rejects a bad node, VP, length or piece, naming the "
                          "allowed range");
    if (c->rank == 0) {
        static uint8_t big[300];
        glex_piece_t p8 = { big, 8 }, p300 = { big, 300 }, pnull = { NULL, 4 };
        const char *want[] = { "node 0..1", "vp 0..", "0..296 bytes", "at null" };
        for (int k = 0; k < 4; k++) {
            int rc = glex_vp_post_mp(c->vp, k == 0 ? 2 : 1, k == 1 ? 4096 : 0,
                                     k == 2 ? &p300 : k == 3 ? &pnull : &p8, 1);
            if (rc != GLEX_EINVAL || !strstr(glex_last_error(), want[k]))
                glex_case_fail(c, id, "case %d: rc %d, '%s' (want '%s')", k, rc,
                               glex_last_error(), want[k]);
        }
    }
    id = glex_case(c, "glex_vp_post_mp: %d messages of 3 pieces, every other one a whole MP "
                      "descriptor, arrive whole and in order through a 16-entry receive queue, "
                      "counted as %d descriptors executed and packets sent", N, N);
    glex_desc_t bar = coll_desc(0); /* both VPs open, nothing queued: the sends start at once */
    bar.cp = bar.branch = 1;
    bar.dest_id = bar.recv_id = (uint32_t)(1 - c->rank);
    glex_cqe_t e;
    if (glex_vp_post(c->vp, &bar, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    if (c->rank == 0) {
        glex_vp_counters_t before, after;
        glex_vp_counters(c->f, 0, 0, &before);
        for (uint32_t i = 0; i < N; i++) {
            if (i == 24)
                usleep(400000); /* the receiver empties its queue; 8 wait in the DQ */
            uint8_t hdr[HDR], data[200];
            uint32_t len = (i * 37u) % 200u;
            for (uint32_t j = 0; j < HDR; j++)
                hdr[j] = mp_byte(i, 1, j);
            for (uint32_t j = 0; j < len; j++)
                data[j] = mp_byte(i, 2, j);
            glex_piece_t p[3] = { { &i, sizeof i }, { hdr, HDR }, { data, len } };
            int rc;
            if (i % 2 == 0) { /* 24 too: the first post after the pause */
                rc = glex_vp_post_mp(c->vp, 1, 0, p, 3);
            } else {
                glex_desc_t d;
                memset(&d, 0, sizeof d);
                d.kind = GLEX_DESC_MP;
                d.ch = d.ct = 1;
                d.dest_id = 1;
                d.inline_len = (uint16_t)(sizeof i + HDR + len);
                memcpy(d.data, &i, sizeof i);
                memcpy(d.data + sizeof i, hdr, HDR);
                memcpy(d.data + sizeof i + HDR, data, len);
                rc = glex_vp_post(c->vp, &d, 1);
            }
            if (rc)
                glex_case_fail(c, id, "post %u: %s", i, glex_last_error());
        }
        for (int t = 0; t < 5000; t++, usleep(1000)) {
            glex_progress(c->f);
            glex_vp_counters(c->f, 0, 0, &after);
            if (after.desc_executed - before.desc_executed >= N)
                break;
        }
        check_counts(c, id, &before, &after, N, N);
    } else {
        usleep(200000); /* the queue fills; the rest wait in the sender's DQ */
        for (uint32_t i = 0; i < N; i++) {
            glex_rqe_t r;
            int got = wait_rqe(c->vp, &r);
            uint32_t len = (i * 37u) % 200u, idx = ~0u, bad = 0;
            if (got)
                memcpy(&idx, r.data, sizeof idx);
            for (uint32_t j = 0; got && j < HDR + len; j++)
                bad += r.data[sizeof idx + j] != (j < HDR ? mp_byte(i, 1, j)
                                                          : mp_byte(i, 2, j - HDR));
            if (!got || idx != i || r.len != sizeof idx + HDR + len || bad) {
                glex_case_fail(c, id, "message %u: got %d, index %u, %u bytes (want %zu), %u "
                                      "bytes wrong", i, got, idx, got ? r.len : 0,
                               sizeof idx + HDR + len, bad);
                break;
            }
        }
    }
    return 0;
}

/* GLEX_MP_QUIET: rank 1 counts as asleep (its host_sleepers set, it polls
 * meanwhile).  Two quiet MP descriptors, the first to its VP 1 that it
 * opens only later (both wait in the DQ: the engine's step runs them), and
 * a quiet MP at its post reach its receive queues without ringing its host
 * bell; a plain MP after them rings it once.  Unknown flags and a quiet bit
 * on an RDMA descriptor are refused with the value. */
static int rank_post_mp_quiet(glex_tctx_t *c)
{
    int id = glex_case(c, "GLEX_MP_QUIET: 3 quiet MPs to a sleeping host (2 through the DQ) "
                          "leave its bell as it was, a plain one after them rings it; bad "
                          "flags refused");
    glex_node_shm_t *n1 = glex_node_shm(c->f, 1);
    glex_desc_t d[2] = { coll_desc(0) }; /* a barrier: both VPs 0 open */
    d[0].cp = d[0].branch = 1;
    d[0].dest_id = d[0].recv_id = (uint32_t)(1 - c->rank);
    glex_cqe_t e;
    if (glex_vp_post(c->vp, d, 1) || !glex_test_wait_cqe(c->f, c->vp, &e, 5000))
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    if (c->rank == 1) {
        atomic_fetch_add(&n1->host_sleepers, 1);
        usleep(100000); /* rank 0's first MP waits for this VP */
        glex_vp_t *vp1 = NULL;
        glex_rqe_t r;
        if (glex_vp_open(c->f, 1, &vp1) || !wait_rqe(vp1, &r))
            glex_case_fail(c, id, "VP 1: %s", glex_last_error());
        for (uint32_t i = 1; i <= 3; i++) {
            uint32_t got = 0;
            if (!wait_rqe(c->vp, &r) || (memcpy(&got, r.data, sizeof got), got != i)) {
                glex_case_fail(c, id, "message %u: got %u", i, got);
                break;
            }
        }
        glex_vp_close(vp1);
        atomic_fetch_sub(&n1->host_sleepers, 1);
        return 0;
    }
    for (int t = 0; t < 5000 && !atomic_load(&n1->host_sleepers); t++)
        usleep(1000);
    uint32_t bell = atomic_load(&n1->hostbell), v = 1;
    for (int k = 0; k < 2; k++) {
        memset(&d[k], 0, sizeof d[k]);
        d[k].kind = GLEX_DESC_MP;
        d[k].ch = d[k].ct = 1;
        d[k].dest_id = 1;
        d[k].dest_vp = (uint16_t)(1 - k);
        d[k].quiet = 1;
        d[k].inline_len = sizeof v;
        memcpy(d[k].data, &v, sizeof v);
    }
    int rc = glex_vp_post(c->vp, d, 2);
    for (int t = 0; t < 5000 && !rc && atomic_load(&glex_vp_shm(c->f, 1, 0)->rq_tail) < 1; t++)
        glex_progress(c->f), usleep(1000); /* the DQ's MPs, run by this process */
    glex_piece_t p = { &v, sizeof v };
    int bad = glex_vp_post_mp_flags(c->vp, 1, 0, &p, 1, 2);
    if (bad != GLEX_EINVAL || !strstr(glex_last_error(), "flags 0x2"))
        glex_case_fail(c, id, "flags 2: rc %d, '%s'", bad, glex_last_error());
    glex_desc_t r;
    memset(&r, 0, sizeof r);
    r.kind = GLEX_DESC_RDMA;
    r.ch = r.ct = 1;
    r.dest_id = 1;
    r.quiet = 1;
    bad = glex_vp_post(c->vp, &r, 1);
    if (bad != GLEX_EINVAL || !strstr(glex_last_error(), "quiet"))
        glex_case_fail(c, id, "RDMA with quiet=1: rc %d, '%s'", bad, glex_last_error());
    v = 2;
    if (!rc)
        rc = glex_vp_post_mp_flags(c->vp, 1, 0, &p, 1, GLEX_MP_QUIET);
    uint32_t quiet_bell = atomic_load(&n1->hostbell);
    v = 3;
    if (!rc)
        rc = glex_vp_post_mp(c->vp, 1, 0, &p, 1);
    for (int t = 0; t < 5000 && !rc && atomic_load(&n1->hostbell) == quiet_bell; t++)
        glex_progress(c->f), usleep(1000);
    uint32_t plain_bell = atomic_load(&n1->hostbell);
    if (rc || quiet_bell != bell || plain_bell != bell + 1)
        glex_case_fail(c, id, "posts %d (%s); bell %u, after the quiet ones %u, after the "
                              "plain one %u (want %u, %u, %u)", rc, rc ? glex_last_error() : "",
                       bell, quiet_bell, plain_bell, bell, bell, bell + 1);
    return 0;
}

/* message i of rank_post_put_mp: its data bytes, where they go in the
 * receiver's region, and the byte j of them */
enum { PM_N = 40, PM_REGION = 64 * 1024 };
static uint32_t pm_len(uint32_t i) { return i % 5 == 4 ? 0 : 100u + (i * 37u) % 1400u; }
static uint32_t pm_off(uint32_t i) { return (i * 1531u) % (PM_REGION - 1500u); }
static uint8_t pm_byte(uint32_t i, uint32_t j) { return (uint8_t)(i * 13u + j * 7u + 5u); }

/* glex_vp_post_put_mp: its checks, and 40 puts into a region the receiver
 * published, each followed by its MP, through a 16-entry receive queue and
 * CQ (no engine thread: GLEX_ENGINE_THREAD=0 in main): the first ones run
 * at their post, the rest wait in the DQ behind a full queue until the
 * receiver takes its entries and the sender's progress calls run them; a
 * message's data are in place when its MP is seen, its CQE carries its
 * cookie, CQEs come in order */
static int rank_post_put_mp(glex_tctx_t *c)
{
    int id = glex_case(c, "glex_vp_post_put_mp rejects a null source or target, a length over "
                          "the limit, a bad node, glex_host_nap a nap over 1 s, naming the "
                          "allowed range");
    glex_region_t r = { 0 };
    int64_t w[3] = { 0, 0, 0 };
    if (c->rank == 1) {
        if (glex_region_alloc(&r, PM_REGION) || glex_region_publish(c->f, &r))
            glex_case_fail(c, id, "alloc/publish: %s", glex_last_error());
        w[0] = (int64_t)(uintptr_t)r.base;
    }
    if (from_rank1(c, w))
        glex_case_fail(c, id, "bcast: %s", glex_last_error());
    uint64_t base = (uint64_t)w[0];
    if (c->rank == 0) {
        static uint8_t src[2048];
        uint32_t four = 4;
        glex_piece_t p1 = { &four, sizeof four };
        struct {
            uint32_t node;
            const void *src;
            uint64_t remote, len;
            const char *want;
        } bad[] = {
            { 1, NULL, base, 64, "both addresses non-null" },
            { 1, src, 0, 64, "both addresses non-null" },
            { 1, src, base, (1ull << 40) + 1, "allowed 0..1099511627776 bytes" },
            { 2, src, base, 64, "node 0..1" },
        };
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            int rc = glex_vp_post_put_mp(c->vp, bad[k].node, 0, bad[k].src, bad[k].remote,
                                         bad[k].len, &p1, 1, 7);
            if (rc != GLEX_EINVAL || !strstr(glex_last_error(), bad[k].want))
                glex_case_fail(c, id, "case %zu: rc %d, '%s' (want '%s')", k, rc,
                               glex_last_error(), bad[k].want);
        }
        int rc = glex_host_nap(c->f, 1001, 1);
        if (rc != GLEX_EINVAL || !strstr(glex_last_error(), "nap of 1001 ms: allowed 0..1000"))
            glex_case_fail(c, id, "glex_host_nap(1001): rc %d, '%s'", rc, glex_last_error());
    }
    id = glex_case(c, "glex_vp_post_put_mp: %d puts into a published region, each then its MP, "
                      "through a 16-entry receive queue and CQ: every message's data in place "
                      "when its MP is seen, CQEs in order with their cookies, %d descriptors "
                      "executed, a packet each but the empty puts", PM_N, 2 * PM_N);
    if (c->rank == 0) {
        glex_vp_counters_t before, after;
        glex_vp_counters(c->f, 0, 0, &before);
        uint32_t cqes = 0;
        glex_cqe_t e;
        static uint8_t data[PM_N][1500]; /* a queued put reads its data when it runs */
        for (uint32_t i = 0; i <= PM_N; i++) {
            for (int t = 0; i == PM_N && cqes < PM_N && t < 5000; t++, usleep(1000))
                glex_progress(c->f); /* the queued ones run */
            while (glex_vp_poll_cq(c->vp, &e) == 1) {
                if (e.cookie != 1000u + cqes || e.status)
                    glex_case_fail(c, id, "CQE %u: cookie %llu status %d", cqes,
                                   (unsigned long long)e.cookie, e.status);
                cqes++;
            }
            if (i == PM_N)
                break;
            if (i == 24)
                usleep(400000); /* the receiver empties its queue; 8 wait in the DQ */
            uint32_t len = pm_len(i), off = pm_off(i), hdr[3] = { i, off, len };
            for (uint32_t j = 0; j < len; j++)
                data[i][j] = pm_byte(i, j);
            glex_piece_t p[2] = { { hdr, sizeof hdr }, { "tail", 4 } };
            if (glex_vp_post_put_mp(c->vp, 1, 0, len ? data[i] : NULL, len ? base + off : 0,
                                    len, p, 2, 1000u + i))
                glex_case_fail(c, id, "post %u: %s", i, glex_last_error());
        }
        glex_vp_counters(c->f, 0, 0, &after);
        uint32_t packets = PM_N; /* the MPs, and the puts that move bytes */
        for (uint32_t i = 0; i < PM_N; i++)
            packets += pm_len(i) != 0;
        if (cqes != PM_N)
            glex_case_fail(c, id, "%u CQEs of %d", cqes, PM_N);
        check_counts(c, id, &before, &after, 2 * PM_N, packets);
    } else {
        usleep(200000); /* the queue fills; the rest wait in the sender's DQ */
        for (uint32_t i = 0; i < PM_N; i++) {
            glex_rqe_t q;
            int got = wait_rqe(c->vp, &q);
            uint32_t hdr[3] = { ~0u, 0, 0 }, bad = 0;
            if (got)
                memcpy(hdr, q.data, sizeof hdr);
            uint32_t len = pm_len(i), off = pm_off(i);
            for (uint32_t j = 0; got && r.base && j < len; j++)
                bad += ((uint8_t *)r.base)[off + j] != pm_byte(i, j);
            if (!got || hdr[0] != i || hdr[1] != off || hdr[2] != len ||
                q.len != sizeof hdr + 4 || memcmp(q.data + sizeof hdr, "tail", 4) || bad) {
                glex_case_fail(c, id, "message %u: got %d, header %u/%u/%u, %u bytes, %u data "
                                      "bytes wrong", i, got, hdr[0], hdr[1], hdr[2],
                               got ? q.len : 0, bad);
                break;
            }
        }
    }
    if (from_rank1(c, w)) /* the region stays until the sender is done */
        glex_case_fail(c, id, "barrier: %s", glex_last_error());
    if (c->rank == 1) {
        glex_region_withdraw(c->f, &r);
        glex_region_free(&r);
    }
    return 0;
}

int main(void)
{
    test_copy();
    test_segment_lifecycle();
    test_yield_auto();
    test_job_per_cpu();
    test_cpu_to_spare();
    test_segment_mismatch();
    test_params();
    test_descriptor_checks();
    test_engine_bind();
    test_rq_pending();
    test_mp_long();
    test_hash_table();
    test_hash_run_ahead();
    test_jobs();
    test_eager_held();
    glex_run_group(2, NULL, rank_mp_rdma, NULL, 60, "emu mp/rdma");
    glex_params_t q;
    glex_params_default(&q);
    q.cq_depth = 16; /* the receive queue's depth too */
    setenv("GLEX_ENGINE_THREAD", "0", 1); /* the DQ runs in the sender's progress calls only */
    glex_run_group(2, &q, rank_post_mp, NULL, 60, "emu post_mp");
    if (split_hosts())
        tap_ok(1, "emu post_mp quiet # SKIP a host on another host wakes by its own rules");
    else
        glex_run_group(2, &q, rank_post_mp_quiet, NULL, 60, "emu post_mp quiet");
    if (split_hosts())
        tap_ok(1, "emu post_put_mp # SKIP regions are mapped within one host");
    else
        glex_run_group(2, &q, rank_post_put_mp, NULL, 60, "emu post_put_mp");
    if (split_hosts())
        tap_ok(1, "emu unmappable region # SKIP regions are mapped within one host");
    else /* the puts run in the posting thread: its error text tells */
        glex_run_group(2, NULL, rank_unmappable, NULL, 60, "emu unmappable region");
    unsetenv("GLEX_ENGINE_THREAD");
    if (split_hosts())
        tap_ok(1, "emu regions # SKIP regions are mapped within one host");
    else
        glex_run_group(2, NULL, rank_regions, NULL, 60, "emu regions");
    if (split_hosts())
        tap_ok(1, "emu published regions # SKIP regions are mapped within one host");
    else
        glex_run_group(2, NULL, rank_published, NULL, 60, "emu published regions");
    glex_params_t p;
    glex_params_default(&p);
    p.unit_buffer_kb = 64;
    p.vps_per_node = 1;
    glex_run_group(2, &p, rank_pulses, NULL, 120, "emu pulses");
    glex_params_default(&p);
    p.timeout_ms = 300;
    glex_run_group(2, &p, rank_late_peer, NULL, 60, "emu late peer");
    glex_params_default(&p);
    p.units = 1;
    p.vps_per_node = 1;
    p.table_slots = 64;
    glex_run_group(2, &p, rank_backpressure, NULL, 60, "emu back-pressure");
    return tap_done();
}
