#include "memory/shared_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace tccl {

namespace {

struct Allocation {
  uint64_t id;
  int fd;
  size_t bytes;
};

// Keyed by base address; a lookup finds the last allocation starting at or below the pointer.
struct Table {
  std::mutex mu;
  std::map<uintptr_t, Allocation> byBase;
  uint64_t nextId = 1;
};

Table& TheTable() {
  static Table* t = new Table;  // never destroyed: frees may come from static destructors
  return *t;
}

}  // namespace

Status SharedMemAlloc(size_t size, void** ptr) {
  if (!ptr) return InvalidArgument("tcclMemAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return InvalidArgument("tcclMemAlloc: size is 0");
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_MAX - page) return InvalidArgument("tcclMemAlloc: size %zu is too large", size);
  const size_t bytes = (size + page - 1) / page * page;
  int fd = memfd_create("tccl-mem", MFD_CLOEXEC);
  if (fd < 0) return SystemError("tcclMemAlloc: memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd, (off_t)bytes) != 0) {
    int e = errno;
    close(fd);
    return SystemError("tcclMemAlloc: cannot size a %zu-byte buffer: %s", bytes, strerror(e));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    close(fd);
    return SystemError("tcclMemAlloc: cannot map %zu bytes: %s", bytes, strerror(e));
  }
  Table& t = TheTable();
  std::lock_guard<std::mutex> g(t.mu);
  t.byBase[(uintptr_t)p] = Allocation{t.nextId++, fd, bytes};
  *ptr = p;
  return Status::Ok();
}

Status SharedMemFree(void* ptr) {
  if (!ptr) return Status::Ok();  // as free(NULL)
  Table& t = TheTable();
  Allocation a;
  {
    std::lock_guard<std::mutex> g(t.mu);
    auto it = t.byBase.find((uintptr_t)ptr);
    if (it == t.byBase.end())
      return InvalidArgument("tcclMemFree: %p was not returned by tcclMemAlloc (or was freed already)", ptr);
    a = it->second;
    t.byBase.erase(it);
  }
  munmap(ptr, a.bytes);
  close(a.fd);
  return Status::Ok();
}

bool FindSharedRange(const void* p, size_t bytes, SharedRange* where) {
  Table& t = TheTable();
  const uintptr_t at = (uintptr_t)p;
  std::lock_guard<std::mutex> g(t.mu);
  auto it = t.byBase.upper_bound(at);
  if (it == t.byBase.begin()) return false;
  it = std::prev(it);
  const size_t offset = at - it->first;
  if (offset >= it->second.bytes || bytes > it->second.bytes - offset) return false;
  *where = SharedRange{it->second.id, it->second.fd, it->second.bytes, offset};
  return true;
}

}  // namespace tccl
