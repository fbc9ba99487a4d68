#!/bin/sh
# test/mpi/hosts.sh - MPI programs on a job split into emulated hosts
# (GLEX_SPLIT_HOSTS=2 and 4: consecutive blocks of ranks, each with a segment
# of its own, everything between blocks over libfabric's tcp provider on
# this machine; doc/multinode.md): results, the NIC counts each algorithm
# implies, the fabric counters of a running job, and bad settings.  Then,
# as root, hosts in Linux network namespaces joined by a veth pair, ranks
# started in them by hydra (SKIP when not root or without iproute2).
# Prints TAP.
#
# environment: GLEX_MPI_PREFIX, GLEX_SRCDIR (as test/mpi/run.sh),
#              GLEX_MPI_TIMEOUT seconds per run (default 300)
set -u
prefix=${GLEX_MPI_PREFIX:?set GLEX_MPI_PREFIX to the install prefix}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
limit=${GLEX_MPI_TIMEOUT:-300}
out=${TMPDIR:-/tmp}/glex-mpi-hosts.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
. "$src/test/mpi/tap.sh"
skip() { n=$((n + 1)); echo "ok $n - # SKIP $*"; }

if ! strings "$prefix/lib/libmpi.so" 2>/dev/null | grep -q "fi_getinfo"; then
  echo "1..0 # SKIP MPICH's ch4:glex was built without libfabric"
  exit 0
fi
compile coll_ops pt2pt comms nic_counts failure libs

# libfabric is loaded only by a job across hosts (its providers' start-up
# costs every process 0.2 s here): in none of a one-host job's processes,
# in all of a split job's; a libfabric.so.1 without its functions first in
# LD_LIBRARY_PATH stops a split job at MPI_Init with the reason
libs() { # libs WANT ENV...: rank 0's line
  want=$1; shift
  if env "$@" timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$out/libs" >"$out/log" 2>&1 &&
     grep -q "libfabric mapped in $want of 4 processes" "$out/log"; then
    ok "${*:-one host}: libfabric mapped in $want of 4 processes"
  else
    notok "${*:-one host}: libfabric not mapped in $want of 4"; tail -5 "$out/log" | sed 's/^/# /'
  fi
}
libs 0
libs 4 GLEX_SPLIT_HOSTS=2
mkdir -p "$out/nofabric"
echo "int glex_not_libfabric;" >"$out/nofabric/x.c"
cc -shared -fPIC -o "$out/nofabric/libfabric.so.1" "$out/nofabric/x.c"
if env GLEX_SPLIT_HOSTS=2 LD_LIBRARY_PATH="$out/nofabric" timeout "$limit" \
     "$prefix/bin/mpiexec" -n 2 "$out/libs" >"$out/log" 2>&1; then
  notok "a libfabric.so.1 without fi_getinfo: the split job ran"
elif grep -q "a job across hosts needs libfabric: libfabric.so.1 has no fi_getinfo" "$out/log"; then
  ok "a libfabric.so.1 without fi_getinfo: MPI_Init fails and says so"
else
  notok "a libfabric.so.1 without fi_getinfo: no reason given"; tail -5 "$out/log" | sed 's/^/# /'
fi

# results on 2 and 4 hosts, every algorithm of the NIC model ("2 2": a
# process a CPU here, so a host in MPI reads the fabric at every call and
# the progress thread leaves it to it)
for cfg in "2 2" "4 2" "5 4" "8 2"; do
  set -- $cfg
  np=$1 h=$2
  run pt2pt "$np" GLEX_SPLIT_HOSTS="$h" -- "$out/pt2pt"
  run comms "$np" GLEX_SPLIT_HOSTS="$h" -- "$out/comms"
  for a in auto two_level binomial recursive_doubling rabenseifner double_tree flat; do
    set -- GLEX_SPLIT_HOSTS="$h" GLEX_ALLREDUCE_ALGO="$a"
    case $a in auto|two_level|binomial|rabenseifner|double_tree|flat) set -- "$@" GLEX_REDUCE_ALGO="$a" ;; esac
    case $a in auto|two_level|binomial|double_tree|flat) set -- "$@" GLEX_BCAST_ALGO="$a" ;; esac
    case $a in auto|two_level|binomial|recursive_doubling|flat) set -- "$@" GLEX_BARRIER_ALGO="$a" ;; esac
    run coll_ops "$np" "$@" -- "$out/coll_ops" quick
  done
