#!/usr/bin/env bash
# Call 1 on the lent GPU machine of the third session of 2026-11-26 (16 cores of a Xeon, one H200):
# every gpu test at the build of this session's start (b4a1000; binaries from
# perf/cuda/pack_for_gpu.sh in build-gpu/carry), then, on host memory with a core per rank, the
# two changes of the last session alternated round by round with Open MPI's peer beside them
# (perf/ab_builds.sh): build-ompi/old (db7453e: the ring's slice in the direct algorithms, staged
# broadcast from 2 MiB), build-ompi/mid (79fdb0b: the direct slice rule, staged broadcast from
# 2 MiB) and build-ompi/bld (b4a1000: both), 8 ranks, 256 KiB-64 MiB. Every step bounded; the
# whole within LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); B=build-gpu/carry; H=build-ompi/bld; LIMIT=${LIMIT:-420}
el() { echo $(( $(date +%s) - t0 )); }
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc; lscpu | grep -E "Model name|L3"
BIN=$B OUT=$OUT/gpu STEPS=tests perf/cuda/run_on_gpu.sh
echo "gpu tests done at $(el) s"
if ! command -v mpirun >/dev/null; then echo "no mpirun on this machine"; fi
export LD_LIBRARY_PATH=$PWD/$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun: $(mpirun --version 2>&1 | head -1)"
N=8 MPI=1 BUILD=$H ROUNDS=${ROUNDS:-3} COLLS="all_reduce reduce_scatter reduce broadcast" \
  SIZES="-b 256K -e 64M -f 4 -n 10 -w 2" OUT=$OUT/ab8 timeout $(( $(left) - 10 )) \
  perf/ab_builds.sh build-ompi/old/perf/tessera-perf build-ompi/mid/perf/tessera-perf $H/perf/tessera-perf
echo "a/b rc=$? at $(el) s"
cd $OUT && tar -czf logs.tgz gpu ab8 && rm -rf gpu ab8; ls
