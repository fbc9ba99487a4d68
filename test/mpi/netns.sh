#!/bin/sh
# test/mpi/netns.sh PREFIX WORKDIR LIMIT - two real hosts on one machine:
# Linux network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2,
# interface glexv0 in each), hydra's mpiexec in the first, each host's
# proxy started in its namespace through -launcher-exec (a wrapper of 'ip
# netns exec'), 2 ranks per host, libfabric's tcp provider on the veth.
#   1. coll_ops and pt2pt give right results;
#   2. the link taken down in the middle of a collective loop: an error
#      (mpiexec exits non-zero within a few GLEX_TIMEOUTs), not a hang.
# Needs WORKDIR/coll_ops, pt2pt and nic_counts (test/mpi/hosts.sh builds
# them).  Exit 0 pass, 77 skip (not root, no iproute2, no netns), else fail.
set -u
prefix=$1 work=$2 limit=$3
[ "$(id -u)" = 0 ] || { echo "needs root (ip netns)"; exit 77; }
command -v ip >/dev/null 2>&1 || { echo "no ip command (Debian package iproute2)"; exit 77; }
a=glexA$$ b=glexB$$
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT
if ! ip netns add "$a" 2>"$work/ns.err" || ! ip netns add "$b" 2>>"$work/ns.err" ||
   ! ip link add "gva$$" type veth peer name "gvb$$" 2>>"$work/ns.err"; then
  echo "network namespaces not available here: $(head -1 "$work/ns.err")"
  exit 77
fi
ip link set "gva$$" netns "$a" && ip link set "gvb$$" netns "$b" &&
ip -n "$a" link set "gva$$" name glexv0 && ip -n "$b" link set "gvb$$" name glexv0 &&
ip -n "$a" addr add 10.77.0.1/24 dev glexv0 && ip -n "$b" addr add 10.77.0.2/24 dev glexv0 &&
ip -n "$a" link set glexv0 up && ip -n "$b" link set glexv0 up &&
ip -n "$a" link set lo up && ip -n "$b" link set lo up || { echo "veth set-up failed"; exit 1; }

# hydra calls the launcher as ssh: options, the host, the proxy's command
cat >"$work/launch.sh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case \$host in
  10.77.0.1) ns=$a ;;
  10.77.0.2) ns=$b ;;
  *) echo "launch.sh: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
EOF
chmod +x "$work/launch.sh"
mpirun() { # mpirun TIMEOUT PROG ARGS: 2 hosts x 2 ranks
  t=$1; shift
  ip netns exec "$a" timeout "$t" "$prefix/bin/mpiexec" -launcher ssh \
    -launcher-exec "$work/launch.sh" -iface glexv0 -hosts 10.77.0.1,10.77.0.2 -ppn 2 -n 4 \
    -genv FI_PROVIDER "tcp;ofi_rxm" -genv FI_TCP_IFACE glexv0 -genv GLEX_VERBOSE 1 "$@"
}

for p in coll_ops pt2pt; do
  if ! mpirun "$limit" "$work/$p" quick >"$work/ns-$p.log" 2>&1; then
    echo "$p on 2 namespaces failed:"; tail -20 "$work/ns-$p.log"; exit 1
  fi
done
# rank 0 reports what ran: the NIC model's algorithms, on 2 hosts
grep -q "runs .* (offload)" "$work/ns-coll_ops.log" ||
  { echo "no offloaded collective reported:"; tail -20 "$work/ns-coll_ops.log"; exit 1; }

# the link goes down mid-collective: every rank must stop with an error
GLEX_TIMEOUT=1 mpirun 120 -genv GLEX_TIMEOUT 1 "$work/nic_counts" 100000000 \
  >"$work/ns-down.log" 2>&1 &
bg=$!
sleep 3
ip -n "$b" link set glexv0 down
t0=$(date +%s)
wait "$bg"
rc=$? t=$(( $(date +%s) - t0 ))
if [ $rc = 0 ] || [ $rc = 124 ]; then
  echo "link down: mpiexec exit $rc after $t s (want an error, not a hang or success)"
  tail -20 "$work/ns-down.log"; exit 1
fi
echo "coll_ops and pt2pt right on 2 namespaces; link down mid-collective: exit $rc after $t s"
