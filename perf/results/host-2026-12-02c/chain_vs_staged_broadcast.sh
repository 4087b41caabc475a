#!/usr/bin/env bash
# Chain against staged broadcast, 256 KiB-4 MiB at 4 and 8 ranks, alternated rounds (order swapped each round).
cd /work/main; b=build; R=${1:-6}
source perf/vm_state.sh; probe=$(vm_state_probe "$(mktemp -d)")
for r in $(seq $R); do
  echo "== round $r $(date -u +%T) state $(vm_state "$probe")"
  algos="chain staged"; [ $((r % 2)) = 0 ] && algos="staged chain"
  for n in 4 8; do for a in $algos; do
    TCCL_ALGO=broadcast:$a $b/tessera-run -n $n $b/perf/tessera-perf broadcast -b 256K -e 4M -f 2 -n 50 -w 10 -c 0 2>&1 | awk -v a=$a -v n=$n '$1 ~ /^[0-9]+$/ && NF > 10 {print a, "n=" n, $1, $6, $(NF-4)}'
  done; done
done
