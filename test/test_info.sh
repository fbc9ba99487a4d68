#!/bin/sh
# test_info.sh - glex-info: topology and parameters, --help, bad input, and
# the counters of a live job's segment (glex-bench keeps one open).
bin=${top_builddir:-.}
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=$((fail+1)); fi; }
out=$("$bin/glex-info"); rc=$?
echo "$out" | grep -q "Topology (hwloc): packages" && echo "$out" | grep -q "GLEX_UNIT_BUFFER_KB"
ok $(( rc | $? )) "glex-info prints the hwloc summary and NIC parameters"
"$bin/glex-info" --help | grep -q "GLEX_TIMEOUT"; ok $? "--help documents the variables"
"$bin/glex-info" --help | grep -q "GLEX_RDMA_EAGER (auto, 0..65536"; ok $? "and the netmod's"
"$bin/glex-info" --help | grep -q "GLEX_MP_LONG (1, 0..1"; ok $? "GLEX_MP_LONG among them"
GLEX_PULSES=0 "$bin/glex-info" 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "GLEX_PULSES=0 is invalid: allowed range 1..64" /tmp/glex-info.$$; ok $? "a bad variable is reported with its range (exit 2)"
GLEX_RDMA_KB=2000 "$bin/glex-info" 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "GLEX_RDMA_KB=2000 is invalid: allowed auto or 0..1024" /tmp/glex-info.$$; ok $? "GLEX_RDMA_KB out of range is reported with its range (exit 2)"
GLEX_RDMA_KB=16 "$bin/glex-info" | grep -q "direct path RDMA above   16 KiB (GLEX_RDMA_KB)"; ok $? "GLEX_RDMA_KB is shown in force"
GLEX_STAGE_KB=-5 "$bin/glex-info" 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "GLEX_STAGE_KB=-5 is invalid: allowed auto or 0..4194304" /tmp/glex-info.$$; ok $? "GLEX_STAGE_KB out of range is reported with its range (exit 2)"
GLEX_STAGE_KB=512 "$bin/glex-info" | grep -q "stage messages up to     512 KiB (GLEX_STAGE_KB)"; ok $? "GLEX_STAGE_KB is shown in force"
GLEX_STAGE_MAP=2 "$bin/glex-info" 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "GLEX_STAGE_MAP=2 is invalid: allowed range 0..1" /tmp/glex-info.$$; ok $? "GLEX_STAGE_MAP out of range is reported with its range (exit 2)"
GLEX_STAGE_MAP=0 "$bin/glex-info" | grep -q "staged calls             reduce only; its root reads the stages by RDMA (GLEX_STAGE_MAP)"; ok $? "GLEX_STAGE_MAP is shown in force"
GLEX_READ_KB=16 "$bin/glex-info" | grep -Eq "read in place from +16 KiB \(GLEX_READ_KB\)"; ok $? "GLEX_READ_KB is shown in force"
GLEX_READ_KB=x "$bin/glex-info" 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "GLEX_READ_KB=x is invalid: allowed auto or 0..65536" /tmp/glex-info.$$; ok $? "GLEX_READ_KB not a number is reported with its range (exit 2)"
"$bin/glex-info" --job no-such-job 2>/tmp/glex-info.$$ >/dev/null; rc=$?
[ $rc = 1 ] && grep -q "no segment" /tmp/glex-info.$$; ok $? "an unknown job is reported"
# a run long enough to be looked at (about 3 s here), read while it runs, as
# soon as both ranks have posted (a fixed pause raced a run that got faster:
# -i 400 takes 0.3 s now)
"$bin/glex-bench" -n 2 -c allreduce -m 8:4194304 -i 4000 -x 1 >/dev/null &
bp=$!
found="" out="" both=1
for i in $(seq 1 200); do
  [ -n "$found" ] ||
    found=$("$bin/glex-info" --list | grep -o "job bench[0-9]*" | head -1 | cut -d' ' -f2)
  if [ -n "$found" ]; then
    out=$("$bin/glex-info" --job "$found" 2>&1)
    echo "$out" | awk '/VP counters/{f=1;next} /Unit counters/{f=0} f && $1 ~ /^[0-9]+$/ && $3 > 0 {c++} END{exit c>=2?0:1}'
    both=$?
    [ $both = 0 ] && break
  fi
  sleep 0.05
done
ok $both "glex-info --job shows both ranks' VP counters of a running job"
echo "$out" | awk '/Unit counters/{f=1;next} f && $1 ~ /^[0-9]+$/ && $3 > 0 {c++} END{exit c>=1?0:1}'
ok $? "and unit counters with buffered packets"
echo "$out" | grep -Eq "DMA read of another process's (64 KiB: [0-9]+\.[0-9][0-9]x the host's copy.*; read in place (from (8|16|32|64) KiB|never)|memory: refused)"
ok $? "and this machine's DMA read against a copy, measured when the segment was created, with the size it pays from"
echo "$out" | grep -Eq "copies (of 513-(1024|2048|4096) B by the model's own loop, larger by memcpy|by memcpy \(faster here)"
ok $? "and which copies go by the model's own loop, as measured"
wait $bp; ok $? "the benchmark run finished"
rm -f /tmp/glex-info.$$
echo "1..$n"
exit 0
