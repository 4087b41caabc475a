#!/usr/bin/env bash
# Call 4 on the lent machine of 2026-11-26 (16 cores): is the 8-rank large-message slowdown of the
# comparison at afb6823 against the one at d6fcf63 (the previous lease) the code or the machine?
# The two builds' tessera-perf (build-ompi/old: d6fcf63, build-ompi/bld: afb6823, both this VM's
# Release host builds, stripped) alternate, the order reversing every round, at 8 ranks; then one
# run of each with the ring copy-in's decisions logged. Bounded by LIMIT seconds.
cd "$(dirname "$0")/../../../.."
t0=$(date +%s); LIMIT=${LIMIT:-170}; R=build-ompi/bld/tessera-run
left() { echo $(( LIMIT - ($(date +%s) - t0) )); }
run() {  # label build coll
  timeout 25 $R -n 8 build-ompi/$2/perf/tessera-perf $3 ${SIZES:--b 1M -e 256M -f 16 -n 3 -w 1} -c 0 2>/dev/null |
    grep -v '^#' | awk -v l="$1" '{printf "%s %s %s\n", l, $1, $6}' >> $OUT/ab.txt
}
for round in 1 2 3; do
  order="old bld"; [ $((round % 2)) = 0 ] && order="bld old"
  for c in broadcast reduce_scatter all_gather alltoall; do
    for b in $order; do
      [ $(left) -gt 45 ] || break 3
      run "$c $b r$round" $b $c
    done
  done
done
echo "rounds done at $(( $(date +%s) - t0 )) s"
for b in old bld; do
  [ $(left) -gt 20 ] || break
  TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=SHM timeout 20 $R -n 8 build-ompi/$b/perf/tessera-perf broadcast -b 16M -e 256M \
    -f 16 -n 3 -w 1 -c 0 > $OUT/shm_log_$b.txt 2>&1
  echo "$b: $(grep -c 'ring copy-in now' $OUT/shm_log_$b.txt) ring copy-in changes in one 8-rank broadcast run"
done
# Medians per collective, build and size.
sort -k1,1 -k2,2 -k4,4n $OUT/ab.txt | awk '
  { key = $1 " " $2 " " $4; v[key] = v[key] " " $5; if (!(key in seen)) { seen[key] = 1; keys[++k] = key } }
  END { for (i = 1; i <= k; i++) { n = split(v[keys[i]], a, " ");
          for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
          printf "%-28s median %10s us of %d:%s\n", keys[i], a[int((n + 1) / 2)], n, v[keys[i]] } }'
