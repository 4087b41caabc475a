#!/usr/bin/env bash
# Network faults between two "hosts" (network namespaces, 2 ranks each; shm inside a host, TCP
# between hosts), each injected at a random point of a long all-reduce loop (tests/fault/fault_rank):
#   link down   the veth link of host A is brought down: every rank must exit on its own with an
#               error within TCCL_TIMEOUT + 10 s, naming a rank on the other host
#   TCP reset   host A's TCP connections are destroyed (ss -K; the peer gets an RST): every rank
#               must exit with an error naming a peer, well before TCCL_TIMEOUT
#   delay/loss  netem 5 ms delay and 1% loss: the job must finish with correct results
#               (needs the netem qdisc; this kernel may lack it, then the phase says SKIP)
# Prints "DETECTION ..." lines with the measured times.
#   faults.sh <fault_rank>
set -u
rank_bin=$1
source "$(dirname "$0")/lib.sh"
netns_setup
timeout_s=5
status=0

now() { date +%s.%N; }

# Waits for all 4 ranks; checks each exited with `want` and its output matches `pattern`.
expect4() {  # expect4 <label> <want-exit> <pattern> <t0>
  local label=$1 want=$2 pattern=$3 t0=$4 r rc worst=0 t
  for r in 0 1 2 3; do
    wait "${pids[$r]}"; rc=$?
    t=$(now)
    local log=/tmp/tccl-netns-$id-rank$r.log
    if [ $rc != "$want" ] || ! grep -qE "$pattern" "$log"; then
      echo "FAIL $label: rank $r exited $rc (want $want) or its output lacks /$pattern/:"; tail -5 "$log"; status=1
    fi
    worst=$(awk "BEGIN{printf \"%.3f\", $t - $t0}")
  done
  echo "DETECTION $label: all 4 ranks exited ${worst} s after the fault"
  grep -h 'FAULT_RANK .* ERROR' /tmp/tccl-netns-$id-rank*.log | cut -c1-400 | sed 's/^/  /'
}

wait_ready() {
  for _ in $(seq 1 600); do
    [ "$(cat /tmp/tccl-netns-$id-rank*.log 2>/dev/null | grep -c READY)" = 4 ] && return 0
    sleep 0.05
  done
  echo "FAIL: ranks did not initialise"; status=1; return 1
}

RANK_ENV="TCCL_TIMEOUT=$timeout_s"
echo "== link down"
netns_start4 "$rank_bin" --count 65536
if wait_ready; then
  sleep 0.$((RANDOM % 5 + 1))
  t0=$(now)
  ip -n "$a" link set "$va" down
  expect4 "link down" 1 "ERROR .*rank [0-9] \(host host[AB]" "$t0"
  ip -n "$a" link set "$va" up
fi

echo "== TCP reset"
netns_start4 "$rank_bin" --count 65536
if wait_ready; then
  sleep 0.$((RANDOM % 5 + 1))
  t0=$(now)
  ip netns exec "$a" ss -K dst ${net}2 > /dev/null
  expect4 "TCP reset" 1 "ERROR .*rank [0-9] \(host host[AB]" "$t0"
fi

echo "== delay and loss"
if netns_netem delay 5ms loss 1%; then
  netns_start4 "$rank_bin" --count 65536 --iters 30
  expect4 "netem 5 ms delay, 1% loss" 0 "DONE" "$(now)"
else
  echo "SKIP: this kernel has no netem qdisc (tc qdisc add ... netem: unknown qdisc kind)"
fi
rm -f /tmp/tccl-netns-$id-rank*.log
[ $status = 0 ] && echo "netns faults: PASS" || echo "netns faults: FAIL"
exit $status
