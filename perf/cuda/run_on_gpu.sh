#!/usr/bin/env bash
# The GPU checks of issue #6 in one batch, for a lent GPU machine (see docs/gpu.md): the gpu tests
# (ranks as threads and as processes, one device), then tessera-perf on device buffers at 2 and 4
# ranks with the device memcpy rate measured in the same run. Binaries come from BIN (default
# build-gpu/carry, made by `perf/cuda/pack_for_gpu.sh`); logs go to OUT (default ./gpu-logs).
# Each step has its own time limit so that one hang cannot take the whole lease.
set -uo pipefail
BIN=${BIN:-build-gpu/carry}
OUT=${OUT:-gpu-logs}
STEPS=${STEPS:-tests perf}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step() {  # step NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s.%N)
  timeout -k 5 "$secs" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  printf '%-34s rc=%-3d %6.1fs  %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" \
    "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) |Out of bounds|Bytes-moved' "$OUT/$name.log" | tr '\n' ' ' | cut -c1-150)"
}
if [[ " $STEPS " == *" tests "* ]]; then
  step gpu_misc 60 "$BIN/tccl_gpu_tests" --gtest_filter='GpuApi.*:GpuStreams.*:GpuGraphs.*:GpuFaults.*'
  step gpu_kernels 150 "$BIN/tccl_gpu_tests" --gtest_filter='GpuKernels.*'
  step gpu_threads 200 "$BIN/tccl_gpu_tests" --gtest_filter='N/GpuThreadRanks.*'
  for n in 1 2 3 4; do
    step gpu_process_$n 90 "$BIN/tessera-run" -n $n "$BIN/tccl_gpu_process_tests"
  done
  step gpu_split_hosts_3 90 "$BIN/tessera-run" -n 3 "$BIN/tccl_gpu_process_tests" --split-hosts
  # Many pipelined staging rounds per call (64 KiB areas).
  step gpu_split_hosts_3_small 90 env TCCL_CUDA_AREA_BYTES=65536 "$BIN/tessera-run" -n 3 \
    "$BIN/tccl_gpu_process_tests" --split-hosts
  for f in "$OUT"/gpu_process_*.log "$OUT"/gpu_split_*.log; do echo "=== $(basename "$f")"; cat "$f"; done \
    > "$OUT/gpu_processes.txt"
  rm -f "$OUT"/gpu_process_*.log "$OUT"/gpu_split_*.log
fi
if [[ " $STEPS " == *" perf "* ]]; then
  for n in 2 4; do
    step perf_allreduce_$n 100 "$BIN/tessera-run" -n $n "$BIN/tessera-perf" all_reduce -D 0 -b 8 -e 256M -f 4 -n 20 -w 5
    for c in reduce_scatter all_gather broadcast alltoall; do
      step perf_${c}_$n 45 "$BIN/tessera-run" -n $n "$BIN/tessera-perf" $c -D 0 -b 1M -e 256M -f 16 -n 10 -w 3
    done
  done
  # Rounds: the same all-reduce with one round per call (256 MiB areas) and with many (4 MiB).
  for area in 268435456 4194304; do
    step perf_allreduce_2_area$area 100 env TCCL_CUDA_AREA_BYTES=$area "$BIN/tessera-run" -n 2 "$BIN/tessera-perf" \
      all_reduce -D 0 -b 1M -e 256M -f 16 -n 10 -w 3
  done
  # The perf logs travel back as one file (a lent machine returns at most 8 files).
  for f in "$OUT"/perf_*.log; do echo "=== $(basename "$f")"; cat "$f"; done > "$OUT/perf_all.txt"
  rm -f "$OUT"/perf_*.log
fi
