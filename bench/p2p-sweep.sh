#!/bin/sh
# p2p-sweep.sh - point-to-point and a proxy application over every system at
# hand, side by side: the GLEX netmod (our MPICH) and Debian's stock MPICH
# and Open MPI when installed.  Runs glex-osu-p2p (bench/glex_osu_p2p.c:
# latency, bw, bibw, mbw_mr) and glex-md (bench/glex_md.c: the MD proxy),
# each built with each system's mpicc, the systems taking turns run by run;
# writes p2p.csv, md.csv and summary.md (medians per size, the ratio to the
# best stock library; bench/p2p-report.py).
#
# usage: bench/p2p-sweep.sh [options]
#   -p PREFIX   our MPICH install (bin/mpicc, bin/mpiexec), default: the
#               configure prefix of the build directory you run it from
#   -n LIST     process counts, default "2 4" (latency, bw, bibw use ranks
#               0 and 1; mbw_mr pairs the halves; md uses all)
#   -T LIST     tests, default "latency bw bibw mbw_mr md"
#   -s LIST     systems, default: every one available of glex mpich openmpi
#   -m MIN:MAX  message sizes, default 1:4194304
#   -M ARGS     glex-md's arguments, default "-s 200"
#   -r N        runs of each, default 3 (the median is reported)
#   -t SEC      time limit of one run, default 600
#   -o DIR      output directory, default bench/results/<date>-p2p
#   -N          two hosts: network namespaces joined by a veth pair
#               (scripts/glex-netns.sh; root), half the ranks in each, every
#               system over that link (process counts must be even)
#   -h          this text
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
prefix= nps="2 4" tests="latency bw bibw mbw_mr md" systems= range=1:4194304 mdargs="-s 200"
reps=3 limit=600 out= netns=
while getopts p:n:T:s:m:M:r:t:o:Nh opt; do
  case $opt in
    p) prefix=$OPTARG ;; n) nps=$OPTARG ;; T) tests=$OPTARG ;; s) systems=$OPTARG ;;
    m) range=$OPTARG ;; M) mdargs=$OPTARG ;; r) reps=$OPTARG ;; t) limit=$OPTARG ;;
    o) out=$OPTARG ;; N) netns=1 ;;
    h) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "p2p-sweep.sh: see -h" >&2; exit 2 ;;
  esac
done
if [ -z "$prefix" ] && [ -f config.status ]; then
  prefix=$(sed -n 's/^S\["prefix"\]="\(.*\)"$/\1/p' config.status)
fi
case $reps in ''|*[!0-9]*|0) echo "p2p-sweep.sh: -r '$reps': a number of runs from 1 up" >&2; exit 2 ;; esac
for t in $tests; do
  case $t in latency|bw|bibw|mbw_mr|md) ;;
    *) echo "p2p-sweep.sh: -T: unknown test '$t' (allowed latency bw bibw mbw_mr md)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] && [ -x "$prefix/bin/mpicc" ] || {
  echo "p2p-sweep.sh: no mpicc under '$prefix' (pass -p PREFIX of our MPICH install)" >&2; exit 2; }
[ -n "$out" ] || out=$src/bench/results/$(date +%Y-%m-%d)-p2p
mkdir -p "$out/bin"

build() { # name mpicc
  "$2" -O2 -std=c11 -Wall -Wextra -o "$out/bin/glex-osu-p2p-$1" "$src/bench/glex_osu_p2p.c" \
    2>"$out/bin/$1.log" &&
  "$2" -O2 -std=c11 -Wall -Wextra -o "$out/bin/glex-md-$1" "$src/bench/glex_md.c" -lm \
    2>>"$out/bin/$1.log"
}
build glex "$prefix/bin/mpicc" || { cat "$out/bin/glex.log"; exit 1; }
avail=glex
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null && build mpich mpicc.mpich; then
  avail="$avail mpich"
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null && build openmpi mpicc.openmpi; then
  avail="$avail openmpi"
fi
[ -n "$systems" ] || systems=$avail

