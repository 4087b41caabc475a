#!/usr/bin/env bash
# tccl-info -t: the last-level cache size the cache rules assume, and where it came from
# (TCCL_CACHE_BYTES, sysfs, or sysconf's CPUID figure where sysfs lists no caches).
set -u
info=$1
fail() { echo "FAIL: $*"; exit 1; }

line=$(TCCL_CACHE_BYTES=12582912 "$info" -t | grep '^last-level cache:')
[ "$line" = "last-level cache: 12288 KiB, from TCCL_CACHE_BYTES; TCCL_CACHE_BYTES sets it" ] || fail "set: got [$line]"

# Unset: the source must be the one this machine provides.
line=$(env -u TCCL_CACHE_BYTES "$info" -t | grep '^last-level cache:')
described=0
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
  [ -r "$d/size" ] && [ "$(cat "$d/type" 2>/dev/null)" != Instruction ] && described=1
done
if [ $described = 1 ]; then
  want="sysfs"
elif [ "$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)" -gt 0 ] 2>/dev/null; then
  want="sysconf (CPUID; sysfs lists no caches)"
else
  want="unknown"
fi
case "$line" in
  "last-level cache: "*" KiB, from $want; TCCL_CACHE_BYTES sets it") ;;
  *) fail "unset: got [$line], want the source [$want]" ;;
esac
echo "cache line as expected: $line"
