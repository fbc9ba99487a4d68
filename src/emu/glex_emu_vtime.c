/* glex_emu_vtime.c - virtual time (GLEX_VTIME=1): the model's parameters
 * (defaults, GLEX_VTIME_PARAMS), the fat tree's routes, and the host's
 * virtual clock.  The engine charges the NIC's side (glex_emu_engine.c);
 * doc/vtime.md has every parameter, where its default comes from, and what
 * the model leaves out. */
#include "glex_emu_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    double def, lo, hi;
    const char *what;
} vt_param_t;

/* Defaults: the structural values are assumptions (doc/vtime.md says which);
 * host_poll, io, nic_task, nic_tx and nic_rx are fitted to the first
 * paper's two measured rows (16 and 256 nodes, 16 B) by
 * bench/vtime-calibrate.py. */
static const vt_param_t params[GLEX_VT_NPARAMS] = {
    [GLEX_VT_HOST_POST] = { "host_post_ns", 60, 0, 1e9,
                            "host writes a post (descriptors or a list entry) and rings the doorbell "
                            "(L_CPU)" },
    [GLEX_VT_HOST_POLL] = { "host_poll_ns", 100.067, 0, 1e9,
                            "host notices and reads a completion or receive entry (L_poll)" },
    [GLEX_VT_HOST_REDUCE_STARTUP] = { "host_reduce_startup_ns", 20, 0, 1e9,
                                      "host starts a software reduction (T_soft_startup)" },
    [GLEX_VT_HOST_REDUCE_ELEM] = { "host_reduce_elem_ns", 1, 0, 1e9,
                                   "host combines one element in software (T_compute)" },
    [GLEX_VT_IO] = { "io_ns", 5718.746, 0, 1e9,
                     "one host<->NIC crossing: descriptor fetch, completion or receive entry "
                     "write (L_IO)" },
    [GLEX_VT_NIC_TASK] = { "nic_task_ns", 2329.842, 0, 1e9,
                           "an offload unit starts a collective task (T_nic_startup)" },
    [GLEX_VT_NIC_DESC] = { "nic_desc_ns", 20, 0, 1e9, "the NIC decodes one descriptor" },
    [GLEX_VT_NIC_TX] = { "nic_tx_ns", 21.416, 0, 1e9, "the NIC builds and injects one packet" },
    [GLEX_VT_NIC_RX] = { "nic_rx_ns", 21.416, 0, 1e9,
                         "the NIC takes one packet from its hash buffer" },
    [GLEX_VT_NIC_TRIGGER] = { "nic_trigger_ns", 20, 0, 1e9,
                              "the trigger unit fires a receive whose packets are in" },
    [GLEX_VT_ALU_INT] = { "alu_int_ns", 0.5, 0, 1e9, "ALU, one integer element (8-64 bit)" },
    [GLEX_VT_ALU_FLOAT] = { "alu_float_ns", 0.5, 0, 1e9, "ALU, one float element" },
    [GLEX_VT_ALU_DOUBLE] = { "alu_double_ns", 0.5, 0, 1e9, "ALU, one double element" },
    [GLEX_VT_ALU_PAIR] = { "alu_pair_ns", 1, 0, 1e9,
                           "ALU, one value+index pair (MAXLOC/MINLOC types)" },
    [GLEX_VT_LINK] = { "link_ns", 20, 0, 1e9, "one link: wire and SerDes" },
    [GLEX_VT_ROUTER] = { "router_ns", 100, 0, 1e9, "one router, input to output" },
    [GLEX_VT_LINK_GBPS] = { "link_gbps", 14, 0.001, 1e6, "link bandwidth, GB/s (bytes per ns)" },
    [GLEX_VT_RADIX] = { "radix", 32, 4, 1024,
                        "router ports: a k-ary n-tree with k = radix/2 nodes per leaf router" },
};

static uint64_t to_ps(double ns) { return (uint64_t)llround(ns * 1000.0); }

