#!/bin/sh
# build-mpich.sh - build MPICH 4.0.2 with this project's ch4:glex netmod
# grafted in, and install it into a prefix.  Cached and incremental: the
# unpacked, grafted tree and the build directory live under the cache
# directory and are reused; after editing only src/ files just those objects
# are rebuilt.
#
# usage: scripts/build-mpich.sh --prefix DIR [options]
#   --prefix DIR          install here (bin/mpicc, bin/mpiexec, lib/libmpi.so, ...)
#   --mpich-source PATH   MPICH release tarball (.tar.gz/.tar.bz2/.tar.xz) or an
#                         unpacked tree; default: Debian's source package, fetched
#                         by scripts/get-mpich-source.sh
#   --cache DIR           cache directory (default $GLEX_CACHE_DIR, else
#                         ~/.cache/glex); 'rm -rf DIR/mpich-*' clears it
#   --with-shm            enable MPICH's posix shm module for point-to-point
#                         (default: all traffic through the GLEX model)
#   --without-libfabric   single-host netmod (default: libfabric when found,
#                         for jobs across hosts; --with-libfabric requires it)
#   --jobs N              parallel make jobs (default: number of CPUs)
#   --stop-after STAGE    stop after source|graft|autogen|configure|make
#   -h, --help            this text
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
prefix= src= cache=${GLEX_CACHE_DIR:-${HOME:-/root}/.cache/glex} shm=none
jobs=$(nproc 2>/dev/null || echo 2) stop= fabric=check
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=$2; shift ;;
    --prefix=*) prefix=${1#*=} ;;
    --mpich-source) src=$2; shift ;;
    --mpich-source=*) src=${1#*=} ;;
    --cache) cache=$2; shift ;;
    --cache=*) cache=${1#*=} ;;
    --with-shm) shm=posix ;;
    --without-libfabric) fabric=no ;;
    --with-libfabric) fabric=yes ;;
    --jobs) jobs=$2; shift ;;
    --stop-after) stop=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "build-mpich: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$prefix" ] || { echo "build-mpich: --prefix DIR is required" >&2; exit 2; }
case $stop in ""|source|graft|autogen|configure|make) ;;
  *) echo "build-mpich: --stop-after $stop: allowed source|graft|autogen|configure|make" >&2; exit 2 ;;
esac
mkdir -p "$cache/logs" "$prefix"
prefix=$(cd "$prefix" && pwd)
t0=$(date +%s)
stage() { echo "[build-mpich $(( $(date +%s) - t0 ))s] $*"; }
run() { # run LOG CMD...: quiet, but show the log's tail on failure
  log=$cache/logs/$1.log; shift
  if ! "$@" >"$log" 2>&1; then
    echo "build-mpich: '$*' failed; last lines of $log:" >&2
    tail -30 "$log" >&2
    exit 1
  fi
}
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
hash_of() { cat "$@" 2>/dev/null | cksum | cut -d' ' -f1; }

# 1. source
if [ -z "$src" ]; then
  stage "source: Debian source package mpich (scripts/get-mpich-source.sh)"
  src=$(sh "$here/scripts/get-mpich-source.sh" "$cache/src" | tail -1)
fi
[ -e "$src" ] || { echo "build-mpich: --mpich-source $src does not exist" >&2; exit 2; }
tree=$cache/mpich-4.0.2
if [ -d "$src" ]; then
  id="dir:$(cd "$src" && pwd)"
else
  id="tar:$(ls -l "$src" | awk '{print $5}'):$(cksum < "$src" | cut -d' ' -f1)"
fi
if ! stamp_ok "$tree/.glex-source" "$id"; then
  stage "source: unpacking $src into $tree"
  rm -rf "$tree" "$cache"/mpich-build-*
  mkdir -p "$tree"
  if [ -d "$src" ]; then
    (cd "$src" && tar cf - .) | (cd "$tree" && tar xpf -)   # tar keeps timestamps
  else
    run unpack tar xf "$src" -C "$tree" --strip-components=1
  fi
  [ -f "$tree/src/mpid/ch4/netmod/Makefile.mk" ] ||
    { echo "build-mpich: $src is not an MPICH 4 source tree" >&2; exit 1; }
  grep -q "4.0.2" "$tree/maint/version.m4" 2>/dev/null ||
    echo "build-mpich: warning: $src is not MPICH 4.0.2; the netmod targets 4.0.2" >&2
  echo "$id" > "$tree/.glex-source"