done
# what needs one host falls back: direct, multicast and flat_read take the NIC model's
run coll_ops 4 GLEX_SPLIT_HOSTS=2 GLEX_ALLREDUCE_ALGO=direct GLEX_BCAST_ALGO=multicast \
  -- "$out/coll_ops" quick
run coll_ops 4 GLEX_SPLIT_HOSTS=2 GLEX_BCAST_ALGO=flat_read -- "$out/coll_ops" quick

# 'auto' across hosts is two_level, named in GLEX_VERBOSE's report
if env GLEX_VERBOSE=1 GLEX_SPLIT_HOSTS=2 timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$out/comms" \
     >"$out/log" 2>&1 && grep -q "MPI_Allreduce runs two_level (offload)" "$out/log" &&
   grep -q "MPI_Bcast runs two_level (offload)" "$out/log"; then
  ok "auto picks two_level for a communicator across 2 hosts (GLEX_VERBOSE=1)"
else
  notok "auto across 2 hosts: no two_level in GLEX_VERBOSE's report"; tail -10 "$out/log" | sed 's/^/# /'
fi
# the NIC counts each single-level algorithm implies are the same across
# hosts (nic_counts.py knows the one-host choices: named here), the flat
# ones' packets between hosts included
onelevel="GLEX_ALLREDUCE_ALGO=recursive_doubling GLEX_REDUCE_ALGO=binomial GLEX_BCAST_ALGO=binomial
  GLEX_BARRIER_ALGO=recursive_doubling"
# shellcheck disable=SC2086
counts 4 offload GLEX_SPLIT_HOSTS=2 $onelevel
# shellcheck disable=SC2086
counts 5 offload GLEX_SPLIT_HOSTS=4 $onelevel
counts 5 offload GLEX_SPLIT_HOSTS=2 GLEX_ALLREDUCE_ALGO=flat GLEX_REDUCE_ALGO=flat \
  GLEX_BCAST_ALGO=flat GLEX_BARRIER_ALGO=flat

# stream BYTES N [VAR=VALUE...]: pt2pt's stream mode on 2 hosts with
# GLEX_VERBOSE=2 (and the settings given); rc, and from rank 0's counts
# ring, frag, rndv, wire (fabric messages), writes
stream() {
  bytes=$1 count=$2
  shift 2
  env GLEX_VERBOSE=2 GLEX_SPLIT_HOSTS=2 "$@" timeout "$limit" "$prefix/bin/mpiexec" -n 2 \
    "$out/pt2pt" stream "$bytes" "$count" >"$out/log" 2>&1
  rc=$?
  line=$(grep "glex: rank 0: active messages sent" "$out/log")
  ring=$(echo "$line" | sed -n 's/.* \([0-9]*\) ring,.*/\1/p')
  frag=$(echo "$line" | sed -n 's/.* \([0-9]*\) fragmented,.*/\1/p')
  rndv=$(echo "$line" | sed -n 's/.* \([0-9]*\) rendezvous;.*/\1/p')
  wire=$(echo "$line" | sed -n 's/.*hosts: \([0-9]*\) messages sent.*/\1/p')
  writes=$(echo "$line" | sed -n 's/.*(\([0-9]*\) RDMA writes).*/\1/p')
  far=$(echo "$line" | sed -n 's/.* \([0-9]*\) KiB per sender on another;.*/\1/p')
}
# point-to-point between hosts: 1 KiB messages go through the receiver's
# ring (the put, then the MP: 2 fabric messages each), not as fragments
stream 1024 1000
if [ $rc = 0 ] && grep -q "pt2pt stream: 3000 checks, 0 errors" "$out/log" && [ "$ring" = 1000 ] &&
   [ "$frag" = 0 ] && [ -n "$wire" ] && [ "$wire" -ge 2000 ] && [ "$wire" -le 2100 ]; then
  ok "1000 messages of 1 KiB to another host: all through its ring, $wire fabric messages"
