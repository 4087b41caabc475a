#!/bin/bash
# Sanitizer builds of the multi-rank tests, run by .ci/run after the README test command:
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer at every exit): ranks as
#         threads (every suite at N = 1, 2, 3, 5, 8, three of them at 4 in place of 8; the stores
#         past the cache with a 4 MiB cache assumed), the soak (3000 random collectives,
#         leak-checked), the fault-injection scenarios (processes) and ranks as processes under
#         tessera-run.
#         The unit tests, each in its own process as ctest runs them: what runs at exit runs after
#         that one test (the store's exit handler once read the parameters after their destruction,
#         a crash at exit in one run of seven, and an ASan report in every run); a communicator
#         destroyed from a static object's destructor and one left alive at exit (tests/exit/).
#   tsan: ThreadSanitizer: the automatic-selection sweep for N = 1..5 and 8, mixed shm+TCP, the fault
#         tests with threads (abort from another thread, timeouts, mismatches), a short soak.
# Large sweep counts shrink under sanitizers (TCCL_TEST_SWEEP=quick) to keep CI well inside 30 min.
#   tests/run_sanitizers.sh [asan|tsan|all]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-all}
export TCCL_TEST_SWEEP=quick
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# Each section's header says when it started (seconds into this script), so CI's log shows where
# the time goes.
section() { echo "== $* (at ${SECONDS} s)"; }

build() {  # build <dir> <sanitizers> <targets...>
  local dir=$1 san=$2
  mkdir -p "$dir"
  shift 2
  # -g1: line tables only, all a sanitizer's report needs for file:line; the full debug information
  # of the default (-g) made the ASan build 4.8 min against 3.6 on a Zen 5 VM.
  cmake -S "$src" -B "$dir" -G Ninja -DTCCL_SANITIZE="$san" -DTCCL_ENABLE_MPI=OFF -DTCCL_ENABLE_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" > "$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  cmake --build "$dir" --target "$@"
}

if [ "$which" = asan ] || [ "$which" = all ]; then
  b=$src/build-asan
  build "$b" address,undefined tccl_thread_rank_tests tccl_soak_test tccl_fault_tests fault_rank \
    tccl_process_rank_tests tessera-run tccl_unit_tests static_comm_rank
  section "asan: unit tests, one process each"
  "$b/tests/tccl_unit_tests" --gtest_list_tests | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' |
    xargs -P 2 -I{} sh -c 'log=$(mktemp); "$1" --gtest_brief=1 --gtest_filter="$2" > "$log" 2>&1 ||
      { echo "FAILED under ASan: $2"; cat "$log"; rm -f "$log"; exit 1; }; rm -f "$log"' sh "$b/tests/tccl_unit_tests" {}
  section "asan: a communicator destroyed after main returns, and one never destroyed"
  "$b/tessera-run" -n 3 "$b/tests/static_comm_rank"
  "$b/tessera-run" -n 3 "$b/tests/static_comm_rank" --never-destroyed
  # Rank counts 1, 2, 3, 5 and 8 (powers of two and not); the run-level ring and chain test is
  # left to the uninstrumented suite, every algorithm forced at run level covers them here. Three
  # sweeps that force algorithms again (the canonical ones, tiny slices and rings, single copy) run
  # at 4 ranks in place of 8: 8 threads on 2 cores took 65 of the section's 206 s on a Zen 5 VM,
  # and every algorithm forced and automatic selection still run at 8.
  resweeps_at() { echo "N/ThreadRanks.ForcedCanonicalAlgorithms/$1:N/ThreadRanks.TinySlicesAndRings/$1:N/ThreadRanks.SingleCopyEveryAlgorithm/$1"; }
  section "asan: ranks as threads"; "$b/tests/tccl_thread_rank_tests" --gtest_brief=1 \
    --gtest_filter="-N/ThreadRanks.*/4:N/ThreadRanks.*/7:N/ThreadRanks.RunLevelRingAndChain/*:ThreadRanksStreaming.*:$(resweeps_at 8)"
  section "asan: ranks as threads, the three sweeps at 4 ranks"; "$b/tests/tccl_thread_rank_tests" --gtest_brief=1 \
    --gtest_filter="$(resweeps_at 4)"
  # The stores past the cache with a 4 MiB cache assumed (TCCL_CACHE_BYTES): its buffers sized from
  # the 32 MiB the VM reports took 27 s under ASan; the test's sizes follow the cache, and it can
  # pass only if the library takes the size set.
  section "asan: stores past the cache"; TCCL_CACHE_BYTES=4194304 "$b/tests/tccl_thread_rank_tests" \
    --gtest_brief=1 --gtest_filter='ThreadRanksStreaming.*'
  section "asan: soak"; TCCL_SOAK_OPS=3000 "$b/tests/tccl_soak_test" --gtest_brief=1
  section "asan: fault injection"; "$b/tests/tccl_fault_tests" --gtest_brief=1
  for n in 3 4; do
    section "asan: ranks as processes, N=$n"; "$b/tessera-run" -n $n "$b/tests/tccl_process_rank_tests" --gtest_brief=1
  done
fi
if [ "$which" = tsan ] || [ "$which" = all ]; then
  b=$src/build-tsan
  build "$b" thread tccl_thread_rank_tests tccl_soak_test
  section "tsan: ranks as threads"
  "$b/tests/tccl_thread_rank_tests" --gtest_brief=1 \
    --gtest_filter='Faults.*:N/ThreadRanks.AutomaticSelectionStrict/*:N/TcpThreadRanks.MixedShmAndTcp/*-N/ThreadRanks.*/7'
  section "tsan: soak"; TCCL_SOAK_OPS=300 "$b/tests/tccl_soak_test" --gtest_brief=1
fi
echo "sanitizers ($which): clean (${SECONDS} s)"
