// Environment variables set for a scope, read by tccl at once (parameters are cached at first use,
// src/config/params.h); the destructor restores the old values and reloads again.
#pragma once

#include <cstdlib>
#include <map>
#include <string>
#include <utility>

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

// Any number of variables, set (or unset, with nullptr) one after another during a test.
class EnvGuard {
 public:
  EnvGuard() = default;
  ~EnvGuard() {
    for (auto& [k, v] : saved_) {
      if (v.first) setenv(k.c_str(), v.second.c_str(), 1);
      else unsetenv(k.c_str());
    }
    tccl::ReloadParams();
  }
  void Set(const std::string& k, const char* v) {
    if (!saved_.count(k)) {
      const char* old = getenv(k.c_str());
      saved_[k] = {old != nullptr, old ? old : ""};
    }
    if (v) setenv(k.c_str(), v, 1);
    else unsetenv(k.c_str());
    tccl::ReloadParams();
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::map<std::string, std::pair<bool, std::string>> saved_;
};

}  // namespace tccl_test
