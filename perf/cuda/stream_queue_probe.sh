#!/usr/bin/env bash
# Is the graph hang of ranks as threads on one GPU (docs/gpu.md, "Still open") the hardware-queue
# aliasing of stream-memop waits? For the next lent GPU machine; ~3 minutes, every step bounded.
# CUDA_DEVICE_MAX_CONNECTIONS sets how many hardware queues a context's streams share:
#   1  - every stream of the process on one queue: a rank's barrier wait then blocks its peers'
#        signals behind it, so thread ranks should hang every time (processes not: a context each);
#   32 - the most queues: if aliasing is the cause, the graph test should stop hanging;
#   unset (8) - the baseline rate (2 hangs in ~45 runs on the H200 of 2026-11-25).
# Binaries from perf/cuda/pack_for_gpu.sh (BIN, default build-gpu/carry); logs to OUT.
set -uo pipefail
BIN=${BIN:-build-gpu/carry}
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
once() {  # label seconds command... : prints "label: passed|failed rc|hung"
  local label=$1 secs=$2; shift 2
  timeout -k 2 "$secs" "$@" > "$OUT/$label.log" 2>&1
  local rc=$?
  case $rc in 0) echo "$label: passed" ;; 124|137) echo "$label: hung (killed after $secs s)" ;; *) echo "$label: failed rc=$rc" ;; esac
}
loop() {  # label runs seconds-each filter, with the environment already set
  local label=$1 runs=$2 secs=$3 filter=$4 hung=0 failed=0 k
  for k in $(seq 1 "$runs"); do
    timeout -k 2 "$secs" "$BIN/tccl_gpu_tests" --gtest_filter="$filter" > "$OUT/$label.last.log" 2>&1
    case $? in 0) ;; 124|137) hung=$((hung + 1)); cp "$OUT/$label.last.log" "$OUT/$label.hung.log" ;; *) failed=$((failed + 1)) ;; esac
  done
  echo "$label: $runs runs, $hung hung, $failed failed"
}
echo "== one hardware queue"
CUDA_DEVICE_MAX_CONNECTIONS=1 once threads2_q1 20 "$BIN/tccl_gpu_tests" --gtest_filter='N/GpuThreadRanks.*/1'
CUDA_DEVICE_MAX_CONNECTIONS=1 once processes2_q1 30 "$BIN/tessera-run" -n 2 "$BIN/tccl_gpu_process_tests"
echo "== the graph test, 40 runs each"
CUDA_DEVICE_MAX_CONNECTIONS=32 loop graphs_q32 40 10 'GpuStreams.*:GpuGraphs.*'
loop graphs_default 40 10 'GpuStreams.*:GpuGraphs.*'
