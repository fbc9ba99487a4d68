#!/bin/sh
# test/mpi/run.sh - build the MPI test programs with the installed mpicc and
# run them under mpiexec at 1, 2, 3, 4, 5 and 8 processes, with every
# algorithm setting; prints TAP (one line per program x size x setting).
#
# environment: GLEX_MPI_PREFIX  the prefix MPICH with ch4:glex is installed in
#              GLEX_SRCDIR      the project's source directory
#              GLEX_MPI_NP      process counts (default "1 2 3 4 5 8")
#              GLEX_MPI_TIMEOUT seconds per run (default 300)
set -u
prefix=${GLEX_MPI_PREFIX:?set GLEX_MPI_PREFIX to the install prefix}
src=${GLEX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
nps=${GLEX_MPI_NP:-"1 2 3 4 5 8"}
limit=${GLEX_MPI_TIMEOUT:-300}
out=${TMPDIR:-/tmp}/glex-mpi-tests.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

. "$src/test/mpi/tap.sh"

if [ ! -x "$prefix/bin/mpicc" ] || [ ! -x "$prefix/bin/mpiexec" ]; then
  echo "1..1"
  notok "no $prefix/bin/mpicc or mpiexec: run 'make install' before 'make check'"
  exit 1
fi

progs="coll_ops comms fallback pt2pt late_root nic_counts"
# every algorithm name of the collectives, and the two non-offload modes
ar_algos="auto binomial recursive_doubling rabenseifner double_tree direct multicast flat_read flat host mpich"
valid() { # valid KIND ALGO: is ALGO a GLEX_<KIND>_ALGO value?
  case $1:$2 in
    *:auto|*:binomial|*:direct|*:host|*:mpich) return 0 ;;
    ALLREDUCE:recursive_doubling|ALLREDUCE:rabenseifner|ALLREDUCE:double_tree) return 0 ;;
    REDUCE:rabenseifner|REDUCE:double_tree|BCAST:double_tree|BARRIER:recursive_doubling) return 0 ;;
    ALLREDUCE:multicast|BCAST:multicast|BCAST:flat_read) return 0 ;;
    ALLREDUCE:flat|REDUCE:flat|BCAST:flat|BARRIER:flat) return 0 ;;
  esac
  return 1
}

nsizes=$(echo $nps | wc -w)
nalgos=$(echo $ar_algos | wc -w)
osu_colls="allreduce reduce bcast barrier iallreduce ireduce ibcast ibarrier"
echo "1..$(( 6 + nsizes * (3 + nalgos) + 4 + 5 + 1 + 16 + 4 + 6 + 10 + 16 + 4 + 3 + 1 + 4 ))"

# shellcheck disable=SC2086
compile $progs

for np in $nps; do
  quick=""
  [ "$np" -gt 4 ] && quick=quick
  for p in comms fallback pt2pt; do
    run "$p" "$np" -- "$out/$p"
  done
  for a in $ar_algos; do
    set --
    for k in ALLREDUCE REDUCE BCAST BARRIER; do
      if valid $k $a; then set -- "$@" "GLEX_${k}_ALGO=$a"; fi
    done
    run coll_ops "$np" "$@" -- "$out/coll_ops" $quick
  done
done

# GLEX_VERBOSE names the algorithm that ran, per communicator and collective
if env GLEX_VERBOSE=1 GLEX_ALLREDUCE_ALGO=recursive_doubling GLEX_BCAST_ALGO=double_tree \
     timeout "$limit" "$prefix/bin/mpiexec" -n 4 "$out/comms" >"$out/log" 2>&1 &&
   grep -q "MPI_Allreduce runs recursive_doubling (offload)" "$out/log" &&
   grep -q "MPI_Bcast runs double_tree (offload)" "$out/log"; then
  ok "GLEX_VERBOSE=1 reports the offloaded algorithms"
else
  notok "GLEX_VERBOSE=1 reports the offloaded algorithms"; grep glex "$out/log" | head | sed 's/^/# /'
