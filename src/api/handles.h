// The C handles and their validation. Live communicators and streams are registered, so a call
// with a destroyed or foreign handle gets a clear error instead of touching freed memory.
#pragma once

#include <cstring>
#include <memory>

#include "comm/communicator.h"
#include "comm/host_stream.h"
#include "core/status.h"

// The handle only names a communicator; the registry owns it through shared_ptr, so an operation
// in flight (or queued on a stream) keeps it alive past tcclCommDestroy/tcclCommAbort.
struct tcclComm {
  int unused;
};

namespace tccl {

tcclComm_t RegisterComm(std::shared_ptr<Communicator> c);
// Removes the handle; returns the communicator (null if the handle was not live).
std::shared_ptr<Communicator> UnregisterComm(tcclComm_t c);
Status AcquireComm(tcclComm_t c, const char* fn, std::shared_ptr<Communicator>* out);

HostStream* NewStream();
Status DeleteStream(void* s);
// NULL is allowed (blocking call); anything else must be a live host stream.
Status CheckStream(void* s, const char* fn, HostStream** out);

// The int a C caller passed for an enum parameter (the datatype, the op), read as bytes. C lets
// any int reach a tcclDataType_t, while in C++ reading an enum that holds a value outside its range
// is undefined behaviour (UBSan's enum check stops the process on it), so the entries check this
// int before they read the enum.
template <typename E>
int EnumArg(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "a C enum parameter is an int");
  int v;
  memcpy(&v, &e, sizeof v);
  return v;
}

// Converts a Status into the C result, recording the sentence for tcclGetLastError; turns any
// escaping exception into tcclInternalError.
template <typename F>
tcclResult_t ApiCall(F&& f) {
  Status st;
  try {
    st = f();
  } catch (const std::bad_alloc&) {
    st = SystemError("out of memory");
  } catch (const std::exception& e) {
    st = InternalError("internal error: %s", e.what());
  } catch (...) {
    st = InternalError("internal error: unknown exception");
  }
  SetLastError(st);
  return st.code();
}

}  // namespace tccl
