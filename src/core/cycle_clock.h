// A cheap timestamp for records written on every operation (the flight recorder): the CPU's
// time-stamp counter on x86-64 (~10 ns to read; the vDSO steady clock measured 26 ns in a VM and
// two reads per operation were a tenth of an 8-byte all-reduce), converted to seconds only when
// someone reads the record. Elsewhere, the steady clock in nanoseconds.
#pragma once

#include <cstdint>

namespace tccl {

uint64_t CycleNow();
// Seconds between two CycleNow() values (b later than a). Calibrated against the steady clock
// from the first call of CycleNow() to the first call of this; both monotonic.
double CyclesToSeconds(uint64_t a, uint64_t b);
// Seconds per CycleNow() tick, or 0 while the calibration interval (10 ms from the first
// CycleNow()) has not passed yet. Never waits, unlike CyclesToSeconds: for timing in data paths.
double SecondsPerCycleIfCalibrated();

}  // namespace tccl