static void finish(glex_vtime_model_t *m)
{
    for (int i = 0; i < GLEX_VT_NPARAMS; i++)
        m->ps[i] = to_ps(m->v[i]);
    m->k = (uint32_t)m->v[GLEX_VT_RADIX] / 2u;
}

void glex_vtime_model_default(glex_vtime_model_t *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < GLEX_VT_NPARAMS; i++)
        m->v[i] = params[i].def;
    finish(m);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
    return s;
}

int glex_vtime_model_load(glex_vtime_model_t *m)
{
    const char *path = glex_env("GLEX_VTIME_PARAMS");
    if (!path)
        return GLEX_OK;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return glex_error(GLEX_EINVAL, "GLEX_VTIME_PARAMS=%s: %s", path, strerror(errno));
    char line[512];
    int lineno = 0, rc = GLEX_OK;
    while (rc == GLEX_OK && fgets(line, sizeof line, fp)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = glex_error(GLEX_EINVAL, "%s:%d: '%s' is not 'name = value'", path, lineno, s);
            break;
        }
        *eq = 0;
        char *name = trim(s), *val = trim(eq + 1), *end;
        int i;
        for (i = 0; i < GLEX_VT_NPARAMS; i++)
            if (!strcmp(name, params[i].name))
                break;
        if (i == GLEX_VT_NPARAMS) {
            rc = glex_error(GLEX_EINVAL, "%s:%d: unknown parameter '%s' (glex-info --vtime lists "
                            "them)", path, lineno, name);
            break;
        }
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *end || !(v >= params[i].lo && v <= params[i].hi) ||
            (i == GLEX_VT_RADIX && (v != floor(v) || (int)v % 2)))
            rc = glex_error(GLEX_EINVAL, "%s:%d: %s = %s is invalid: allowed %g..%g%s", path,
                            lineno, name, val, params[i].lo, params[i].hi,
                            i == GLEX_VT_RADIX ? ", even" : "");
        else
            m->v[i] = v;
    }
    fclose(fp);
    finish(m);
    return rc;
}

void glex_vtime_model_shape(glex_vtime_model_t *m, uint32_t nnodes)
{
    uint64_t reach = m->k;
    m->levels = 1;
    while (reach < nnodes) {
        reach *= m->k;
        m->levels++;
    }
}

static int describe(const glex_vtime_model_t *m, uint32_t nnodes, char *buf, size_t len)
{
    int n = snprintf(buf, len, "# GLEX virtual-time model (doc/vtime.md); a fat tree of %u-port "
                     "routers, %u level(s) for %u nodes\n", (unsigned)m->v[GLEX_VT_RADIX],
                     m->levels, nnodes);
    for (int i = 0; i < GLEX_VT_NPARAMS && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, "%-24s = %-10.9g # %s\n", params[i].name, m->v[i],
                      params[i].what);
    return n;
}

int glex_vtime_describe(const glex_fabric_t *f, char *buf, size_t len)
{
    return describe(&f->hdr->vtm, f->nnodes, buf, len);
}

int glex_vtime_describe_env(char *buf, size_t len)
{
    glex_vtime_model_t m;
    glex_vtime_model_default(&m);
    int rc = glex_vtime_model_load(&m);
    if (rc)
        return rc;
    glex_vtime_model_shape(&m, 2);
    return describe(&m, 2, buf, len);
}

int glex_vtime_on(const glex_fabric_t *f) { return f && f->p.vtime; }

void glex_vtime_route(const glex_fabric_t *f, uint32_t a, uint32_t b, uint32_t *links,
                      uint32_t *routers)
{
    uint32_t l = 0;
    if (a != b) {
        uint64_t span = f->hdr->vtm.k;
        l = 1;
        /* up to the lowest level whose subtree holds both (deterministic
         * source route: up by the source's digits, then down by the
         * destination's: glex_emu_net.c) */
        while (a / span != b / span) {
            span *= f->hdr->vtm.k;
            l++;
        }
    }
    *links = 2 * l;
    *routers = l ? 2 * l - 1 : 0;
}

