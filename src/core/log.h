// Logging: TCCL_DEBUG level, TCCL_DEBUG_SUBSYS filter, TCCL_DEBUG_FILE destination.
// Line prefix: "host:pid:tid TCCL LEVEL SUBSYS message".
#pragma once

#include <atomic>

namespace tccl {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };
enum LogSubsys : unsigned {
  kLogInit = 1u << 0,
  kLogColl = 1u << 1,
  kLogNet = 1u << 2,
  kLogShm = 1u << 3,
  kLogBoot = 1u << 4,
  kLogTuning = 1u << 5,
  kLogAll = ~0u
};

bool LogEnabled(LogLevel level, unsigned subsys);
// True once the configuration is loaded and TCCL_DEBUG is below TRACE: TCCL_TRACE then costs one
// load, where LogEnabled is a call (every collective passes two traces; docs/performance.md,
// "What one small call costs").
extern std::atomic<bool> g_tracesOff;
void Log(LogLevel level, unsigned subsys, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void ReloadLogConfig();  // after the environment changed (tests)
// Whether TCCL_DEBUG_SUBSYS names this subsystem itself (not through ALL): reports a user asks for
// by name (the TUNING decision table) are printed then, whatever TCCL_DEBUG says (unless NONE).
bool LogSubsysNamed(unsigned subsys);
// An INFO line printed at TCCL_DEBUG=INFO, or when TCCL_DEBUG_SUBSYS names the subsystem.
void LogNamed(unsigned subsys, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace tccl

#define TCCL_WARN(subsys, ...) ::tccl::Log(::tccl::LogLevel::Warn, subsys, __VA_ARGS__)
#define TCCL_INFO(subsys, ...)                                              \
  do {                                                                      \
    if (::tccl::LogEnabled(::tccl::LogLevel::Info, subsys))                 \
      ::tccl::Log(::tccl::LogLevel::Info, subsys, __VA_ARGS__);             \
  } while (0)
#define TCCL_TRACE(subsys, ...)                                             \
  do {                                                                      \
    if (!::tccl::g_tracesOff.load(std::memory_order_relaxed) &&            \
        ::tccl::LogEnabled(::tccl::LogLevel::Trace, subsys))                \
      ::tccl::Log(::tccl::LogLevel::Trace, subsys, __VA_ARGS__);            \
  } while (0)
