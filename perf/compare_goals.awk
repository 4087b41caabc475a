# Reads the tables perf/compare_openmpi.sh prints and says, goal by goal, where issue #3's goals
# stand in them (docs/performance.md, "Reading a comparison against the goals"):
#   - all-reduce, 2 ranks: 8 B at or below Open MPI's time; >= 2x at 64 KiB and 1 MiB; >= 4x at
#     16 MiB and 256 MiB, and >= 5 GB/s busbw at 256 MiB;
#   - all-reduce, 4 and 8 ranks: faster than Open MPI at every size;
#   - reduce-scatter, all-gather, broadcast, all-to-all: at least Open MPI's speed at every size, and
#     >= 2x wherever Open MPI's busbw is below 3 GB/s;
#   - and, over every table, the cells below 1.0x.
# Every judgement uses the ratio and busbw columns as printed (the time ratio, 2 decimals), so a
# reader can check each line against the tables by eye.
#   awk -f perf/compare_goals.awk TABLES   (compare_openmpi.sh runs it on its own output)
/^## / {
  coll = $2; sub(/,$/, "", coll); ranks = $3 + 0
  table = coll ", " ranks " ranks"
  tables[++ntables] = table
  next
}
/^\| [0-9]/ {
  split($0, f, "|")
  size = f[2] + 0; tccl_bw = f[5] + 0; mpi_bw = f[6] + 0; ratio = f[7]; sub(/x/, "", ratio); ratio += 0
  cell = Size(size) sprintf(" %.2fx", ratio)
  cells++
  if (ratio < 1) { below++; Note(belowBy, cell) }
  if (coll == "all_reduce" && ranks == 2) {
    R[size] = ratio; BW[size] = tccl_bw; twoRankRows++
  } else if (coll == "all_reduce") {
    arCells[ranks]++
    if (ratio > 1) arFaster[ranks]++
    else arMiss[ranks] = arMiss[ranks] " " cell ";"
  }
  if (coll == "reduce_scatter" || coll == "all_gather" || coll == "broadcast" || coll == "alltoall") {
    moved++
    if (ratio >= 1) movedOk++
    if (mpi_bw < 3) {
      slow++
      if (ratio >= 2) slowOk++
      else Note(slowBy, cell)
    }
  }
}
# Adds `what` to the current table's entry in a list of misses (printed a line per table).
function Note(by, what) {
  if (table in by) by[table] = by[table] ", " what
  else by[table] = what
}
function Lines(by,   i, out) {
  out = ""
  for (i = 1; i <= ntables; i++) if (tables[i] in by) out = out "\n  - " tables[i] ": " by[tables[i]]
  return out
}
function Size(s) {
  if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
  if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
  return s " B"
}
# One 2-rank all-reduce goal: the ratio at `size` against `want` (and busbw against `bw` if set).
function TwoRank(size, want, bw,   line, ok) {
  if (!(size in R)) return "  - " Size(size) ": not in the tables"
  ok = R[size] >= want && (bw == 0 || BW[size] >= bw)
  line = sprintf("  - %s: %.2fx (goal %s%gx", Size(size), R[size], size == 8 ? "time ratio >= " : ">= ", want)
  if (bw) line = line sprintf(" and >= %g GB/s; tccl %.3f GB/s", bw, BW[size])
  return line ") " (ok ? "met" : "MISSED")
}
END {
  print "\n## Against issue #3's goals (read from the tables above)"
  if (twoRankRows) {
    print "- all-reduce, 2 ranks:"
    print TwoRank(8, 1, 0); print TwoRank(65536, 2, 0); print TwoRank(1048576, 2, 0)
    print TwoRank(16777216, 4, 0); print TwoRank(268435456, 4, 5)
  } else {
    print "- all-reduce, 2 ranks: not in the tables"
  }
  for (r = 4; r <= 8; r += 4)
    if (arCells[r])
      printf("- all-reduce, %d ranks, faster at every size: %d of %d sizes%s\n", r, arFaster[r], arCells[r],
             arFaster[r] == arCells[r] ? " (met)" : " (MISSED at" arMiss[r] ")")
  if (moved) {
    printf("- reduce-scatter, all-gather, broadcast, all-to-all at least Open MPI's speed: %d of %d cells\n", movedOk, moved)
    printf("- the same, >= 2x wherever Open MPI is below 3 GB/s: %d of %d cells%s%s\n", slowOk, slow,
           slow > slowOk ? "; below 2x:" : "", Lines(slowBy))
  } else {
    print "- reduce-scatter, all-gather, broadcast, all-to-all: not in the tables"
  }
  printf("- every table: %d of %d cells below 1.0x%s%s\n", below, cells, below ? ":" : "", Lines(belowBy))
}
