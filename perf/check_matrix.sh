#!/usr/bin/env bash
# The foundation acceptance matrix: tessera-perf for every collective at N = 1,2,3,4,5,8 from 8 B
# to 4 MiB, for float, half, bfloat16, double, int32 and int8 with sum, and float with prod, max,
# min and avg. Every run must print "#wrong" 0 on every line and "Out of bounds values : 0 OK".
# One job checks a collective's six types (-d with a list), and a reducing collective's other
# operations take a second: 60 jobs, where one per type and operation took 324 (most of each
# small job's time was starting N ranks). Each job's table names the type and op of every line.
# Correctness only: no settle phase (-W 0), which would add 200 ms to each run.
#   check_matrix.sh <build-dir> [extra tessera-perf flags]
set -u
build=$1; shift
run=$build/tessera-run perf=$build/perf/tessera-perf
fail=0 runs=0
for n in 1 2 3 4 5 8; do
  for coll in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
    configs=("-d float,half,bfloat16,double,int32,int8 -o sum")
    case $coll in all_reduce|reduce_scatter|reduce) configs+=("-d float -o prod,max,min,avg");; esac
    for cfg in "${configs[@]}"; do
      runs=$((runs + 1))
      out=$(timeout 300 "$run" -n $n "$perf" $coll -b 8 -e 4M -f 2 -n 2 -w 1 -W 0 $cfg "$@" 2>&1)
      if ! grep -q "Out of bounds values : 0 OK" <<<"$out"; then
        fail=$((fail + 1)); echo "FAILED: N=$n $coll $cfg"; tail -5 <<<"$out"
      fi
    done
  done
  echo "N=$n done"
done
echo "check_matrix: $((runs - fail)) passed, $fail failed"
[ $fail = 0 ]
