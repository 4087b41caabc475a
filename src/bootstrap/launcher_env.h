// Reads the launcher's environment for tcclCommInitFromEnv (SPEC section 7) and turns it into a
// unique id every rank agrees on.
//
//   torchrun / tessera-run: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   Open MPI:               OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   Slurm:                  SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
//   PMI (MPICH, Hydra):     PMI_RANK, PMI_SIZE
//
// With MASTER_ADDR set, rank 0 serves the bootstrap store on MASTER_ADDR at TCCL_BOOTSTRAP_PORT
// (default MASTER_PORT + 1). Without it (plain `mpirun -np N` on one host), rank 0 makes an id and
// passes it to the others through a file in /tmp named after the job.
#pragma once

#include <string>

#include "core/status.h"
#include "tccl/tccl.h"

namespace tccl {

struct LaunchInfo {
  std::string launcher;  // "torchrun", "Open MPI", "Slurm", "PMI"
  int rank = -1;
  int size = -1;
  int localRank = -1;
  std::string masterAddr;
  int masterPort = 0;
  std::string jobKey;  // identifies this job on this host, for the file rendezvous
};

Status ReadLauncherEnv(LaunchInfo* out);
// Every rank calls this; returns the id all ranks of the job share.
Status AgreeOnUniqueId(const LaunchInfo& info, double timeoutSec, tcclUniqueId* id, std::string* rendezvousFile);

}  // namespace tccl
