/* glex_emu_params.c - NIC parameters: defaults, GLEX_* environment, checks. */
#include "glex_emu_internal.h"

#include <stdlib.h>
#include <string.h>

void glex_params_default(glex_params_t *p)
{
    p->units = 8;
    p->unit_buffer_kb = 512;
    p->table_slots = 2048;
    p->inline_max = 48;
    p->vps_per_node = 4;
    p->dq_depth = 1024;
    p->cq_depth = 1024;
    p->pulses = 4;
    p->timeout_ms = 30000;
    p->spin_us = -1;
    p->yield_us = -1;
    p->mailboxes = 16;
    p->mailbox_kb = 64;
    p->vtime = 0;
    p->mcast_entries = 64;
    p->mcast_members = 4096;
    p->mcast_age_s = 300;
}

typedef struct {
    const char *env;
    size_t offset;
    uint32_t lo, hi;
} glex_param_row_t;

#define ROW(env, field, lo, hi) { env, offsetof(glex_params_t, field), lo, hi }
static const glex_param_row_t rows[] = {
    ROW("GLEX_UNITS", units, 1, GLEX_MAX_UNITS),
    ROW("GLEX_UNIT_BUFFER_KB", unit_buffer_kb, 16, 1u << 20),
    ROW("GLEX_TABLE_SLOTS", table_slots, 64, 1u << 20),
    ROW("GLEX_INLINE_MAX", inline_max, GLEX_CTRL_BYTES, GLEX_INLINE_CAP),
    ROW("GLEX_VPS_PER_NODE", vps_per_node, 1, GLEX_MAX_VPS),
    ROW("GLEX_DQ_DEPTH", dq_depth, 16, 1u << 16),
    ROW("GLEX_CQ_DEPTH", cq_depth, 16, 1u << 16),
    ROW("GLEX_PULSES", pulses, 1, 64),
    ROW("GLEX_MAILBOXES", mailboxes, 0, 1024),
    ROW("GLEX_MAILBOX_KB", mailbox_kb, 1, 1024),
    ROW("GLEX_VTIME", vtime, 0, 1),
    ROW("GLEX_MCAST_ENTRIES", mcast_entries, 1, 4096),
    ROW("GLEX_MCAST_MEMBERS", mcast_members, 2, GLEX_MAX_NODES),
    ROW("GLEX_MCAST_AGE_S", mcast_age_s, 1, 86400),
};
#define NROWS (sizeof rows / sizeof rows[0])

/* the int32 knobs: "auto" (-1) or 0..hi */
static const struct {
    const char *env;
    size_t off;
    uint32_t hi;
} budgets[] = { { "GLEX_SPIN_US", offsetof(glex_params_t, spin_us), 100000 },
                { "GLEX_YIELD_US", offsetof(glex_params_t, yield_us), 100000 } };
#define NBUDGETS (sizeof budgets / sizeof budgets[0])

int glex_params_from_env(glex_params_t *p)
{
    for (size_t i = 0; i < NROWS; i++) {
        uint64_t v = *(uint32_t *)((char *)p + rows[i].offset);
        int rc = glex_env_uint(rows[i].env, rows[i].lo, rows[i].hi, &v);
        if (rc)
            return rc;
        *(uint32_t *)((char *)p + rows[i].offset) = (uint32_t)v;
    }
    const char *s = glex_env("GLEX_TIMEOUT");
    if (s) {
        char *end;
        double sec = strtod(s, &end);
        if (end == s || *end || !(sec >= 0.001 && sec <= 86400.0))
            return glex_error(GLEX_EINVAL,
                              "GLEX_TIMEOUT=%s is invalid: allowed range 0.001..86400 seconds", s);
        p->timeout_ms = (uint32_t)(sec * 1000.0 + 0.5);
    }
    for (size_t i = 0; i < NBUDGETS; i++) {
        int32_t *out = (int32_t *)((char *)p + budgets[i].off);
        int64_t v = *out;
        int rc = glex_env_uint_auto(budgets[i].env, 0, budgets[i].hi, &v);
        if (rc)
            return rc;
        *out = (int32_t)v;
    }
    return glex_params_check(p);
}

uint32_t glex_params_table_usable(const glex_params_t *p)
{
    return p->table_slots - p->table_slots * GLEX_TABLE_RESERVE_PCT / 100;
}

uint32_t glex_jobs_per_unit(const glex_params_t *p)
{
    return (GLEX_MAX_JOBS + p->units - 1) / p->units;
}

int glex_params_check(const glex_params_t *p)
{
    for (size_t i = 0; i < NROWS; i++) {
        uint32_t v = *(const uint32_t *)((const char *)p + rows[i].offset);
        if (v < rows[i].lo || v > rows[i].hi)
            return glex_error(GLEX_EINVAL, "%s=%u is out of range %u..%u", rows[i].env, v,
                              rows[i].lo, rows[i].hi);
    }
    if (p->timeout_ms < 1 || p->timeout_ms > 86400000u)
        return glex_error(GLEX_EINVAL, "timeout_ms=%u is out of range 1..86400000",
                          p->timeout_ms);
    for (size_t i = 0; i < NBUDGETS; i++) {
        int32_t v = *(const int32_t *)((const char *)p + budgets[i].off);
        if (v < -1 || v > (int32_t)budgets[i].hi)
            return glex_error(GLEX_EINVAL, "%s=%d is out of range auto(-1)..%u", budgets[i].env,
                              v, budgets[i].hi);
    }
    /* a page of guaranteed credit per (JobID, VP) must fit in half the unit
     * RAM (a quarter is split so when it can be): see doc/nic-model.md */
    uint64_t need = 2ull * glex_jobs_per_unit(p) * p->vps_per_node;
    if (p->unit_buffer_kb < need)
        return glex_error(GLEX_EINVAL,
                          "GLEX_UNIT_BUFFER_KB=%u too small for GLEX_UNITS=%u and "
                          "GLEX_VPS_PER_NODE=%u: allowed range %llu..%u",
                          p->unit_buffer_kb, p->units, p->vps_per_node,
                          (unsigned long long)need, 1u << 20);
    if (p->cq_depth < 2)
        return glex_error(GLEX_EINVAL, "GLEX_CQ_DEPTH=%u is out of range 16..65536", p->cq_depth);
    return GLEX_OK;
}
