// Waiting under oversubscription (SPEC section 9), side by side with Open MPI: rank 0 joins an
// 8-byte all-reduce 2 s late and every other rank reports the CPU it burned while waiting.
// Built twice from this file: tccl-wait-cpu (tccl, under tessera-run) and mpi-wait-cpu (Open MPI,
// under mpirun; TCCL_WAIT_CPU_MPI defined).
//   build/tessera-run -n 8 build/perf/tccl-wait-cpu
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np 8 build/perf/mpi-wait-cpu
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#ifdef TCCL_WAIT_CPU_MPI
#include <mpi.h>
#else
#include "tccl/tccl.h"
#endif

static double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char** argv) {
  int rank = 0, n = 1;
  float x = 1, y = 0;
#ifdef TCCL_WAIT_CPU_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  auto allreduce = [&] { MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
  const char* who = "Open MPI";
#else
  (void)argc;
  (void)argv;
  tcclComm_t comm;
  if (tcclCommInitFromEnv(&comm, nullptr) != tcclSuccess) return 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  auto allreduce = [&] { tcclAllReduce(&x, &y, 1, tcclFloat32, tcclSum, comm, nullptr); };
  const char* who = "tccl";
#endif
  allreduce();  // connections up, first-call costs paid
  if (rank == 0) sleep(2);
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  allreduce();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  if (rank != 0)
    printf("%s rank %d of %d: waited %.2f s, used %.3f s of CPU (%.1f%% of a core), result %g\n", who, rank, n, wall,
           cpu, 100.0 * cpu / wall, y);
#ifdef TCCL_WAIT_CPU_MPI
  MPI_Finalize();
#else
  tcclCommDestroy(comm);
#endif
  return 0;
}
