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
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIP: needs root, ip and tc (iproute2) to create network namespaces"; exit 77
fi
id=$$
a=tccl-a-$id b=tccl-b-$id va=tva$id vb=tvb$id
net=10.201.$((id % 250)).
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT
if ! ip netns add "$a" 2>/dev/null; then echo "SKIP: cannot create network namespaces here"; exit 77; fi
ip netns add "$b"
ip link add "$va" type veth peer name "$vb"
ip link set "$va" netns "$a"
ip link set "$vb" netns "$b"
ip -n "$a" addr add ${net}1/24 dev "$va"
ip -n "$b" addr add ${net}2/24 dev "$vb"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "$va" up
ip -n "$b" link set "$vb" up

secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$((20000 + id % 20000))

# Runs 4 ranks: 0,1 on host A and 2,3 on host B. Every rank must exit 0 within the time limit.
run4() {
  local pids=() r ns host rc=0
  for r in 0 1 2 3; do
    if [ $r -lt 2 ]; then ns=$a; host=hostA; else ns=$b; host=hostB; fi
    ip netns exec "$ns" env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % 2)) MASTER_ADDR=${net}1 MASTER_PORT=$port \
      TCCL_BOOTSTRAP_SECRET=$secret TCCL_HOST_ID=$host TCCL_TIMEOUT=120 \
      timeout 600 "$@" > "/tmp/tccl-netns-$id-rank$r.log" 2>&1 &
    pids+=($!)
  done
  for r in 0 1 2 3; do
    if ! wait "${pids[$r]}"; then rc=1; echo "rank $r failed:"; tail -30 "/tmp/tccl-netns-$id-rank$r.log"; fi
  done
  port=$((port + 2))
  return $rc
}

status=0
echo "== phase 1: correctness sweep, 2 hosts x 2 ranks (shm inside a host, TCP between hosts)"
if run4 "$sweep_bin"; then tail -3 /tmp/tccl-netns-$id-rank0.log; else status=1; fi

if ip netns exec "$a" tc qdisc add dev "$va" root netem delay 1ms 2>/dev/null &&
   ip netns exec "$b" tc qdisc add dev "$vb" root netem delay 1ms 2>/dev/null; then
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
