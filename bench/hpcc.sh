#!/bin/sh
# hpcc.sh - a real application over every system at hand: the HPC Challenge
# benchmark (HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT, ping-pong and
# ring latency/bandwidth; each part checks its own result) built from its
# source with each system's mpicc and run with the systems taking turns.
# Writes hpcc.csv (one row per run and metric), each run's hpccoutf.txt and
# summary.md (median per metric, whether every check passed).
#
# usage: bench/hpcc.sh [options]
#   -p PREFIX   our MPICH install (bin/mpicc, bin/mpiexec), default: the
#               configure prefix of the build directory you run it from
#   -T TARBALL  hpcc-1.5.0.tar.gz (or Debian's hpcc_1.5.0.orig.tar.gz);
#               default: fetched with 'apt-get source --download-only hpcc'
#               (deb-src lines enabled, as scripts/get-mpich-source.sh does)
#   -n LIST     process counts, default "4" (HPL's grid: the most nearly
#               square P x Q = NP, P <= Q)
#   -N SIZE     HPL's and PTRANS's matrix order, default 2000 (1000..20000)
#   -s LIST     systems, default: every one available of glex mpich openmpi
#   -r N        runs of each, default 3 (the median is reported)
#   -t SEC      time limit of one run, default 900
#   -o DIR      output directory, default bench/results/<date>-hpcc
#   -h          this text
# HPL uses the reference BLAS (-lblas); the two MPI-1 calls removed in MPI-3
# (MPI_Address, MPI_Type_struct) are renamed to their MPI-2 forms in every
# build alike, as Open MPI 4's mpi.h refuses them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
prefix= tarball= nps=4 order=2000 systems= reps=3 limit=900 out=
while getopts p:T:n:N:s:r:t:o:h opt; do
  case $opt in
    p) prefix=$OPTARG ;; T) tarball=$OPTARG ;; n) nps=$OPTARG ;; N) order=$OPTARG ;;
    s) systems=$OPTARG ;; r) reps=$OPTARG ;; t) limit=$OPTARG ;; o) out=$OPTARG ;;
    h) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hpcc.sh: see -h" >&2; exit 2 ;;
  esac
done
die() { echo "hpcc.sh: $*" >&2; exit 2; }
if [ -z "$prefix" ] && [ -f config.status ]; then
  prefix=$(sed -n 's/^S\["prefix"\]="\(.*\)"$/\1/p' config.status)
fi
case $reps in ''|*[!0-9]*|0) die "-r '$reps': a number of runs from 1 up" ;; esac
case $order in ''|*[!0-9]*) die "-N '$order': a matrix order 1000..20000" ;; esac
[ "$order" -ge 1000 ] && [ "$order" -le 20000 ] || die "-N $order: allowed range 1000..20000"
for np in $nps; do
  case $np in ''|*[!0-9]*|0|1) die "-n: process count '$np' (allowed 2 up)" ;; esac
done
for sy in $systems; do
  case $sy in glex|mpich|openmpi) ;; *) die "-s: unknown system '$sy' (allowed glex mpich openmpi)" ;; esac
done
[ -n "$prefix" ] && [ -x "$prefix/bin/mpicc" ] || die "no mpicc under '$prefix' (pass -p PREFIX)"
[ -n "$out" ] || out=$src/bench/results/$(date +%Y-%m-%d)-hpcc
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "$tarball" ]; then
  mkdir -p "$out/src"
  (cd "$out/src" && apt-get source --download-only hpcc >/dev/null 2>&1)
  tarball=$(ls "$out"/src/hpcc_*.orig.tar.* 2>/dev/null | head -1)
  [ -n "$tarball" ] || die "apt-get source --download-only hpcc gave no tarball (deb-src lines \
enabled? scripts/get-mpich-source.sh adds them); pass -T hpcc-1.5.0.tar.gz"
fi
[ -f "$tarball" ] || die "-T '$tarball': no such file"

