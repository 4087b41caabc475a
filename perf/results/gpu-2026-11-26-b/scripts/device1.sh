#!/usr/bin/env bash
# Call 1 on the lent GPU machine of the second session of 2026-11-26 (binaries at 1ca0107, from
# perf/cuda/pack_for_gpu.sh): every gpu test, then the graph test and the changed GpuStreams test
# (9e3a0ec: copies after every rank's call, into pinned memory) many times over
# (perf/cuda/stream_queue_probe.sh, 32 hardware queues and the default alternately) until LIMIT.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); B=build-gpu/carry; LIMIT=${LIMIT:-230}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc; lscpu | grep -E "Model name|L3"
BIN=$B OUT=$OUT/gpu STEPS=tests perf/cuda/run_on_gpu.sh
echo "tests done at $(( $(date +%s) - t0 )) s"
BIN=$B OUT=$OUT/probe RUNS=200 UNTIL=$(( t0 + LIMIT - 15 )) perf/cuda/stream_queue_probe.sh
echo "all done at $(( $(date +%s) - t0 )) s"
cat $OUT/probe/*.failed.log $OUT/probe/*.hung.log 2>/dev/null | grep -E "Failure|FAILED|Expected|Which is|returned after" | head -20
cd $OUT && tar -czf logs.tgz gpu probe && rm -rf gpu probe; ls
