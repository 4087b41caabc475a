// The CUDA IPC window: one device allocation per rank, mapped into every other rank of the host
// (cudaIpcOpenMemHandle across processes; the pointer itself for ranks that are threads of one
// process). Layout: barrier flags, then two data areas that peers read directly:
//
//   [ flags: kMaxRanks x 2 uint32 (written by peers) | pad to 4 KiB ][ in: areaBytes ][ out: areaBytes ]
//
// `in` holds what a rank contributes to the current round, `out` what it reduced for others to
// gather (two-shot all-reduce). Memory is bounded: 2 x areaBytes per rank (TCCL_CUDA_AREA_BYTES).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/status.h"

namespace tccl {

class IpcWindow {
 public:
  static constexpr int kMaxRanks = 64;
  static constexpr size_t kFlagBytes = 4096;

  // Collective over `boot` (every rank calls it). samePeerProcess[r]: rank r is a thread of this
  // process (its pointer is used as is). Every rank must be on this host.
  static Status Create(Bootstrap& boot, int rank, int nranks, const std::vector<bool>& samePeerProcess,
                       size_t areaBytes, std::unique_ptr<IpcWindow>* out);
  ~IpcWindow();

  size_t areaBytes() const { return areaBytes_; }
  // Rank r's window as this process addresses it.
  char* base(int r) const { return bases_[r]; }
  char* in(int r) const { return bases_[r] + kFlagBytes; }
  char* out(int r) const { return bases_[r] + kFlagBytes + areaBytes_; }
  // The flag of rank `owner` that rank `from` sets for barrier parity `parity`.
  uint32_t* flag(int owner, int from, int parity) const {
    return reinterpret_cast<uint32_t*>(bases_[owner]) + 2 * from + parity;
  }

 private:
  IpcWindow() = default;
  int rank_ = 0;
  size_t areaBytes_ = 0;
  std::vector<char*> bases_;
  std::vector<bool> opened_;  // bases_[r] came from cudaIpcOpenMemHandle
};

}  // namespace tccl