fi
# multicast in the modeled routers, on a 3-level tree of radix-4 routers
echo "radix = 4" >"$out/radix4.params"
if env GLEX_VERBOSE=1 GLEX_VTIME_PARAMS="$out/radix4.params" GLEX_BCAST_ALGO=multicast \
     GLEX_ALLREDUCE_ALGO=multicast timeout "$limit" "$prefix/bin/mpiexec" -n 6 "$out/coll_ops" \
     quick >"$out/log" 2>&1 &&
   grep -q "MPI_Bcast runs multicast (offload)" "$out/log" &&
   grep -q "MPI_Allreduce runs multicast (offload)" "$out/log"; then
  ok "multicast bcast and allreduce on radix-4 routers, -n 6: $(tail -1 "$out/log")"
else
  notok "multicast bcast and allreduce on radix-4 routers, -n 6"; grep glex "$out/log" | head | sed 's/^/# /'
fi
# an algorithm that does not fit a call: auto decides for that call
if env GLEX_VERBOSE=1 GLEX_ALLREDUCE_ALGO=rabenseifner timeout "$limit" \
     "$prefix/bin/mpiexec" -n 3 "$out/fallback" >"$out/log" 2>&1 &&
   grep -q "MPI_Allreduce runs mpich (user-defined op)" "$out/log"; then
  ok "GLEX_VERBOSE=1 reports the fallback for a user-defined op"
else
  notok "GLEX_VERBOSE=1 reports the fallback for a user-defined op"; tail "$out/log" | sed 's/^/# /'
fi
# GLEX_OFFLOAD=0: MPICH's algorithms everywhere, same results
if env GLEX_OFFLOAD=0 GLEX_VERBOSE=1 timeout "$limit" "$prefix/bin/mpiexec" -n 3 "$out/coll_ops" quick \
     >"$out/log" 2>&1 &&
   grep -q "MPI_Allreduce runs mpich (GLEX_OFFLOAD=0" "$out/log" &&
   ! grep -q "(offload)" "$out/log"; then
  ok "GLEX_OFFLOAD=0 runs MPICH's collectives: $(tail -1 "$out/log")"
else
  notok "GLEX_OFFLOAD=0 runs MPICH's collectives"; tail "$out/log" | sed 's/^/# /'
fi
# a bad value fails MPI_Init with the list of valid names
if env GLEX_ALLREDUCE_ALGO=fastest timeout "$limit" "$prefix/bin/mpiexec" -n 2 "$out/comms" \
     >"$out/log" 2>&1; then
  notok "GLEX_ALLREDUCE_ALGO=fastest was accepted"
elif grep -q "GLEX_ALLREDUCE_ALGO=fastest is invalid: allowed auto, binomial, recursive_doubling, rabenseifner, double_tree, direct, multicast, two_level, flat, host or mpich" "$out/log"; then
  ok "GLEX_ALLREDUCE_ALGO=fastest fails MPI_Init naming the valid values"
else
  notok "GLEX_ALLREDUCE_ALGO=fastest: message missing"; tail "$out/log" | sed 's/^/# /'
fi

# the benchmarks, built with the installed mpicc: the OSU-compatible ones
# (bench/glex_osu.c, bench/glex_osu_p2p.c) and the MD proxy (bench/glex_md.c)
for b in glex_osu glex_osu_p2p glex_md; do
  if "$prefix/bin/mpicc" -std=c11 -O2 -Wall -Wextra -Werror -o "$out/$b" "$src/bench/$b.c" -lm \
       >"$out/$b.cc" 2>&1; then
    ok "compile bench/$b.c with $prefix/bin/mpicc"
  else
    notok "compile bench/$b.c"; sed 's/^/# /' "$out/$b.cc"
  fi
done
# GLEX_READ_KB: from that size auto's bcast of a few ranks is read by
# every member's NIC (flat_read), below it binomial; 0: never; every
# received buffer checked (glex_osu -v)
if env GLEX_VERBOSE=1 GLEX_READ_KB=8 timeout "$limit" "$prefix/bin/mpiexec" -n 2 \
     "$out/glex_osu" -c bcast -v -m 4:65536 -i 20 -x 2 -I 10 -X 1 >"$out/log" 2>&1 &&
   grep -q "MPI_Bcast runs binomial (offload)" "$out/log" &&
   grep -q "MPI_Bcast runs flat_read (offload)" "$out/log"; then
  ok "GLEX_READ_KB=8: bcasts of 8-64 KiB read in place (flat_read), smaller ones binomial, -n 2"
else
  notok "GLEX_READ_KB=8: bcasts of 8-64 KiB read in place"; grep glex "$out/log" | head | sed 's/^/# /'