else
  notok "1 KiB messages to another host: exit $rc, ring '$ring', fragmented '$frag', fabric '$wire'"
  tail -5 "$out/log" | sed 's/^/# /'
fi

# from 8 KiB a ring's data crosses as an RDMA write (FI_RMA: tcp;ofi_rxm
# has it), one per message through the ring; one too per rendezvous (the
# receiver's get: rank 0 writes into the registered destination).  A
# sender on another host has a 4 MiB ring at 2 x 1 (1 MiB on its own host)
stream 16384 300
if [ $rc = 0 ] && grep -q "pt2pt stream: 900 checks, 0 errors" "$out/log" && [ -n "$ring" ] &&
   [ -n "$rndv" ] && [ "$ring" -gt 0 ] && [ "$writes" = $((ring + rndv)) ] && [ "$far" = 4096 ]; then
  ok "300 messages of 16 KiB to another host: $ring through its ring ($far KiB), $rndv by rendezvous, each an RDMA write"
else
  notok "16 KiB messages to another host: exit $rc, ring '$ring' ('$far' KiB), rendezvous '$rndv', RDMA writes '$writes'"
  tail -5 "$out/log" | sed 's/^/# /'
fi

# 256 KiB messages go by rendezvous: the receiver's get is answered by one
# RDMA write into the user's buffer (16 fabric messages of 16 KiB before)
stream 262144 40
if [ $rc = 0 ] && grep -q "pt2pt stream: 120 checks, 0 errors" "$out/log" && [ "$rndv" = 40 ] &&
   [ "$writes" = 40 ] && [ -n "$wire" ] && [ "$wire" -le 200 ]; then
  ok "40 messages of 256 KiB to another host: each a rendezvous answered by one RDMA write, $wire fabric messages"
else
  notok "256 KiB messages to another host: exit $rc, rendezvous '$rndv', RDMA writes '$writes', fabric '$wire'"
  tail -5 "$out/log" | sed 's/^/# /'
fi

# a transfer may take longer than GLEX_TIMEOUT: 256 MiB messages cross in
# RDMA writes of 16 MiB, each waited for within it (one write of 256 MiB
# took over 0.5 s here, and the healthy receiver was declared unreachable)
stream 268435456 2 GLEX_TIMEOUT=0.5
if [ $rc = 0 ] && grep -q "pt2pt stream: 6 checks, 0 errors" "$out/log" && [ "$rndv" = 2 ] &&
   [ "$writes" = 32 ]; then
  ok "2 messages of 256 MiB to another host at GLEX_TIMEOUT=0.5: 32 RDMA writes of 16 MiB, no failure"
else
  notok "256 MiB messages at GLEX_TIMEOUT=0.5: exit $rc, rendezvous '$rndv', RDMA writes '$writes'"
  tail -5 "$out/log" | sed 's/^/# /'
fi

# a running job's segments, one per host, and each node's fabric traffic
jobs_of_user '\.h1' >"$out/jobs.before"
env GLEX_SPLIT_HOSTS=2 timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$out/nic_counts" 200000 \
  >"$out/log" 2>&1 &
