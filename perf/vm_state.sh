# The VM's state (docs/performance.md, "Two states of the VM"): perf/dirty_transfer_probe.c's
# writer rate in GB/s, below 10 in the slow state. Sourced by ab_builds.sh and compare_openmpi.sh,
# so both read the state alike.

# vm_state_probe DIR: builds the probe into DIR and prints its path; prints nothing where it cannot
# be built (no C compiler, as on a lent machine).
vm_state_probe() {
  local p=$1/dirty_transfer_probe
  if cc -O2 -mclflushopt "$(dirname "${BASH_SOURCE[0]}")/dirty_transfer_probe.c" -o "$p" 2>/dev/null; then echo "$p"; fi
}

# vm_state PROBE: one reading (GB/s).
vm_state() { "$1" 524288 200 | sed 's/.*the reader read: //'; }
