/* comms.c - offloaded collectives on communicators made by MPI_Comm_dup,
 * MPI_Comm_split and MPI_Comm_create, used concurrently (nonblocking calls
 * in flight on several at once, overlapped with computation), many
 * communicators alive at once, all freed again. */
#include "mt.h"
#include <string.h>

static int rank, size;

static double work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double) (i % 7) * 0.5;
    return x;
}

/* nonblocking allreduce + bcast + reduce + barrier on each of ncomm
 * communicators at once, with computation between the tests */
static void overlapped(MPI_Comm * comms, int ncomm, int count)
{
    enum { PER = 4 };
    MPI_Request *rq = malloc(sizeof *rq * ncomm * PER);
    double **ar = malloc(sizeof *ar * ncomm), **bc = malloc(sizeof *bc * ncomm);
    double **rd = malloc(sizeof *rd * ncomm), **rs = malloc(sizeof *rs * ncomm);
    for (int c = 0; c < ncomm; c++) {
        int r, n;
        MPI_Comm_rank(comms[c], &r);
        MPI_Comm_size(comms[c], &n);
        ar[c] = malloc(sizeof(double) * count);
        bc[c] = malloc(sizeof(double) * count);
        rd[c] = malloc(sizeof(double) * count);
        rs[c] = malloc(sizeof(double) * count);
        for (int i = 0; i < count; i++) {
            ar[c][i] = r + i + c;
            bc[c][i] = r == n - 1 ? i * 3.0 + c : -1;
            rd[c][i] = r * 2.0 + i;
        }
        MT_MPI(MPI_Iallreduce(MPI_IN_PLACE, ar[c], count, MPI_DOUBLE, MPI_SUM, comms[c],
                              &rq[c * PER]));
        MT_MPI(MPI_Ibcast(bc[c], count, MPI_DOUBLE, n - 1, comms[c], &rq[c * PER + 1]));
        MT_MPI(MPI_Ireduce(rd[c], rs[c], count, MPI_DOUBLE, MPI_MAX, 0, comms[c],
                           &rq[c * PER + 2]));
        MT_MPI(MPI_Ibarrier(comms[c], &rq[c * PER + 3]));
    }
    int done = 0;
    double sink = 0;
    MPI_Status *st = malloc(sizeof *st * ncomm * PER);
    while (!done) {
        sink += work(20000);
        MT_MPI(MPI_Testall(ncomm * PER, rq, &done, st));
    }
    free(st);
    MT_CHECK(sink > 0, "computation ran");
    for (int c = 0; c < ncomm; c++) {
        int r, n;
        MPI_Comm_rank(comms[c], &r);
        MPI_Comm_size(comms[c], &n);
        for (int i = 0; i < count; i++) {
            double e = (double) n * (n - 1) / 2 + (double) n * (i + c);
            if (ar[c][i] != e) {
                MT_CHECK(0, "comm %d iallreduce [%d] = %g expected %g", c, i, ar[c][i], e);
                break;
            }
            if (bc[c][i] != i * 3.0 + c) {
                MT_CHECK(0, "comm %d ibcast [%d] = %g", c, i, bc[c][i]);
                break;
            }
            if (r == 0 && rs[c][i] != (n - 1) * 2.0 + i) {
                MT_CHECK(0, "comm %d ireduce [%d] = %g", c, i, rs[c][i]);
                break;
            }
        }
        mt_checks++;
        free(ar[c]), free(bc[c]), free(rd[c]), free(rs[c]);
    }
    free(ar), free(bc), free(rd), free(rs), free(rq);
}

/* the algorithm settings are visible as MPI_T control variables */
static void cvars(void)
{
    int num, found = 0;
    MT_MPI(MPI_T_cvar_get_num(&num));
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope))
            continue;
        if (strcmp(name, "GLEX_ALLREDUCE_ALGO"))
            continue;
        found = 1;
        MPI_T_cvar_handle h;
        int count;
        MT_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        char val[256] = "";
        if (count < (int) sizeof val)
            MT_MPI(MPI_T_cvar_read(h, val));
        const char *env = getenv("GLEX_ALLREDUCE_ALGO");
        const char *want = env && *env ? env : "auto";
        MT_CHECK(!strcmp(val, want), "cvar GLEX_ALLREDUCE_ALGO = '%s', expected '%s'", val, want);
        MT_MPI(MPI_T_cvar_handle_free(&h));
    }
    MT_CHECK(found, "no MPI_T cvar GLEX_ALLREDUCE_ALGO");
}

static void blocking_on(MPI_Comm comm, const char *what)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    long v = r + 1, s = 0;
    MT_MPI(MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, comm));
    MT_CHECK(s == (long) n * (n + 1) / 2, "%s: allreduce %ld expected %ld", what, s,
             (long) n * (n + 1) / 2);
    int b = r == 0 ? 42 : 0;
    MT_MPI(MPI_Bcast(&b, 1, MPI_INT, 0, comm));
    MT_CHECK(b == 42, "%s: bcast %d", what, b);
    MT_MPI(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    /* MPI_T's life spans MPI's (MPICH frees string cvars at MPI_T_finalize) */
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cvars();

    /* dup, split (two disjoint halves share a context id), create */
    MPI_Comm dup, half, rev, sub;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));   /* reversed ranks */
    MPI_Group wg, sg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int first = 0;
    MPI_Group_incl(wg, 1, &first, &sg);
    MT_MPI(MPI_Comm_create(MPI_COMM_WORLD, sg, &sub));
    MPI_Group_free(&sg);
    MPI_Group_free(&wg);

    blocking_on(dup, "dup");
    blocking_on(half, "split");
    blocking_on(rev, "reversed split");
    blocking_on(MPI_COMM_SELF, "self");
    if (sub != MPI_COMM_NULL)
        blocking_on(sub, "create");

    MPI_Comm set[4] = { MPI_COMM_WORLD, dup, half, rev };
    overlapped(set, 4, 1);
    overlapped(set, 4, 5000);

    /* many communicators alive at once, each used, then all freed */
    enum { MANY = 64 };
    MPI_Comm many[MANY];
    for (int i = 0; i < MANY; i++)
        MT_MPI(MPI_Comm_dup(i % 2 ? half : MPI_COMM_WORLD, &many[i]));
    overlapped(many, MANY, 3);
    for (int i = 0; i < MANY; i++)
        MT_MPI(MPI_Comm_free(&many[i]));
    /* and again, more than the 256 JobIDs' worth over time */
    for (int i = 0; i < 300; i++) {
        MPI_Comm c;
        MT_MPI(MPI_Comm_dup(dup, &c));
        blocking_on(c, "short-lived dup");
        MT_MPI(MPI_Comm_free(&c));
    }

    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Comm_free(&rev);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    int rc = mt_finish("comms");
    MPI_Finalize();
    MPI_T_finalize();
    return rc;
}
