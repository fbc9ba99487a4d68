#!/bin/sh
# run-sweep.sh - latency sweep of every collective and algorithm, offload vs
# host-based, on the emulated NIC (no MPI).  Writes a CSV and prints one
# OSU-style table per (collective, algorithm, mode).
#
# usage: bench/run-sweep.sh [-n PROCS] [-i ITERS] [-x WARMUP] [-m MIN:MAX] [-o FILE.csv] [-b BINDIR]
#   defaults: -n 4 -i 200 -x 20 -m 8:4194304 -o bench/results/sweep-n<PROCS>.csv
#   BINDIR holds glex-bench (default: the build directory you run it from, or .)
set -eu
n=4 iters=200 warm=20 range=8:4194304 out= bindir=.
while getopts n:i:x:m:o:b:h opt; do
  case $opt in
    n) n=$OPTARG ;; i) iters=$OPTARG ;; x) warm=$OPTARG ;; m) range=$OPTARG ;;
    o) out=$OPTARG ;; b) bindir=$OPTARG ;;
    h) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run-sweep.sh: see -h" >&2; exit 2 ;;
  esac
done
bench=$bindir/glex-bench
[ -x "$bench" ] || { echo "run-sweep.sh: $bench not found (build first, or pass -b)" >&2; exit 2; }
[ -n "$out" ] || { mkdir -p bench/results; out=bench/results/sweep-n$n.csv; }
echo "coll,algo,mode,n,size,avg_us,min_us,max_us,iters" > "$out"
for coll in bcast reduce allreduce barrier; do
  case $coll in
    bcast) algos="binomial double_tree" ;;
    reduce) algos="binomial rabenseifner double_tree" ;;
    allreduce) algos="binomial recursive_doubling rabenseifner double_tree" ;;
    barrier) algos="binomial" ;;
  esac
  for algo in $algos; do
    for mode in offload host; do
      flag=; [ $mode = host ] && flag=-H
      "$bench" -n "$n" -c $coll -a $algo $flag -m "$range" -i "$iters" -x "$warm" --csv \
        | tee -a "$out" \
        | awk -F, -v c=$coll -v a=$algo -v m=$mode -v n=$n '
            BEGIN { printf "# %s %s %s, %d processes\n# %-10s %-20s %10s %10s %10s %7s\n", c, a, m, n, "Size", "Ran", "Avg(us)", "Min(us)", "Max(us)", "Iters" }
            { printf "  %-10s %-20s %10s %10s %10s %7s\n", $5, $2, $6, $7, $8, $9 }'
    done
  done
done
echo "# CSV: $out"
