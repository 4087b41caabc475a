#!/usr/bin/env bash
# Call 1 on the lent GPU machine of 2026-11-25 (an H200; d6fcf63): every gpu test, one device all-reduce,
# which way the shared-memory ring copies in where each rank has a core (broadcast at 2, 4 and 8
# ranks, the measured rule's log lines), then tccl against Open MPI on host memory at 8, 4 and 2
# ranks, then the host test suites with 16 cores if time is left. Binaries: build-gpu/carry
# (perf/cuda/pack_for_gpu.sh) and build-ompi/ (this VM's build/, stripped). Every step is bounded
# so that the whole stays under LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); B=build-gpu/carry; H=build-ompi/bld; T=build-ompi/t; LIMIT=${LIMIT:-575}
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
for n in 2 4 8; do
  echo "== broadcast, $n ranks, ring copy-in log (TCCL_DEBUG_SUBSYS=SHM)" >> $OUT/shm_log.txt
  TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=SHM timeout 40 $H/tessera-run -n $n $H/perf/tessera-perf broadcast \
    -b 256K -e 64M -f 4 -n 10 -w 2 -c 0 >> $OUT/shm_log.txt 2>&1
  echo "broadcast $n ranks: rc=$?, $(grep -c 'ring copy-in now' $OUT/shm_log.txt) way changes so far"
done
echo "shm log done at $(el) s"
REPS=3 RESULTS=$OUT/cmp timeout $(left) perf/compare_openmpi.sh $H "8 4 2" > $OUT/compare.txt 2>&1
echo "compare rc=$? at $(el) s"
mkdir -p /work/main/build/tests && cp $T/fault_rank /work/main/build/tests/fault_rank
step() {  # name secs command...
  local name=$1 secs=$2; shift 2; local s=$(date +%s)
  [ $(left) -gt $((secs / 2)) ] || { echo "$name: skipped, $(left) s left"; return; }
  [ $secs -gt $(left) ] && secs=$(left)
  timeout -k 5 $secs "$@" > $OUT/tests/$name.log 2>&1; local rc=$?
  printf '%-16s rc=%-3d %4ss  %s\n' $name $rc $(( $(date +%s) - s )) "$(grep -E '^\[  (PASSED|FAILED) ' $OUT/tests/$name.log | tr '\n' ' ' | cut -c1-160)"
}
mkdir -p $OUT/tests
for n in 2 3 4 8; do step process_$n 40 $H/tessera-run -n $n $T/tccl_process_rank_tests; done
step thread_ranks 120 $T/tccl_thread_rank_tests
step faults 60 $T/tccl_fault_tests --gtest_filter='-*AcrossHosts*'
echo "all done at $(el) s"
cd $OUT && tar -czf cmp_json.tgz cmp && rm -rf cmp && tar -czf logs.tgz gpu tests && rm -rf gpu tests; ls
