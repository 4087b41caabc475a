#include "transports/shm/shm_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>

namespace tccl {

ShmSegment::~ShmSegment() {
  if (base_) munmap(base_, bytes_);
  if (owner_) Unlink();
}

Status ShmSegment::Create(const std::string& name, size_t bytes) {
  name_ = name;
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {  // left over by a crashed job with the same id
    shm_unlink(name.c_str());
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  }
  if (fd < 0)
    return SystemError("shm_open(%s): %s (TCCL_SHM_DISABLE=1 connects the ranks of a host over TCP instead)",
                       name.c_str(), strerror(errno));
  owner_ = true;
  if (ftruncate(fd, (off_t)bytes) != 0) {
    int e = errno;
    close(fd);
    return SystemError("cannot size shared memory %s to %zu bytes: %s (is /dev/shm full?)",
                       name.c_str(), bytes, strerror(e));
  }
  // Reserve every page now. tmpfs grants ftruncate a size beyond its free space and then raises
  // SIGBUS at the first touch of a page it cannot back (MAP_POPULATE does not report it): 8 ranks
  // in a container's default 64 MiB /dev/shm were killed so.
  if (int e = posix_fallocate(fd, 0, (off_t)bytes)) {
    close(fd);
    Unlink();
    struct statvfs fs {};
    const double freeMiB = statvfs("/dev/shm", &fs) == 0 ? (double)fs.f_bavail * fs.f_frsize / (1 << 20) : -1;
    return SystemError("cannot reserve %zu bytes (%.1f MiB) of shared memory for %s: %s; /dev/shm has %.1f MiB "
                       "free. Enlarge it (a container's default is 64 MiB: docker run --shm-size=1g), lower "
                       "TCCL_SHM_RING_BYTES, or set TCCL_SHM_DISABLE=1 (TCP between the host's ranks; docs/env.md)",
                       bytes, (double)bytes / (1 << 20), name.c_str(), strerror(e), freeMiB);
  }
  // MAP_POPULATE faults every page in now, at setup, instead of during the first collectives.
  base_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    return SystemError("mmap of %zu bytes of shared memory failed: %s", bytes, strerror(errno));
  }
  bytes_ = bytes;
  return Status::Ok();
}

Status ShmSegment::Open(const std::string& name, size_t bytes) {
  name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return SystemError("shm_open(%s) of a peer's segment: %s", name.c_str(), strerror(errno));
  // MAP_POPULATE faults every page in now, at setup, instead of during the first collectives.
  base_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    return SystemError("mmap of a peer's shared memory failed: %s", strerror(errno));
  }
  bytes_ = bytes;
  return Status::Ok();
}

void ShmSegment::Unlink() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  owner_ = false;
}

}  // namespace tccl
