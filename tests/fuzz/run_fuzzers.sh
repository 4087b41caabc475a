#!/bin/bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and fuzzes each for a while, starting
# from the seed corpus in tests/fuzz/corpus/<target>/ (copied, so the repository is not modified).
# A crash, leak, sanitizer report or timeout fails the run and leaves the reproducer in the
# work directory it prints.
#   tests/fuzz/run_fuzzers.sh [build-dir] [seconds-per-target]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${1:-$src/build-fuzz}
secs=${2:-20}
mkdir -p "$bld"
targets="fuzz_store_protocol fuzz_tcp_hello fuzz_op_tag fuzz_config"
CC=clang CXX=clang++ cmake -S "$src" -B "$bld" -G Ninja -DTCCL_BUILD_FUZZERS=ON -DTCCL_ENABLE_CUDA=OFF \
  -DTCCL_SANITIZE=address,undefined -DTCCL_ENABLE_MPI=OFF -DTCCL_ENABLE_HWLOC=OFF > "$bld/configure.log" 2>&1 ||
  { cat "$bld/configure.log"; exit 1; }
cmake --build "$bld" --target $targets
for t in $targets; do
  work=$(mktemp -d /tmp/tccl-fuzz-$t.XXXXXX)
  cp "$src/tests/fuzz/corpus/$t/"* "$work/"
  echo "== $t: ${secs} s from $(ls "$work" | wc -l) seeds (work dir $work)"
  (cd "$work" && "$bld/tests/fuzz/$t" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
     -print_final_stats=1 "$work" 2>&1 | grep -E 'stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY|DONE' )
  rm -rf "$work"
done
echo "fuzzing: every target ran ${secs} s without a finding"
