/* glex_init.c - ch4:glex start-up and shutdown: environment, the emulated
 * fabric (one node per MPI process, named after the PMI job), VPs, and the
 * collective selection that routes MPI_Bcast/Reduce/Allreduce/Barrier of
 * whole communicators to this netmod. */
#include "glex_impl.h"
#include <ctype.h>
#include <errno.h>
#include <unistd.h>

/* ---------------------------------------------------------- environment */

static const char *const kind_env[GLEX_COLL_KIND_COUNT] = {
    [GLEX_COLL_BCAST] = "GLEX_BCAST_ALGO",
    [GLEX_COLL_REDUCE] = "GLEX_REDUCE_ALGO",
    [GLEX_COLL_ALLREDUCE] = "GLEX_ALLREDUCE_ALGO",
    [GLEX_COLL_BARRIER] = "GLEX_BARRIER_ALGO",
};

/* Publish a setting's value in force (the default when unset or empty) as
 * an MPI_T control variable of the same name: scope constant, since it is
 * read once, at MPI_Init.  MPICH keeps a string cvar's text in a buffer of
 * its own, filled from the value given as the default. */
enum { CVAR_LEN = 64 };

static void publish(const char *name, const char *dflt, const char *desc)
{
    const char *v = glex_env(name);
    char text[CVAR_LEN];
    snprintf(text, sizeof text, "%s", v ? v : dflt);
    MPIR_T_cvar_value_t value;
    value.str = text;
    MPIR_T_CVAR_REGISTER_impl(MPI_CHAR, name, text, CVAR_LEN, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPI_T_SCOPE_CONSTANT, NULL, NULL, value, "COLLECTIVE", desc);
}

/* Fills MPIDI_GLEX_global.verbose, .rdma_eager, .mp_long, .nap_ns and
 * .choice[] from GLEX_OFFLOAD, GLEX_VERBOSE, GLEX_RDMA_EAGER, GLEX_MP_LONG,
 * GLEX_NAP_US and
 * GLEX_<KIND>_ALGO, read by
 * the one GLEX_* parser
 * (glex_env_word); on a bad value prints the reason (variable, value,
 * valid values) and returns an MPI error. */
static int parse_env(void)
{
    static const char *const flag_words[] = { "0", "1", NULL };
    static const char *const verbose_words[] = { "0", "1", "2", NULL };
    int mpi_errno = MPI_SUCCESS, offload = 1, verbose = 0, mp_long = 1;
    char line[768];     /* the reason MPI_Init fails, on stderr */

    publish("GLEX_OFFLOAD", "1", "ch4:glex setting (doc/user-guide.md)");
    publish("GLEX_VERBOSE", "0", "ch4:glex setting (doc/user-guide.md)");
    int64_t rdma_eager = -1;    /* auto */
    uint64_t nap_us = MPIDI_GLEX_NAP_US;
    if (glex_env_word("GLEX_OFFLOAD", flag_words, &offload) ||
        glex_env_word("GLEX_VERBOSE", verbose_words, &verbose) ||
        glex_env_word("GLEX_MP_LONG", flag_words, &mp_long) ||
        glex_env_uint_auto("GLEX_RDMA_EAGER", 0, MPIDI_GLEX_RDMA_EAGER_MAX, &rdma_eager) ||
        glex_env_uint("GLEX_NAP_US", 0, 1000000, &nap_us))
        goto bad;
    MPIDI_GLEX_global.verbose = verbose;
    MPIDI_GLEX_global.rdma_eager = (MPI_Aint) rdma_eager;
    MPIDI_GLEX_global.mp_long = mp_long;
    MPIDI_GLEX_global.nap_ns = nap_us * 1000u;
    for (int k = 0; k < GLEX_COLL_KIND_COUNT; k++) {
        /* the algorithms of this collective, then host and mpich */
        const char *words[GLEX_ALGO_COUNT + 3];
        int n = 0, pick = 0;
        for (int a = 0; a < GLEX_ALGO_COUNT; a++)
            if (glex_algo_valid((glex_coll_kind_t) k, (glex_algo_t) a))
                words[n++] = glex_algo_name((glex_algo_t) a);
        int host = n, mpich = n + 1;
        words[n++] = "host";
        words[n++] = "mpich";
        words[n] = NULL;
        publish(kind_env[k], "auto", "ch4:glex algorithm of this collective (doc/user-guide.md)");
        if (glex_env_word(kind_env[k], words, &pick))
            goto bad;
        MPIDI_GLEX_choice_t *c = &MPIDI_GLEX_global.choice[k];
        c->mpich = !offload || pick == mpich;
        c->host = pick == host;
        c->algo = GLEX_ALGO_AUTO;
        if (pick < host && glex_algo_parse((glex_coll_kind_t) k, words[pick], &c->algo))
            goto bad;
    }
    return MPI_SUCCESS;
  bad:
    snprintf(line, sizeof line, "ch4:glex: %s", glex_last_error());
    MPIDI_GLEX_say_fatal(line);
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", glex_last_error());
    return mpi_errno;
}

