// Sets one environment variable for a scope and makes tccl read it (parameters are cached at first
// use, src/config/params.h); the destructor restores the old value and reloads again.
#pragma once

#include <cstdlib>
#include <string>

#include "config/params.h"

namespace tccl_test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
    tccl::ReloadParams();
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
    tccl::ReloadParams();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace tccl_test
