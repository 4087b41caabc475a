// A named POSIX shared-memory segment mapped into this process.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace tccl {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Creates (replacing a stale one of the same name) and maps `bytes` zero-filled bytes.
  Status Create(const std::string& name, size_t bytes);
  // Opens and maps an existing segment of `bytes` bytes.
  Status Open(const std::string& name, size_t bytes);
  // Removes the name; mappings stay valid. Called once every rank has mapped it.
  void Unlink();

  void* data() const { return base_; }
  size_t size() const { return bytes_; }

 private:
  std::string name_;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  bool owner_ = false;
};

}  // namespace tccl
