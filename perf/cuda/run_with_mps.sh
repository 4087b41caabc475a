#!/usr/bin/env bash
# The same GPU checks with the CUDA MPS daemon running, so that the ranks' processes share the GPU
# concurrently instead of time-slicing (docs/gpu.md: without MPS every switch between two ranks'
# contexts costs ~150 us). Starts a private MPS daemon (no GPU setting is changed; it ends with
# the script), runs perf/cuda/run_on_gpu.sh under it, and stops it.
set -uo pipefail
export CUDA_MPS_PIPE_DIRECTORY=/tmp/tccl-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/tccl-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d || { echo "could not start the MPS daemon"; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
"$(dirname "$0")/run_on_gpu.sh"
