#!/usr/bin/env python3
"""vtime-calibrate.py - fit the virtual-time model to the first paper's two
measured rows (16 and 256 nodes, 16 B of doubles, offload and no offload),
as doc/vtime.md derives it.

The structural parameters are assumed (FIXED below); the model's rules make
the experiment's completion time linear in the leaves for each mode:

  offload:    T = P + 2 I + X + D + T + R + w + Ln + Lf + 2 G + H
                  + (N - 1) (R + A + D + T + w)
  no offload: T = P + 4 I + 2 D + 2 T + 2 R + 2 w + Ln + Lf + H
                  + (N - 1) (H + S + E C + P)

(P host_post, I io, X nic_task, D nic_desc, T nic_tx, R nic_rx, G
nic_trigger, H host_poll, S host_reduce_startup, C host_reduce_elem, A the
ALU for E elements, w the bytes on the wire, Ln and Lf the routes to the
nearest and farthest leaf).  Two rows per mode give slope and intercept:
the slopes fit nic_tx = nic_rx and host_poll, the intercepts io and
nic_task.  Prints the fitted parameters as a parameter file."""

MEASURED = {  # nodes: (no offload, offload), microseconds, 16 B
    16: (26.174, 15.286),
    256: (70.110, 31.120),
}
FIXED = dict(host_post_ns=60, host_reduce_startup_ns=20, host_reduce_elem_ns=1,
             nic_desc_ns=20, nic_trigger_ns=20, alu_double_ns=0.5,
             link_ns=20, router_ns=100, link_gbps=14, radix=32)
BYTES = 16


def route(a, b, k):
    """links and routers between nodes a and b of a k-ary n-tree"""
    if a == b:
        return 0, 0
    level, span = 1, k
    while a // span != b // span:
        span *= k
        level += 1
    return 2 * level, 2 * level - 1


def fit():
    f = FIXED
    k = f["radix"] // 2
    lat = lambda a, b: (lambda l, r: l * f["link_ns"] + r * f["router_ns"])(*route(a, b, k))
    e = BYTES // 8
    w = BYTES / f["link_gbps"]
    a = e * f["alu_double_ns"]
    (n1, n2) = sorted(MEASURED)
    ln = lat(0, 1)
    lf1, lf2 = lat(0, n1 - 1), lat(0, n2 - 1)
    no1, off1 = (x * 1000 for x in MEASURED[n1])
    no2, off2 = (x * 1000 for x in MEASURED[n2])
    s_off = (off2 - off1 - (lf2 - lf1)) / (n2 - n1)
    s_no = (no2 - no1 - (lf2 - lf1)) / (n2 - n1)
    b_off = off1 - (n1 - 1) * s_off
    b_no = no1 - (n1 - 1) * s_no
    tx = rx = (s_off - a - f["nic_desc_ns"] - w) / 2
    h = s_no - f["host_reduce_startup_ns"] - e * f["host_reduce_elem_ns"] - f["host_post_ns"]
    p, d, g = f["host_post_ns"], f["nic_desc_ns"], f["nic_trigger_ns"]
    io = (b_no - p - 2 * d - 2 * tx - 2 * rx - 2 * w - ln - lf1 - h) / 4
    task = b_off - (p + 2 * io + d + tx + rx + w + ln + lf1 + 2 * g + h)
    out = dict(f)
    out.update(host_poll_ns=h, io_ns=io, nic_task_ns=task, nic_tx_ns=tx, nic_rx_ns=rx)
    for name, v in out.items():
        if v < 0:
            raise SystemExit("vtime-calibrate: %s = %g < 0: the fixed values cannot fit" % (name, v))
    return out


if __name__ == "__main__":
    for name, v in sorted(fit().items()):
        print("%-24s = %.3f" % (name, v) if isinstance(v, float) else "%-24s = %d" % (name, v))
