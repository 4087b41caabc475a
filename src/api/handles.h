// The C handles and their validation. Live communicators and streams are registered, so a call
// with a destroyed or foreign handle gets a clear error instead of touching freed memory.
#pragma once

#include <cstring>
#include <memory>

#include "api/hazard_slots.h"
#include "comm/communicator.h"
#include "comm/host_stream.h"
#include "core/status.h"

// The handle only names a communicator; the registry owns it through shared_ptr, so an operation
// in flight (or queued on a stream) keeps it alive past tcclCommDestroy/tcclCommAbort.
struct tcclComm {
  int unused;
};

namespace tccl {

// A communicator held for the length of one API call: by this thread's hazard slot where the
// process has heavy fences (no locked instruction; hazard_slots.h), else by a shared_ptr. Work that
// outlives the call (a host stream's queue, a group) takes Share().
class CommRef {
 public:
  CommRef() = default;
  CommRef(const CommRef&) = delete;
  CommRef& operator=(const CommRef&) = delete;
  ~CommRef() { Release(); }
  Communicator* operator->() const { return raw_; }
  Communicator& operator*() const { return *raw_; }
  std::shared_ptr<Communicator> Share() const { return owned_ ? owned_ : raw_->shared_from_this(); }

 private:
  friend Status AcquireComm(tcclComm_t c, const char* fn, CommRef* out);
  void Release();
  Communicator* raw_ = nullptr;
  HazardSlot* slot_ = nullptr;           // this thread's, holding raw_
  std::shared_ptr<Communicator> owned_;  // where no slot holds it
};

tcclComm_t RegisterComm(std::shared_ptr<Communicator> c);
// Removes the handle; returns the communicator (null if the handle was not live). A call still
// using it on another thread keeps it alive until that call returns, as a reference would.
std::shared_ptr<Communicator> UnregisterComm(tcclComm_t c);
Status AcquireComm(tcclComm_t c, const char* fn, CommRef* out);

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
