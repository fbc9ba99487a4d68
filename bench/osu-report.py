#!/usr/bin/env python3
"""osu-report.py CSV OUTDIR - plot and summarize an osu-sweep.sh run.

Writes OUTDIR/osu.png (latency vs message size, one line per system, one
panel per collective and process count) and OUTDIR/summary.md (for each
collective, process count and size: GLEX with its defaults against the best
of Debian's stock MPICH and Open MPI, the speedup ratio, and whether the
targets of issue 22 are met: at 2 processes no slower at any size; above
2, 1.5x faster from 512 B and no slower below),
and per collective and process count the worst ratio, how many sizes met
the target and the runs of sizes that missed it.
A size measured in several runs (osu-sweep.sh -r N) counts with the median
of its runs' averages."""
import csv
import statistics
import sys
from collections import defaultdict

STOCK = ("mpich", "openmpi")
OURS = "glex"


def target(np_, size):
    """the ratio (best stock / GLEX) a size must reach"""
    return 1.0 if np_ <= 2 or size < 512 else 1.5


def target_text(np_):
    return "1.0" if np_ <= 2 else "1.5 from 512 B, 1.0 below"


def human(size):
    """8 -> '8 B', 65536 -> '64 KiB', 4194304 -> '4 MiB'"""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def ranges(sizes, missed):
    """The missed sizes as runs of neighbours in the measured list:
    '8 B - 256 B, 64 KiB' ('-' when none is missed)."""
    runs, start, prev = [], None, None
    for size in sizes + [None]:
        if size is not None and size in missed:
            start = size if start is None else start
        elif start is not None:
            runs.append(human(start) if start == prev else f"{human(start)} - {human(prev)}")
            start = None
        prev = size
    return ", ".join(runs) or "-"


def add(table, key, row, column):
    """Append row[column] to table[key][system][size]; returns how many runs
    that size now has."""
    vals = table[key].setdefault(row["system"], {}).setdefault(int(row["size"]), [])
    vals.append(float(row[column]))
    return len(vals)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    lat = defaultdict(dict)  # (coll, np) -> {system: {size: us}}
    overlap = defaultdict(dict)
    runs = 1
    with open(path) as f:
        for row in csv.DictReader(f):
            try:
                int(row["np"]), int(row["size"]), float(row["avg_us"])
            except (TypeError, ValueError):
                continue  # not a result row
            key = (row["coll"], int(row["np"]))
            runs = max(runs, add(lat, key, row, "avg_us"))
            if row["overlap_pct"]:
                add(overlap, key, row, "overlap_pct")
    for table in (lat, overlap):
        for systems in table.values():
            for sizes in systems.values():
                for size, vals in sizes.items():
                    sizes[size] = statistics.median(vals)
    how = f"median of up to {runs} runs per size" if runs > 1 else "one run"
    lines = ["# OSU sweep summary", "",
             f"Source: `{path}` ({how}). Ratio = best stock latency / GLEX latency "
             "(GLEX = the netmod with its defaults); target: at 2 processes no slower (1.0) at "
             "every size, above 2 1.5x from 512 B and no slower below.", ""]
    verdicts = []
    for (coll, np_) in sorted(lat):
        systems = lat[(coll, np_)]
        if OURS not in systems:
            continue
        stock = {s: v for s, v in systems.items() if s in STOCK}
        lines += [f"## {coll}, {np_} processes", "",
                  "| size | GLEX us | best stock us (which) | ratio | met |", "|---|---|---|---|---|"]
        worst, compared, missed = None, [], set()
        for size in sorted(systems[OURS]):
            ours = systems[OURS][size]
            cands = [(v[size], s) for s, v in stock.items() if size in v]
            if not cands:
                lines.append(f"| {size} | {ours:.2f} | - | - | - |")
                continue
            best, who = min(cands)
            ratio = best / ours if ours > 0 else float("inf")
            ok = ratio >= target(np_, size)
            worst = ratio if worst is None else min(worst, ratio)
            compared.append(size)
            if not ok:
                missed.add(size)
            lines.append(f"| {size} | {ours:.2f} | {best:.2f} ({who}) | {ratio:.2f} | {'yes' if ok else 'NO'} |")
        if worst is not None:
            met = len(compared) - len(missed)
            verdicts.append(f"| {coll} | {np_} | {worst:.2f} | {met} of {len(compared)} | "
                            f"{ranges(compared, missed)} | {target_text(np_)} | {'NO' if missed else 'yes'} |")
        if (coll, np_) in overlap and OURS in overlap[(coll, np_)]:
            ov = overlap[(coll, np_)]
            lines += ["", "Overlap % (OSU definition): " + "; ".join(
                f"{s}: " + ", ".join(f"{sz}:{v:.0f}" for sz, v in sorted(ov[s].items()))
                for s in sorted(ov))]
        lines.append("")
    lines[4:4] = ["## Worst ratio per collective and process count", "",
                  "| collective | processes | worst ratio | sizes met | missed at | target | met |",
                  "|---|---|---|---|---|---|---|"] + verdicts + [""]
    with open(f"{out}/summary.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:6 + len(verdicts)]))
    print(f"# summary: {out}/summary.md")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# no matplotlib: plot skipped (Debian: apt-get install python3-matplotlib)")
        return
    keys = sorted(lat)
    systems = sorted({s for k in keys for s in lat[k]})
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {s: palette[i % len(palette)] for i, s in enumerate(systems)}  # same in every panel
    colls = sorted({k[0] for k in keys})
    nps = sorted({k[1] for k in keys})
    fig, axes = plt.subplots(len(colls), len(nps), figsize=(4.2 * len(nps), 3.4 * len(colls)),
                             squeeze=False)
    for i, coll in enumerate(colls):
        for j, np_ in enumerate(nps):
            ax = axes[i][j]
            for s, pts in sorted(lat.get((coll, np_), {}).items()):
                xs = sorted(pts)
                style = "-" if s in STOCK or s == OURS else ":"
                width = 2.2 if s == OURS else 1.2
                ax.plot([max(x, 1) for x in xs], [pts[x] for x in xs], style, marker=".",
                        linewidth=width, label=s, color=color[s])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{coll}, {np_} processes", fontsize=9)
            ax.set_xlabel("message size (bytes)", fontsize=8)
            ax.set_ylabel("latency (us)", fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
            ax.tick_params(labelsize=7)
            if i == 0 and j == 0:
                for s in systems:  # every system in the legend, also if absent here
                    if s not in lat.get((coll, np_), {}):
                        ax.plot([], [], color=color[s], label=s)
                ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out}/osu.png", dpi=90)
    print(f"# plot: {out}/osu.png")


if __name__ == "__main__":
    main()
