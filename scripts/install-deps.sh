#!/usr/bin/env bash
# Installs the Debian 12 packages tccl needs to build, test and benchmark. Idempotent and
# non-interactive: does nothing when everything is present. Run as root (or with sudo available).
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config       # build
  libgtest-dev libgmock-dev              # tests
  libbenchmark-dev                       # kernel micro-benchmarks
  libhwloc-dev                           # topology (optional feature)
  libopenmpi-dev openmpi-bin             # mpirun launch and the Open MPI side-by-side benchmark
  iproute2                               # network-namespace multi-host tests (ip, tc)
  clang libclang-rt-14-dev               # libFuzzer targets (tests/fuzz, run by .ci/run)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
