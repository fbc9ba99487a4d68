# test/mpi/tap.sh - sourced by the MPI test scripts: TAP lines and one run of
# an MPI program, compiling the programs of test/mpi.  Uses the caller's
# prefix (the MPICH install), src (the sources), limit (seconds a run) and
# out (a scratch directory).
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }

run() { # run NAME NP ENV... -- PROG ARGS: one TAP line
  name=$1 np=$2; shift 2
  envs=""
  while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
  shift
  # shellcheck disable=SC2086
  if env $envs timeout "$limit" "$prefix/bin/mpiexec" -n "$np" "$@" >"$out/log" 2>&1; then
    ok "$name -n $np$envs: $(tail -1 "$out/log")"
  else
    notok "$name -n $np$envs (exit $?)"; tail -25 "$out/log" | sed 's/^/# /'
  fi
}

compile() { # compile PROG...: each of test/mpi with the install's mpicc into $out, a TAP line each
  for p in "$@"; do
    if "$prefix/bin/mpicc" -std=c11 -O1 -Wall -Wextra -Werror -o "$out/$p" "$src/test/mpi/$p.c" \
         >"$out/$p.cc" 2>&1; then
      ok "compile $p with $prefix/bin/mpicc"
    else
      notok "compile $p"; sed 's/^/# /' "$out/$p.cc"
    fi
  done
}