/* ------------------------------------------------- collective selection */

/* Whole-communicator compositions: the call reaches MPIDI_NM_mpi_* with the
 * user's communicator (MPICH's generic table would split single-node jobs
 * into node-local pieces first).  Collectives not listed go to MPICH's own
 * MPIR_*_impl. */
static const char selection_json[] =
    "{\n"
    " \"collective=bcast\": {\"comm_type=intra\": "
    "{\"composition=MPIDI_Bcast_intra_composition_gamma\": {}}},\n"
    " \"collective=allreduce\": {\"comm_type=intra\": "
    "{\"composition=MPIDI_Allreduce_intra_composition_beta\": {}}},\n"
    " \"collective=reduce\": {\"comm_type=intra\": "
    "{\"composition=MPIDI_Reduce_intra_composition_gamma\": {}}},\n"
    " \"collective=barrier\": {\"comm_type=intra\": "
    "{\"composition=MPIDI_Barrier_intra_composition_beta\": {}}}\n" "}\n";

/* ch4 reads its selection file right after init_local: hand it ours unless
 * the user named one (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE) */
static int install_selection(void)
{
    int mpi_errno = MPI_SUCCESS;
    if (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE &&
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE[0])
        return MPI_SUCCESS;
    const char *dir = glex_env("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/glex-csel-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, selection_json, sizeof selection_json - 1) !=
        (ssize_t) (sizeof selection_json - 1)) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", strerror(e));
        fprintf(stderr, "ch4:glex: cannot write the collective selection file %s: %s "
                "(set TMPDIR to a writable directory)\n", path, strerror(e));
        return mpi_errno;
    }
    close(fd);
    MPIDI_GLEX_global.json_path = MPL_strdup(path);
    MPL_free((char *) MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE);
    MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE = MPL_strdup(path);
    return MPI_SUCCESS;
}

static void remove_selection(void)
{
    if (!MPIDI_GLEX_global.json_path)
        return;
    unlink(MPIDI_GLEX_global.json_path);
    MPL_free(MPIDI_GLEX_global.json_path);
    MPIDI_GLEX_global.json_path = NULL;
    MPL_free((char *) MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE);
    MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE = MPL_strdup("");
}

/* ------------------------------------------------------------- lifecycle */

int MPIDI_GLEX_init_local(int *tag_bits)
{
    int mpi_errno = parse_env();
    if (mpi_errno)
        return mpi_errno;
    *tag_bits = MPIR_TAG_BITS_DEFAULT;
    return install_selection();
}

static int fabric_error(int rc, const char *what)
{
    char msg[768];
    snprintf(msg, sizeof msg, "ch4:glex: %s: %s", what, glex_last_error());
    MPIDI_GLEX_say_fatal(msg);
    return MPIDI_GLEX_error(rc, msg);
}

