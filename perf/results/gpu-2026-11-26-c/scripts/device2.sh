#!/usr/bin/env bash
# Call 2 on the lent machine (16 cores): tccl (b4a1000) against Open MPI on host memory at 8, 2 and
# 4 ranks, every collective, median of 3 (perf/compare_openmpi.sh), each rank with a core of its
# own; the tables print as each rank count is done. Bounded by LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); LIMIT=${LIMIT:-420}; H=build-ompi/bld
export LD_LIBRARY_PATH=$PWD/$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun: $(mpirun --version | head -1)"
REPS=3 RESULTS=$OUT/cmp timeout $(( LIMIT - 10 )) perf/compare_openmpi.sh $H "8 2 4" > $OUT/compare.txt 2>&1
echo "compare rc=$? at $(( $(date +%s) - t0 )) s"
awk -F'|' '/^## /{t=$0} /^\| [0-9]/{r=$7; gsub(/[ x]/,"",r); n++; if (r+0<1.0) {b++; print substr(t,1,40), $0}} END {print n " cells, " b " below 1.0x"}' $OUT/compare.txt
cd $OUT && tar -czf cmp_json.tgz cmp && rm -rf cmp; ls
