#!/bin/sh
# test_osu_report.sh - bench/osu-report.py on a sweep whose answers are known:
# the median of several runs, the best stock library per size, the ratio and
# target per process count and size, and the verdict table's count of sizes met and
# runs of sizes missed.
src=${srcdir:-.}
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 77; }
dir=/tmp/glex-osu-report.$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=$((fail+1)); fi; }
row() { echo "$1,$2,$3,$4,$5,$5,$5,100,,,"; }
{
  echo "system,coll,np,size,avg_us,min_us,max_us,iters,pure_us,compute_us,overlap_pct"
  for size in 8 16 32 64 4096 65536 4194304; do
    # 2 processes, target 1.0: GLEX 1 us; Open MPI 2 us but 0.8 us at 8-16 B
    # and 0.9 us at 4 KiB, MPICH 3 us: missed at 8 B - 16 B and at 4 KiB
    row glex allreduce 2 $size 1
    case $size in 8|16) o=0.8 ;; 4096) o=0.9 ;; *) o=2 ;; esac
    row openmpi allreduce 2 $size $o
    row mpich allreduce 2 $size 3
    # 4 processes, target 1.5 from 512 B, 1.0 below: three GLEX runs (median
    # 1 us), Open MPI 2.5 us: met at every size but where MPICH is faster
    row glex bcast 4 $size 1; row glex bcast 4 $size 9; row glex bcast 4 $size 0.5
    row openmpi bcast 4 $size 2.5
  done
  row mpich bcast 4 32 0.9     # ratio 0.9 below 512 B: missed
  row mpich bcast 4 64 1.2     # ratio 1.2 below 512 B: met
  row mpich bcast 4 4096 1.2   # ratio 1.2 from 512 B: missed
  row glex reduce 4 8 1         # no stock library measured: not counted
  echo "a line that is not a result"
} > "$dir/osu.csv"
python3 "$src/bench/osu-report.py" "$dir/osu.csv" "$dir" > "$dir/out" 2>&1
ok $? "the report runs"
grep -qF '| allreduce | 2 | 0.80 | 4 of 7 | 8 B - 16 B, 4 KiB | 1.0 | NO |' "$dir/summary.md"
ok $? "2 processes: worst ratio, 4 of 7 sizes met, the two missed runs named"
grep -qF '| bcast | 4 | 0.90 | 5 of 7 | 32 B, 4 KiB | 1.5 from 512 B, 1.0 below | NO |' "$dir/summary.md"
ok $? "4 processes: the median of three runs, 1.0 below 512 B and 1.5 from it, MPICH the best stock library where it is faster"
grep -qF '| 4194304 | 1.00 | 2.50 (openmpi) | 2.50 | yes |' "$dir/summary.md"
ok $? "a size's row: GLEX, best stock library named, ratio, met"
grep -qF '| 8 | 1.00 | - | - | - |' "$dir/summary.md" && ! grep -q '^| reduce | 4 ' "$dir/summary.md"
ok $? "a size with no stock library is shown but not judged"
grep -qF 'median of up to 3 runs per size' "$dir/summary.md"
ok $? "the summary says how many runs it took the median of"
python3 "$src/bench/osu-report.py" 2>/dev/null >/dev/null; [ $? != 0 ]
ok $? "no arguments: usage, non-zero exit"
echo "1..$n"
[ $fail = 0 ]
