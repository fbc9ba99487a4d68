#!/bin/sh
# test/mpich-suite.sh - MPICH's own test suite (test/mpi of the same MPICH
# source) against the installed ch4:glex build: the coll, pt2pt and rma
# directories, through MPICH's runtests.  Prints TAP: one line per directory
# with its pass/fail counts, and one 'not ok' per failing test that is not
# listed in test/mpich-suite.expected (tests that also fail on stock
# ch4:ofi/ucx builds or need features the netmod does not have; reasons in
# doc/mpich-build.md).
#
# environment: GLEX_MPI_PREFIX   install prefix of MPICH with ch4:glex
#              GLEX_SRCDIR       the project's sources
#              MPICH_BUILD_ARGS  as given to scripts/build-mpich.sh (for --cache)
#              GLEX_SUITE_DIRS   directories to run (default "coll pt2pt rma";
#                                with GLEX_SPLIT_HOSTS "coll pt2pt")
#              GLEX_SUITE_MAXNP  largest process count (default 8)
#              MPITEST_TIMEOUT   seconds per test (default 180)
#              GLEX_TIMEOUT      as for any job (default here 120)
set -u
prefix=${GLEX_MPI_PREFIX:?set GLEX_MPI_PREFIX}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
# rma on one host only: on 2 emulated hosts it takes about 19 minutes (CI time)
dirs=${GLEX_SUITE_DIRS:-${GLEX_SPLIT_HOSTS:+coll pt2pt}}
dirs=${dirs:-coll pt2pt rma}
maxnp=${GLEX_SUITE_MAXNP:-8}
export MPITEST_TIMEOUT=${MPITEST_TIMEOUT:-180}
# runtests fails a test on any output but " No Errors": a peer alive but
# late by more than GLEX_TIMEOUT gets a warning line.  large_message's
# receivers wait in MTest_Finalize's collective while rank 0 sends 2.16 GB
# to the other (12-30 s and more between emulated hosts on a busy machine)
export GLEX_TIMEOUT=${GLEX_TIMEOUT:-120}
cache=${GLEX_CACHE_DIR:-$HOME/.cache/glex}
set -- ${MPICH_BUILD_ARGS:-}
while [ $# -gt 0 ]; do [ "$1" = --cache ] && cache=$2; shift; done
tree=$cache/mpich-4.0.2/test/mpi
work=$cache/mpich-testsuite
expected=$src/test/mpich-suite.expected

if [ ! -x "$prefix/bin/mpicc" ] || [ ! -d "$tree" ]; then
  echo "1..1"
  echo "not ok 1 - need $prefix/bin/mpicc (make install) and $tree (make)"
  exit 1
fi

# configure and build the suite once per install prefix; rebuild the test
# programs (make) every time, which is quick when nothing changed.  The
# suite's scripts share the tree: one at a time (make -j runs them alongside)
mkdir -p "$cache"
exec 9>"$cache/mpich-testsuite.lock"
flock 9
if [ ! -f "$work/.glex-configured" ] || [ "$(cat "$work/.glex-configured")" != "$prefix" ]; then
  rm -rf "$work" && mkdir -p "$work"
  (cd "$tree" && tar cf - .) | (cd "$work" && tar xpf -)   # keep timestamps
  (cd "$work" && ./configure CC="$prefix/bin/mpicc" MPICC="$prefix/bin/mpicc" \
     MPIEXEC="$prefix/bin/mpiexec" --disable-fortran --disable-cxx --disable-romio \
     --disable-spawn >configure.log 2>&1) || {
    echo "1..1"; echo "not ok 1 - configuring MPICH's test suite failed"
    tail -20 "$work/configure.log" | sed 's/^/# /'; exit 1; }
  echo "$prefix" > "$work/.glex-configured"
fi
for d in util dtpools $dirs; do
  make -C "$work/$d" >"$work/make-$d.log" 2>&1 || {
    echo "1..1"; echo "not ok 1 - building MPICH's $d tests failed"
    tail -20 "$work/make-$d.log" | sed 's/^/# /'; exit 1; }
done
exec 9>&- # built: the runs below write files of their own

# with GLEX_SPLIT_HOSTS every job of the suite is split into that many
# emulated hosts (doc/multinode.md): its files and TAP lines say so
tag=${GLEX_SPLIT_HOSTS:+-hosts$GLEX_SPLIT_HOSTS}
label=${GLEX_SPLIT_HOSTS:+ on $GLEX_SPLIT_HOSTS emulated hosts}
n=0
for d in $dirs; do
  list=$work/glex-$d.list
  # the directory's testlist, entries up to maxnp processes, without the
  # ones that need MPICH features this build leaves out
  grep -v '^ *#' "$work/$d/testlist" | grep -v '^ *$' |
    awk -v d="$d" -v m="$maxnp" '$2 <= m { print d "/" $0 }' |
    grep -v 'xfail=\|mpiversion=' > "$list"
  (cd "$work" && ./runtests -srcdir=. -tests="$list" -maxnp="$maxnp" \
     -mpiexec="$prefix/bin/mpiexec" -xmlfile="glex-$d$tag.xml" >"glex-$d$tag.log" 2>&1)
  xml=$work/glex-$d$tag.xml
  pass=$(grep -c "<STATUS>pass</STATUS>" "$xml")
  # each <MPITEST> names its test before its status (ARGS, NP, WORKDIR, TIME
  # between): the name of every failed one.  A test whose only output besides
  # " No Errors" was MPI_Init's notice of a stale segment it removed (a job
  # another test killed alongside under make -j) did pass: counted so, named
  failed=$(awk '/<MPITEST>/ { name = ""; st = ""; stale = 0; noerr = 0; other = 0; in_diff = 0 }
                /<NAME>/ { gsub(/.*<NAME>|<\/NAME>.*/, ""); name = $0 }
                /<STATUS>fail<\/STATUS>/ { st = "fail" }
                /<TESTDIFF>/ { in_diff = 1; next }
                /<\/TESTDIFF>/ { in_diff = 0; next }
                in_diff && /^glex: removed stale segment / { stale = 1; next }
                in_diff && /^ *No Errors *$/ { noerr = 1; next }
                in_diff && !/^ *$/ { other = 1 }
                /<\/MPITEST>/ && st == "fail" { print name, (stale && noerr && !other) ? "swept" : "fail" }' \
             "$xml")
  fails=$(echo "$failed" | awk '$2 == "fail" { print $1 }')
  swept=$(echo "$failed" | awk '$2 == "swept" { print $1 }')
  for t in $swept; do
    pass=$((pass + 1))
    echo "# $d/$t passed; it also removed another job's stale segment (said so on stderr)"
  done
  total=$(grep -c "<STATUS>" "$xml" 2>/dev/null)
  [ "${total:-0}" -gt 0 ] || fails="$fails (no-test-ran)"
  nfail=0 unexpected=""
  for t in $fails; do
    nfail=$((nfail + 1))
    grep -qx "$d/$t" "$expected" 2>/dev/null || unexpected="$unexpected $t"
  done
  n=$((n + 1))
  if [ -z "$unexpected" ]; then
    echo "ok $n - MPICH test suite $d$label: $pass passed, $nfail failed (all listed in mpich-suite.expected)"
  else
    echo "not ok $n - MPICH test suite $d$label: $pass passed, $nfail failed; unexpected:$unexpected"
  fi
done
echo "1..$n"
exit 0
