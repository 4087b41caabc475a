#!/usr/bin/env bash
# What strict determinism costs: for all-reduce and reduce-scatter at 2, 4 and 8 ranks, tessera-perf
# bus bandwidth (float sum, out of place, median of 3 runs) under TCCL_DETERMINISM=strict (automatic
# selection), under run (automatic selection), and with every algorithm forced under run; "fastest"
# is the best of all of them. Prints strict / fastest per size.
#   determinism_cost.sh <build-dir> [min-bytes] [max-bytes]     (plain byte counts)
# Each run starts one size below min-bytes and drops it: the first size a fresh job measures is
# slowed by one-time costs (first touch of scratch memory, the scheduler spreading the ranks).
set -u
build=$1 min=${2:-262144} max=${3:-67108864}
run=$build/tessera-run perf=$build/perf/tessera-perf

# busbw per size (one "size busbw" line each) of one configuration, median of 3 runs.
measure() {  # ranks coll env...
  local n=$1 coll=$2; shift 2
  for rep in 1 2 3; do
    env "$@" "$run" -n "$n" "$perf" "$coll" -b $((min / 4)) -e "$max" -f 4 -n 10 -w 2 -c 0 2>/dev/null |
      awk -v min="$min" '/^ +[0-9]/ && $1 >= min {print $1, $8}'
  done | sort -n -k1,1 -k2,2 | awk '{v[$1]=v[$1] " " $2; c[$1]++} END {for (s in v) {split(v[s], a, " "); print s, a[int((c[s]+1)/2)]}}' | sort -n
}

for coll in all_reduce reduce_scatter; do
  case $coll in
    all_reduce) algos="allreduce:direct allreduce:twoshot allreduce:ring";;
    reduce_scatter) algos="reducescatter:direct reducescatter:ring";;
  esac
  for n in 2 4 8; do
    tmp=$(mktemp -d)
    measure $n $coll TCCL_DETERMINISM=strict > "$tmp/strict"
    measure $n $coll TCCL_DETERMINISM=run > "$tmp/run"
    for a in $algos; do measure $n $coll TCCL_DETERMINISM=run TCCL_ALGO=$a > "$tmp/forced-${a#*:}"; done
    echo "## $coll, $n ranks, float sum, busbw GB/s (median of 3), out of place"
    printf "%12s %9s %9s %9s %-9s %14s\n" size strict run fastest "(algo)" strict/fastest
    for size in $(awk '{print $1}' "$tmp/strict"); do
      s=$(awk -v k=$size '$1==k {print $2}' "$tmp/strict")
      r=$(awk -v k=$size '$1==k {print $2}' "$tmp/run")
      best=0 bestname=-
      for f in "$tmp"/forced-* "$tmp/run" "$tmp/strict"; do
        v=$(awk -v k=$size '$1==k {print $2}' "$f")
        if awk -v a="$v" -v b="$best" 'BEGIN {exit !(a > b)}'; then best=$v; bestname=$(basename "$f"); fi
      done
      printf "%12s %9s %9s %9s %-9s %14s\n" "$size" "$s" "$r" "$best" "${bestname#forced-}" \
        "$(awk -v a="$s" -v b="$best" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')"
    done
    echo
    rm -rf "$tmp"
  done
done
