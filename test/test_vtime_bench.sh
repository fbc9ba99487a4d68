#!/bin/sh
# test_vtime_bench.sh - the virtual-time tools: glex-vtime paper-a gives the
# first paper's two measured rows the model was fitted to (16 and 256 nodes,
# 16 B); vtime-table.sh prints its CSV; the compiled defaults are what
# bench/vtime-calibrate.py fits; paper-b prints a row per size with offload
# ahead of host-based; mcast puts multicast ahead of the unicast trees for a
# small bcast and mcast-flits counts one head flit a packet; bad input is
# reported (exit 2); glex-info --vtime.
bin=${top_builddir:-.}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
n=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT

out=$("$bin/glex-vtime" paper-a -n 16 2>&1)
echo "$out" | grep -q "16 nodes, 16 B of doubles: no offload 26.174 us, offload 15.286 us"
ok $? "paper-a, 16 nodes: the measured 26.174 / 15.286 us ($out)"
if nm "$bin/glex-vtime" 2>/dev/null | grep -q __asan_init; then
  # 256 processes with AddressSanitizer's shadow memory each are too many here
  n=$((n+1)); echo "ok $n - # SKIP paper-a, 256 nodes: a sanitizer build"
else
  out=$("$bin/glex-vtime" paper-a -n 256 2>&1)
  echo "$out" | grep -q "256 nodes, 16 B of doubles: no offload 70.110 us, offload 31.120 us"
  ok $? "paper-a, 256 nodes: the measured 70.110 / 31.120 us ($out)"
fi
out=$("$bin/glex-vtime" paper-a -n 16 -b 56 2>&1)
echo "$out" | awk '{ for (i = 1; i <= NF; i++) if ($i == "offload" && $(i+1) != "us,") v = $(i+1) }
                   END { exit !(v + 0 > 16.0) }'
ok $? "paper-a: above 48 bytes a second descriptor makes the time jump ($out)"

sh "$src/bench/vtime-table.sh" -b "$bin" -n "16 32" -s "16 48" >"$tmp" 2>&1
[ "$(head -1 "$tmp")" = "nodes,bytes,no_offload_us,offload_us" ] && [ "$(wc -l <"$tmp")" -eq 5 ] &&
  grep -q "^16,16,26.174,15.286$" "$tmp" && grep -q "^32,48," "$tmp"
ok $? "vtime-table.sh prints the CSV header and a row per nodes x bytes"

python3 "$src/bench/vtime-calibrate.py" >"$tmp" 2>&1
fit_ok=0
for name in host_poll_ns io_ns nic_task_ns nic_tx_ns nic_rx_ns alu_double_ns link_ns router_ns; do
  want=$(awk -v k="$name" '$1 == k { print $3 }' "$tmp")
  have=$(GLEX_VTIME_PARAMS= "$bin/glex-info" --vtime | awk -v k="$name" '$1 == k { print $3 }')
  awk -v a="$want" -v b="$have" 'BEGIN { exit !(a != "" && a - b < 0.001 && b - a < 0.001) }' ||
    { echo "# $name: fitted $want, compiled default $have"; fit_ok=1; }
done
ok $fit_ok "the compiled defaults are bench/vtime-calibrate.py's fit"

"$bin/glex-vtime" paper-b -n 4 -c reduce -t 2 -s 256:1024 >"$tmp" 2>&1
awk '$1 ~ /^[0-9]+$/ { rows++; if (!($4 > 1)) bad = 1 } END { exit bad || rows != 3 }' "$tmp"
ok $? "paper-b: a row per size, offload ahead of host-based"
[ $? = 0 ] || sed 's/^/# /' "$tmp"

"$bin/glex-vtime" paper-a -n 257 >/dev/null 2>"$tmp"; rc=$?
[ $rc = 2 ] && grep -q "paper-a -n 257 is out of range 2..256" "$tmp"
ok $? "paper-a -n 257 refused with its range (exit 2)"
"$bin/glex-vtime" paper-a -b 20 >/dev/null 2>"$tmp"; rc=$?
[ $rc = 2 ] && grep -q "\-b 20 is invalid: allowed 8..192, a multiple of 8" "$tmp"
ok $? "paper-a -b 20 refused with what is allowed (exit 2)"
# multicast: the model's bcast latency, and the head flits an all-to-all injects
out=$("$bin/glex-vtime" mcast -n 8 -s 64:64 2>&1)
echo "$out" | awk '$1 == 64 { exit !($4 < $2 && $4 < $3) }'
ok $? "mcast, 8 nodes, 64 B: multicast ahead of binomial and double tree ($(echo "$out" | tail -1))"
out=$("$bin/glex-vtime" mcast-flits -n 8 -p 4 2>&1)
echo "$out" | grep -q "33 head flits injected (M\*N = 32, the rest the group's set-up)" &&
  echo "$out" | grep -q "224 head flits injected (M\*N\*(N-1))"
ok $? "mcast-flits, 8 nodes x 4 packets: 32 + 1 set-up head flits, multi-head 224"
"$bin/glex-vtime" paper-c >/dev/null 2>"$tmp"; rc=$?
[ $rc = 2 ] && grep -q "allowed paper-a, paper-b, mcast or mcast-flits" "$tmp"
ok $? "an unknown experiment is refused (exit 2)"
GLEX_VTIME_PARAMS=/nonexistent "$bin/glex-info" --vtime >/dev/null 2>"$tmp"; rc=$?
[ $rc = 2 ] && grep -q "GLEX_VTIME_PARAMS=/nonexistent" "$tmp"
ok $? "glex-info --vtime reports a missing parameter file (exit 2)"
echo "1..$n"
