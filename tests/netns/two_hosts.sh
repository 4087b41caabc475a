#!/usr/bin/env bash
# Two "hosts" on one machine: two network namespaces joined by a veth pair, two ranks in each.
# Ranks on the same host use shared memory, ranks on different hosts use TCP over the veth link.
#
#   two_hosts.sh <tccl_process_rank_tests> <tessera-perf>
#
# Phase 1: the full multi-rank correctness sweep across the two hosts.
# Phase 2: tessera-perf on every collective with 2 ms of netem delay on the link (where the kernel
# has netem; otherwise without, and the script says so).
# Needs root and `ip netns`; exits 77 (skipped) where they are not available.
set -u
sweep_bin=$1
perf_bin=$2
source "$(dirname "$0")/lib.sh"
netns_setup

# Runs 4 ranks: 0,1 on host A and 2,3 on host B. Every rank must exit 0 within the time limit.
run4() {
  local r rc=0
  netns_start4 "$@"
  for r in 0 1 2 3; do
    if ! wait "${pids[$r]}"; then rc=1; echo "rank $r failed:"; tail -30 "/tmp/tccl-netns-$id-rank$r.log"; fi
  done
  return $rc
}

status=0
echo "== phase 1: correctness sweep, 2 hosts x 2 ranks (shm inside a host, TCP between hosts)"
if run4 "$sweep_bin"; then tail -3 /tmp/tccl-netns-$id-rank0.log; else status=1; fi

if netns_netem delay 1ms; then
  echo "== phase 2: tessera-perf, every collective, 2 ms round-trip netem delay on the link"
else
  echo "== phase 2: tessera-perf, every collective (NOTE: this kernel has no netem qdisc; running without added delay)"
fi
for coll in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  if run4 "$perf_bin" $coll -b 8 -e 1M -f 32 -n 3 -w 1 -d float; then
    grep -E '^ +[0-9]|Out of bounds' /tmp/tccl-netns-$id-rank0.log
  else
    status=1
  fi
done
rm -f /tmp/tccl-netns-$id-rank*.log
[ $status = 0 ] && echo "two_hosts: PASS" || echo "two_hosts: FAIL"
exit $status
