#include "core/status.h"

#include <cstdarg>
#include <cstdio>

namespace tccl {

static std::string VFormat(const char* fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, ap);
  return buf;
}

std::string Format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = VFormat(fmt, ap);
  va_end(ap);
  return s;
}

#define TCCL_DEFINE_STATUS_MAKER(name, code) \
  Status name(const char* fmt, ...) {        \
    va_list ap;                              \
    va_start(ap, fmt);                       \
    std::string s = VFormat(fmt, ap);        \
    va_end(ap);                              \
    return Status(code, std::move(s));       \
  }

TCCL_DEFINE_STATUS_MAKER(InvalidArgument, tcclInvalidArgument)
TCCL_DEFINE_STATUS_MAKER(InvalidUsage, tcclInvalidUsage)
TCCL_DEFINE_STATUS_MAKER(SystemError, tcclSystemError)
TCCL_DEFINE_STATUS_MAKER(InternalError, tcclInternalError)
TCCL_DEFINE_STATUS_MAKER(RemoteError, tcclRemoteError)
TCCL_DEFINE_STATUS_MAKER(Timeout, tcclTimeout)
TCCL_DEFINE_STATUS_MAKER(DeviceError, tcclUnhandledDeviceError)

const std::string& Status::NoMessage() {
  static const std::string none;
  return none;
}

static thread_local std::string t_lastError;

void SetLastError(const Status& st) {
  if (st.ok()) t_lastError.clear();  // every successful call: no temporary string
  else t_lastError = st.message();
}
const char* LastError() { return t_lastError.c_str(); }

}  // namespace tccl
