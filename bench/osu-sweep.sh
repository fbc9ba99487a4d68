#!/bin/sh
# osu-sweep.sh - one OSU-style sweep of MPI collectives over every system at
# hand, side by side: the GLEX netmod (auto, each algorithm, host-based,
# MPICH's software collectives on our build) and Debian's stock MPICH and
# Open MPI when installed.  Writes a CSV, a PNG plot and a speedup summary
# (bench/osu-report.py).
#
# usage: bench/osu-sweep.sh [options]
#   -p PREFIX   our MPICH install (bin/mpicc, bin/mpiexec), default: the
#               configure prefix of the build directory you run it from
#   -n LIST     process counts, default "2 4 8 16"
#   -c LIST     collectives, default "allreduce reduce bcast barrier"
#               (the nonblocking forms too: ibcast ireduce iallreduce ibarrier)
#   -s LIST     systems, default: every one available of
#               glex glex-direct glex-binomial glex-recursive_doubling
#               glex-rabenseifner glex-double_tree glex-host glex-mpich mpich openmpi
#   -m MIN:MAX  message sizes, default 8:4194304
#   -i N -x N   timed and warm-up calls up to 8 KB, default 200 and 20
#   -I N -X N   timed and warm-up calls above 8 KB, default 50 and 5
#   -t SEC      time limit of one run, default 900 (a run over it is reported
#               and left out)
#   -r N        runs of each (process count, collective, system), default 1;
#               the systems take turns run by run (noise of the machine hits
#               them alike), osu.csv keeps every run's rows and the report
#               uses the median per size
#   -o DIR      output directory, default bench/results/<date>
#   -N          two hosts: every run spans two network namespaces joined by a
#               veth pair (scripts/glex-netns.sh; root), half the ranks in
#               each, each system over its own network path (glex: libfabric
#               tcp; mpich: UCX's tcp transport only, also between ranks of
#               one namespace; openmpi: its tcp BTL); the process counts must
#               be even
#   -h          this text
# 'glex' is the netmod with its defaults (GLEX_*_ALGO=auto); glex-<algo>
# forces one algorithm (where it does not exist for a collective, or does not
# fit a call, the run is skipped or 'auto' runs, as the netmod does);
# glex-host is the engine's host-based mode; glex-mpich is GLEX_OFFLOAD=0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
prefix= nps="2 4 8 16" colls="allreduce reduce bcast barrier" systems= range=8:4194304
iters=200 warm=20 iters_l=50 warm_l=5 limit=900 out= reps=1 netns=
while getopts p:n:c:s:m:i:x:I:X:t:o:r:Nh opt; do
  case $opt in
    p) prefix=$OPTARG ;; n) nps=$OPTARG ;; c) colls=$OPTARG ;; s) systems=$OPTARG ;;
    m) range=$OPTARG ;; i) iters=$OPTARG ;; x) warm=$OPTARG ;; I) iters_l=$OPTARG ;;
    X) warm_l=$OPTARG ;; t) limit=$OPTARG ;; o) out=$OPTARG ;; r) reps=$OPTARG ;; N) netns=1 ;;
    h) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "osu-sweep.sh: see -h" >&2; exit 2 ;;
  esac
done
if [ -z "$prefix" ] && [ -f config.status ]; then
  prefix=$(sed -n 's/^S\["prefix"\]="\(.*\)"$/\1/p' config.status)
fi
case $reps in ''|*[!0-9]*|0) echo "osu-sweep.sh: -r '$reps': a number of runs from 1 up" >&2; exit 2 ;; esac
[ -n "$prefix" ] && [ -x "$prefix/bin/mpicc" ] || {
  echo "osu-sweep.sh: no mpicc under '$prefix' (pass -p PREFIX of our MPICH install)" >&2; exit 2; }
[ -n "$out" ] || out=$src/bench/results/$(date +%Y-%m-%d)
mkdir -p "$out/bin"
csv=$out/osu.csv

# build the benchmark with each system's mpicc
build() { # name mpicc
  "$2" -O2 -std=c11 -Wall -Wextra -o "$out/bin/glex-osu-$1" "$src/bench/glex_osu.c" 2>"$out/bin/$1.log"
}
avail=
build glex "$prefix/bin/mpicc" || { cat "$out/bin/glex.log"; exit 1; }
avail="glex glex-direct glex-binomial glex-recursive_doubling glex-rabenseifner glex-double_tree glex-host glex-mpich"
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null && build mpich mpicc.mpich; then
  avail="$avail mpich"
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null && build openmpi mpicc.openmpi; then
  avail="$avail openmpi"
fi
[ -n "$systems" ] || systems=$avail

