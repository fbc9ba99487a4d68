/* glex_emu_job.c - JobID agreement: the members of a task agree on one of
 * the 256 JobIDs through the segment's table (the first takes a free one
 * under its key, the others find it; freed when all released it), and
 * groups lease one for their life.  Across hosts the table is node 0's:
 * other hosts ask it over the fabric (glex_emu_wire_ops.c). */
#include "glex_emu_internal.h"

static uint32_t job_home(uint64_t key)
{
    key ^= key >> 31;
    key *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(key >> 40) % GLEX_JOB_INDEX;
}

/* the index entry of a JobID that key names and members may still join */
static glex_job_index_t *job_find(glex_shm_header_t *h, uint64_t key)
{
    for (uint32_t i = job_home(key);; i = (i + 1) % GLEX_JOB_INDEX) {
        glex_job_index_t *x = &h->job_index[i];
        if (!x->job1)
            return x; /* empty: key is not there; a new entry goes here */
        if (x->key != key)
            continue;
        if (x->job1 == GLEX_JOB_NOLEASE)
            return x;
        const glex_job_slot_t *s = &h->jobs[x->job1 - 1];
        if (s->joined < s->members)
            return x;
    }
}

/* remove the entry (key, job1) keeping every probe chain intact */
static void job_unindex(glex_shm_header_t *h, uint64_t key, uint32_t job1)
{
    uint32_t i = job_home(key);
    while (h->job_index[i].job1 != job1 || h->job_index[i].key != key)
        i = (i + 1) % GLEX_JOB_INDEX;
    for (uint32_t k = i;;) {
        k = (k + 1) % GLEX_JOB_INDEX;
        glex_job_index_t *x = &h->job_index[k];
        if (!x->job1)
            break;
        uint32_t home = job_home(x->key);
        if ((i <= k) ? (home > i && home <= k) : (home > i || home <= k))
            continue; /* its chain does not pass i */
        h->job_index[i] = *x;
        i = k;
    }
    h->job_index[i].job1 = 0;
}

void glex_jobs_init(glex_shm_header_t *h)
{
    for (uint32_t w = 0; w < GLEX_MAX_JOBS / 64; w++)
        h->job_free[w] = ~0ull;
}

/* join or take the JobID of key (under job_lock): the JobID, or -1 when none
 * is free; lease: take one only while fewer than GLEX_MAX_LEASES are leased,
 * else record the refusal for the other members (GLEX_ENOENT) */
static int job_take(glex_shm_header_t *h, uint64_t key, uint32_t members, int lease)
{
    int id = -1;
    glex_job_index_t *x = job_find(h, key);
    if (x->job1 == GLEX_JOB_NOLEASE) {
        if (++x->seen >= members)
            job_unindex(h, key, GLEX_JOB_NOLEASE);
        return GLEX_ENOENT;
    }
    if (x->job1) {
        id = (int)x->job1 - 1;
        h->jobs[id].joined++;
    } else {
        for (uint32_t w = 0; w < GLEX_MAX_JOBS / 64 && id < 0; w++)
            if (h->job_free[w])
                id = (int)(w * 64 + (uint32_t)__builtin_ctzll(h->job_free[w]));
        if (lease && (id < 0 || h->leases >= GLEX_MAX_LEASES)) {
            if (members > 1) { /* refused: the other members must get the same answer */
                x->key = key;
                x->job1 = GLEX_JOB_NOLEASE;
                x->seen = 1;
            }
            return GLEX_ENOENT;
        }
        if (id >= 0) { /* the lowest free JobID, as before the index */
            h->job_free[id / 64] &= ~(1ull << (id % 64));
            glex_job_slot_t *s = &h->jobs[id];
            s->key = key;
            s->members = members;
            s->joined = 1;
            s->left = 0;
            s->used = 1;
            s->lease = (uint32_t)lease;
            h->leases += (uint32_t)lease;
            atomic_store(&s->gen, (atomic_load(&s->gen) + 1) & 0xffffu);
            x->key = key;
            x->job1 = (uint32_t)id + 1;
        }
    }
    return id;
}

static int job_agree(glex_fabric_t *f, uint64_t key, uint32_t members, int lease)
{
    glex_shm_header_t *h = f->hdr;
    if (members == 0)
        return glex_error(GLEX_EINVAL, "members=0 is out of range 1..%u", GLEX_MAX_NODES);
    glex_lock(&h->job_lock);
    int id = job_take(h, key, members, lease);
    glex_unlock(&h->job_lock);
    if (id >= 0)
        return id;
    if (lease)
        return glex_error(GLEX_ENOENT, "no JobID to lease (%u of %u may be leased): this "
                          "group takes one per task", GLEX_MAX_LEASES, GLEX_MAX_JOBS);
    return glex_error(GLEX_EAGAIN, "all %u JobIDs are in use", GLEX_MAX_JOBS);
}

int glex_job_agree_local(glex_fabric_t *f, uint64_t key, uint32_t members, int lease)
{
    return job_agree(f, key, members, lease);
}

/* across hosts the JobIDs are node 0's: other hosts ask it over the fabric */
static int job_at_node0(const glex_fabric_t *f) { return glex_remote(f, 0); }

int glex_job_acquire(glex_fabric_t *f, uint64_t key, uint32_t members)
{
    return job_at_node0(f) ? glex_wire_job(f, key, members, 0) : job_agree(f, key, members, 0);
}

int glex_job_lease(glex_fabric_t *f, uint64_t key, uint32_t members)
{
    return job_at_node0(f) ? glex_wire_job(f, key, members, 1) : job_agree(f, key, members, 1);
}

void glex_job_release(glex_fabric_t *f, int job_id)
{
    if (job_id < 0 || job_id >= (int)GLEX_MAX_JOBS)
        return;
    if (job_at_node0(f))
        glex_wire_job_release(f, job_id);
    else
        glex_job_release_local(f, job_id);
}

void glex_job_release_local(glex_fabric_t *f, int job_id)
{
    if (job_id < 0 || job_id >= (int)GLEX_MAX_JOBS)
        return;
    glex_shm_header_t *h = f->hdr;
    glex_job_slot_t *s = &h->jobs[job_id];
    glex_lock(&h->job_lock);
    if (s->used && ++s->left >= s->members) {
        s->used = 0;
        job_unindex(h, s->key, (uint32_t)job_id + 1);
        h->job_free[job_id / 64] |= 1ull << (job_id % 64);
        h->leases -= s->lease;
        s->lease = 0;
    }
    glex_unlock(&h->job_lock);
}
