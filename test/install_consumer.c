/* install_consumer.c - built by .ci/run against the installed headers and
 * library through pkg-config: a one-node allreduce must work. */
#include <glex_coll.h>
#include <glex_emu.h>
#include <stdio.h>

int main(void)
{
    glex_fabric_t *f;
    glex_vp_t *vp;
    glex_group_t *g;
    uint32_t node = 0;
    uint16_t vpi = 0;
    double in[4] = { 1, 2, 3, 4 }, out[4] = { 0 };
    if (glex_fabric_open("consumer", 1, 0, NULL, &f) || glex_vp_open(f, 0, &vp) ||
        glex_group_create(vp, 1, 1, 0, &node, &vpi, &g)) {
        fprintf(stderr, "install_consumer: %s\n", glex_last_error());
        return 1;
    }
    glex_coll_args_t a = { .kind = GLEX_COLL_ALLREDUCE, .type = GLEX_DOUBLE, .op = GLEX_OP_SUM,
                           .count = 4, .sendbuf = in, .recvbuf = out };
    int rc = glex_coll_run(g, &a);
    glex_group_free(g);
    glex_fabric_close(f);
    if (rc || out[3] != 4) {
        fprintf(stderr, "install_consumer: rc %d out[3] %g\n", rc, out[3]);
        return 1;
    }
    printf("install_consumer: ok\n");
    return 0;
}
