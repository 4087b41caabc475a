#!/usr/bin/env bash
# Call 4 (host only, 16-core Xeon): the handover floor, the kernel bench, the 8-rank decision table,
# every all-reduce algorithm forced at 8 ranks for small sizes, and a few other forced choices.
cd "$(dirname "$0")/.."
t0=$(date +%s); H=build-ompi/bld
export LD_LIBRARY_PATH=$PWD/$H
P() { timeout 60 $H/tessera-run -n "$1" $H/perf/tessera-perf "${@:2}" -c 0 2>&1 | awk '$1 ~ /^[0-9]+$/ {printf " %s:%s", $1, $6} END {print ""}'; }
echo "== handover floor"; timeout 100 $H/handover_floor_probe
echo "== tuning, 8 ranks"; TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=TUNING timeout 60 $H/tessera-run -n 8 $H/perf/tessera-perf all_reduce -b 8 -e 8 -n 10 -w 1 2>&1 | grep -E "rank 0|machine model|all_reduce|      (8|64|512|4096|32768) B" | grep -v "^#" | head -40
S="-b 8 -e 32K -f 8 -n 3000 -w 300"
for round in 1 2; do
  echo "== round $round: all_reduce 8 ranks, forced (size:us out of place)"
  echo -n "auto   "; P 8 all_reduce $S
  for a in direct twoshot ring rdouble rhalving tree dbtree; do echo -n "$a "; TCCL_ALGO=all_reduce:$a P 8 all_reduce $S; done
  echo -n "auto spin200"; TCCL_SPIN_US=200 P 8 all_reduce $S
  for c in all_gather reduce_scatter; do
    echo -n "$c auto"; P 8 $c $S
    for a in direct ring; do echo -n "$c $a"; TCCL_ALGO=$c:$a P 8 $c $S; done
  done
  echo -n "broadcast 2 auto"; P 2 broadcast $S
  for a in direct tree chain; do echo -n "broadcast 2 $a"; TCCL_ALGO=broadcast:$a P 2 broadcast $S; done
  echo -n "broadcast 2 spin200"; TCCL_SPIN_US=200 P 2 broadcast $S
  echo -n "broadcast 8 auto"; P 8 broadcast $S
  for a in direct tree chain; do echo -n "broadcast 8 $a"; TCCL_ALGO=broadcast:$a P 8 broadcast $S; done
  echo "   at $(( $(date +%s) - t0 )) s"
done
echo "== kernel bench"; timeout 200 $H/perf/tccl-kernel-bench --benchmark_filter='memcpy|avx512' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/kernel_bench_xeon.txt 2>&1; echo "rc=$?"
grep -E "median" $OUT/kernel_bench_xeon.txt | grep -E "memcpy|float/sum|bfloat16/sum|double/sum" | awk '{print $1, $(NF-1), $NF}'
lscpu > $OUT/lscpu.txt
echo "done at $(( $(date +%s) - t0 )) s"