/* Which host each rank is on: GLEX_SPLIT_HOSTS=N splits the job into N
 * emulated hosts of consecutive ranks (each its own segment, the traffic
 * between them over libfabric, on one machine; a job of fewer ranks has a
 * host per rank); else the hosts PMI reports (MPICH's node map: hydra's
 * -hosts, -f hostfile, -ppn). */
static int host_map(uint32_t * nhosts, uint32_t ** host_of)
{
    int size = MPIR_Process.size;
    uint64_t split = 0;
    *nhosts = 1;
    *host_of = NULL;
    if (glex_env("GLEX_SPLIT_HOSTS") && *glex_env("GLEX_SPLIT_HOSTS")) {
        int rc = glex_env_uint("GLEX_SPLIT_HOSTS", 1, GLEX_MAX_NODES, &split);
        if (rc)
            return rc;
        if (split > (uint64_t) size)
            split = (uint64_t) size;
    } else if (MPIR_Process.num_nodes > 1 && MPIR_Process.node_map) {
        split = 0;
        *nhosts = (uint32_t) MPIR_Process.num_nodes;
    }
    if (split <= 1 && *nhosts == 1)
        return GLEX_OK;
    *host_of = MPL_malloc(sizeof **host_of * (size_t) size, MPL_MEM_OTHER);
    if (!*host_of)
        return glex_set_error(GLEX_ENOMEM, "out of memory for the host map of %d ranks", size);
    for (int i = 0; i < size; i++)
        (*host_of)[i] = split > 1 ? (uint32_t) ((uint64_t) i * split / (uint64_t) size)
            : (uint32_t) MPIR_Process.node_map[i];
    if (split > 1)
        *nhosts = (uint32_t) split;
    return GLEX_OK;
}

/* every rank's fabric address, through PMI */
static int connect_hosts(void)
{
    typedef struct {
        uint32_t len;
        uint8_t addr[GLEX_ADDR_MAX];
    } addr_t;
    int mpi_errno = MPI_SUCCESS, size = MPIR_Process.size;
    addr_t mine;
    memset(&mine, 0, sizeof mine);
    size_t len = 0;
    int rc = glex_fabric_address(MPIDI_GLEX_global.fabric, mine.addr, &len);
    if (rc)
        return fabric_error(rc, "the fabric address");
    mine.len = (uint32_t) len;
    addr_t *all = MPL_malloc(sizeof *all * (size_t) size, MPL_MEM_OTHER);
    size_t *lens = MPL_malloc(sizeof *lens * (size_t) size, MPL_MEM_OTHER);
    if (!all || !lens) {
        MPL_free(all);
        MPL_free(lens);
        return fabric_error(glex_set_error(GLEX_ENOMEM, "%d addresses", size), "out of memory");
    }
    mpi_errno = MPIR_pmi_allgather(&mine, sizeof mine, all, sizeof mine, MPIR_PMI_DOMAIN_ALL);
    if (!mpi_errno) {
        for (int i = 0; i < size; i++)
            lens[i] = all[i].len;
        rc = glex_fabric_connect(MPIDI_GLEX_global.fabric, all[0].addr, sizeof *all, lens);
        if (rc)
            mpi_errno = fabric_error(rc, "connecting the hosts");
    }
    MPL_free(all);
    MPL_free(lens);
    return mpi_errno;
}

/* processes per CPU of the busiest machine, through PMI: what every rank
 * chooses collective algorithms by (the job's count over one machine's CPUs
 * would call a cluster of many machines oversubscribed) */
