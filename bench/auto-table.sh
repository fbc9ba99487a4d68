#!/bin/sh
# auto-table.sh - measure every engine algorithm of each collective with
# glex-bench and print, per collective, process count and message size,
# the fastest one: the data behind 'auto' (src/offload/glex_coll_group.c,
# doc/algorithms.md).  Offload mode, default NIC parameters.
#
# usage: sh bench/auto-table.sh [-b BINDIR] [-n "2 4 8 16"] [-m MIN:MAX] [-i ITERS]
#   -b BINDIR  where glex-bench is (default: the build directory you run it from, or .)
#   -n LIST    process counts (default "2 4 8 16")
#   -m MIN:MAX message sizes, doubling (default 8:4194304)
#   -i ITERS   timed iterations per size (default 100; 10 above 1 MiB, as glex-bench does)
# Output: CSV rows coll,n,size,algo,avg_us for every algorithm, then one
# "# best" line per collective, n and size.
set -eu
bin=. nps="2 4 8 16" sizes=8:4194304 iters=100
while getopts b:n:m:i:h o; do
  case $o in
    b) bin=$OPTARG ;; n) nps=$OPTARG ;; m) sizes=$OPTARG ;; i) iters=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
[ -x "$bin/glex-bench" ] || { echo "auto-table: no $bin/glex-bench (use -b BINDIR)" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for n in $nps; do
  for c in allreduce reduce bcast; do
    case $c in
      allreduce) algos="binomial recursive_doubling rabenseifner double_tree" ;;
      reduce) algos="binomial rabenseifner double_tree" ;;
      bcast) algos="binomial double_tree" ;;
    esac
    for a in $algos; do
      "$bin/glex-bench" -n "$n" -c "$c" -a "$a" -m "$sizes" -i "$iters" -x 5 --csv |
        awk -F, -v c="$c" -v n="$n" '$1 == c { print c "," n "," $5 "," $2 "," $6 }' >>"$out"
    done
  done
done
cat "$out"
sort -t, -k1,1 -k2,2n -k3,3n -k5,5g "$out" |
  awk -F, '{ k = $1 "," $2 "," $3 } k != last { print "# best " $1 " n=" $2 " " $3 " B: " $4 " (" $5 " us)"; last = k }'
