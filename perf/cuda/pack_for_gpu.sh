#!/usr/bin/env bash
# Builds the GPU tests and tessera-perf for sm_90 (Release) and copies them, stripped, into
# build-gpu/carry: small enough to travel to a lent GPU machine (see docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCCL_CUDA_ARCHITECTURES=90-real -DTCCL_ENABLE_MPI=OFF >/dev/null
cmake --build build-gpu --target tccl_gpu_tests tccl_gpu_process_tests tessera-perf tessera-run tccl-cuda-kernel-bench
mkdir -p build-gpu/carry
for f in tests/tccl_gpu_tests tests/tccl_gpu_process_tests perf/tessera-perf tessera-run perf/tccl-cuda-kernel-bench; do
  strip -o "build-gpu/carry/$(basename "$f")" "build-gpu/$f"
done
du -sh build-gpu/carry
