#!/usr/bin/env bash
# Call 1: the gpu tests, an Open MPI sanity check, the no-MPS GPU perf (bounded).
cd "$(dirname "$0")/.."
t0=$(date +%s)
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|NUMA node\(s\)|L3"; uname -r
BIN=build-gpu/carry OUT=$OUT/gpu STEPS=tests perf/cuda/run_on_gpu.sh
echo "tests done at $(( $(date +%s) - t0 )) s"
( source build-ompi/setup_ompi.sh; mpirun --version | head -1
  timeout 60 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 build-ompi/bld/perf/mpi_peer_bench all_reduce -b 8 -e 1M -f 64 -n 1000 -w 100
  timeout 60 build-ompi/bld/tessera-run -n 2 build-ompi/bld/perf/tessera-perf all_reduce -b 8 -e 1M -f 64 -n 1000 -w 100 -c 0
) 2>&1 | tail -30
echo "ompi check done at $(( $(date +%s) - t0 )) s"
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && BIN=build-gpu/carry OUT=$OUT/gpu STEPS=perf timeout $left perf/cuda/run_on_gpu.sh
echo "all done at $(( $(date +%s) - t0 )) s"
cd $OUT && tar -czf gpu_logs.tgz gpu && rm -rf gpu