if [ -n "$netns" ]; then
  for np in $nps; do
    [ $((np % 2)) = 0 ] || { echo "p2p-sweep.sh: -N: process count $np is odd (half on each host)" >&2; exit 2; }
  done
  nsname=glexP$$
  sh "$src/scripts/glex-netns.sh" up "$nsname" "$out" || exit 1
  trap 'sh "$src/scripts/glex-netns.sh" down "$nsname"' EXIT
fi
csv=$out/p2p.csv mdcsv=$out/md.csv
echo "system,test,np,size,value" > "$csv"
echo "system,np,run,time_s,comm_s,allreduce_s,energy" > "$mdcsv"
ncpu=$(nproc)
launcher() { # system np -> the command that starts np processes
  ns= hy=
  if [ -n "$netns" ]; then # as bench/osu-sweep.sh -N
    ns="ip netns exec $nsname-a"
    hy="-launcher ssh -launcher-exec $out/launch.sh -iface glexv0 -hosts 10.77.0.1,10.77.0.2 \
      -ppn $(($2 / 2)) -genv FI_TCP_IFACE glexv0"
  fi
  case $1 in
    glex) echo "$ns $prefix/bin/mpiexec $hy -n $2" ;;
    # Debian's MPICH is ch4:ucx: only UCX's tcp (its shared memory reaches across namespaces)
    mpich) [ -n "$netns" ] && hy="$hy -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES glexv0"
      echo "$ns mpiexec.mpich $hy -n $2" ;;
    openmpi)
      os=; [ "$2" -gt "$ncpu" ] && os=--oversubscribe
      [ -n "$netns" ] && os="$os --mca plm_rsh_agent $out/launch.sh \
        --host 10.77.0.1:$(($2 / 2)),10.77.0.2:$(($2 / 2)) --mca btl self,vader,tcp \
        --mca btl_tcp_if_include glexv0 --mca oob_tcp_if_include glexv0 --mca mpi_yield_when_idle 1"
      echo "$ns env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi $os -n $2" ;;
  esac
}
for np in $nps; do
  for t in $tests; do
    [ "$t" = mbw_mr ] && [ $((np % 2)) = 1 ] && continue
    for rep in $(seq "$reps"); do
      for sys in $systems; do
        case " $avail " in *" $sys "*) ;; *) echo "# $sys: not available, skipped"; continue ;; esac
        run="$sys $t np=$np run $rep"
        t0=$(date +%s)
        if [ "$t" = md ]; then
          # shellcheck disable=SC2086
          timeout "$limit" $(launcher "$sys" "$np") "$out/bin/glex-md-$sys" $mdargs \
            > "$out/run.tmp" 2> "$out/run.err"; rc=$?
          line=$(grep "^time " "$out/run.tmp")
          energy=$(grep "^step " "$out/run.tmp" | tail -1 | awk '{ print $6 }')
          [ -n "$line" ] && echo "$line" | awk -v s="$sys" -v n="$np" -v r="$rep" -v e="$energy" \
            '{ print s "," n "," r "," $2 "," $5 "," $8 "," e }' >> "$mdcsv"
        else
          # shellcheck disable=SC2086
          timeout "$limit" $(launcher "$sys" "$np") "$out/bin/glex-osu-p2p-$sys" -t "$t" \
            -m "$range" -v --csv "$sys" > "$out/run.tmp" 2> "$out/run.err"; rc=$?
          grep "^$sys,$t,$np,[0-9]*,[0-9.]*$" "$out/run.tmp" >> "$csv"
          grep -q "every received buffer right" "$out/run.tmp" || [ $rc != 0 ] || rc=99
        fi
        if [ $rc = 0 ]; then
          echo "# $run: $(( $(date +%s) - t0 )) s"
        else
          echo "# $run: FAILED (exit $rc; 124 = over ${limit} s, 99 = a buffer wrong)"
          tail -3 "$out/run.err"
        fi
      done
    done
  done
done
rm -f "$out/run.tmp" "$out/run.err"
echo "# CSV: $csv $mdcsv"
python3 "$here/p2p-report.py" "$out"
