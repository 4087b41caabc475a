#!/usr/bin/env bash
# Call 3: the mended graph test (5 runs), every gpu test once more, then tccl against Open MPI on host memory.
cd "$(dirname "$0")/.."
t0=$(date +%s); B=build-gpu/carry
for i in 1 2 3 4 5; do
  timeout 30 $B/tccl_gpu_tests --gtest_filter='GpuGraphs.*' > $OUT/graph_$i.log 2>&1; echo "graph run $i: rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/graph_$i.log)"
done
cat $OUT/graph_*.log > $OUT/graphs.txt; rm $OUT/graph_*.log
BIN=$B OUT=$OUT/gpu STEPS=tests perf/cuda/run_on_gpu.sh
echo "gpu tests done at $(( $(date +%s) - t0 )) s"
if ! command -v mpirun >/dev/null; then source build-ompi/setup_ompi.sh; fi
export LD_LIBRARY_PATH=$PWD/build-ompi/bld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun: $(command -v mpirun), $(mpirun --version | head -1); libmpi: $(ldd build-ompi/bld/perf/mpi_peer_bench | grep libmpi)"
lscpu | grep -E "Model name|^CPU\(s\)|L3"
REPS=3 RESULTS=$OUT/cmp timeout $(( 570 - ($(date +%s) - t0) )) perf/compare_openmpi.sh build-ompi/bld "2 4 8" > $OUT/compare.txt 2>&1
echo "compare rc=$? at $(( $(date +%s) - t0 )) s"
cd $OUT && tar -czf cmp_json.tgz cmp && rm -rf cmp && tar -czf gpu.tgz gpu && rm -rf gpu; ls