if [ -n "$netns" ]; then
  for np in $nps; do
    [ $((np % 2)) = 0 ] || { echo "osu-sweep.sh: -N: process count $np is odd (half on each host)" >&2; exit 2; }
  done
  nsname=glexB$$
  sh "$src/scripts/glex-netns.sh" up "$nsname" "$out" || exit 1
  trap 'sh "$src/scripts/glex-netns.sh" down "$nsname"' EXIT
fi
# hosts NP: the launch options of each system for two namespaces (-N)
hosts() {
  [ -n "$netns" ] || return 0
  case $1 in
    hydra) echo "ip netns exec $nsname-a" ;;
    # Debian's MPICH is ch4:ucx: UCX's shared-memory transports reach across
    # namespaces (one machine), so only tcp, over the veth
    glex|mpich) ucx=; [ "$1" = mpich ] && ucx="-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES glexv0"
      echo "-launcher ssh -launcher-exec $out/launch.sh -iface glexv0 \
      -hosts 10.77.0.1,10.77.0.2 -ppn $(($2 / 2)) -genv FI_TCP_IFACE glexv0 $ucx" ;;
    # its ranks yield when idle, as with --oversubscribe: the namespaces share this machine's cores
    openmpi) echo "--mca plm_rsh_agent $out/launch.sh --host 10.77.0.1:$(($2 / 2)),10.77.0.2:$(($2 / 2)) \
      --mca btl self,vader,tcp --mca btl_tcp_if_include glexv0 --mca oob_tcp_if_include glexv0 \
      --mca mpi_yield_when_idle 1" ;;
  esac
}
echo "system,coll,np,size,avg_us,min_us,max_us,iters,pure_us,compute_us,overlap_pct" > "$csv"
ncpu=$(nproc)
for np in $nps; do
  for coll in $colls; do
    case $coll in ibcast|ireduce|iallreduce|ibarrier) base=${coll#i} ;; *) base=$coll ;; esac
    kind=$(echo "$base" | tr a-z A-Z)
    for rep in $(seq "$reps"); do
      for sys in $systems; do
        case " $avail " in *" $sys "*) ;; *) echo "# $sys: not available, skipped"; continue ;; esac
        args="-c $coll -m $range -i $iters -x $warm -I $iters_l -X $warm_l --csv $sys"
        ns=$(hosts hydra) gh=$(hosts glex "$np")
        case $sys in
          glex) cmd="$ns env $prefix/bin/mpiexec $gh -n $np $out/bin/glex-osu-glex" ;;
          glex-mpich) cmd="$ns env GLEX_OFFLOAD=0 $prefix/bin/mpiexec $gh -n $np $out/bin/glex-osu-glex" ;;
          glex-host) cmd="$ns env GLEX_${kind}_ALGO=host $prefix/bin/mpiexec $gh -n $np $out/bin/glex-osu-glex" ;;
          glex-*)
            algo=${sys#glex-}
            case $base:$algo in # the algorithms each collective has (doc/algorithms.md)
              barrier:rabenseifner|barrier:double_tree|barrier:recursive_doubling|bcast:rabenseifner|\
bcast:recursive_doubling|reduce:recursive_doubling) continue ;;
            esac
            cmd="$ns env GLEX_${kind}_ALGO=$algo $prefix/bin/mpiexec $gh -n $np $out/bin/glex-osu-glex" ;;
          mpich) cmd="$ns mpiexec.mpich $(hosts mpich "$np") -n $np $out/bin/glex-osu-mpich" ;;
          openmpi)
            os=; [ "$np" -gt "$ncpu" ] && os=--oversubscribe
            cmd="$ns env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi $os $(hosts openmpi "$np") -n $np $out/bin/glex-osu-openmpi" ;;
        esac
        t0=$(date +%s)
        timeout "$limit" $cmd $args > "$out/run.tmp" 2> "$out/run.err"; rc=$?
        # only complete rows of this run (a killed run can leave a partial line
        # and mpiexec's own messages on stdout)
        grep "^$sys,$coll,$np,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*$" \
          "$out/run.tmp" > "$out/rows.tmp"
        cat "$out/rows.tmp" >> "$csv"
        run="$sys $coll np=$np"; [ "$reps" -gt 1 ] && run="$run run $rep"
        if [ $rc = 0 ]; then
          echo "# $run: $(( $(date +%s) - t0 )) s"
        else
          echo "# $run: FAILED (exit $rc; 124 = over ${limit} s), rows kept: $(wc -l < "$out/rows.tmp")"
          tail -3 "$out/run.err"
        fi
      done
    done
  done
done
rm -f "$out/run.tmp" "$out/run.err" "$out/rows.tmp"
echo "# CSV: $csv"
py=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import matplotlib" 2>/dev/null && py=/usr/bin/python3
$py "$here/osu-report.py" "$csv" "$out"
