#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds examples/allreduce.c against it twice:
# with CMake find_package(tccl) and with pkg-config. Runs the results on 2 ranks.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mkdir -p "$tmp/app"
cp "$src/examples/allreduce.c" "$tmp/app/"
cat > "$tmp/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(tccl REQUIRED)
add_executable(app allreduce.c)
target_link_libraries(app tccl::tccl)
CM
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/app/build" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/prefix/bin/tessera-run" -n 2 "$tmp/app/build/app"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" cc "$tmp/app/allreduce.c" -o "$tmp/app/pc" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs tccl)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/prefix/bin/tessera-run" -n 2 "$tmp/app/pc"
readelf -d "$tmp/prefix/lib/libtccl.so" | grep -q 'SONAME.*libtccl.so.0'
echo "install_and_consume: OK (find_package, pkg-config, soname libtccl.so.0)"
