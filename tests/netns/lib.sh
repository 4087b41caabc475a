# Shared by the network-namespace tests: two "hosts" on one machine, namespaces $a and $b joined
# by a veth pair ($va in $a with ${net}1, $vb in $b with ${net}2). Source it, then call
# netns_setup; the namespaces are removed on exit. Exits 77 (skipped) without root or ip/tc.
netns_setup() {
  if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "SKIP: needs root, ip and tc (iproute2) to create network namespaces"; exit 77
  fi
  id=$$
  a=tccl-a-$id b=tccl-b-$id va=tva$id vb=tvb$id
  net=10.201.$((id % 250)).
  trap 'ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null' EXIT
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
  # Below the kernel's ephemeral range (32768-60999 by default): a rank's own listener or
  # outgoing connection on an ephemeral port must never take the port rank 0 is about to listen
  # on (a CI run failed with "cannot listen on 0.0.0.0:36284: Address already in use"). Each run
  # of 4 ranks takes the next two ports; the scripts start at most a dozen.
  port=$((20000 + id % 12000))
}

# Adds netem to both ends of the link; false where the kernel has no netem qdisc.
netns_netem() {  # netns_netem <netem arguments...>
  ip netns exec "$a" tc qdisc add dev "$va" root netem "$@" 2>/dev/null &&
    ip netns exec "$b" tc qdisc add dev "$vb" root netem "$@" 2>/dev/null
}

# Starts 4 ranks in the background: 0,1 on host A and 2,3 on host B; their pids in ${pids[@]},
# their output in /tmp/tccl-netns-$id-rank$r.log. Extra environment in $RANK_ENV.
netns_start4() {  # netns_start4 <command...>
  local r ns host
  pids=()
  for r in 0 1 2 3; do
    if [ $r -lt 2 ]; then ns=$a; host=hostA; else ns=$b; host=hostB; fi
    # Each host also gets its own UTS namespace, so error messages name hostA / hostB.
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' $host \
      env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % 2)) MASTER_ADDR=${net}1 MASTER_PORT=$port \
      TCCL_BOOTSTRAP_SECRET=$secret TCCL_HOST_ID=$host ${RANK_ENV:-TCCL_TIMEOUT=120} \
      timeout 600 "$@" > "/tmp/tccl-netns-$id-rank$r.log" 2>&1 &
    pids+=($!)
  done
  port=$((port + 2))
}
