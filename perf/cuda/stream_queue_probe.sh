#!/usr/bin/env bash
# Is the graph hang of ranks as threads on one GPU (docs/gpu.md, "Still open") the hardware-queue
# aliasing of stream-memop waits? For the next lent GPU machine; ~3 minutes, every step bounded.
# CUDA_DEVICE_MAX_CONNECTIONS sets how many hardware queues a context's streams share:
#   1  - every stream of the process on one queue: a rank's barrier wait then blocks its peers'
#        signals behind it, so thread ranks should hang every time (processes not: a context each);
#   32 - the most queues: if aliasing is the cause, the graph test should stop hanging;
#   unset (8) - the baseline rate (2 hangs in ~45 runs on the H200 of 2026-11-25).
# Binaries from perf/cuda/pack_for_gpu.sh (BIN, default build-gpu/carry); logs to OUT. RUNS (default 40)
# graph runs of each kind, fewer once the epoch second UNTIL (if set) has passed.
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
# The graph test with 32 hardware queues and with the default, alternately (so that a lease's
# time cut short shares out alike), RUNS times each: prints the hangs and failures of each.
declare -A hung failed
graph_run() {  # label, with the environment already set
  timeout -k 2 10 "$BIN/tccl_gpu_tests" --gtest_filter='GpuStreams.*:GpuGraphs.*' > "$OUT/$1.last.log" 2>&1
  case $? in 0) ;; 124|137) hung[$1]=$((${hung[$1]:-0} + 1)); cp "$OUT/$1.last.log" "$OUT/$1.hung.log" ;;
    *) failed[$1]=$((${failed[$1]:-0} + 1)); cp "$OUT/$1.last.log" "$OUT/$1.failed.log" ;; esac
}
echo "== one hardware queue"
CUDA_DEVICE_MAX_CONNECTIONS=1 once threads2_q1 20 "$BIN/tccl_gpu_tests" --gtest_filter='N/GpuThreadRanks.*/1'
CUDA_DEVICE_MAX_CONNECTIONS=1 once processes2_q1 30 "$BIN/tessera-run" -n 2 "$BIN/tccl_gpu_process_tests"
RUNS=${RUNS:-40}
echo "== the graph test, up to $RUNS runs each"
runs=0
for k in $(seq 1 "$RUNS"); do
  if [ -n "${UNTIL:-}" ] && [ "$(date +%s)" -ge "$UNTIL" ]; then break; fi
  CUDA_DEVICE_MAX_CONNECTIONS=32 graph_run graphs_q32
  graph_run graphs_default
  runs=$k
done
for label in graphs_q32 graphs_default; do
  echo "$label: $runs runs, ${hung[$label]:-0} hung, ${failed[$label]:-0} failed"
done
