#!/bin/sh
# test/mpi/languages.sh - what HPC users compile with, against the installed
# MPICH: a C++ program (mpicxx, also the MPI:: bindings), Fortran programs
# using the mpi_f08 and the mpi modules (mpifort), and MPI-IO (ROMIO), each
# built and run under mpiexec at 1, 2, 3 and 4 processes; the Fortran
# program's collectives are checked to have run on the NIC model (the
# netmod's GLEX_VERBOSE=1 report: offloaded calls per algorithm).  TAP.
#
# environment: GLEX_MPI_PREFIX  the prefix MPICH with ch4:glex is installed in
#              GLEX_SRCDIR      the project's source directory
#              GLEX_MPI_TIMEOUT seconds per run (default 300)
set -u
prefix=${GLEX_MPI_PREFIX:?set GLEX_MPI_PREFIX to the install prefix}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
limit=${GLEX_MPI_TIMEOUT:-300}
nps="1 2 3 4"
out=$(mktemp -d "${TMPDIR:-/tmp}/glex-lang.XXXXXX")
trap 'rm -rf "$out"' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
progs="lang_cxx lang_f08 lang_f90 lang_mpiio"
nruns=$(echo $nps | wc -w)
echo "1..$(( 4 + 4 * nruns + 2 ))"

# compile NAME WRAPPER SOURCE FLAGS...
compile() {
  name=$1 wrapper=$prefix/bin/$2 source=$src/test/mpi/$3; shift 3
  if [ ! -x "$wrapper" ]; then
    notok "compile $name: no $wrapper (MPICH built without it: see scripts/build-mpich.sh)"
    return
  fi
  if "$wrapper" "$@" -o "$out/$name" "$source" >"$out/$name.log" 2>&1; then
    ok "compile $name with $wrapper"
  else
    notok "compile $name with $wrapper"; sed 's/^/# /' "$out/$name.log"
  fi
}
compile lang_cxx mpicxx lang_cxx.cc -std=c++17 -O1 -Wall -Wextra -Werror
compile lang_f08 mpifort lang_f08.f90 -O1 -Wall -Werror
compile lang_f90 mpifort lang_f90.f90 -O1 -Wall -Werror
compile lang_mpiio mpicc lang_mpiio.c -std=c11 -O1 -Wall -Wextra -Werror

# run NAME NP ARGS...: one TAP line, the program's last output line
run() {
  name=$1 np=$2; shift 2
  if [ ! -x "$out/$name" ]; then
    notok "$name -n $np: not built"; return
  fi
  if timeout "$limit" "$prefix/bin/mpiexec" -n "$np" "$out/$name" "$@" >"$out/run.log" 2>&1; then
    ok "$name -n $np: $(tail -1 "$out/run.log")"
  else
    notok "$name -n $np (exit $?)"; tail -25 "$out/run.log" | sed 's/^/# /'
  fi
}
for np in $nps; do
  run lang_cxx "$np"
  run lang_f08 "$np"
  run lang_f90 "$np"
  run lang_mpiio "$np" "$out/io.$np.dat"
done

# the Fortran program's collectives ran on the NIC model: the report at
# MPI_Finalize counts offloaded calls (rank 0, MPI_COMM_WORLD, 4 ranks):
# MPI_Allreduce 3 (two of real(8)/integer sums, the nonblocking one; the
# logical MPI_LOR is not an ALU operation), MPI_Bcast 1
offloaded() { # offloaded CONTEXT KIND: rank 0's offloaded calls of KIND on
  # communicators whose context id matches CONTEXT (a sed pattern), summed
  sed -n "s/^glex: rank 0 comm context $1 size 4 rank 0: $2 [a-z_]* offload: \([0-9]*\) calls.*/\1/p" \
    "$out/verbose.log" | awk '{ s += $1 } END { print s + 0 }'
}
verbose_run() { # verbose_run PROG ARGS...: PROG at 4 ranks with GLEX_VERBOSE=1 into verbose.log
  [ -x "$out/$1" ] || return 1
  prog=$out/$1; shift
  GLEX_VERBOSE=1 timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$prog" "$@" >"$out/verbose.log" 2>&1
}
if verbose_run lang_f08; then
  ar=$(offloaded 0 MPI_Allreduce) bc=$(offloaded 0 MPI_Bcast)
  if [ "$ar" -eq 3 ] && [ "$bc" -eq 1 ]; then
    ok "lang_f08 -n 4: rank 0 offloaded $ar MPI_Allreduce and $bc MPI_Bcast calls (GLEX_VERBOSE=1)"
  else
    notok "lang_f08 -n 4: offloaded MPI_Allreduce $ar (want 3), MPI_Bcast $bc (want 1)"
    grep "^glex:" "$out/verbose.log" | sed 's/^/# /'
  fi
else
  notok "lang_f08 -n 4 with GLEX_VERBOSE=1 did not run"; tail -20 "$out/verbose.log" 2>/dev/null | sed 's/^/# /'
fi
# MPI-IO's collective buffering: ROMIO's collectives (on the communicator
# it duplicates for the file, not MPI_COMM_WORLD) ran on the NIC model, and
# the file checked out
if verbose_run lang_mpiio "$out/io.v.dat" &&
   grep -q "file written and read back" "$out/verbose.log"; then
  c=$(offloaded '0x[0-9a-f]*' 'MPI_[A-Za-z]*')
  if [ "$c" -gt 0 ]; then
    ok "lang_mpiio -n 4: file checked; ROMIO's communicator ran $c collectives on the NIC model"
  else
    notok "lang_mpiio -n 4: no offloaded collective on ROMIO's communicator"
    grep "^glex:" "$out/verbose.log" | sed 's/^/# /'
  fi
else
  notok "lang_mpiio -n 4 with GLEX_VERBOSE=1 failed"; tail -20 "$out/verbose.log" 2>/dev/null | sed 's/^/# /'
fi