uint64_t glex_vt_route_ps(const glex_fabric_t *f, uint32_t a, uint32_t b)
{
    uint32_t links, routers;
    glex_vtime_route(f, a, b, &links, &routers);
    return links * glex_vt(f, GLEX_VT_LINK) + routers * glex_vt(f, GLEX_VT_ROUTER);
}

uint64_t glex_vt_wire_ps(const glex_fabric_t *f, uint64_t bytes)
{
    return (uint64_t)llround((double)bytes * 1000.0 / f->hdr->vtm.v[GLEX_VT_LINK_GBPS]);
}

uint64_t glex_vt_alu_ps(const glex_fabric_t *f, glex_type_t type, uint64_t count)
{
    int p = type == GLEX_FLOAT    ? GLEX_VT_ALU_FLOAT
            : type == GLEX_DOUBLE ? GLEX_VT_ALU_DOUBLE
            : type >= GLEX_FLOAT_INT ? GLEX_VT_ALU_PAIR
                                     : GLEX_VT_ALU_INT;
    return count * glex_vt(f, p);
}

/* ---- the host's clock ---- */

uint64_t glex_vt_host_now(glex_fabric_t *f)
{
    if (f->vt_scale > 0) {
        uint64_t real = glex_now_ns();
        uint64_t spent = real - f->vt_real_last;
        if (spent > f->vt_waited)
            f->vt_host += (uint64_t)llround((double)(spent - f->vt_waited) * 1000.0 * f->vt_scale);
        f->vt_real_last = real;
        f->vt_waited = 0;
    }
    return f->vt_host;
}

void glex_vt_host_took(glex_fabric_t *f, uint64_t vt)
{
    uint64_t now = glex_vt_host_now(f);
    f->vt_host = (vt > now ? vt : now) + glex_vt(f, GLEX_VT_HOST_POLL);
}

void glex_vtime_hold_later(glex_fabric_t *f, int on)
{
    f->vt_hold = f->p.vtime && on;
    f->vt_hold_since = 0;
}

int glex_vt_host_may_take(glex_fabric_t *f, uint64_t vt)
{
    if (!f->vt_hold || vt <= f->vt_host)
        return 1;
    uint64_t now = glex_coarse_ns();
    if (!f->vt_hold_since) /* the first held back: the window opens */
        f->vt_hold_since = now;
    return now - f->vt_hold_since >= GLEX_VT_HOLD_MS * 1000000ull;
}

double glex_vtime_host_ns(glex_fabric_t *f)
{
    return f->p.vtime ? (double)glex_vt_host_now(f) / 1000.0 : 0.0;
}

void glex_vtime_host_reduce(glex_fabric_t *f, glex_type_t type, uint64_t count)
{
    if (!f->p.vtime || !count)
        return;
    (void)type; /* the host's software combine costs the same per element here */
    f->vt_host = glex_vt_host_now(f) + glex_vt(f, GLEX_VT_HOST_REDUCE_STARTUP) +
                 count * glex_vt(f, GLEX_VT_HOST_REDUCE_ELEM);
}

void glex_vt_host_zero(glex_fabric_t *f)
{
    f->vt_host = 0;
    f->vt_real_last = glex_now_ns();
    f->vt_waited = 0;
}

int glex_vt_host_init(glex_fabric_t *f)
{
    glex_vt_host_zero(f);
    f->vt_scale = 0;
    const char *s = glex_env("GLEX_VTIME_COMPUTE");
    if (!s)
        return GLEX_OK;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0 && v <= 1e6))
        return glex_error(GLEX_EINVAL, "GLEX_VTIME_COMPUTE=%s is invalid: allowed 0..1e6 (the "
                          "factor real time between library calls counts with)", s);
    f->vt_scale = v;
    return GLEX_OK;
}
