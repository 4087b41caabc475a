// A point in time by which a blocking step must finish (SPEC section 5).
#pragma once

#include <chrono>
#include <cstdint>

namespace tccl {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  static Deadline After(double seconds) {
    Deadline d;
    d.end_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(seconds));
    return d;
  }
  bool Expired() const { return Clock::now() >= end_; }
  // Milliseconds left, clamped to [0, cap].
  int MillisLeft(int cap = 1 << 30) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : (int)left;
  }

 private:
  Clock::time_point end_;
};

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace tccl
