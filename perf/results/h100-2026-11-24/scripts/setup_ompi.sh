# Sourced on a lent machine: unpacks Debian 12's Open MPI 4.1.4 and the libraries it needs.
# Adds files only (--skip-old-files); the libraries go to /opt/ompi-deps, mpirun to /opt/ompi-deps/bin.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf "$here/root.tar.xz" -C / --skip-old-files
mkdir -p /opt/ompi-deps/bin && ln -sf /usr/bin/orterun /opt/ompi-deps/bin/mpirun
ldconfig
export PATH=/opt/ompi-deps/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-deps:$here/bld
