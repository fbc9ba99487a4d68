#!/bin/sh
# test_switch.sh - glex-switch: each measurement printed as a positive time,
# --help, bad input reported with the allowed range (exit 2).
bin=${top_builddir:-.}
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=$((fail+1)); fi; }
skip() { n=$((n+1)); echo "ok $n # SKIP $1"; }
err=/tmp/glex-switch.$$
out=$("$bin/glex-switch" -n 200 -c 0:0); rc=$?
lines=$(echo "$out" | grep -cE '^[a-z].* +[0-9]+\.[0-9]{3} us$')
zero=$(echo "$out" | grep -cE ' 0\.000 us$')
[ $rc = 0 ] && [ "$lines" = 4 ] && [ "$zero" = 0 ]; ok $? "one CPU: four measurements, each a positive time"
if [ "$(nproc)" -ge 2 ]; then
  out=$("$bin/glex-switch" -n 200 -c 0:1); rc=$?
  echo "$out" | grep -qE '^futex hand-off across CPUs, busy +[0-9]+\.[0-9]{3} us$' &&
    echo "$out" | grep -qE '^line exchange across CPUs, polling +[0-9]+\.[0-9]{3} us$'
  ok $(( rc | $? )) "two CPUs: the cross-CPU wake-ups and the cache-line exchange are measured"
  out=$("$bin/glex-switch" -n 200 -c 0:1 -l -b 1000); rc=$?
  lines=$(echo "$out" | grep -cE '^[a-z0-9].* +[0-9]+\.[0-9]{3} us$')
  zero=$(echo "$out" | grep -cE ' 0\.000 us$')
  [ $rc = 0 ] && [ "$lines" = 3 ] && [ "$zero" = 0 ] &&
    echo "$out" | grep -qE '^line hand-off across CPUs, polling ' &&
    echo "$out" | grep -qE '^exchange of 1000 bytes, polling +[0-9]+\.[0-9]{3} us$'
  ok $? "-l -b 1000: only the hand-off, the exchange and the exchange carrying 1000 bytes"
else
  skip "one CPU"
  skip "one CPU"
fi
"$bin/glex-switch" --help | grep -q "CPU:CPU" && "$bin/glex-switch" --help | grep -q -- "-b BYTES"
ok $? "--help documents the options"
"$bin/glex-switch" -n 0 2>$err >/dev/null; rc=$?
[ $rc = 2 ] && grep -q -- "-n=0 is invalid: allowed range 1..100000000" $err; ok $? "a bad -n is reported with its range (exit 2)"
"$bin/glex-switch" -b 67108865 2>$err >/dev/null; rc=$?
[ $rc = 2 ] && grep -q -- "-b=67108865 is invalid: allowed range 0..67108864" $err; ok $? "a bad -b is reported with its range (exit 2)"
"$bin/glex-switch" -l -c 0:0 2>$err >/dev/null; rc=$?
[ $rc = 2 ] && grep -q -- "-l with -c 0:0 is invalid: the cache-line measurements need two different CPUs" $err
ok $? "-l on one CPU is refused (exit 2)"
"$bin/glex-switch" -b 64 -c 1:1 2>$err >/dev/null; rc=$?
[ $rc = 2 ] && grep -q -- "-b with -c 1:1 is invalid: the cache-line measurements need two different CPUs" $err
ok $? "-b on one CPU is refused (exit 2)"
"$bin/glex-switch" -c 0:99999 2>$err >/dev/null; rc=$?
[ $rc = 2 ] && grep -q "second CPU=99999 is invalid: allowed range 0\.\." $err; ok $? "a CPU out of range is reported with its range (exit 2)"
# a fork that fails (the user limited to one process) ends in a clear error
# and exit 1, not in a wait for a partner that was never started.  The
# program itself is run, not libtool's wrapper script, which forks; as root
# (where the limit does not hold) it runs as nobody from a copy.
real=$bin/.libs/glex-switch; [ -x "$real" ] || real=$bin/glex-switch
if ! command -v bash >/dev/null; then
  skip "no bash for ulimit -u"
elif [ "$(id -u)" != 0 ]; then
  LD_LIBRARY_PATH=$bin/.libs timeout 60 bash -c "ulimit -u 1; exec $real -n 200 -c 0:0" 2>$err >/dev/null; rc=$?
  [ $rc = 1 ] && grep -q "^glex-switch: fork: " $err; ok $? "a failed fork is reported (exit 1, rc $rc), no hang"
elif command -v setpriv >/dev/null; then
  copy=$(mktemp -d); cp -a "$real" $bin/.libs/libglex.so* "$copy" 2>/dev/null; chmod -R a+rX "$copy"
  LD_LIBRARY_PATH=$copy timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
    bash -c "ulimit -u 1; exec $copy/glex-switch -n 200 -c 0:0" 2>$err >/dev/null; rc=$?
  [ $rc = 1 ] && grep -q "^glex-switch: fork: " $err; ok $? "a failed fork is reported (exit 1, rc $rc), no hang"
  rm -rf "$copy"
else
  skip "root without setpriv"
fi
rm -f $err
echo "1..$n"
[ $fail = 0 ]
