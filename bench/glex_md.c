/* glex_md.c - a molecular-dynamics proxy application (CoMD-like), plain MPI,
 * so every MPI library runs the same program.
 *
 * Lennard-Jones atoms (epsilon = sigma = 1, cut-off 2.5) on an fcc lattice
 * in a periodic box, velocity Verlet, link cells.  The box is cut into slabs
 * along x, one per rank.  Every step a rank
 *   - hands atoms that left its slab to the neighbour they moved into,
 *   - exchanges halos: the atoms within the cut-off of each face, sent to
 *     the neighbour across it (MPI_Sendrecv, counts then coordinates),
 *   - computes forces and moves its atoms;
 * every -e steps the total, kinetic and potential energies and the atom
 * count are summed with MPI_Allreduce and printed by rank 0.
 *
 * The trajectory does not depend on the MPI library (messages carry exact
 * copies and each rank's arithmetic is its own); the energies are sums in
 * rank order over exact per-rank values, so they print identically too.
 * Reported at the end: wall time of the run and of its communication (halo
 * exchange + migration, and the allreduces), for comparing libraries.
 *
 * usage: mpiexec -n N glex-md [-c CELLS] [-s STEPS] [-e EVERY] [-t TEMP]
 *   -c  unit cells along each axis (default 14: 4*14^3 = 10976 atoms)
 *   -s  time steps (default 200), -e energy every N steps (default 20),
 *   -t  initial temperature (default 0.5, reduced units) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RCUT 2.5
#define DT 0.002
#define LATTICE 1.5874 /* fcc lattice constant for density 1.0 */

typedef struct {
    double x[3], v[3], f[3];
    long id;
} atom_t;

typedef struct { /* what crosses to a neighbour */
    double x[3], v[3];
    long id;
} wire_t;

static int me, np;
static double box[3], lo, hi; /* the box; this rank's slab [lo, hi) in x */
static atom_t *atoms;
static int natoms, cap;
static double *halo; /* x,y,z of halo atoms */
static int nhalo, halocap;
static double t_comm, t_reduce;

