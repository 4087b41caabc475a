// A non-owning reference to a callable, for parameters called (if at all) during the call that
// receives them: the executor's `describe`, which names the operation only when something fails.
// A std::function there cost every collective its construction (the closure copied into the
// function's storage, a store-forwarding stall on x86) and its destruction (an indirect call):
// ~5 ns of an 8-byte call's ~75 ns on the development VM (docs/performance.md, "Calls without
// reference counts"). The callable must outlive the FunctionRef, as a temporary lambda passed as
// an argument does.
#pragma once

#include <type_traits>
#include <utility>

namespace tccl {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same<std::decay_t<F>, FunctionRef>::value>>
  FunctionRef(F&& f)  // NOLINT: implicit, as std::function converts
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...); }) {}
  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace tccl
