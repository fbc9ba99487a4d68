#!/usr/bin/env python3
"""nic_counts.py N K MODE LOG - check the NIC counts that nic_counts.c's
communicators report under GLEX_VERBOSE=2 (N ranks, K calls of each
collective per communicator, MODE offload or host-based) against what each
algorithm implies, rank by rank, for 8-byte messages (one inline packet
each) with 'auto' at this size:

  MPI_Allreduce  recursive doubling: ranks fold into the largest power of two
                 p (rank 2i+1 sends to 2i for i < n - p and gets the result
                 back), then log2(p) exchanges, each a send and a
                 receive-combine in one descriptor; the first combine takes
                 the rank's own data from the send buffer (no local copy)
  MPI_Reduce     binomial tree at root 0: a leaf sends its buffer; an inner
                 node has one descriptor (the counter trigger: it fires when
                 all its children's packets are in) that combines them in
                 order with its own send buffer and forwards the result to
                 its parent
  MPI_Bcast      binomial tree: the root sends to each child; an inner node
                 receives and forwards to its largest subtree in one
                 descriptor, then sends to the others; a leaf receives.
                 Or, where 'auto' picks it (more processes than cores,
                 doc/algorithms.md), flat_read: the root offers its buffer
                 to every other rank, one packet each, from one descriptor
                 per 32 of them; each rank's NIC reads it (one DMA read)
  MPI_Barrier    recursive doubling of empty packets: as MPI_Allreduce,
                 without ALU work
  flat           where 'auto' picks it (more processes than cores): reduce:
                 every rank sends its packet to the root, whose counter
                 trigger combines them in rank order (one descriptor at
                 root 0); allreduce: every rank sends its packet to all
                 others (one descriptor), then combines all n in rank order:
                 rank 0 with one counter trigger, rank r > 0 takes rank
                 0's packet, combines ranks 1..r-1, its own data (a local
                 step), ranks r+1..n-1; barrier: empty packets to all, one
                 counter trigger over the n-1 others; a barrier from 4
                 ranks goes through rank 0: every rank's
                 packet to it, its counter trigger, its result (an empty
                 packet) to all others from one descriptor; bcast: the
                 root's packet to all others from one descriptor
  binomial       allreduce and barrier where 'auto' picks it (more processes
                 per CPU than GLEX_YIELD_MAX_PER_CPU): the binomial reduce
                 to rank 0, then the binomial bcast, in one task; a barrier
                 the same of empty packets, without ALU work

Per call, 'offload' runs one task; 'host-based' one task per descriptor.
Prints TAP; exits 1 on a mismatch."""
import re
import sys


def children(v, n):
    """children of v in the binomial tree of n ranks at root 0, and whether v has a parent"""
    kids, mask = [], 1
    while mask < n:
        if v & mask:
            return kids, True
        if v + mask < n:
            kids.append(v + mask)
        mask <<= 1
    return kids, v != 0


# from this many ranks a flat barrier goes through rank 0
# (src/offload/glex_coll_flat.c)
FLAT_BARRIER_VIA_ROOT_MIN = 4


