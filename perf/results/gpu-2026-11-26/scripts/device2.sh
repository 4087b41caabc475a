#!/usr/bin/env bash
# Call 2 on the lent GPU machine of 2026-11-26, if device time is left after call 1: the host test
# suites with a core per rank (process ranks at 2, 3, 4, 8 and 16; thread ranks; faults), each
# step bounded so that the whole stays under LIMIT seconds. Binaries: build-ompi/t (this VM's
# build/tests, stripped).
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); H=build-ompi/bld; T=build-ompi/t; LIMIT=${LIMIT:-170}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
# The fault tests start their helper from the build tree they were built in.
mkdir -p /work/main/build/tests && cp $T/fault_rank /work/main/build/tests/fault_rank
export LD_LIBRARY_PATH=$PWD/$H  # fault_rank links libtccl.so
mkdir -p $OUT/tests
step() {  # name secs command...
  local name=$1 secs=$2; shift 2; local s=$(date +%s)
  [ $(left) -gt $((secs / 2)) ] || { echo "$name: skipped, $(left) s left"; return; }
  [ $secs -gt $(left) ] && secs=$(left)
  timeout -k 5 $secs "$@" > $OUT/tests/$name.log 2>&1; local rc=$?
  printf '%-16s rc=%-3d %4ss  %s\n' $name $rc $(( $(date +%s) - s )) "$(grep -E '^\[  (PASSED|FAILED) ' $OUT/tests/$name.log | tr '\n' ' ' | cut -c1-160)"
}
for n in 2 3 4 8 16; do step process_$n 40 $H/tessera-run -n $n $T/tccl_process_rank_tests; done
step thread_ranks 80 $T/tccl_thread_rank_tests
step faults 60 $T/tccl_fault_tests --gtest_filter='-*AcrossHosts*'
cd $OUT && tar -czf tests.tgz tests && rm -rf tests; ls
