#!/bin/sh
# vtime-table.sh - the first paper's reduce experiment run on the NIC model in
# virtual time (glex-vtime paper-a): 16, 32, 64, 128 and 256 nodes, 16 to 48
# bytes of doubles, no offload and offload.  Prints CSV after a header line:
#   nodes,bytes,no_offload_us,offload_us
# The model's defaults are fitted to the paper's 16 and 256-node 16-byte rows
# (bench/vtime-calibrate.py, doc/vtime.md); GLEX_VTIME_PARAMS to change them.
# usage: sh bench/vtime-table.sh [-b BUILDDIR] [-n "NODES..."] [-s "BYTES..."]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=
nodes="16 32 64 128 256" sizes="16 24 32 40 48"
while [ $# -gt 0 ]; do
  case $1 in
    -b) bin=$2; shift ;;
    -n) nodes=$2; shift ;;
    -s) sizes=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "vtime-table: unknown option '$1' (see -h)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$bin" ]; then # the build directory holding glex-vtime, else the one on PATH
  for d in "$here" "$here/_build" "$PWD"; do [ -x "$d/glex-vtime" ] && bin=$d && break; done
  [ -n "$bin" ] || { p=$(command -v glex-vtime) && bin=$(dirname "$p"); } || true
fi
[ -n "$bin" ] && [ -x "$bin/glex-vtime" ] ||
  { echo "vtime-table: glex-vtime not found: build it, or pass -b BUILDDIR" >&2; exit 2; }
echo "nodes,bytes,no_offload_us,offload_us"
for n in $nodes; do
  for b in $sizes; do
    "$bin/glex-vtime" paper-a -n "$n" -b "$b" --csv
  done
done
