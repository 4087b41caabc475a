// Internal error type: a tccl result code plus a sentence a user can act on.
// Every internal function that can fail returns Status; the C API converts it to tcclResult_t and
// stores the sentence for tcclGetLastError. No exception ever crosses the C API.
#pragma once

#include <string>
#include <utility>

#include "tccl/tccl.h"

namespace tccl {

class Status {
 public:
  Status() = default;
  Status(tcclResult_t code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == tcclSuccess; }
  tcclResult_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  tcclResult_t code_ = tcclSuccess;
  std::string message_;
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
