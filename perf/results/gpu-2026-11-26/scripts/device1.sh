#!/usr/bin/env bash
# Call 1 on the lent GPU machine of 2026-11-26 (afb6823): every gpu test and one device all-reduce,
# then tccl against Open MPI on host memory at 8, 4 and 2 ranks (each rank with a core of its own),
# then the hardware-queue probe of the graph hang (perf/cuda/stream_queue_probe.sh) in the time left.
# Binaries: build-gpu/carry (perf/cuda/pack_for_gpu.sh) and build-ompi/ (this VM's build/, stripped;
# build-ompi/setup_ompi.sh brings Debian's Open MPI where the machine has none). Every step is
# bounded so that the whole stays under LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); B=build-gpu/carry; H=build-ompi/bld; LIMIT=${LIMIT:-560}
el() { echo $(( $(date +%s) - t0 )); }
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|L3"; uname -r
BIN=$B OUT=$OUT/gpu STEPS=tests perf/cuda/run_on_gpu.sh
timeout 45 $B/tessera-run -n 2 $B/tessera-perf all_reduce -D 0 -b 8 -e 64M -f 8 -n 20 -w 5 > $OUT/gpu/perf_allreduce_2.log 2>&1
echo "device all-reduce, 2 ranks: rc=$?"; grep -E "^ +[0-9]+ |Bytes-moved" $OUT/gpu/perf_allreduce_2.log
echo "gpu done at $(el) s"
if ! command -v mpirun >/dev/null; then source build-ompi/setup_ompi.sh; fi
export LD_LIBRARY_PATH=$PWD/$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun: $(command -v mpirun), $(mpirun --version | head -1); libmpi: $(ldd $H/perf/mpi_peer_bench | grep libmpi)"
# The comparison gets what is left but 110 s (the probe's share); its tables print as each is done.
REPS=3 RESULTS=$OUT/cmp timeout $(( $(left) - 110 )) perf/compare_openmpi.sh $H "8 4 2" > $OUT/compare.txt 2>&1
echo "compare rc=$? at $(el) s"
BIN=$B OUT=$OUT/probe UNTIL=$(( t0 + LIMIT - 25 )) perf/cuda/stream_queue_probe.sh
echo "all done at $(el) s"
cd $OUT && tar -czf cmp_json.tgz cmp && rm -rf cmp && tar -czf logs.tgz gpu probe && rm -rf gpu probe; ls