static int share_load(void)
{
    glex_fabric_t *f = MPIDI_GLEX_global.fabric;
    int size = MPIR_Process.size;
    uint32_t mine = glex_procs_per_cpu_here(f), most = 1;
    uint32_t *all = MPL_malloc(sizeof *all * (size_t) size, MPL_MEM_OTHER);
    if (!all)
        return fabric_error(glex_set_error(GLEX_ENOMEM, "%d loads", size), "out of memory");
    int mpi_errno = MPIR_pmi_allgather(&mine, sizeof mine, all, sizeof mine, MPIR_PMI_DOMAIN_ALL);
    for (int i = 0; !mpi_errno && i < size; i++)
        most = MPL_MAX(most, all[i]);
    MPL_free(all);
    if (!mpi_errno) {
        int rc = glex_fabric_set_job_per_cpu(f, most);
        if (rc)
            mpi_errno = fabric_error(rc, "the job's processes per CPU");
    }
    return mpi_errno;
}

int MPIDI_GLEX_init_world(void)
{
    int mpi_errno = MPI_SUCCESS, rc;
    remove_selection();   /* ch4 has read it by now */

    glex_params_t p;
    glex_params_default(&p);
    rc = glex_params_from_env(&p);
    if (rc)
        return fabric_error(rc, "bad GLEX_* setting");
    if (p.vps_per_node < 2)
        p.vps_per_node = 2;
    for (int k = 0; p.vtime && k < GLEX_COLL_KIND_COUNT; k++)
        if (MPIDI_GLEX_global.choice[k].algo == GLEX_ALGO_DIRECT) {
            char msg[256], line[300];
            snprintf(msg, sizeof msg, "%s=direct runs outside the NIC model, which GLEX_VTIME=1 "
                     "times: allowed with it auto, an engine algorithm, host or mpich",
                     kind_env[k]);
            snprintf(line, sizeof line, "ch4:glex: %s", msg);
            MPIDI_GLEX_say_fatal(line);
            MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", msg);
            return mpi_errno;
        }

    /* the job's fabric is named after the PMI job: same on every rank */
    char job[65];
    const char *id = MPIR_pmi_job_id();
    size_t n = 0;
    n += snprintf(job, sizeof job, "mpi-");
    for (const char *s = id ? id : "singleton"; *s && n < sizeof job - 1; s++)
        job[n++] = (isalnum((unsigned char) *s) || *s == '_' || *s == '.' || *s == '-') ? *s : '_';
    job[n] = 0;

    uint32_t nhosts = 1, *host_of = NULL;
    if ((rc = host_map(&nhosts, &host_of)))
        return fabric_error(rc, "bad GLEX_* setting");
    rc = glex_fabric_open_hosts(job, (uint32_t) MPIR_Process.size, (uint32_t) MPIR_Process.rank,
                                &p, nhosts, host_of, &MPIDI_GLEX_global.fabric);
    int rank = MPIR_Process.rank, host = host_of ? (int) host_of[rank] : 0;
    int first_here = !host_of || rank == 0 || host_of[rank - 1] != host_of[rank];
    MPL_free(host_of);
    if (rc)
        return fabric_error(rc, "opening the emulated fabric");
    if (nhosts > 1 && ((mpi_errno = connect_hosts()) || (mpi_errno = share_load())))
        return mpi_errno;
    if (nhosts > 1 && MPIDI_GLEX_global.verbose && first_here) /* what waits and choices use */
        fprintf(stderr, "glex: host %d: %u of the job's %d processes on this machine, %u per "
                "CPU; %u per CPU on the busiest machine\n", host,
                glex_nodes_on_machine(MPIDI_GLEX_global.fabric), MPIR_Process.size,
                glex_procs_per_cpu_here(MPIDI_GLEX_global.fabric),
                glex_procs_per_cpu(MPIDI_GLEX_global.fabric));
    rc = glex_vp_open(MPIDI_GLEX_global.fabric, MPIDI_GLEX_AM_VP, &MPIDI_GLEX_global.am_vp);
    if (!rc)
        rc = glex_vp_open(MPIDI_GLEX_global.fabric, MPIDI_GLEX_COLL_VP,
                          &MPIDI_GLEX_global.coll_vp);
    if (rc)
        return fabric_error(rc, "opening the VPs");
    if ((mpi_errno = MPIDI_GLEX_ring_init()))
        return mpi_errno;
    MPIDI_GLEX_p2p_init();      /* before any message can arrive */

    mpi_errno = MPIR_pmi_barrier();
    return mpi_errno;
}