def expected(kind, algo, v, n):
    """(descriptors, packets sent, packets received, ALU ops) of rank v per call"""
    if algo == "flat_read":
        return ((n - 1 + 31) // 32, n - 1, 0, 0) if v == 0 else (1, 0, 1, 0)
    if algo == "flat":
        if kind == "MPI_Bcast":
            return (1, n - 1, 0, 0) if v == 0 else (1, 0, 1, 0)
        if kind == "MPI_Reduce":
            return (1, 0, n - 1, n - 1) if v == 0 else (1, 1, 0, 0)
        if kind == "MPI_Barrier" and n >= FLAT_BARRIER_VIA_ROOT_MIN and v > 0:
            return (2, 1, 1, 0)
        if kind == "MPI_Barrier":
            return (2, n - 1, n - 1, 0)
        if v == 0:
            return (2, n - 1, n - 1, n - 1)
        return (3 + (v >= 2) + (v < n - 1), n - 1, n - 1, n - 1)
    if algo == "binomial" and kind in ("MPI_Allreduce", "MPI_Barrier"):
        r, b = expected("MPI_Reduce", algo, v, n), expected("MPI_Bcast", algo, v, n)
        return (r[0] + b[0], r[1] + b[1], r[2] + b[2], r[3] if kind == "MPI_Allreduce" else 0)
    kids, parent = children(v, n)
    k = len(kids)
    if kind == "MPI_Reduce":
        if k == 0:
            return (1, 1, 0, 0)
        return (1, 1 if parent else 0, k, k)  # one counter-triggered combine
    if kind == "MPI_Bcast":
        if not parent:
            return (k, k, 0, 0)
        return (max(k, 1), k, 1, 0)
    # MPI_Allreduce and MPI_Barrier, recursive doubling
    p = 1
    while p * 2 <= n:
        p *= 2
    r, steps = n - p, p.bit_length() - 1
    if v < 2 * r and v % 2:
        return (2, 1, 1, 0)                    # fold in, get the result back
    d, s, rc, a = max(steps, 1), steps, steps, steps  # exchanges (alone: a local copy)
    if v < 2 * r:
        d, s, rc, a = d + 2, s + 1, rc + 1, a + 1  # take the partner's data, return the result
    return (d, s, rc, 0 if kind == "MPI_Barrier" else a)


# what 'auto' may pick at 8 bytes (the counts follow the one reported)
ALGO = {"MPI_Allreduce": ("recursive_doubling", "flat", "binomial"),
        "MPI_Reduce": ("binomial", "flat"), "MPI_Bcast": ("binomial", "flat", "flat_read"),
        "MPI_Barrier": ("recursive_doubling", "flat", "binomial")}

LINE = re.compile(r"glex: rank (\d+) comm context (\S+) size (\d+) rank (\d+): (\S+) (\S+) (.+?): "
                  r"(\d+) calls, (\d+) tasks, (\d+) descriptors, (\d+) packets sent, "
                  r"(\d+) received, (\d+) ALU ops")


def main():
    n, k, mode, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    seen, bad, tests = {}, 0, 0
    for line in open(log, errors="replace"):
        m = LINE.search(line)
        if not m or m.group(2) == "0" or int(m.group(3)) != n:
            continue  # MPI_COMM_WORLD (context 0) and other sizes are not ours
        wrank, ctx, _, crank, kind, algo, md = m.group(1, 2, 3, 4, 5, 6, 7)
        calls, tasks, desc, sent, recv, alu = (int(x) for x in m.group(8, 9, 10, 11, 12, 13))
        v = int(crank)
        key = (ctx, v, kind)
        seen[key] = seen.get(key, 0) + 1
        e = expected(kind, algo, v, n)
        want = (k, k * e[0] if mode == "host-based" else k, k * e[0], k * e[1], k * e[2], k * e[3])
        got = (calls, tasks, desc, sent, recv, alu)
        tests += 1
        ok = algo in ALGO[kind] and md == mode and got == want
        bad += not ok
        print("%s %d - n=%d rank %d %s %s %s: calls/tasks/descriptors/sent/received/alu %s%s"
              % ("ok" if ok else "not ok", tests, n, v, kind, algo, md, got,
                 "" if ok else " expected %s %s %s" % ("|".join(ALGO[kind]), mode, want)))
    ctxs = {c for c, _, _ in seen}
    tests += 1
    complete = len(ctxs) == 2 and all(seen.get((c, v, kind)) == 1 for c in ctxs
                                      for v in range(n) for kind in ALGO)
    bad += not complete
    print("%s %d - n=%d: one line per rank and collective on each of the 2 communicators (%d lines)"
          % ("ok" if complete else "not ok", tests, n, sum(seen.values())))
    print("1..%d" % tests)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
