#!/bin/sh
# test_layers.sh - the tree's structure rules (doc/developer-guide.md, "Who
# may call whom"), checked on the built objects and the sources:
#   no call cycles between the files of src/emu, of src/offload, of the netmod;
#   every global name of libglex starts with glex_, of the netmod's files
#   with MPIDI_GLEX_/MPIDI_NM_/glex_; the NIC model includes nothing of
#   collectives or MPI; one clock (clock_gettime only in glex_emu_sync.c) and
#   one environment parser (getenv only in glex_emu_env.c) in src/.
# The netmod's objects are looked for in MPICH's cached build; SKIP without.
bld=${top_builddir:-.}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
py="python3 $src/test/layers.py"
n=0
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
emit() { # TAP lines of layers.py (in $tmp), renumbered
  while IFS= read -r l; do
    case $l in
      "ok - "*|"not ok - "*) n=$((n+1)); echo "$l" | sed "s/^\(not ok\|ok\) - /\1 $n - /" ;;
      *) echo "$l" ;;
    esac
  done < "$tmp"
}
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

$py cycles "$bld/src/emu" > "$tmp"; emit
$py cycles "$bld/src/offload" > "$tmp"; emit
$py cycles "$bld/src/emu" "$bld/src/offload" > "$tmp"; emit
$py prefix glex_ "$bld/src/emu" "$bld/src/offload" > "$tmp"; emit

bad=$(grep -ln 'glex_coll\.h\|mpi\.h\|mpidimpl\.h' "$src"/src/emu/*.c "$src"/src/emu/*.h)
[ -z "$bad" ]; ok $? "the NIC model (src/emu) includes nothing of collectives or MPI${bad:+: $bad}"
bad=$(grep -ln 'clock_gettime' "$src"/src/*/*.c "$src"/src/mpid/glex/*.c | grep -v 'src/emu/glex_emu_sync\.c$')
[ -z "$bad" ]; ok $? "one clock: clock_gettime only in glex_emu_sync.c (glex_now_ns)${bad:+: $bad}"
bad=$(grep -ln 'getenv *(' "$src"/src/*/*.c "$src"/src/mpid/glex/*.c | grep -v 'src/emu/glex_emu_env\.c$')
[ -z "$bad" ]; ok $? "one environment parser: getenv only in glex_emu_env.c${bad:+: $bad}"

# the cache and build folder this tree's MPICH was built in (MPICH_BUILD_ARGS
# from make check: --cache DIR, --with-shm), else the default cache
cache=$(echo " ${MPICH_BUILD_ARGS:-} " | sed -n 's/.* --cache \([^ ]*\) .*/\1/p')
[ -n "$cache" ] || cache=${GLEX_CACHE_DIR:-$HOME/.cache/glex}
case " ${MPICH_BUILD_ARGS:-} " in *" --with-shm "*) shm=posix ;; *) shm=none ;; esac
nm_dir=$cache/mpich-build-$shm/src/mpid/ch4/netmod/glex
if [ -n "$nm_dir" ] && ls "$nm_dir"/.libs/*.o >/dev/null 2>&1; then
  $py cycles "$nm_dir" > "$tmp"; emit
  $py prefix MPIDI_GLEX_,MPIDI_NM_,glex_,MPI_Wtime "$nm_dir" > "$tmp"; emit
else
  n=$((n+1)); echo "ok $n - # SKIP the netmod's objects (MPICH's build in $cache) are not there"
fi
echo "1..$n"
