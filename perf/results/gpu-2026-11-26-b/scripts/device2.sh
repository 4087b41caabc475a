#!/usr/bin/env bash
# Call 2 on the lent machine (16 cores): the shorter software path for small calls (7dc9a4f) against
# the build before it (743c352) on host memory, Open MPI's peer beside them in every round
# (perf/ab_builds.sh, the order of the builds reversing every round), at 2 and 8 ranks, 8 B-4 KiB;
# then the process-rank tests at 2, 8 and 16 ranks and the thread-rank tests with the new build.
# Binaries: build-ompi/bld (new), build-ompi/old (old tessera-perf), build-ompi/t (tests), all
# stripped copies of this VM's RelWithDebInfo builds; Open MPI from build-ompi/setup_ompi.sh where
# the machine has none. Every step bounded; the whole within LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); LIMIT=${LIMIT:-330}
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
nproc; lscpu | grep -E "Model name|L3"
if ! command -v mpirun >/dev/null; then source build-ompi/setup_ompi.sh; fi
export LD_LIBRARY_PATH=$PWD/build-ompi/bld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun: $(mpirun --version | head -1)"
for n in 2 8; do
  echo "== $n ranks (at $(( $(date +%s) - t0 )) s)"
  N=$n MPI=1 BUILD=build-ompi/bld ROUNDS=${ROUNDS:-4} SIZES="-b 8 -e 4K -f 8 -n 20000 -w 200" OUT=$OUT/ab$n \
    timeout $(( $(left) / (n == 2 ? 3 : 2) )) perf/ab_builds.sh build-ompi/old/perf/tessera-perf build-ompi/bld/perf/tessera-perf
  echo "rc=$?"
done
echo "== tests (at $(( $(date +%s) - t0 )) s)"
for n in 2 8 16; do
  [ $(left) -gt 30 ] || break
  echo "process ranks $n: $(timeout 60 build-ompi/bld/tessera-run -n $n build-ompi/t/tccl_process_rank_tests 2>&1 | grep -E '^\[  (PASSED|FAILED)' | sort | uniq -c | tr '\n' ' ')"
done
[ $(left) -gt 25 ] && echo "thread ranks: $(timeout 60 build-ompi/t/tccl_thread_rank_tests 2>&1 | grep -E '^\[  (PASSED|FAILED)' | tr '\n' ' ')"
echo "all done at $(( $(date +%s) - t0 )) s"
cd $OUT && tar -czf ab_raw.tgz ab2 ab8 2>/dev/null && rm -rf ab2 ab8; ls