fi
if env GLEX_VERBOSE=1 GLEX_READ_KB=0 timeout "$limit" "$prefix/bin/mpiexec" -n 2 \
     "$out/glex_osu" -c bcast -v -m 4:65536 -i 20 -x 2 -I 10 -X 1 >"$out/log" 2>&1 &&
   grep -q "MPI_Bcast runs binomial (offload)" "$out/log" && ! grep -q "flat_read" "$out/log"; then
  ok "GLEX_READ_KB=0: every bcast binomial, -n 2"
else
  notok "GLEX_READ_KB=0: every bcast binomial"; grep glex "$out/log" | head | sed 's/^/# /'
fi
# ... and a reduce of a CPU per process from that size (up to 256 KiB) read
# by the parent's NIC and combined: every result checked, both ways
for k in 8 0; do
  run "glex-osu -c reduce GLEX_READ_KB=$k (-v)" 2 GLEX_READ_KB=$k -- "$out/glex_osu" -c reduce \
    -v -m 4:524288 -i 20 -x 2 -I 10 -X 1
done
# glex_osu with every result checked (-v), sizes across the mailbox/RDMA
# boundary, few iterations
osu="-v -m 4:1048576 -i 3 -x 1 -I 2 -X 1 -f"
for c in $osu_colls; do
  # shellcheck disable=SC2086
  run "glex-osu -c $c (default: the NIC model)" 3 -- "$out/glex_osu" -c $c $osu
  run "glex-osu -c $c GLEX_*_ALGO=direct" 3 GLEX_ALLREDUCE_ALGO=direct GLEX_REDUCE_ALGO=direct \
    GLEX_BCAST_ALGO=direct GLEX_BARRIER_ALGO=direct -- "$out/glex_osu" -c $c $osu
done
# -b: the barrier after each call timed too, its column and the sum printed
if timeout "$limit" "$prefix/bin/mpiexec" -n 3 "$out/glex_osu" -c reduce -b -v -m 4:65536 -i 3 -x 1 \
     -I 2 -X 1 >"$out/log" 2>&1 &&
   grep -q "Barrier(us) *Sum(us)" "$out/log" &&
   awk '/^  [0-9]/ { n++; if (NF != 4 || $4 + 0 < $3 + 0) bad = 1 } END { exit !(n == 15 && !bad) }' \
     "$out/log"; then
  ok "glex-osu -b prints the barrier after each call and the sum, every size"
else
  notok "glex-osu -b"; tail "$out/log" | sed 's/^/# /'
fi
# point-to-point (bench/glex_osu_p2p.c): every size from 0 B to 1 MiB across
# the eager / rendezvous boundary, windows of 64 in flight, both directions,
# pairs at once; every received buffer checked (-v)
p2p="-v -m 0:1048576 -i 20 -x 2 -I 3 -X 1"
for t in latency bw bibw; do
  # shellcheck disable=SC2086
  run "glex-osu-p2p -t $t" 2 -- "$out/glex_osu_p2p" -t $t $p2p
done
# shellcheck disable=SC2086
run "glex-osu-p2p -t mbw_mr" 4 -- "$out/glex_osu_p2p" -t mbw_mr $p2p
# rendezvous split between both NICs, 128 KiB - 1 MiB, about 60000 in a
# row, windows of 64: the sender's NIC writes the receiver's claim word
# with an 8-byte put; stored twice, it once came after the receiver's next
# offer and the pair hung until GLEX_TIMEOUT (1 run in 2-6 of this length)
run "glex-osu-p2p -t bw, 128 KiB - 1 MiB, 300 windows" 2 GLEX_TIMEOUT=10 -- \
  "$out/glex_osu_p2p" -t bw -v -m 131072:1048576 -I 300 -X 2
# the MD proxy (bench/glex_md.c): atoms that migrate and halos exchanged by
# MPI_Sendrecv every step; right halos and migration keep the atom count and
# conserve the energy (relative drift below 1e-4 over 40 steps)
for np in 1 2 3; do
  if timeout "$limit" "$prefix/bin/mpiexec" -n "$np" "$out/glex_md" -c 12 -s 40 -e 10 \
       >"$out/log" 2>&1 &&
     awk '/^step/ { n++; if (!e0) { e0 = $6; a0 = $4 } e = $6; if ($4 != a0) bad = 1 }
          END { d = (e - e0) / e0; if (d < 0) d = -d; exit !(n == 4 && !bad && d < 1e-4) }' \
       "$out/log"; then
    ok "glex-md -n $np: $(grep '^step' "$out/log" | tail -1)"
  else
    notok "glex-md -n $np"; tail "$out/log" | sed 's/^/# /'
  fi
