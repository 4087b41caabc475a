#!/usr/bin/env bash
# perf/compare_goals.awk judges comparison tables against issue #3's goals. Checked here on a small
# made-up table whose every line sits on a boundary (2.00x, 1.00x, Open MPI at exactly 3 GB/s, a
# 2-rank size missing), and on a stored comparison whose counts were worked out by hand
# (perf/results/host-2026-11-27/compare_openmpi_2_4_8_e723f4e.txt: 7 of 174 cells below 1.0x,
# the >= 2x clause met in 54 of 100 cells).
#   compare_goals_test.sh <source-dir>
set -u
src=$1
awk_file=$src/perf/compare_goals.awk
fail=0
expect() {  # expect <output> <exact line>
  if ! grep -qxF -- "$2" <<<"$1"; then echo "missing line: $2"; fail=1; fi
}

made_up=$(awk -f "$awk_file" <<'EOF'
## all_reduce, 2 ranks (median of runs; busbw GB/s)
| size (B) | tccl time (us) | Open MPI time (us) | tccl busbw | Open MPI busbw | tccl / Open MPI |
|---|---|---|---|---|---|
| 8 | 0.20 | 0.20 | 0.040 | 0.040 | 1.00x |
| 65536 | 10.00 | 19.90 | 6.554 | 3.293 | 1.99x |
| 16777216 | 1000.00 | 4000.00 | 16.777 | 4.194 | 4.00x |
| 268435456 | 50000.00 | 210000.00 | 5.369 | 1.278 | 4.20x |

## all_reduce, 4 ranks (median of runs; busbw GB/s)
| size (B) | tccl time (us) | Open MPI time (us) | tccl busbw | Open MPI busbw | tccl / Open MPI |
|---|---|---|---|---|---|
| 8 | 5.00 | 5.00 | 0.002 | 0.002 | 1.00x |
| 64 | 5.00 | 6.00 | 0.019 | 0.016 | 1.20x |

## broadcast, 2 ranks (median of runs; busbw GB/s; tccl in place, as MPI_Bcast)
| size (B) | tccl time (us) | Open MPI time (us) | tccl busbw | Open MPI busbw | tccl / Open MPI | tccl out of place (us) |
|---|---|---|---|---|---|---|
| 8 | 0.20 | 0.10 | 0.040 | 0.080 | 0.50x | 0.30 |
| 4096 | 1.00 | 2.00 | 4.096 | 2.048 | 2.00x | 1.10 |
| 65536 | 10.00 | 15.00 | 6.554 | 3.000 | 1.50x | 11.00 |
| 1048576 | 100.00 | 150.00 | 10.486 | 2.999 | 1.50x | 120.00 |
EOF
)
expect "$made_up" "  - 8 B: 1.00x (goal time ratio >= 1x) met"
expect "$made_up" "  - 64 KiB: 1.99x (goal >= 2x) MISSED"
expect "$made_up" "  - 1 MiB: not in the tables"
expect "$made_up" "  - 16 MiB: 4.00x (goal >= 4x) met"
expect "$made_up" "  - 256 MiB: 4.20x (goal >= 4x and >= 5 GB/s; tccl 5.369 GB/s) met"
expect "$made_up" "- all-reduce, 4 ranks, faster at every size: 1 of 2 sizes (MISSED at 8 B 1.00x;)"
expect "$made_up" "- reduce-scatter, all-gather, broadcast, all-to-all at least Open MPI's speed: 3 of 4 cells"
# 65536 has Open MPI at exactly 3 GB/s: outside the clause; 1048576 at 2.999 is inside.
expect "$made_up" "- the same, >= 2x wherever Open MPI is below 3 GB/s: 1 of 3 cells; below 2x:"
expect "$made_up" "  - broadcast, 2 ranks: 8 B 0.50x, 1 MiB 1.50x"
expect "$made_up" "- every table: 1 of 10 cells below 1.0x:"

# A run of one collective: the goals it has no table for say so, once each.
only_broadcast=$(awk -f "$awk_file" <<'EOF'
## broadcast, 4 ranks (median of runs; busbw GB/s; tccl in place, as MPI_Bcast)
| size (B) | tccl time (us) | Open MPI time (us) | tccl busbw | Open MPI busbw | tccl / Open MPI | tccl out of place (us) |
|---|---|---|---|---|---|---|
| 8 | 0.30 | 0.30 | 0.027 | 0.027 | 1.00x | 0.40 |
EOF
)
expect "$only_broadcast" "- all-reduce, 2 ranks: not in the tables"
expect "$only_broadcast" "- the same, >= 2x wherever Open MPI is below 3 GB/s: 0 of 1 cells; below 2x:"
expect "$only_broadcast" "  - broadcast, 4 ranks: 8 B 1.00x"
expect "$only_broadcast" "- every table: 0 of 1 cells below 1.0x"

stored=$(awk -f "$awk_file" "$src/perf/results/host-2026-11-27/compare_openmpi_2_4_8_e723f4e.txt")
expect "$stored" "  - 16 MiB: 2.72x (goal >= 4x) MISSED"
expect "$stored" "  - 256 MiB: 3.37x (goal >= 4x and >= 5 GB/s; tccl 3.309 GB/s) MISSED"
expect "$stored" "- all-reduce, 8 ranks, faster at every size: 10 of 10 sizes (met)"
expect "$stored" "- the same, >= 2x wherever Open MPI is below 3 GB/s: 54 of 100 cells; below 2x:"
expect "$stored" "- every table: 7 of 174 cells below 1.0x:"
expect "$stored" "  - alltoall, 4 ranks: 64 B 0.71x, 512 B 0.73x"

if [ $fail != 0 ]; then
  echo "--- made-up table gave:"; echo "$made_up"; echo "--- broadcast alone gave:"; echo "$only_broadcast"
  echo "--- stored comparison gave:"; echo "$stored"
  exit 1
fi
echo "compare_goals: every expected line present"
