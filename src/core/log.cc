#include "core/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "config/params.h"

namespace tccl {

std::atomic<bool> g_tracesOff{false};

namespace {

struct LogConfig {
  std::once_flag once;
  // Set once the configuration is loaded: every collective asks LogEnabled (TCCL_TRACE), and an
  // acquire load is cheaper than call_once's out-of-line check.
  std::atomic<bool> loaded{false};
  std::mutex mu;
  LogLevel level = LogLevel::Warn;
  unsigned mask = kLogAll;
  unsigned named = 0;  // subsystems TCCL_DEBUG_SUBSYS names itself
  FILE* out = stderr;
  char host[64] = "?";
};

// Never destroyed, like the parameter registry (params.cc): threads may log while the process exits.
LogConfig& Cfg() {
  static LogConfig* c = new LogConfig;
  return *c;
}

unsigned SubsysBit(const std::string& name) {
  if (name == "INIT") return kLogInit;
  if (name == "COLL") return kLogColl;
  if (name == "NET") return kLogNet;
  if (name == "SHM") return kLogShm;
  if (name == "BOOT") return kLogBoot;
  if (name == "TUNING") return kLogTuning;
  if (name == "ALL") return kLogAll;
  return 0;
}

const char* SubsysName(unsigned s) {
  switch (s) {
    case kLogInit: return "INIT";
    case kLogColl: return "COLL";
    case kLogNet: return "NET";
    case kLogShm: return "SHM";
    case kLogBoot: return "BOOT";
    case kLogTuning: return "TUNING";
    default: return "";
  }
}

void LoadLocked(LogConfig& c) {
  gethostname(c.host, sizeof(c.host) - 1);
  // Both as the registry spells them, whatever case they were written in (config/params.h).
  const std::string lvl = ParamString("DEBUG");
  c.level = lvl == "NONE" ? LogLevel::None
          : lvl == "INFO" ? LogLevel::Info
          : lvl == "TRACE" ? LogLevel::Trace
                           : LogLevel::Warn;
  std::string subs = ParamString("DEBUG_SUBSYS");
  bool exclude = !subs.empty() && subs[0] == '^';
  c.named = 0;
  if (exclude) subs = subs.substr(1);
  unsigned mask = 0;
  size_t pos = 0;
  while (pos <= subs.size()) {
    size_t comma = subs.find(',', pos);
    if (comma == std::string::npos) comma = subs.size();
    unsigned bit = SubsysBit(subs.substr(pos, comma - pos));
    mask |= bit;
    if (!exclude && bit != kLogAll) c.named |= bit;
    pos = comma + 1;
  }
  c.mask = exclude ? ~mask : (mask ? mask : kLogAll);
  g_tracesOff.store(c.level < LogLevel::Trace, std::memory_order_relaxed);
  if (c.out != stderr && c.out) fclose(c.out);
  c.out = stderr;
  std::string file = ParamString("DEBUG_FILE");
  if (!file.empty()) {
    std::string path;
    for (size_t i = 0; i < file.size(); ++i) {
      if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'h') {
        path += c.host;
        ++i;
      } else if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'p') {
        path += std::to_string(getpid());
        ++i;
      } else {
        path += file[i];
      }
    }
    if (FILE* f = fopen(path.c_str(), "a")) c.out = f;
    else fprintf(stderr, "%s:%d TCCL WARN TCCL_DEBUG_FILE: cannot open %s (%s); logging to stderr\n", c.host, (int)getpid(),
                 path.c_str(), strerror(errno));
  }
}

void EnsureLoaded() {
  LogConfig& c = Cfg();
  if (c.loaded.load(std::memory_order_acquire)) return;
  std::call_once(c.once, [&] {
    std::lock_guard<std::mutex> g(c.mu);
    LoadLocked(c);
    c.loaded.store(true, std::memory_order_release);
  });
}

}  // namespace

bool LogEnabled(LogLevel level, unsigned subsys) {
  EnsureLoaded();
  LogConfig& c = Cfg();
  return level <= c.level && (c.mask & subsys);
}

bool LogSubsysNamed(unsigned subsys) {
  EnsureLoaded();
  return (Cfg().named & subsys) != 0 && Cfg().level != LogLevel::None;
}

namespace {
void Emit(LogLevel level, unsigned subsys, const char* fmt, va_list ap) {
  LogConfig& c = Cfg();
  char msg[2048];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  const char* lvl = level == LogLevel::Warn ? "WARN" : level == LogLevel::Info ? "INFO" : "TRACE";
  std::lock_guard<std::mutex> g(c.mu);
  fprintf(c.out, "%s:%d:%ld TCCL %s %s%s%s\n", c.host, (int)getpid(), (long)syscall(SYS_gettid),
          lvl, SubsysName(subsys), SubsysName(subsys)[0] ? " " : "", msg);
  fflush(c.out);
}
}  // namespace

void Log(LogLevel level, unsigned subsys, const char* fmt, ...) {
  if (!LogEnabled(level, subsys)) return;
  va_list ap;
  va_start(ap, fmt);
  Emit(level, subsys, fmt, ap);
  va_end(ap);
}

void LogNamed(unsigned subsys, const char* fmt, ...) {
  if (!LogEnabled(LogLevel::Info, subsys) && !LogSubsysNamed(subsys)) return;
  va_list ap;
  va_start(ap, fmt);
  Emit(LogLevel::Info, subsys, fmt, ap);
  va_end(ap);
}

void ReloadLogConfig() {
  EnsureLoaded();
  LogConfig& c = Cfg();
  std::lock_guard<std::mutex> g(c.mu);
  LoadLocked(c);
}

}  // namespace tccl