done
# nonblocking calls that name the direct path run the engine (right results)
run "glex-osu -c iallreduce with GLEX_ALLREDUCE_ALGO=direct" 4 GLEX_ALLREDUCE_ALGO=direct -- \
  "$out/glex_osu" -c iallreduce $osu
# every wait sleeps at once (what auto does above 12 processes per CPU):
# each wake-up goes through the host bell, results stay right
run coll_ops 8 GLEX_SPIN_US=0 GLEX_YIELD_US=0 -- "$out/coll_ops" quick
# one mailbox per process: the first communicator that names the direct
# path takes it, the others agree to use the NIC model; results stay right
run "comms with GLEX_MAILBOXES=1" 4 GLEX_MAILBOXES=1 GLEX_ALLREDUCE_ALGO=direct \
  GLEX_REDUCE_ALGO=direct GLEX_BCAST_ALGO=direct GLEX_BARRIER_ALGO=direct -- "$out/comms"
# a reduce's root that comes late (after its peers freed the communicator,
# and before MPI_Finalize): senders copy out (GLEX_STAGE_KB auto, and with
# a core per process) or wait to be read (GLEX_STAGE_KB=0); the root maps
# the stages (GLEX_STAGE_MAP=1) or reads them by cross-memory attach
# the NIC model (default) with a late root: right results; then the direct
# path's staging (a named baseline): who may return before the late rank
run "late_root" 3 -- "$out/late_root"
# point-to-point protocols: 1 KiB goes as one long MP, 4 KiB through the
# receiver's ring (1 KiB too with GLEX_MP_LONG=0); with rings off
# (GLEX_RDMA_EAGER=0) fragments and the rendezvous carry everything, the
# whole pt2pt program too
proto() { # proto BYTES N ENV...: pt2pt stream BYTES N at 2 ranks, GLEX_VERBOSE=2; rank 0's
  # ring, frag and rendezvous (sent) with its ring limits and DMA read cost, rank 1's
  # offered and written (rendezvous received, split; rank 0's offered: offered0)
  msg_bytes=$1 msgs=$2; shift 2   # not n: tap.sh counts the tests in it
  env GLEX_VERBOSE=2 "$@" timeout "$limit" "$prefix/bin/mpiexec" -n 2 "$out/pt2pt" "${mode:-stream}" \
    "$msg_bytes" "$msgs" >"$out/log" 2>&1
  rc=$?
  line=$(grep "glex: rank 0: active messages sent" "$out/log")
  long=$(echo "$line" | sed -n 's/.* \([0-9]*\) long MP,.*/\1/p')
  ring=$(echo "$line" | sed -n 's/.* \([0-9]*\) ring,.*/\1/p')
  frag=$(echo "$line" | sed -n 's/.* \([0-9]*\) fragmented,.*/\1/p')
  rndv=$(echo "$line" | sed -n 's/.* \([0-9]*\) rendezvous;.*/\1/p')
  near_max=$(echo "$line" | sed -n 's/.*bytes, \([0-9]*\) to a running process.*/\1/p')
  cost=$(echo "$line" | sed -n 's/.*(DMA read \([0-9.]*\)x a copy, .*/\1/p')
  read_from=$(echo "$line" | sed -n 's/.*pays from \([0-9]*\) KiB).*/\1/p')
  offered0=$(echo "$line" | sed -n 's/.*offered to the sender: \([0-9]*\),.*/\1/p')
  line=$(grep "glex: rank 1: active messages sent" "$out/log")
  offered=$(echo "$line" | sed -n 's/.*offered to the sender: \([0-9]*\),.*/\1/p')
  written=$(echo "$line" | sed -n 's/.*written by its NIC: \([0-9]*\);.*/\1/p')
  received=$(grep "glex: rank 1: point-to-point received" "$out/log" |
    sed -n 's/.*point-to-point received: \([0-9]*\),.*/\1/p')
}
want_is() { [ "$2" = - ] || [ "$1" = "$2" ]; }   # want_is VALUE WANT: WANT, or "-" (any)
stream_case() { # stream_case LABEL LONG RING FRAG MATCHED BYTES N ENV...: a stream of N
  # messages of BYTES whose sends went so (long MPs, ring, fragments: counts or
  # "-"), received by the netmod's matching (point-to-point natively, not
  # MPIDIG's) if MATCHED is yes
  label=$1 w_long=$2 w_ring=$3 w_frag=$4 w_matched=$5; shift 5
  proto "$@"
  if [ $rc = 0 ] && grep -q "pt2pt stream: $(($2 * 3)) checks, 0 errors" "$out/log" &&
     want_is "$long" "$w_long" && want_is "$ring" "$w_ring" && want_is "$frag" "$w_frag" &&
     { [ "$w_matched" != yes ] || [ "${received:-0}" -ge "$2" ]; }; then
    ok "$label (long MP $long, ring $ring, fragmented $frag; netmod matched ${received:-?})"
  else
    notok "$label: exit $rc, long '$long', ring '$ring', fragmented '$frag', netmod matched '$received' (want $w_long, $w_ring, $w_frag, $w_matched)"
    tail -5 "$out/log" | sed 's/^/# /'
  fi
}
stream_case "200 messages of 1 KiB: all as long MPs" 200 0 0 yes 1024 200
stream_case "200 messages of 4 KiB: all through the receiver's ring" 0 200 0 yes 4096 200
stream_case "200 messages of 1 KiB with GLEX_MP_LONG=0: all through the receiver's ring" \
  0 200 - - 1024 200 GLEX_MP_LONG=0
