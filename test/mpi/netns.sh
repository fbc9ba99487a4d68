#!/bin/sh
# test/mpi/netns.sh PREFIX WORKDIR LIMIT - two real hosts on one machine
# (scripts/glex-netns.sh: network namespaces joined by a veth pair), hydra's
# mpiexec in the first, each host's proxy started in its namespace through
# -launcher-exec, 2 ranks per host, libfabric's tcp provider on the veth:
#   1. coll_ops and pt2pt give right results, the collectives offloaded;
#      each host counts the 4 processes as on this machine, and 2 when each
#      host has a /dev/shm of its own (GLEX_NETNS_SHM=private), and the
#      processes per CPU that collectives are chosen by follow (the busiest
#      machine's, not the job's over one machine's CPUs);
#   2. the link taken down in the middle of a collective loop: an error
#      (mpiexec exits non-zero within a few GLEX_TIMEOUTs), not a hang.
# Needs WORKDIR/coll_ops, pt2pt and nic_counts (test/mpi/hosts.sh builds
# them).  Exit 0 pass, 77 skip (not root, no iproute2, no netns), else fail.
set -u
prefix=$1 work=$2 limit=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
ns=$src/scripts/glex-netns.sh
name=glexT$$
sh "$ns" up "$name" "$work"
rc=$?
[ $rc = 0 ] || exit $rc
trap 'sh "$ns" down "$name"' EXIT

mpirun() { # mpirun TIMEOUT ARGS: 2 hosts x 2 ranks
  t=$1; shift
  ip netns exec "$name-a" timeout "$t" "$prefix/bin/mpiexec" -launcher ssh \
    -launcher-exec "$work/launch.sh" -iface glexv0 -hosts 10.77.0.1,10.77.0.2 -ppn 2 -n 4 \
    -genv FI_PROVIDER "tcp;ofi_rxm" -genv FI_TCP_IFACE glexv0 -genv GLEX_VERBOSE 1 "$@"
}

for p in coll_ops pt2pt; do
  if ! mpirun "$limit" "$work/$p" quick >"$work/ns-$p.log" 2>&1; then
    echo "$p on 2 namespaces failed:"; tail -20 "$work/ns-$p.log"; exit 1
  fi
done
# rank 0 reports what ran: the NIC model's algorithms, two_level across the hosts
grep -q "runs two_level (offload)" "$work/ns-coll_ops.log" ||
  { echo "no two_level collective reported:"; tail -20 "$work/ns-coll_ops.log"; exit 1; }
# both hosts on this machine: their segments are visible to each other, the
# 4 processes share its cores; with a /dev/shm each (as on machines apart)
# each host counts its own 2
cpus=$(getconf _NPROCESSORS_ONLN)
together=$(( (4 + cpus - 1) / cpus )) apart=$(( (2 + cpus - 1) / cpus ))
grep -q "4 of the job's 4 processes on this machine, $together per CPU; $together per CPU on the busiest machine" \
  "$work/ns-coll_ops.log" ||
  { echo "not 4 processes on this machine, $together per CPU:"; grep "on this machine" "$work/ns-coll_ops.log"; exit 1; }
if ! GLEX_NETNS_SHM=private mpirun "$limit" "$work/coll_ops" quick >"$work/ns-apart.log" 2>&1; then
  echo "coll_ops with a /dev/shm per host failed:"; tail -20 "$work/ns-apart.log"; exit 1
fi
[ "$(grep -c "2 of the job's 4 processes on this machine, $apart per CPU; $apart per CPU on the busiest machine" \
  "$work/ns-apart.log")" = 2 ] ||
  { echo "a /dev/shm per host: not 2 processes each, $apart per CPU:"; grep "on this machine" "$work/ns-apart.log"; exit 1; }

# the link goes down mid-collective: every rank must stop with an error
mpirun 120 -genv GLEX_TIMEOUT 1 "$work/nic_counts" 100000000 >"$work/ns-down.log" 2>&1 &
bg=$!
sleep 3
sh "$ns" link "$name" down
t0=$(date +%s)
wait "$bg"
rc=$? t=$(( $(date +%s) - t0 ))
if [ $rc = 0 ] || [ $rc = 124 ]; then
  echo "link down: mpiexec exit $rc after $t s (want an error, not a hang or success)"
  tail -20 "$work/ns-down.log"; exit 1
fi
echo "coll_ops and pt2pt right on 2 namespaces (two_level); link down mid-collective: exit $rc after $t s"
