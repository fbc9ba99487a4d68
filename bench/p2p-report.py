#!/usr/bin/env python3
"""p2p-report.py DIR - summarize a p2p-sweep.sh run.

Reads DIR/p2p.csv (system,test,np,size,value: latency in us, the others in
MB/s) and DIR/md.csv (the proxy application's runs) and writes
DIR/summary.md: per test, process count and size the median of the runs of
each system, GLEX against the best of Debian's MPICH and Open MPI as a
ratio that reads 'times as slow' (above 1: GLEX is slower), and whether
the target holds (1.25x); for the proxy the median run time and
communication time per system and whether the energies printed by every
run are identical."""
import csv
import os
import statistics
import sys
from collections import defaultdict

STOCK = ("mpich", "openmpi")
OURS = "glex"
TARGET = 1.25


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: p2p-report.py DIR (with p2p.csv and md.csv from p2p-sweep.sh)")
    out = sys.argv[1]
    runs = defaultdict(list)  # (test, np, size, system) -> values
    p2p = os.path.join(out, "p2p.csv")
    if os.path.exists(p2p):
        with open(p2p) as f:
            for row in csv.DictReader(f):
                runs[(row["test"], int(row["np"]), int(row["size"]), row["system"])].append(
                    float(row["value"]))
    lines = ["# Point-to-point sweep", "",
             f"Median of the runs per size; ratio = how many times GLEX's time is the best "
             f"stock library's (latency: GLEX / best; bandwidth: best / GLEX); target "
             f"{TARGET}x.", ""]
    keys = sorted({(t, n) for (t, n, _, _) in runs})
    for test, np_ in keys:
        systems = sorted({s for (t, n, _, s) in runs if (t, n) == (test, np_)})
        sizes = sorted({z for (t, n, z, _) in runs if (t, n) == (test, np_)})
        unit = "us" if test == "latency" else "MB/s"
        lines += [f"## {test}, {np_} processes ({unit})", "",
                  "| size | " + " | ".join(systems) + " | ratio | target |",
                  "|---|" + "---|" * (len(systems) + 2)]
        met = 0
        for size in sizes:
            med = {s: statistics.median(runs[(test, np_, size, s)])
                   for s in systems if runs.get((test, np_, size, s))}
            stock = [med[s] for s in STOCK if s in med]
            ratio = verdict = "-"
            if OURS in med and stock and med[OURS] > 0:
                if test == "latency":
                    r = med[OURS] / min(stock)
                else:
                    r = max(stock) / med[OURS]
                ratio = f"{r:.2f}"
                verdict = "met" if r <= TARGET else "missed"
                met += r <= TARGET
            cells = [f"{med[s]:.3g}" if s in med else "-" for s in systems]
            lines.append(f"| {human(size)} | " + " | ".join(cells) + f" | {ratio} | {verdict} |")
        lines += ["", f"Target met at {met} of {len(sizes)} sizes.", ""]
    md = os.path.join(out, "md.csv")
    if os.path.exists(md):
        rows = defaultdict(list)
        energies = set()
        with open(md) as f:
            for row in csv.DictReader(f):
                rows[(int(row["np"]), row["system"])].append(row)
                energies.add((row["np"], row["energy"]))
        lines += ["## Proxy application (glex-md)", "",
                  "| processes | system | runs | time s | halo+migration s | allreduce s |",
                  "|---|---|---|---|---|---|"]
        for (np_, s), rs in sorted(rows.items()):
            med = lambda k: statistics.median(float(r[k]) for r in rs)
            lines.append(f"| {np_} | {s} | {len(rs)} | {med('time_s'):.3f} | "
                         f"{med('comm_s'):.3f} | {med('allreduce_s'):.4f} |")
        for np_ in sorted({n for n, _ in rows}):
            ours = rows.get((np_, OURS))
            stock = [statistics.median(float(r["time_s"]) for r in rows[(np_, s)])
                     for s in STOCK if (np_, s) in rows]
            if ours and stock:
                r = statistics.median(float(x["time_s"]) for x in ours) / min(stock)
                lines.append(f"\n{np_} processes: GLEX takes {r:.3f} times the best stock "
                             f"library's time (target 1.05).")
        per_np = defaultdict(set)
        for n, e in energies:
            per_np[n].add(e)
        same = all(len(v) == 1 for v in per_np.values())
        lines.append("\nFinal energies " + ("identical in every run and system."
                                             if same else f"DIFFER: {dict(per_np)}"))
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
