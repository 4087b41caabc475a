#!/usr/bin/env bash
# Call 5 (host only, 16 cores): the host test suites with real parallelism, and the kernel bench.
cd "$(dirname "$0")/.."
t0=$(date +%s); H=$PWD/build-ompi/bld; T=$PWD/build-ompi/t
export LD_LIBRARY_PATH=$H
mkdir -p /work/main/build/tests && cp $T/fault_rank /work/main/build/tests/fault_rank
step() {  # name secs command...
  local name=$1 secs=$2; shift 2; local s=$(date +%s)
  timeout -k 5 $secs "$@" > $OUT/logs/$name.log 2>&1; local rc=$?
  printf '%-24s rc=%-3d %4ss  %s\n' $name $rc $(( $(date +%s) - s )) "$(grep -E '^\[  (PASSED|FAILED) |tests? (passed|failed)|^\[  FAILED  \] [A-Z]' $OUT/logs/$name.log | head -4 | tr '\n' ' ' | cut -c1-200)"
}
mkdir -p $OUT/logs
step unit 120 $T/tccl_unit_tests
step thread_ranks 240 $T/tccl_thread_rank_tests
for n in 1 2 3 4 5 6 7 8; do step process_$n 60 $H/tessera-run -n $n $T/tccl_process_rank_tests; done
for n in 1 3 4 8; do step detcheck_$n 60 $H/tessera-run -n $n $T/tccl-detcheck --quick; done
step soak 90 $T/tccl_soak_test --gtest_also_run_disabled_tests
step faults 150 $T/tccl_fault_tests --gtest_also_run_disabled_tests --gtest_filter='-*AcrossHosts*'
echo "tests done at $(( $(date +%s) - t0 )) s"
timeout 150 $H/perf/tccl-kernel-bench --benchmark_filter='memcpy|avx512' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/kernel_bench_xeon.txt 2>&1; echo "kernel bench rc=$?"
echo "done at $(( $(date +%s) - t0 )) s"
cd $OUT && tar -czf logs.tgz logs && rm -rf logs
