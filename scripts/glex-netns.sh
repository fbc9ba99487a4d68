#!/bin/sh
# glex-netns.sh - two hosts on one machine for tests and benchmarks: Linux
# network namespaces NAME-a and NAME-b joined by a veth pair, 10.77.0.1 and
# 10.77.0.2 on an interface called glexv0 in each, and a launcher that runs
# a command "on" one of the two addresses (inside its namespace, with that
# namespace's name as hostname), called as
# ssh is by hydra's -launcher-exec and by Open MPI's plm_rsh_agent.
# GLEX_NETNS_SHM=private in the launcher's environment gives each launched
# command a /dev/shm of its own (hosts that share no segment).
#
# usage: scripts/glex-netns.sh up NAME DIR    create them; DIR/launch.sh is the launcher
#        scripts/glex-netns.sh down NAME      kill what runs in them, remove them
#        scripts/glex-netns.sh link NAME up|down   the veth end of NAME-b
# Needs root and iproute2; 'up' exits 77 where namespaces cannot be made.
set -u
cmd=${1:-} name=${2:-}
[ -n "$cmd" ] && [ -n "$name" ] || { sed -n '2,11p' "$0"; exit 2; }
a=$name-a b=$name-b
case $cmd in
  up)
    dir=${3:?glex-netns.sh up NAME DIR}
    [ "$(id -u)" = 0 ] || { echo "needs root (ip netns)"; exit 77; }
    command -v ip >/dev/null 2>&1 || { echo "no ip command (Debian package iproute2)"; exit 77; }
    if ! ip netns add "$a" 2>"$dir/ns.err" || ! ip netns add "$b" 2>>"$dir/ns.err" ||
       ! ip link add "$name-va" type veth peer name "$name-vb" 2>>"$dir/ns.err"; then
      ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null
      echo "network namespaces not available here: $(head -1 "$dir/ns.err")"
      exit 77
    fi
    ip link set "$name-va" netns "$a" && ip link set "$name-vb" netns "$b" &&
    ip -n "$a" link set "$name-va" name glexv0 && ip -n "$b" link set "$name-vb" name glexv0 &&
    ip -n "$a" addr add 10.77.0.1/24 dev glexv0 && ip -n "$b" addr add 10.77.0.2/24 dev glexv0 &&
    ip -n "$a" link set glexv0 up && ip -n "$b" link set glexv0 up &&
    ip -n "$a" link set lo up && ip -n "$b" link set lo up ||
      { echo "veth set-up failed"; "$0" down "$name"; exit 1; }
    # options first (ssh's), then the host, then the command
    cat >"$dir/launch.sh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case \$host in
  10.77.0.1) ns=$a ;;
  10.77.0.2) ns=$b ;;
  *) echo "launch.sh: unknown host \$host (10.77.0.1 or 10.77.0.2)" >&2; exit 1 ;;
esac
# a hostname of its own too (UTS namespace): libraries name their
# shared-memory files after the host; GLEX_NETNS_SHM=private: a /dev/shm of
# its own too (mount namespace), as on a machine apart
if [ "\${GLEX_NETNS_SHM:-}" = private ]; then
  exec ip netns exec "\$ns" unshare --uts --mount sh -c \
    "mount -t tmpfs -o mode=1777 glexshm /dev/shm && hostname \$ns && \$*"
fi
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns; \$*"
EOF
    chmod +x "$dir/launch.sh" ;;
  down)
    # what still runs in them goes first: a namespace outlives 'ip netns del'
    # while processes are in it, and a rank cut off by a downed link may wait
    # on a socket for minutes (TCP's retransmission time-out)
    p=$(ip netns pids "$a" 2>/dev/null; ip netns pids "$b" 2>/dev/null)
    [ -z "$p" ] || kill -9 $p 2>/dev/null
    i=0 # until every one is reaped too (a zombie still counts as alive)
    while [ $i -lt 100 ]; do
      alive=""
      for x in $p; do kill -0 "$x" 2>/dev/null && alive=1; done
      [ -n "$alive" ] || break
      sleep 0.1; i=$((i + 1))
    done
    ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; exit 0 ;;
  link)
    ip -n "$b" link set glexv0 "${3:?up or down}" ;;
  *) echo "glex-netns.sh: '$cmd': allowed up, down or link" >&2; exit 2 ;;
esac