stream_case "200 messages of 1 KiB with GLEX_RDMA_EAGER=0: all as fragments" \
  - 0 200 - 1024 200 GLEX_MP_LONG=0 GLEX_RDMA_EAGER=0
# two windows of 96 MPI_Isend of 8 KiB, 0.1 s apart: the first fills most
# of the ring (1 MiB per sender at 2 ranks); the receiver's credits for it
# wait in the sender's receive queue, and the second window's sends, finding
# the ring full, take them: all 192 by the ring (before: 127 and 65
# rendezvous)
mode=window
proto 8192 96
mode=
if [ $rc = 0 ] && grep -q "pt2pt window: 579 checks, 0 errors" "$out/log" && [ "$ring" = 192 ] &&
   [ "$rndv" = 0 ]; then
  ok "two windows of 96 sends of 8 KiB: all 192 through the ring, the second window took the credits waiting in the queue"
else
  notok "windows of 8 KiB sends: exit $rc, ring '$ring', rendezvous '$rndv' (want 192 and 0)"
  tail -5 "$out/log" | sed 's/^/# /'
fi
# GLEX_RDMA_EAGER auto: 16 KiB to a process with a CPU goes through the
# ring, or by a rendezvous (read in place) where this job measured the DMA
# read to pay from 16 KiB or less (it then takes the ring to 8 KiB); set,
# the ring takes it whatever the cost
proto 16384 200
want=65536
case "$read_from" in 8|16) want=8192 ;; esac
if [ $rc = 0 ] && grep -q "pt2pt stream: 600 checks, 0 errors" "$out/log" &&
   [ "$near_max" = "$want" ] &&
   { { [ "$want" = 65536 ] && [ "${ring:-0}" -gt 0 ]; } ||
     { [ "$want" = 8192 ] && [ "$ring" = 0 ] && [ "$rndv" = 200 ]; }; }; then
  ok "200 messages of 16 KiB, GLEX_RDMA_EAGER auto: ring to $near_max bytes (DMA read ${cost:-refused}x a copy, pays from ${read_from:-?} KiB), $ring ring, $rndv rendezvous"
else
  notok "16 KiB messages, auto: exit $rc, DMA read '$cost', pays from '$read_from' KiB, limit '$near_max' (want $want), ring '$ring', rendezvous '$rndv'"
  tail -5 "$out/log" | sed 's/^/# /'
fi
proto 16384 200 GLEX_RDMA_EAGER=65536
if [ $rc = 0 ] && grep -q "pt2pt stream: 600 checks, 0 errors" "$out/log" &&
   [ "$near_max" = 65536 ] && [ "${ring:-0}" -gt 100 ]; then
  ok "200 messages of 16 KiB with GLEX_RDMA_EAGER=65536: $ring through the ring"
