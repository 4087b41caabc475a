#!/usr/bin/env bash
# Two (or more) tessera-perf builds alternated round by round, with Open MPI's peer beside them if
# asked, and the medians per size split by the VM's state (perf/dirty_transfer_probe.c before each
# round: its writer below 10 GB/s is the slow state, docs/performance.md "Two states of the VM").
# For changes whose effect is smaller than the VM's run-to-run spread: only rounds alternated in
# one loop compare. The order of the builds reverses every other round.
#
#   perf/ab_builds.sh OLD_TESSERA_PERF NEW_TESSERA_PERF [...]
# Environment: N ranks (2), COLLS ("broadcast reduce all_gather alltoall all_reduce reduce_scatter"),
# ROUNDS (6), SIZES ("-b 256K -e 64M -f 4 -n 20 -w 3"), MPI=1 (also build/perf/mpi_peer_bench),
# OUT (a fresh folder for the raw lines, default /tmp/ab_builds), BUILD (build: tessera-run, the peer),
# IN_PLACE=1 (tessera-perf's in-place times instead; Open MPI's stay out of place).
# Prints, per collective and build, the time (us) per size: medians over the rounds
# of each state, with the number of rounds in parentheses.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,14p "$0" >&2; exit 2; }
bld=${BUILD:-build}
n=${N:-2}
colls=${COLLS:-"broadcast reduce all_gather alltoall all_reduce reduce_scatter"}
rounds=${ROUNDS:-6}
sizes=${SIZES:-"-b 256K -e 64M -f 4 -n 20 -w 3"}
out=${OUT:-/tmp/ab_builds}
column=6 # tessera-perf's out-of-place time; 11: in place
[ -n "${IN_PLACE:-}" ] && column=11
rm -rf "$out" && mkdir -p "$out"
. "$(dirname "$0")/vm_state.sh"
# Without a C compiler (a lent machine) every round counts as one state, printed as "fast".
probe=$(vm_state_probe "$out")
builds=("$@")
for r in $(seq 1 "$rounds"); do
  if [ -n "$probe" ]; then vm_state "$probe" >> "$out/state"; else echo 99 >> "$out/state"; fi
  order=("${builds[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[$i]}"); done
  fi
  for c in $colls; do
    for i in "${!order[@]}"; do
      b=${order[$i]}
      idx=0
      for j in "${!builds[@]}"; do [ "${builds[$j]}" = "$b" ] && idx=$j; done
      # shellcheck disable=SC2086
      "$bld/tessera-run" -n "$n" "$b" "$c" $sizes -c 0 2>/dev/null | grep -v '^#' |
        awk -v col=$column '{printf "%s ", $col} END {print ""}' >> "$out/$c.build$idx"
    done
    if [ -n "${MPI:-}" ]; then
      # shellcheck disable=SC2086
      mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$bld/perf/mpi_peer_bench" "$c" $sizes 2>&1 |
        grep -v '^#' | awk '{printf "%s ", $2} END {print ""}' >> "$out/$c.mpi"
    fi
  done
done
for i in "${!builds[@]}"; do echo "# build$i: ${builds[$i]}"; done
echo "# state per round (probe writer GB/s): $(tr '\n' ' ' < "$out/state")"
awk '{ print ($1 < 10) ? "slow" : "fast" }' "$out/state" > "$out/states"
for c in $colls; do
  for f in "$out/$c".*; do
    for st in fast slow; do
      paste -d' ' "$out/states" "$f" | awk -v st=$st -v name="$(basename "$f")" '
        $1 == st { r++; for (i = 2; i <= NF; i++) v[i] = v[i] " " $i; if (NF > m) m = NF }
        END {
          if (!r) exit
          printf "%-26s %s(%d)", name, st, r
          for (i = 2; i <= m; i++) {
            k = split(v[i], a, " ")
            for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
            printf " %9s", a[int((k + 1) / 2)]
          }
          print ""
        }'
    done
  done
done
