// Reads a flight recorder dump (src/comm/flight_recorder.h) written by a test that gives operation
// number `seq` the count seq % 7 + 1, so that an entry mixing two operations shows. Header only:
// used by the unit tests and the thread-rank tests.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

namespace tccl_test {

struct FlightDumpCheck {
  long entries = 0;     // entries read whole
  long torn = 0;        // of them, count not matching seq: parts of two operations
  std::string badLine;  // a line that is neither an all-reduce entry nor an "overwritten" notice
};

// Adds `dump`'s entries to `check`; false (with badLine set) on a line it cannot read.
inline bool CheckFlightDump(const std::string& dump, FlightDumpCheck* check) {
  std::istringstream lines(dump);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    if (line.find("overwritten") != std::string::npos) continue;
    unsigned long long seq = 0;
    size_t count = 0;
    if (sscanf(line.c_str(), "  #%llu all_reduce %zu x", &seq, &count) != 2) {
      check->badLine = line;
      return false;
    }
    ++check->entries;
    if (count != seq % 7 + 1) ++check->torn;
  }
  return true;
}

}  // namespace tccl_test