int MPIDI_GLEX_post_init(void)
{
    return MPI_SUCCESS;
}

int MPIDI_GLEX_mpi_finalize_hook(void)
{
    int mpi_errno = MPI_SUCCESS;
    remove_selection();
    if (!MPIDI_GLEX_global.fabric)
        return MPI_SUCCESS;
    if (MPIDI_GLEX_global.verbose >= 2) {
        const uint64_t *a = MPIDI_GLEX_global.am_sent;
        glex_wire_stats_t w;
        glex_fabric_wire_stats(MPIDI_GLEX_global.fabric,
                               glex_fabric_node(MPIDI_GLEX_global.fabric), &w);
        uint64_t near, far;
        MPI_Aint any, near_running;
        MPIDI_GLEX_ring_sizes(&near, &far);
        MPIDI_GLEX_ring_msg_max(&any, &near_running);
        uint32_t cost = glex_dma_read_cost(MPIDI_GLEX_global.fabric);
        uint32_t pair = glex_dma_pair_cost(MPIDI_GLEX_global.fabric);
        uint32_t from = glex_dma_read_from_kb(MPIDI_GLEX_global.fabric);
        char read[96] = "DMA read refused";
        if (cost)
            snprintf(read, sizeof read, "DMA read %u.%02ux a copy, %u.%02ux a copy pair, "
                     "pays from %u KiB", cost / 100u, cost % 100u, pair / 100u, pair % 100u,
                     from);
        fprintf(stderr, "glex: rank %d: active messages sent: %llu inline, %llu long MP, %llu ring, "
                "%llu fragmented, %llu rendezvous; rendezvous received with half offered to the "
                "sender: %llu, of them written by its NIC: %llu; "
                "fabric between hosts: %llu messages sent "
                "(%llu RDMA writes), %llu bytes; rings: %llu KiB per sender on this host, "
                "%llu KiB per sender on another; ring messages up to %ld bytes, %ld to a "
                "running process of this host (%s)\n", MPIR_Process.rank,
                (unsigned long long) a[0], (unsigned long long) a[MPIDI_GLEX_AM_LONG],
                (unsigned long long) a[1], (unsigned long long) a[2], (unsigned long long) a[3], (unsigned long long) MPIDI_GLEX_global.lmt_offered,
                (unsigned long long) MPIDI_GLEX_global.lmt_split,
                (unsigned long long) w.msgs_sent,
                (unsigned long long) w.writes, (unsigned long long) w.bytes_sent,
                (unsigned long long) (near >> 10), (unsigned long long) (far >> 10),
                (long) any, (long) near_running, read);
        fprintf(stderr, "glex: rank %d: point-to-point received: %llu, of them before their "
                "receive: %llu\n", MPIR_Process.rank,
                (unsigned long long) MPIDI_GLEX_global.p2p_received,
                (unsigned long long) MPIDI_GLEX_global.p2p_unexpected);
    }
    /* peers may still read our memory (rendezvous) or post to our queues:
     * close the VPs only once every process is here */
    mpi_errno = MPIR_pmi_barrier();
    if (MPIDI_GLEX_global.coll_vp)
        glex_vp_close(MPIDI_GLEX_global.coll_vp);
    if (MPIDI_GLEX_global.am_vp)
        glex_vp_close(MPIDI_GLEX_global.am_vp);
    MPIDI_GLEX_ring_finalize();
    MPIDI_GLEX_am_buffers_free();
    MPIDI_GLEX_p2p_finalize();
    glex_fabric_close(MPIDI_GLEX_global.fabric);
    MPIDI_GLEX_global.fabric = NULL;
    MPIDI_GLEX_global.am_vp = MPIDI_GLEX_global.coll_vp = NULL;
    return mpi_errno;
}
