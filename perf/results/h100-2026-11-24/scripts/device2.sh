#!/usr/bin/env bash
# Call 2: why GpuGraphs hangs (log + host stacks), the other gpu_misc tests one by one, the MPS perf, the kernel bench.
cd "$(dirname "$0")/.."
t0=$(date +%s); B=build-gpu/carry
run_one() {  # name secs filter
  TCCL_TEST_VERBOSE=1 TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=ALL $B/tccl_gpu_tests --gtest_filter="$3" > $OUT/$1.log 2>&1 &
  local pid=$! i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt $2 ]; do sleep 1; i=$((i+1)); done
  if kill -0 $pid 2>/dev/null; then
    echo "$1: still running after $2 s; stacks:"
    timeout 60 cuda-gdb -batch -p $pid -ex "info threads" -ex "thread apply all bt 30" > $OUT/$1_bt.txt 2>&1
    kill -9 $pid; wait $pid 2>/dev/null
  else wait $pid; echo "$1: rc=$?"; fi
  grep -E "^\[  (PASSED|FAILED)|OK \]|FAILED \]" $OUT/$1.log | head
}
run_one graphs 25 'GpuGraphs.*'
run_one graphs_again 25 'GpuGraphs.*'
run_one faults 40 'GpuFaults.*'
run_one api 20 'GpuApi.*:GpuStreams.*'
echo "diag done at $(( $(date +%s) - t0 )) s"
timeout 60 $B/tccl-cuda-kernel-bench 64 > $OUT/kernel_bench.txt 2>&1; echo "kernel bench rc=$? at $(( $(date +%s) - t0 )) s"
BIN=$B OUT=$OUT/mps STEPS=perf timeout $(( 560 - ($(date +%s) - t0) )) perf/cuda/run_with_mps.sh
echo "all done at $(( $(date +%s) - t0 )) s"
cd $OUT && tar -czf diag.tgz *.log *.txt mps 2>/dev/null && rm -rf *.log *.txt mps; ls