fi
[ "$stop" = source ] && exit 0

# 2. graft: copy changed files only, so make rebuilds only what changed
stage "graft: src/mpid/glex, src/emu, src/offload -> $tree/src/mpid/ch4/netmod/"
sync_dir() { # sync_dir FROM TO
  mkdir -p "$2"
  for f in "$1"/*; do
    [ -f "$f" ] || continue
    # plain cp: the copy is newer than any object, even when the source was
    # edited before the last build started (cp -p would hide the edit from make)
    cmp -s "$f" "$2/$(basename "$f")" || cp "$f" "$2/"
  done
  for f in "$2"/*; do
    [ -e "$1/$(basename "$f")" ] || rm -f "$f"
  done
}
nm=$tree/src/mpid/ch4/netmod
sync_dir "$here/src/mpid/glex" "$nm/glex"
sync_dir "$here/src/emu" "$nm/glex_emu"
sync_dir "$here/src/offload" "$nm/glex_offload"
inc='include $(top_srcdir)/src/mpid/ch4/netmod/glex/Makefile.mk'
grep -qF "$inc" "$nm/Makefile.mk" || echo "$inc" >> "$nm/Makefile.mk"
[ "$stop" = graft ] && exit 0

# 3. autogen, when the build glue (Makefile.mk, sources.am, subconfigure.m4) changed
agid=$(hash_of "$nm/glex/subconfigure.m4" "$nm/glex/Makefile.mk" "$nm/Makefile.mk" \
  "$nm/glex_emu/sources.am" "$nm/glex_offload/sources.am")
if ! stamp_ok "$tree/.glex-autogen" "$agid"; then
  stage "autogen: ./autogen.sh -quick (about 1.5 min)"
  (cd "$tree" && run autogen ./autogen.sh -quick)
  echo "$agid" > "$tree/.glex-autogen"
  rm -f "$cache"/mpich-build-*/.glex-configure
fi
[ "$stop" = autogen ] && exit 0

# 4. configure, when options or the generated configure changed
build=$cache/mpich-build-$shm
# the languages users compile with: mpicxx (with the MPI:: bindings) when a
# C++ compiler is here, mpifort (mpif.h, the mpi and mpi_f08 modules) when
# gfortran is; gfortran 10 and later need -fallow-argument-mismatch for
# MPICH's mpif.h interfaces
langs="--disable-cxx"
command -v "${CXX:-g++}" >/dev/null 2>&1 && langs="--enable-cxx"
if command -v "${FC:-gfortran}" >/dev/null 2>&1; then
  langs="$langs --enable-fortran=all"
  if echo "end" | "${FC:-gfortran}" -fallow-argument-mismatch -x f95 -fsyntax-only - >/dev/null 2>&1; then
    langs="$langs FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch"
  fi
else
  langs="$langs --disable-fortran"
  stage "no Fortran compiler (${FC:-gfortran}): MPICH without mpifort"
fi
args="--prefix=$prefix --with-device=ch4:glex --with-ch4-shmmods=$shm $langs --enable-romio
  --with-hwloc=/usr --with-datatype-engine=dataloop --disable-doc --disable-ch4-netmod-inline
  GLEX_LIBFABRIC=$fabric"
cfid=$(echo "$args $agid" | cksum | cut -d' ' -f1)
mkdir -p "$build"
if ! stamp_ok "$build/.glex-configure" "$cfid"; then
  stage "configure: ch4:glex, shm modules: $shm (about 4 min)"
  # shellcheck disable=SC2086
  (cd "$build" && run configure "$tree/configure" $args)
  grep -q "CH4 select netmod: glex" "$cache/logs/configure.log" ||
    { echo "build-mpich: configure did not select ch4:glex" >&2; exit 1; }
  echo "$cfid" > "$build/.glex-configure"
fi
[ "$stop" = configure ] && exit 0

# 5. make and install
stage "make: -j$jobs (about 10 min from scratch, seconds when only src/ changed)"
(cd "$build" && run make make -j"$jobs")
[ "$stop" = make ] && { stage "built (install with make install)"; exit 0; }
stage "install into $prefix"
(cd "$build" && run install make install)
stage "done: $prefix/bin/mpicc, $prefix/bin/mpiexec"