bg=$!
job=$(job_started '\.h1')
sent() { "$prefix/bin/glex-info" --job "$1" | awk '/^Fabric between hosts/ { f = 1; next } f && $1 == 2 { print $2 }'; }
a="" b=""
if [ -n "$job" ]; then # node 2 shows once it has sent (start-up may take a few seconds)
  for i in $(seq 100); do a=$(sent "$job"); [ -n "$a" ] && break; sleep 0.1; done
  sleep 0.5; b=$(sent "$job")
fi
kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null
"$prefix/bin/glex-info" --cleanup >/dev/null 2>&1
if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]; then
  ok "glex-info --job $job: node 2 (host 1) sent $a, then $b fabric messages"
else
  notok "glex-info --job on a job across 2 hosts: job '$job', node 2 sent '$a' then '$b'"
fi

# a whole host's ranks exit mid-allreduce: both ranks of the other host get
# MPIX_ERR_PROC_FAILED naming the unreachable host within a few
# GLEX_TIMEOUTs, and mpiexec exits non-zero
timeout "$limit" env GLEX_TIMEOUT=1 GLEX_SPLIT_HOSTS=2 "$prefix/bin/mpiexec" -disable-auto-cleanup \
  -n 4 "$out/failure" 2-3 30 1000 exit return >"$out/log" 2>&1
rc=$?
got=$(grep -c "error class MPIX_ERR_PROC_FAILED" "$out/log")
slow=$(awk '/error class/ { for (i = 1; i < NF; i++) if ($i == "after" && $(i+1) + 0 > 6) print }' "$out/log")
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$got" = 2 ] && [ -z "$slow" ] &&
   grep -q "on host 1" "$out/log"; then
  ok "host 1's ranks exit mid-allreduce: both of host 0 get MPIX_ERR_PROC_FAILED naming host 1, mpiexec exits $rc"
else
  notok "host 1's ranks exit mid-allreduce: exit $rc, $got errors"; tail -15 "$out/log" | sed 's/^/# /'
fi
"$prefix/bin/glex-info" --cleanup >/dev/null 2>&1 # the failed job's segments, quietly

# more hosts than ranks: a host per rank
run pt2pt 3 GLEX_SPLIT_HOSTS=9 -- "$out/pt2pt"
# a bad setting names the variable, the value and the range
# (again, up to 5 runs, while a run printed nothing at all: under make -j
# mpiexec has exited without a line from any rank, twice in a row on
# 2026-11-27; never when run alone)
for try in 1 2 3 4 5; do
  env GLEX_SPLIT_HOSTS=0 timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$out/pt2pt" >"$out/log" 2>&1
  rc=$?
  [ -s "$out/log" ] && break
done
if [ $rc = 0 ]; then
  notok "GLEX_SPLIT_HOSTS=0 is refused"
elif grep -q "GLEX_SPLIT_HOSTS=0 is invalid: allowed range 1..16777216" "$out/log"; then
  ok "GLEX_SPLIT_HOSTS=0 is refused with its range"
else
  notok "GLEX_SPLIT_HOSTS=0: no message with the range (mpiexec exit $rc, $(wc -l <"$out/log") lines)"
  tail -5 "$out/log" | sed 's/^/# /'
fi

# real separation: two network namespaces joined by a veth pair, hydra
# starting each host's ranks inside its namespace (-launcher-exec wraps
# 'ip netns exec'), the tcp provider on the veth addresses
sh "$src/test/mpi/netns.sh" "$prefix" "$out" "$limit" >"$out/netns" 2>&1
rc=$?
case $rc in
  0) ok "2 namespaces x 2 ranks over a veth pair: $(tail -1 "$out/netns")" ;;
  77) skip "network namespaces: $(tail -1 "$out/netns")" ;;
  *) notok "2 namespaces x 2 ranks over a veth pair (exit $rc)"; tail -25 "$out/netns" | sed 's/^/# /' ;;
esac
"$prefix/bin/glex-info" --cleanup >/dev/null 2>&1 # what the link-down job left
echo "1..$n"
