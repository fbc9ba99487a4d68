#!/bin/sh
# test_switch.sh - glex-switch: each measurement printed as a positive time,
# --help, bad input reported with the allowed range (exit 2).
bin=${top_builddir:-.}
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=$((fail+1)); fi; }
out=$("$bin/glex-switch" -n 200 -c 0:0); rc=$?
lines=$(echo "$out" | grep -cE '^[a-z].* +[0-9]+\.[0-9]{3} us$')
zero=$(echo "$out" | grep -cE ' 0\.000 us$')
[ $rc = 0 ] && [ "$lines" = 4 ] && [ "$zero" = 0 ]; ok $? "one CPU: four measurements, each a positive time"
if [ "$(nproc)" -ge 2 ]; then
  out=$("$bin/glex-switch" -n 200 -c 0:1); rc=$?
  echo "$out" | grep -qE '^futex hand-off across CPUs, busy +[0-9]+\.[0-9]{3} us$'
  ok $(( rc | $? )) "two CPUs: the cross-CPU wake-ups are measured"
else
  echo "ok 2 # SKIP one CPU"
  n=2
fi
"$bin/glex-switch" --help | grep -q "CPU:CPU"; ok $? "--help documents the options"
"$bin/glex-switch" -n 0 2>/tmp/glex-switch.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q -- "-n=0 is invalid: allowed range 1..100000000" /tmp/glex-switch.$$; ok $? "a bad -n is reported with its range (exit 2)"
"$bin/glex-switch" -c 0:99999 2>/tmp/glex-switch.$$ >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "second CPU=99999 is invalid: allowed range 0\.\." /tmp/glex-switch.$$; ok $? "a CPU out of range is reported with its range (exit 2)"
rm -f /tmp/glex-switch.$$
echo "1..$n"
[ $fail = 0 ]
