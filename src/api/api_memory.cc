// C API: shared host memory and buffer registration (single-copy paths, docs/single_copy.md).
#include "api/handles.h"
#include "memory/registrations.h"
#include "memory/shared_memory.h"

using namespace tccl;

extern "C" {

tcclResult_t tcclMemAlloc(void** ptr, size_t size) {
  return ApiCall([&] { return SharedMemAlloc(size, ptr); });
}

tcclResult_t tcclMemFree(void* ptr) {
  return ApiCall([&] { return SharedMemFree(ptr); });
}

tcclResult_t tcclCommRegister(const tcclComm_t comm, void* buff, size_t size, void** handle) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommRegister", &c));
    return c->registrations().Add(buff, size, handle);
  });
}

tcclResult_t tcclCommDeregister(const tcclComm_t comm, void* handle) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommDeregister", &c));
    return c->registrations().Remove(handle);
  });
}

}  // extern "C"
