#!/usr/bin/env bash
# Calls 2-4 on the lent H200 of 2026-11-25, after gpu_misc hung in call 1 (device1.sh), as they
# were run (each one command line there): the misc tests alone with verbose logs, the misc filter five
# times, then GpuStreams + GpuGraphs in a loop with host stacks (cuda-gdb) of the first hang.
cd "$(dirname "$0")/../../../.."
B=build-gpu/carry
case "${1:-}" in
2) r(){ TCCL_TEST_VERBOSE=1 TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=ALL $B/tccl_gpu_tests --gtest_filter="$3" > $OUT/$1.log 2>&1 & p=$!; i=0
        while kill -0 $p 2>/dev/null && [ $i -lt $2 ]; do sleep 1; i=$((i+1)); done
        if kill -0 $p 2>/dev/null; then echo "$1: hung after $2 s"; timeout 50 cuda-gdb -batch -p $p -ex "info threads" -ex "thread apply all bt 25" > $OUT/$1_bt.txt 2>&1; kill -9 $p; wait $p 2>/dev/null
        else wait $p; echo "$1: rc=$?"; fi; grep -E "OK \]|FAILED \]" $OUT/$1.log | head -5; }
   r graphs1 20 'GpuGraphs.*'; r graphs2 15 'GpuGraphs.*'; r faults 30 'GpuFaults.*'; r api 15 'GpuApi.*' ;;
3) r(){ $B/tccl_gpu_tests --gtest_filter="$3" > $OUT/$1.log 2>&1 & p=$!; i=0
        while kill -0 $p 2>/dev/null && [ $i -lt $2 ]; do sleep 1; i=$((i+1)); done
        if kill -0 $p 2>/dev/null; then echo "$1: hung after $2 s"; timeout 60 cuda-gdb -batch -p $p -ex "info threads" -ex "thread apply all bt 25" > $OUT/$1_bt.txt 2>&1; kill -9 $p; wait $p 2>/dev/null; return 1
        else wait $p; echo "$1: rc=$?"; fi; grep -E "OK \]|FAILED \]" $OUT/$1.log | head -5; }
   for k in 1 2 3 4 5; do r misc$k 15 'GpuApi.*:GpuStreams.*:GpuGraphs.*:GpuFaults.*' || break; done ;;
4) t0=$(date +%s); k=0
   while [ $(( $(date +%s) - t0 )) -lt 100 ]; do
     k=$((k+1)); $B/tccl_gpu_tests --gtest_filter='GpuStreams.*:GpuGraphs.*' > $OUT/run.log 2>&1 & p=$!; i=0
     while kill -0 $p 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i+1)); done
     if kill -0 $p 2>/dev/null; then
       echo "run $k: hung"; timeout 60 cuda-gdb -batch -p $p -ex "info threads" -ex "thread apply all bt 25" > $OUT/hang_bt.txt 2>&1
       kill -9 $p; wait $p 2>/dev/null; cp $OUT/run.log $OUT/hang_run.log; break
     else wait $p; rc=$?; [ $rc = 0 ] || { echo "run $k rc=$rc"; cp $OUT/run.log $OUT/fail_$k.log; }; fi
   done; echo "$k runs in $(( $(date +%s) - t0 )) s" ;;
*) echo "usage: $0 2|3|4" >&2; exit 2 ;;
esac
