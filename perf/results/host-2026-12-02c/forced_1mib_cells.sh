#!/usr/bin/env bash
# Alternated forced-algorithm rounds for a few cells (this session's look at cells below 1.0x).
# usage: forced.sh ROUNDS   (run from /work/main, nothing else running)
cd /work/main
R=${1:-4}
b=build
run() { # label n coll env... -- extra flags
  local label=$1 n=$2 coll=$3; shift 3
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t
  t=$(env "${envs[@]}" $b/tessera-run -n $n $b/perf/tessera-perf $coll -b 1M -e 1M -n 100 -w 20 -c 0 "$@" 2>&1 | awk '$1==1048576{print $6" "$(NF-4)}')
  echo "$label n=$n $coll: $t"
}
mpi() { local n=$1 coll=$2; echo "openmpi n=$n $coll: $(mpirun --allow-run-as-root --oversubscribe --bind-to none -np $n $b/perf/mpi_peer_bench $coll -b 1M -e 1M -n 100 -w 20 2>&1 | awk '$1==1048576{print $2}')"; }
source perf/vm_state.sh; probe=$(vm_state_probe "$(mktemp -d)")
for r in $(seq $R); do
  echo "== round $r $(date -u +%T) state $(vm_state "$probe")"
  for a in default broadcast:chain broadcast:tree broadcast:direct broadcast:staged; do
    e=X=1; [ $a != default ] && e=TCCL_ALGO=$a
    run $a 8 broadcast $e --
  done
  mpi 8 broadcast
  for a in default alltoall:direct alltoall:pairwise; do
    e=X=1; [ $a != default ] && e=TCCL_ALGO=$a
    run $a 8 alltoall $e --
  done
  run cache32M 8 alltoall TCCL_CACHE_BYTES=33554432 --
  mpi 8 alltoall
  run default 4 alltoall X=1 --
  run restart1 4 alltoall TCCL_SHM_RING_RESTART=1 --
  run cache32M 4 alltoall TCCL_CACHE_BYTES=33554432 --
  mpi 4 alltoall
done
