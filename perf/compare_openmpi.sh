#!/usr/bin/env bash
# Side by side with Open MPI on this machine: for each rank count and collective, runs tessera-perf
# (under tessera-run) and mpi_peer_bench (under mpirun, Debian's Open MPI with its shared-memory
# transport) alternately (which one goes first alternates too), REPS times each, and prints
# per-size tables of the medians and the tccl / Open MPI ratios (busbw ratio; > 1 means tccl is
# faster; for 8 B, time ratio MPI/tccl), then where issue #3's goals stand in them
# (compare_goals.awk: each goal met or missed, the cells below 1.0x and below the 2x clause).
# float sum, out of place, tccl in its default (strict determinism) mode. Broadcast is the exception:
# MPI_Bcast has one buffer per rank, so its like is tccl's in-place broadcast (sendbuff == recvbuff;
# out of place, the root also copies its send buffer to its receive buffer, a copy MPI_Bcast never
# makes); its table adds tccl's out-of-place time as a last column.
#
#   perf/compare_openmpi.sh [build-dir] ["2 4 8"] ["all_reduce reduce_scatter all_gather broadcast reduce alltoall"]
# Environment: REPS (default 3), SMALL ("-b 8 -e 256K -f 8 -n 1000 -w 1000"), MID ("-b 64K -e 1M -f 16 -n 200 -w 50"),
# LARGE ("-b 16M -e 256M -f 16 -n 3 -w 1"): together the sizes of the issue's table and more.
# TCCL_FLAGS: extra tessera-perf flags, e.g. "-R 1" (buffers from tcclMemAlloc, read by peers in one
# copy: docs/single_copy.md); Open MPI keeps its own default (malloc'd buffers, CMA single copy).
set -euo pipefail
bld=${1:-build}
ranks=${2:-"2 4 8"}
colls=${3:-"all_reduce reduce_scatter all_gather broadcast reduce alltoall"}
reps=${REPS:-3}
small=${SMALL:-"-b 8 -e 256K -f 8 -n 1000 -w 1000"}
mid=${MID:-"-b 64K -e 1M -f 16 -n 200 -w 50"}
large=${LARGE:-"-b 16M -e 256M -f 16 -n 3 -w 1"}
[ -x "$bld/perf/mpi_peer_bench" ] || { echo "no $bld/perf/mpi_peer_bench: install libopenmpi-dev and rebuild" >&2; exit 1; }
out=${RESULTS:-$(mktemp -d /tmp/tccl-compare.XXXXXX)}  # RESULTS=dir TABLES_ONLY=1: re-print tables
mkdir -p "$out"
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
echo "# compare_openmpi: $(nproc) cores, reps=$reps, results in $out"
echo "# Open MPI: $(mpirun --version 2>/dev/null | head -1)"
echo "# tessera-perf flags: ${TCCL_FLAGS:-none}"
# The determinism mode every tccl figure below was taken in, and where it came from (default,
# config file or environment), as tccl itself resolves it.
echo "# tccl $("$bld/tccl-info" -c 2>/dev/null | awk '$1 == "TCCL_DETERMINISM" { print "determinism: " $2 " (" $3 ")" }')"
# The cache size tccl's cache rules assume, and where it came from (a VM may report its package's).
echo "# tccl $("$bld/tccl-info" -t 2>/dev/null | grep '^last-level cache')"
# One run of each side for the current $n, $coll, $sizes, $tag and $rep (set by the loops below).
# shellcheck disable=SC2086
run_tccl() { "$bld/tessera-run" -n "$n" "$bld/perf/tessera-perf" "$coll" $sizes ${TCCL_FLAGS:-} -c 0 -J "$out/tccl-$n-$coll-$tag-$rep.json" > /dev/null; }
# shellcheck disable=SC2086
run_mpi() { "${mpirun_cmd[@]}" -np "$n" "$bld/perf/mpi_peer_bench" "$coll" $sizes -J "$out/mpi-$n-$coll-$tag-$rep.json" > /dev/null; }
# The VM's state before each band's pair of runs (perf/vm_state.sh), printed under each table, so
# a reader can tell which repetitions met which state.
. "$(dirname "$0")/vm_state.sh"
probe=$(vm_state_probe "$out")
probe_state() { [ -z "$probe" ] || vm_state "$probe" > "$out/state-$n-$coll-$tag-$rep"; }
# A size band's name in the file names ("8-256K" for "-b 8 -e 256K ...").
band_tag() { echo "$1" | awk '{print $2"-"$4}'; }
# The tables are also kept in $out/tables.md, which compare_goals.awk then reads.
for n in $ranks; do
  for coll in $colls; do
    for rep in $(seq 1 "$reps"); do
      [ -n "${TABLES_ONLY:-}" ] && break
      band=0
      for sizes in "$small" "$mid" "$large"; do
        tag=$(band_tag "$sizes")
        # Which side runs first alternates with the repetition and the size band: a run can be
        # slower for what ran just before it, so neither side always gets the same predecessor.
        band=$((band + 1))
        probe_state
        if [ $(((rep + band) % 2)) = 0 ]; then run_tccl; run_mpi; else run_mpi; run_tccl; fi
      done
    done
    # Medians per size, then the table.
    awk -v n="$n" -v coll="$coll" '
      function field(line, key,   m) { if (match(line, "\"" key "\":[0-9.e+-]+")) return substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3); return "" }
      function median(str,   a, k, i, j, t) { k = split(str, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((k + 1) / 2)] }
      {
        impl = FILENAME ~ /\/mpi-[0-9]+-[a-z_]+-[^\/]*$/ ? "mpi" : "tccl"
        size = field($0, "size"); if (size == "") next
        # tessera-perf writes "oop":{...},"ip":{...}; the peer writes "oop" only.
        line = $0; if (impl == "tccl" && coll == "broadcast") line = substr($0, index($0, "\"ip\":"))
        t = field(line, "time_us"); b = field(line, "busbw")
        sizes[size] = 1; T[impl, size] = T[impl, size] " " t; B[impl, size] = B[impl, size] " " b
        if (impl == "tccl") O[size] = O[size] " " field($0, "time_us")
      }
      END {
        bc = coll == "broadcast"
        printf "\n## %s, %d ranks (median of runs; busbw GB/s%s)\n", coll, n, bc ? "; tccl in place, as MPI_Bcast" : ""
        printf "| size (B) | tccl time (us) | Open MPI time (us) | tccl busbw | Open MPI busbw | tccl / Open MPI |%s\n", bc ? " tccl out of place (us) |" : ""
        printf "|---|---|---|---|---|---|%s\n", bc ? "---|" : ""
        cnt = 0; for (s in sizes) list[++cnt] = s + 0
        for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
        for (i = 1; i <= cnt; i++) {
          s = list[i]
          if (!((("tccl", s) in T) && (("mpi", s) in T))) continue
          tt = median(T["tccl", s]); mt = median(T["mpi", s]); tb = median(B["tccl", s]); mb = median(B["mpi", s])
          ratio = (tt > 0) ? mt / tt : 0
          printf "| %d | %.2f | %.2f | %.3f | %.3f | %.2fx |", s, tt, mt, tb, mb, ratio
          if (bc) printf " %.2f |", median(O[s])
          printf "\n"
        }
      }' "$out"/tccl-"$n"-"$coll"-*.json "$out"/mpi-"$n"-"$coll"-*.json
    # The probe's readings for this table, band by band, repetition by repetition.
    states=""
    for sizes in "$small" "$mid" "$large"; do
      tag=$(band_tag "$sizes")
      r=$(cat "$out"/state-"$n"-"$coll"-"$tag"-* 2>/dev/null | tr '\n' ' ' | sed 's/ $//')
      [ -n "$r" ] && states="$states${states:+; }$tag: $r"
    done
    [ -n "$states" ] && printf '\nVM state before each repetition (probe writer GB/s, below 10 = slow): %s\n' "$states"
  done
done | tee "$out/tables.md"
# Where the issue's goals stand in these tables (a partial run judges what it has).
awk -f "$(dirname "$0")/compare_goals.awk" "$out/tables.md"
