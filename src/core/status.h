// Internal error type: a tccl result code plus a sentence a user can act on.
// Every internal function that can fail returns Status; the C API converts it to tcclResult_t and
// stores the sentence for tcclGetLastError. No exception ever crosses the C API.
#pragma once

#include <string>
#include <utility>

#include "tccl/tccl.h"

namespace tccl {

// One pointer wide: success is a null pointer, so the many Status values a call passes along on
// its way (every TCCL_RETURN_IF_ERROR) cost one store and one test each; the code and the sentence
// live on the heap only once something has failed. (A std::string member made every success
// four stores and a destructor's test; an 8-byte collective makes ~20 of them,
// docs/performance.md, "What one small call costs".)
class Status {
 public:
  Status() = default;
  Status(tcclResult_t code, std::string message)
      : rep_(code == tcclSuccess ? nullptr : new Rep{code, std::move(message)}) {}
  Status(const Status& o) : rep_(o.rep_ ? new Rep(*o.rep_) : nullptr) {}
  Status(Status&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  Status& operator=(Status o) noexcept {
    std::swap(rep_, o.rep_);
    return *this;
  }
  ~Status() { delete rep_; }

  static Status Ok() { return Status(); }
  bool ok() const { return rep_ == nullptr; }
  tcclResult_t code() const { return rep_ ? rep_->code : tcclSuccess; }
  const std::string& message() const { return rep_ ? rep_->message : NoMessage(); }

 private:
  struct Rep {
    tcclResult_t code;
    std::string message;
  };
  static const std::string& NoMessage();
  Rep* rep_ = nullptr;
};

// printf-style helpers so error sites read as one line.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status InvalidArgument(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status InvalidUsage(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status SystemError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status InternalError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status RemoteError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status Timeout(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status DeviceError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));  // tcclUnhandledDeviceError

// Propagate a failed Status to the caller.
#define TCCL_RETURN_IF_ERROR(expr)       \
  do {                                   \
    ::tccl::Status _st = (expr);         \
    if (!_st.ok()) return _st;           \
  } while (0)

// Thread-local last error, read by tcclGetLastError.
void SetLastError(const Status& st);
const char* LastError();

}  // namespace tccl
