#!/usr/bin/env bash
# /dev/shm the size a container gives by default (64 MiB, as `docker run` without --shm-size):
# 8 local ranks with the default rings fit in it and run; 9 do not, and every rank must end with a
# clear error naming /dev/shm, not be killed by SIGBUS at the first touch of a page tmpfs cannot
# back (what happened before the segment's pages were reserved at creation).
#
#   small_dev_shm.sh <tessera-run> <tessera-perf>
#
# Needs root and a private mount namespace (unshare -m); exits 77 (skipped) where they are missing.
set -u
run=$1
perf=$2
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "skipped: needs root and unshare -m"
  exit 77
fi
export run perf
unshare -m bash -c '
  set -u
  mount -t tmpfs -o size=64M tmpfs /dev/shm || { echo "skipped: cannot mount a tmpfs on /dev/shm"; exit 77; }
  status=0
  echo "== 8 ranks in a 64 MiB /dev/shm"
  out=$("$run" -n 8 "$perf" all_reduce -b 8 -e 1M -f 32 2>&1)
  rc=$?
  echo "$out" | tail -4
  if [ $rc != 0 ] || ! echo "$out" | grep -q "Out of bounds values : 0 OK"; then echo "FAIL: 8 ranks did not run (exit $rc)"; status=1; fi
  echo "== 9 ranks in a 64 MiB /dev/shm"
  out=$("$run" -n 9 "$perf" all_reduce -b 8 -e 8 2>&1)
  rc=$?
  echo "$out" | head -3
  if [ $rc != 1 ]; then echo "FAIL: exit status $rc, expected 1 (a rank killed by a signal exits 128 + its number)"; status=1; fi
  if ! echo "$out" | grep -q "/dev/shm has .* MiB free. Enlarge it"; then echo "FAIL: no message naming /dev/shm"; status=1; fi
  if echo "$out" | grep -q "exited with status 1[3-4][0-9]"; then echo "FAIL: a rank was killed by a signal"; status=1; fi
  exit $status
'