else
  notok "16 KiB messages, GLEX_RDMA_EAGER=65536: exit $rc, limit '$near_max', ring '$ring'"
  tail -5 "$out/log" | sed 's/^/# /'
fi
env GLEX_RDMA_EAGER=65537 timeout "$limit" "$prefix/bin/mpiexec" -n 1 "$out/pt2pt" >"$out/log" 2>&1
if grep -q "GLEX_RDMA_EAGER=65537 is invalid: allowed auto or 0..65536" "$out/log"; then
  ok "GLEX_RDMA_EAGER=65537 refused, naming the range"
else
  notok "GLEX_RDMA_EAGER=65537 not refused with its range"
  tail -5 "$out/log" | sed 's/^/# /'
fi
run pt2pt 2 GLEX_RDMA_EAGER=0 -- "$out/pt2pt"
run pt2pt 4 GLEX_RDMA_EAGER=0 -- "$out/pt2pt"
# more ranks than CPUs: a rank blocked in MPI_Recv sleeps (GLEX_NAP_US) and
# leaves its core to the others: under a quarter of the wait on a CPU
run "pt2pt wait: blocked ranks sleep" 5 -- "$out/pt2pt" wait 600
# ... and ranks in a barrier while two others exchange messages yield the
# cores a little, then sleep: under 15% of the time on a CPU
bi_np=$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) * 2 ))
run "pt2pt barrier_idle: waiting ranks give the cores up" "$bi_np" -- "$out/pt2pt" barrier_idle 200
# ... but ranks polling MPI_Test with work between (HPCC's RandomAccess)
# keep the CPUs busy: they napped 4 ms at a time, all at once, 20 s a run
tl_np=$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) * 2 ))
run "pt2pt testloop: no naps with work to do" "$tl_np" -- "$out/pt2pt" testloop 2000000
# a rendezvous of 1 MiB between two processes of this host: the receiver
# offers the sender the second half (both NICs' DMA at once); every offer
# is taken by the sender's NIC or read back, the data right either way
proto 1048576 50
if [ $rc = 0 ] && grep -q "pt2pt stream: .* 0 errors" "$out/log" && [ "$offered" = 50 ] &&
   [ "${written:-0}" -ge 1 ]; then
  ok "50 rendezvous of 1 MiB: half offered to the sender 50 times, $written written by its NIC"
else
  notok "1 MiB rendezvous split: exit $rc, offered '$offered', written '$written'"
  tail -5 "$out/log" | sed 's/^/# /'
fi
# both ways at once (OSU bibw's window), every receive posted first: both
# CPUs have data to move, so 64 KiB goes by rendezvous (read once) instead
# of the ring (copied twice); a receiver whose own rendezvous to the sender
# wait unacknowledged offers it no half of 256 KiB (the sender has them to
# read), one with none does; from 2 MiB the halves are offered anyway (the
# CPU through with its own reads first takes them); one way, 64 KiB keeps
# the ring
judge() { # judge OK-TEXT NOT-OK-TEXT: by the exit status of the command before
  if [ $? = 0 ]; then ok "$1"; else notok "$2"; tail -5 "$out/log" | sed 's/^/# /'; fi
}
clean() { # clean MODE BYTES N CHECKS: proto with pt2pt MODE; true if it ran with CHECKS checks, 0 errors
  mode=$1; proto "$2" "$3"; mode=
  [ $rc = 0 ] && grep -q "pt2pt $1: $4 checks, 0 errors" "$out/log"
}
clean both 65536 32 194 && [ "$ring" = 0 ] && [ "$rndv" = 32 ]
judge "32 messages of 64 KiB each way at once: $rndv by rendezvous, $ring through the ring" \
  "64 KiB both ways: exit $rc, ring '$ring', rendezvous '$rndv' (want 0 and 32)"
clean unacked 262144 32 196 && [ "$rndv" = 32 ] && [ "$offered0" = 0 ] && [ "$offered" = 32 ]
judge "32 rendezvous of 256 KiB each way: halves offered by the receiver with its own unacknowledged $offered0, by the other $offered" \
  "256 KiB with rendezvous unacknowledged: exit $rc, rendezvous '$rndv', offered '$offered0' and '$offered' (want 0 and 32)"