static void die(const char *what)
{
    fprintf(stderr, "glex-md: rank %d: %s\n", me, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void grow_atoms(int want)
{
    if (want <= cap)
        return;
    cap = want * 2;
    atoms = realloc(atoms, sizeof *atoms * (size_t)cap);
    if (!atoms)
        die("out of memory for atoms");
}

static void grow_halo(int want)
{
    if (want <= halocap)
        return;
    halocap = want * 2;
    halo = realloc(halo, sizeof *halo * 3 * (size_t)halocap);
    if (!halo)
        die("out of memory for the halo");
}

/* a deterministic pseudo-random number in [-0.5, 0.5) from an atom id */
static double noise(long id, int k)
{
    unsigned long long z = (unsigned long long)id * 0x9E3779B97F4A7C15ull + (unsigned long long)k;
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27; z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

static void init(int cells, double temp)
{
    static const double basis[4][3] = { { 0, 0, 0 }, { 0.5, 0.5, 0 }, { 0.5, 0, 0.5 }, { 0, 0.5, 0.5 } };
    for (int k = 0; k < 3; k++)
        box[k] = cells * LATTICE;
    lo = box[0] * me / np;
    hi = box[0] * (me + 1) / np;
    long id = 0;
    for (int i = 0; i < cells; i++)
        for (int j = 0; j < cells; j++)
            for (int l = 0; l < cells; l++)
                for (int b = 0; b < 4; b++, id++) {
                    double x = (i + basis[b][0]) * LATTICE;
                    if (x < lo || x >= hi)
                        continue;
                    grow_atoms(natoms + 1);
                    atom_t *a = &atoms[natoms++];
                    a->id = id;
                    a->x[0] = x;
                    a->x[1] = (j + basis[b][1]) * LATTICE;
                    a->x[2] = (l + basis[b][2]) * LATTICE;
                    for (int k = 0; k < 3; k++) {
                        a->v[k] = noise(id, k) * sqrt(12.0 * temp);
                        a->f[k] = 0;
                    }
                }
}

static void exchange(const void *out_l, int n_l, const void *out_r, int n_r, size_t size,
                     void **in_l, int *m_l, void **in_r, int *m_r)
{
    int left = (me + np - 1) % np, right = (me + 1) % np;
    MPI_Sendrecv(&n_l, 1, MPI_INT, left, 1, m_r, 1, MPI_INT, right, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&n_r, 1, MPI_INT, right, 2, m_l, 1, MPI_INT, left, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    *in_l = malloc(size * (size_t)(*m_l + 1));
    *in_r = malloc(size * (size_t)(*m_r + 1));
    if (!*in_l || !*in_r)
        die("out of memory for a message");
    MPI_Sendrecv(out_l, (int)(size * (size_t)n_l), MPI_BYTE, left, 3, *in_r,
                 (int)(size * (size_t)*m_r), MPI_BYTE, right, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(out_r, (int)(size * (size_t)n_r), MPI_BYTE, right, 4, *in_l,
                 (int)(size * (size_t)*m_l), MPI_BYTE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static double wrap(double x, double l) { return x < 0 ? x + l : x >= l ? x - l : x; }

/* atoms that left the slab go to the neighbour they moved into (a step
 * moves an atom far less than a slab) */
static void migrate(void)
{
    wire_t *ol = malloc(sizeof *ol * (size_t)(natoms + 1)), *or = malloc(sizeof *or * (size_t)(natoms + 1));
    if (!ol || !or)
        die("out of memory for migration");
    int nl = 0, nr = 0, keep = 0;
    for (int i = 0; i < natoms; i++) {
        atom_t *a = &atoms[i];
        for (int k = 0; k < 3; k++)
            a->x[k] = wrap(a->x[k], box[k]);
        double x = a->x[0];
        int inside = np == 1 || (x >= lo && x < hi);
        if (inside) {
            atoms[keep++] = *a;
            continue;
        }
        /* nearer across the left face or the right one (periodic) */
        double dl = lo - x, dr = x - hi;
        if (dl < 0) dl += box[0];
        if (dr < 0) dr += box[0];
        wire_t *w = dl < dr ? &ol[nl++] : &or[nr++];
        memcpy(w->x, a->x, sizeof w->x);
        memcpy(w->v, a->v, sizeof w->v);
        w->id = a->id;
    }
    natoms = keep;
    if (np > 1) {
        void *il, *ir;
        int ml, mr;
        exchange(ol, nl, or, nr, sizeof(wire_t), &il, &ml, &ir, &mr);
        grow_atoms(natoms + ml + mr);
        for (int s = 0; s < 2; s++) {
            wire_t *in = s ? ir : il;
            for (int i = 0; i < (s ? mr : ml); i++) {
                atom_t *a = &atoms[natoms++];
                memcpy(a->x, in[i].x, sizeof a->x);
                memcpy(a->v, in[i].v, sizeof a->v);
                a->id = in[i].id;
            }
        }
        free(il);
        free(ir);
    }
    free(ol);
    free(or);
}

/* the halo: copies of the neighbours' atoms within the cut-off of our faces,
 * unwrapped to our side of the periodic box */
static void halo_exchange(void)
{
    nhalo = 0; /* with one rank it trades with itself: x stays periodic */
    double *ol = malloc(sizeof *ol * 3 * (size_t)(natoms + 1)), *or = malloc(sizeof *or * 3 * (size_t)(natoms + 1));
    if (!ol || !or)
        die("out of memory for the halo");
    int nl = 0, nr = 0;
    for (int i = 0; i < natoms; i++) {
        const atom_t *a = &atoms[i];
        if (a->x[0] - lo < RCUT)
            memcpy(&ol[3 * nl++], a->x, sizeof a->x);
        if (hi - a->x[0] < RCUT)
            memcpy(&or[3 * nr++], a->x, sizeof a->x);
    }
    void *il, *ir;
    int ml, mr;
    exchange(ol, nl, or, nr, 3 * sizeof(double), &il, &ml, &ir, &mr);
    grow_halo(ml + mr);
    const double *in = il;
    for (int i = 0; i < ml; i++, nhalo++) { /* from the left: just below lo */
        memcpy(&halo[3 * nhalo], &in[3 * i], 3 * sizeof(double));
        if (halo[3 * nhalo] > lo + RCUT)
            halo[3 * nhalo] -= box[0];
    }
    in = ir;
    for (int i = 0; i < mr; i++, nhalo++) { /* from the right: just above hi */
        memcpy(&halo[3 * nhalo], &in[3 * i], 3 * sizeof(double));
        if (halo[3 * nhalo] < hi - RCUT)
            halo[3 * nhalo] += box[0];
    }
    free(il);
    free(ir);
    free(ol);
    free(or);
}

/* forces on our atoms from our atoms and the halo; returns our share of the
 * potential energy (each local pair once, each halo pair half) */
static double forces(void)
{
    int ntot = natoms + nhalo;
    double cx = RCUT, xlo = lo - RCUT;
    int nc[3];
    nc[0] = (int)((hi - lo + 2 * RCUT) / cx) + 1;
    nc[1] = (int)(box[1] / RCUT);
    nc[2] = (int)(box[2] / RCUT);
    if (nc[1] < 3 || nc[2] < 3)
        die("box too small for the cut-off: use more cells (-c)");
    double cy = box[1] / nc[1], cz = box[2] / nc[2];
    int ncell = nc[0] * nc[1] * nc[2];
    int *head = malloc(sizeof *head * (size_t)ncell), *next = malloc(sizeof *next * (size_t)(ntot + 1));
    if (!head || !next)
        die("out of memory for cells");
    for (int c = 0; c < ncell; c++)
        head[c] = -1;
    for (int i = ntot - 1; i >= 0; i--) {
        const double *x = i < natoms ? atoms[i].x : &halo[3 * (i - natoms)];
        int a = (int)((x[0] - xlo) / cx), b = (int)(x[1] / cy), c = (int)(x[2] / cz);
        if (a < 0) a = 0;
        if (a >= nc[0]) a = nc[0] - 1;
        if (b >= nc[1]) b = nc[1] - 1;
        if (c >= nc[2]) c = nc[2] - 1;
        int cell = (a * nc[1] + b) * nc[2] + c;
        next[i] = head[cell];
        head[cell] = i;
    }
    double epot = 0, rc2 = RCUT * RCUT;
    double ecut = 4.0 * (pow(1 / RCUT, 12) - pow(1 / RCUT, 6));
    for (int i = 0; i < natoms; i++) {
        atom_t *ai = &atoms[i];
        ai->f[0] = ai->f[1] = ai->f[2] = 0;
        int a = (int)((ai->x[0] - xlo) / cx), b = (int)(ai->x[1] / cy), c = (int)(ai->x[2] / cz);
        if (b >= nc[1]) b = nc[1] - 1;
        if (c >= nc[2]) c = nc[2] - 1;
        for (int da = -1; da <= 1; da++) {
            int ca = a + da;
            if (ca < 0 || ca >= nc[0])
                continue;
            for (int db = -1; db <= 1; db++)
                for (int dc = -1; dc <= 1; dc++) {
                    int cb = (b + db + nc[1]) % nc[1], cc = (c + dc + nc[2]) % nc[2];
                    for (int j = head[(ca * nc[1] + cb) * nc[2] + cc]; j >= 0; j = next[j]) {
                        if (j == i)
                            continue;
                        const double *xj = j < natoms ? atoms[j].x : &halo[3 * (j - natoms)];
                        double d[3], r2 = 0;
                        for (int k = 0; k < 3; k++) {
                            d[k] = ai->x[k] - xj[k];
                            if (k) /* periodic in y and z */
                                d[k] -= box[k] * nearbyint(d[k] / box[k]);
                            r2 += d[k] * d[k];
                        }
                        if (r2 >= rc2)
                            continue;
                        double s6 = 1.0 / (r2 * r2 * r2);
                        double fr = 24.0 * s6 * (2.0 * s6 - 1.0) / r2;
                        for (int k = 0; k < 3; k++)
                            ai->f[k] += fr * d[k];
                        epot += 0.5 * (4.0 * s6 * (s6 - 1.0) - ecut);
                    }
                }
        }
    }
    free(head);
    free(next);
    return epot;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int cells = 14, steps = 200, every = 20;
    double temp = 0.5;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (!strcmp(argv[i], "-t") && i + 1 < argc) {
            temp = strtod(argv[++i], &end);
            if (!end || *end || temp < 0 || temp > 10)
                die("-t: a temperature from 0 to 10");
        } else if (!strcmp(argv[i], "-c") && end && !*end && v >= 4 && v <= 200) {
            cells = (int)v, i++;
        } else if (!strcmp(argv[i], "-s") && end && !*end && v >= 1 && v <= 10000000) {
            steps = (int)v, i++;
        } else if (!strcmp(argv[i], "-e") && end && !*end && v >= 1 && v <= 10000000) {
            every = (int)v, i++;
        } else {
            if (!me)
                fprintf(stderr, "usage: glex-md [-c CELLS 4..200] [-s STEPS 1..10^7] "
                                "[-e EVERY 1..10^7] [-t TEMP 0..10]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (cells * LATTICE / np < 2 * RCUT) {
        if (!me)
            fprintf(stderr, "glex-md: %d ranks cut %d cells into slabs thinner than twice the "
                            "cut-off (%.2f): use -c %d or more\n",
                    np, cells, RCUT, (int)ceil(2 * RCUT * np / LATTICE));
        MPI_Finalize();
        return 2;
    }
    init(cells, temp);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), t;
    halo_exchange();
    double epot = forces();
    for (int s = 1; s <= steps; s++) {
        for (int i = 0; i < natoms; i++)
            for (int k = 0; k < 3; k++) {
                atoms[i].v[k] += 0.5 * DT * atoms[i].f[k];
                atoms[i].x[k] += DT * atoms[i].v[k];
            }
        t = MPI_Wtime();
        migrate();
        halo_exchange();
        t_comm += MPI_Wtime() - t;
        epot = forces();
        for (int i = 0; i < natoms; i++)
            for (int k = 0; k < 3; k++)
                atoms[i].v[k] += 0.5 * DT * atoms[i].f[k];
        if (s % every == 0 || s == steps) {
            double ekin = 0;
            for (int i = 0; i < natoms; i++)
                for (int k = 0; k < 3; k++)
                    ekin += 0.5 * atoms[i].v[k] * atoms[i].v[k];
            /* sums in rank order, the same with every library: gather the
             * per-rank values with an allreduce of a vector */
            double *mine = calloc((size_t)np * 3, sizeof *mine), *all = malloc(sizeof *all * (size_t)np * 3);
            if (!mine || !all)
                die("out of memory for energies");
            mine[3 * me] = epot;
            mine[3 * me + 1] = ekin;
            mine[3 * me + 2] = natoms;
            t = MPI_Wtime();
            MPI_Allreduce(mine, all, 3 * np, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t_reduce += MPI_Wtime() - t;
            double ep = 0, ek = 0, n = 0;
            for (int r = 0; r < np; r++)
                ep += all[3 * r], ek += all[3 * r + 1], n += all[3 * r + 2];
            if (!me)
                printf("step %6d  atoms %.0f  E/N %.12f  Ekin/N %.12f  Epot/N %.12f\n", s, n,
                       (ep + ek) / n, ek / n, ep / n);
            free(mine);
            free(all);
        }
    }
    double wall = MPI_Wtime() - t0, tc = 0, tr = 0;
    MPI_Reduce(&t_comm, &tc, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_reduce, &tr, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (!me)
        printf("time %.4f s  halo+migration %.4f s  allreduce %.4f s  (%d ranks, %d steps)\n", wall,
               tc, tr, np, steps);
    free(atoms);
    free(halo);
    MPI_Finalize();
    return 0;
}