build() { # name mpicc
  d=$out/build-$1
  rm -rf "$d" && mkdir -p "$d" && tar xf "$tarball" -C "$d" --strip-components=1 || return 1
  grep -rlE 'MPI_Address|MPI_Type_struct' --include='*.c' "$d" | xargs -r sed -i \
    's/MPI_Address\b/MPI_Get_address/g; s/MPI_Type_struct\b/MPI_Type_create_struct/g'
  cat > "$d/hpl/Make.bench" <<EOF
SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir
RM = /bin/rm -f
TOUCH = touch
ARCH = bench
TOPdir = ../../..
INCdir = \$(TOPdir)/include
BINdir = \$(TOPdir)/bin/\$(ARCH)
LIBdir = \$(TOPdir)/lib/\$(ARCH)
HPLlib = \$(LIBdir)/libhpl.a
LAlib = -lblas
F2CDEFS = -DAdd_ -DF77_INTEGER=int -DStringSunStyle
HPL_INCLUDES = -I\$(INCdir) -I\$(INCdir)/\$(ARCH)
HPL_LIBS = \$(HPLlib) \$(LAlib) -lm
HPL_DEFS = \$(F2CDEFS) \$(HPL_INCLUDES)
CC = $2
CCNOOPT = \$(HPL_DEFS)
CCFLAGS = \$(HPL_DEFS) -O2 -fcommon
LINKER = $2
LINKFLAGS = -O2
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
EOF
  (cd "$d" && make arch=bench -j2 >"$out/build-$1.log" 2>&1) && [ -x "$d/hpcc" ]
}
wanted() { [ -z "$systems" ] || case " $systems " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
avail=
if wanted glex; then
  build glex "$prefix/bin/mpicc" || { tail -20 "$out/build-glex.log"; die "building hpcc with our mpicc failed"; }
  avail=glex
fi
if wanted mpich && command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
   build mpich mpicc.mpich; then
  avail="$avail mpich"
fi
if wanted openmpi && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
   build openmpi mpicc.openmpi; then
  avail="$avail openmpi"
fi
[ -n "$systems" ] || systems=$avail

grid() { # np -> "P Q": P <= Q, P * Q = np, P as large as it goes
  p=1 i=1
  while [ $((i * i)) -le "$1" ]; do [ $(($1 % i)) = 0 ] && p=$i; i=$((i + 1)); done
  echo "$p $(($1 / p))"
}
input() { # np dir: hpccinf.txt for np processes
  set -- $(grid "$1") "$2"
  sed -e "6s/^[0-9]* /$order /" -e "11s/^[0-9]* /$1 /" -e "12s/^[0-9]* /$2 /" \
      "$out/build-$sys/_hpccinf.txt" > "$3/hpccinf.txt"
}
ncpu=$(nproc)
launcher() { # system np
  case $1 in
    glex) echo "$prefix/bin/mpiexec -n $2" ;;
    mpich) echo "mpiexec.mpich -n $2" ;;
    openmpi) os=; [ "$2" -gt "$ncpu" ] && os=--oversubscribe
      echo "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi $os -n $2" ;;
  esac
}
val() { sed -n "s/^$1=//p" "$f" 2>/dev/null | head -1; } # METRIC: its value in the run's $f
metrics="HPL_Tflops StarDGEMM_Gflops PTRANS_GBs MPIRandomAccess_GUPs MPIFFT_Gflops
  StarSTREAM_Triad AvgPingPongLatency_usec AvgPingPongBandwidth_GBytes
  RandomlyOrderedRingLatency_usec RandomlyOrderedRingBandwidth_GBytes"
csv=$out/hpcc.csv
echo "system,np,run,metric,value" > "$csv"
fails=0
for np in $nps; do
  for rep in $(seq "$reps"); do
    for sys in $systems; do
      case " $avail " in *" $sys "*) ;; *) echo "# $sys: not available, skipped"; continue ;; esac
      d=$out/run-$sys-np$np-$rep
      rm -rf "$d" && mkdir -p "$d" && input "$np" "$d"
      t0=$(date +%s)
      # shellcheck disable=SC2046
      (cd "$d" && timeout "$limit" $(launcher "$sys" "$np") "$out/build-$sys/hpcc" \
         >run.log 2>&1); rc=$?
      f=$d/hpccoutf.txt
      # every part's own check: HPL's residual, PTRANS's, RandomAccess's
      # errors (HPCC allows 1%), FFT's error
      ok=1
      [ $rc = 0 ] && [ -f "$f" ] || ok=0
      [ $ok = 1 ] && grep -q 'PASSED' "$f" && ! grep -q 'FAILED' "$f" || ok=0
      [ "$(val PTRANS_residual)" = 0 ] || ok=0
      awk -v e="$(val MPIRandomAccess_ErrorsFraction)" -v x="$(val MPIFFT_maxErr)" \
        'BEGIN { exit !(e != "" && e + 0 <= 0.01 && x != "" && x + 0 < 1e-10) }' || ok=0
      for m in $metrics; do
        v=$(val "$m"); [ -n "$v" ] && echo "$sys,$np,$rep,$m,$v" >> "$csv"
      done
      echo "$sys,$np,$rep,checks_passed,$ok" >> "$csv"
      if [ $ok = 1 ]; then
        echo "# $sys np=$np run $rep: $(( $(date +%s) - t0 )) s, every check passed"
      else
        fails=$((fails + 1))
        echo "# $sys np=$np run $rep: FAILED (exit $rc; 124 = over ${limit} s; $d)"
      fi
    done
  done
done
python3 - "$csv" "$out/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
systems = sorted({r["system"] for r in rows}, key=lambda s: ["glex", "mpich", "openmpi"].index(s)
                 if s in ("glex", "mpich", "openmpi") else 9)
with open(sys.argv[2], "w") as o:
    o.write("# HPCC, median of runs taken in turn\n\n")
    for np in sorted({int(r["np"]) for r in rows}):
        o.write(f"## {np} processes\n\n| metric | " + " | ".join(systems) + " |\n")
        o.write("|---|" + "---|" * len(systems) + "\n")
        metrics = []
        for r in rows:
            if int(r["np"]) == np and r["metric"] not in metrics:
                metrics.append(r["metric"])
        for m in metrics:
            cells = []
            for s in systems:
                v = [float(r["value"]) for r in rows
                     if r["system"] == s and int(r["np"]) == np and r["metric"] == m]
                if m == "checks_passed":
                    cells.append(f"{int(sum(v))} of {len(v)}" if v else "-")
                else:
                    cells.append(f"{statistics.median(v):.4g}" if v else "-")
            o.write(f"| {m} | " + " | ".join(cells) + " |\n")
        o.write("\n")
print(open(sys.argv[2]).read())
EOF
echo "# CSV: $csv"
[ "$fails" = 0 ]
