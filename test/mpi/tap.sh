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

# The NIC model ran: the counts each communicator's NIC work adds up to
# (GLEX_VERBOSE=2, every rank) are those each algorithm implies, rank by
# rank (test/mpi/nic_counts.py)
counts() { # counts NP MODE ENV...
  np=$1 mode=$2; shift 2
  if env GLEX_VERBOSE=2 "$@" timeout "$limit" "$prefix/bin/mpiexec" -n "$np" "$out/nic_counts" 20 \
       >"$out/log" 2>&1 && python3 "$src/test/mpi/nic_counts.py" "$np" 20 "$mode" "$out/log" \
       >"$out/check" 2>&1; then
    ok "NIC counts, $mode, -n $np${1:+ $*}: $(grep -c '^ok' "$out/check") checks; $(grep '^nic_counts:' "$out/log")"
  else
    notok "NIC counts, $mode, -n $np${1:+ $*}"; grep -v '^ok' "$out/check" "$out/log" | tail -20 | sed 's/^/# /'
  fi
}

# this user's running MPI jobs whose segment name ends in SUFFIX (.h1: a
# job's host 1), and the first one started since $out/jobs.before was
# written (within 10 s; empty if none)
jobs_of_user() { "$prefix/bin/glex-info" --list | sed -n "s/.*(job \(mpi-.*${1:-}\))\$/\1/p" | sort; }
job_started() {
  for i in $(seq 100); do
    j=$(jobs_of_user "${1:-}" | comm -13 "$out/jobs.before" - | head -1)
    [ -n "$j" ] && { echo "$j"; return; }
    sleep 0.1
  done
}