clean both 4194304 8 50 && [ "$offered0" = 8 ] && [ "$offered" = 8 ]
judge "8 rendezvous of 4 MiB each way at once: every half offered ($offered0 and $offered)" \
  "4 MiB both ways: exit $rc, offered '$offered0' and '$offered' (want 8 and 8)"
clean stream 65536 50 150 && [ "${ring:-0}" -ge 40 ]
judge "50 messages of 64 KiB one way: $ring through the ring, $rndv by rendezvous" \
  "64 KiB one way: exit $rc, ring '$ring', rendezvous '$rndv' (want 40 or more through the ring)"
# ... and a sender computing outside MPI delays nothing: the receiver reads
# the half back itself
run "pt2pt busy: a rendezvous from a sender outside MPI" 2 -- "$out/pt2pt" busy "$out/busy.flag"
# ... but not when the other processes of this host take every CPU (the
# ranks between compute outside MPI): the receiver reads it all and the
# waiting sender naps at once, woken by each ACK
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
crowd_np=$((cpus + 2))
env GLEX_VERBOSE=2 timeout "$limit" "$prefix/bin/mpiexec" -n "$crowd_np" "$out/pt2pt" crowd \
  1048576 20 "$out/crowd.flag" >"$out/log" 2>&1
rc=$?
line=$(grep "glex: rank $((crowd_np - 1)): active messages sent" "$out/log")
offered=$(echo "$line" | sed -n 's/.*offered to the sender: \([0-9]*\),.*/\1/p')
if [ $rc = 0 ] && grep -q "pt2pt crowd: .* 0 errors" "$out/log" && [ "$offered" = 0 ]; then
  ok "20 rendezvous of 1 MiB with $((crowd_np - 2)) ranks computing on $cpus CPUs: none offered"
else
  notok "1 MiB rendezvous among busy ranks: exit $rc, offered '$offered'"
  tail -5 "$out/log" | sed 's/^/# /'
fi

dp="GLEX_REDUCE_ALGO=direct GLEX_BCAST_ALGO=direct GLEX_ALLREDUCE_ALGO=direct"
run "late_root" 2 $dp -- "$out/late_root" 1.5 out out
run "late_root" 4 $dp GLEX_STAGE_KB=0 -- "$out/late_root" 1.5 wait wait
run "late_root" 4 $dp GLEX_STAGE_KB=4096 -- "$out/late_root" 1.5 out out
run "late_root" 3 $dp GLEX_STAGE_MAP=0 -- "$out/late_root" 1.5 out wait

# The NIC model ran, with default settings: the counts each communicator's
# NIC work adds up to (GLEX_VERBOSE=2, every rank) are those each algorithm
# implies, rank by rank (test/mpi/nic_counts.py), offload and host-based
# (12: the flat barrier through rank 0, the allreduce every rank to all)
for np in 2 3 4 5 8 12; do
  counts "$np" offload
done
# 26 ranks: on 2 CPUs 13 a CPU, past GLEX_YIELD_MAX_PER_CPU, where 'auto'
# takes binomial for the allreduce and the barrier (1.9 s here)
counts 26 offload
counts 5 host-based GLEX_ALLREDUCE_ALGO=host GLEX_REDUCE_ALGO=host GLEX_BCAST_ALGO=host \
  GLEX_BARRIER_ALGO=host
# glex-info --job on a running default-settings job: the collective VP's
# executed descriptors rise between two looks
a="" b=""
jobs_of_user >"$out/jobs.before" # other jobs of this user (another test run) are not ours
env timeout "$limit" "$prefix/bin/mpiexec" -n 2 "$out/nic_counts" 1000000 >"$out/log" 2>&1 &
bg=$!
job=$(job_started)
executed() { "$prefix/bin/glex-info" --job "$1" | awk '$1 == 0 && $2 == 1 && NF == 12 { print $4 }'; }
if [ -n "$job" ]; then a=$(executed "$job"); sleep 0.5; b=$(executed "$job"); fi
kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null
"$prefix/bin/glex-info" --cleanup >/dev/null 2>&1
if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]; then
  ok "glex-info --job $job: node 0's collective VP executed $a, then $b descriptors"
else
  notok "glex-info --job on a default-settings job: job '$job', executed '$a' then '$b'"
fi
