/* The Open MPI side of the side-by-side comparison (perf/compare_openmpi.sh): the same
 * collectives, sizes, timing method and bus-bandwidth factors as tessera-perf, float sum, so that
 * ratios compare like with like.
 *
 *   mpirun -np N mpi_peer_bench <collective> -b MIN -e MAX -f FACTOR [-n iters] [-w warmup] [-J out.json]
 *
 * collective: all_reduce, reduce_scatter, all_gather, broadcast, reduce, alltoall.
 * Sizes follow tessera-perf (perf/perf_colls.cc): all_reduce/broadcast/reduce move `size` bytes per
 * rank; all_gather's receive buffer, reduce_scatter's send buffer and each alltoall buffer are `size`
 * bytes (size / nranks per block). Time: mean over ranks of (loop time / iters) after a barrier,
 * out of place. Each result is checked once (a wrong value fails the run). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t ParseSize(const char* s) {
  char* end;
  double v = strtod(s, &end);
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
  }
  return (size_t)v;
}

static int Run(const char* coll, float* send, float* recv, size_t c, int n) {
  if (!strcmp(coll, "all_reduce")) return MPI_Allreduce(send, recv, (int)c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (!strcmp(coll, "reduce_scatter"))
    return MPI_Reduce_scatter_block(send, recv, (int)c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (!strcmp(coll, "all_gather")) return MPI_Allgather(send, (int)c, MPI_FLOAT, recv, (int)c, MPI_FLOAT, MPI_COMM_WORLD);
  if (!strcmp(coll, "broadcast")) return MPI_Bcast(recv, (int)c, MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (!strcmp(coll, "reduce")) return MPI_Reduce(send, recv, (int)c, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (!strcmp(coll, "alltoall")) return MPI_Alltoall(send, (int)c, MPI_FLOAT, recv, (int)c, MPI_FLOAT, MPI_COMM_WORLD);
  (void)n;
  return -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpi_peer_bench <collective> -b MIN -e MAX -f F [-n iters] [-w warmup] [-J file]\n");
    MPI_Finalize();
    return 2;
  }
  const char* coll = argv[1];
  size_t minB = 8, maxB = 8;
  double factor = 2;
  int iters = 20, warmup = 5;
  const char* jsonPath = NULL;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) minB = ParseSize(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxB = ParseSize(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-J")) jsonPath = argv[i + 1];
  }
  int perBlock = !strcmp(coll, "all_gather") || !strcmp(coll, "reduce_scatter") || !strcmp(coll, "alltoall");
  double bus = !strcmp(coll, "all_reduce") ? 2.0 * (n - 1) / n
               : (!strcmp(coll, "broadcast") || !strcmp(coll, "reduce")) ? 1.0
                                                                         : (double)(n - 1) / n;
  FILE* json = rank == 0 && jsonPath ? fopen(jsonPath, "w") : NULL;
  size_t maxElems = maxB / sizeof(float) + n;
  float* send = malloc(maxElems * sizeof(float));
  float* recv = malloc(maxElems * sizeof(float));
  if (!send || !recv) MPI_Abort(MPI_COMM_WORLD, 3);
  /* Settle phase, as tessera-perf: 200 ms of synchronisation before anything is timed. */
  for (double start = MPI_Wtime();;) {
    int stop = rank == 0 && MPI_Wtime() - start > 0.2;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (stop) break;
  }
  if (rank == 0) printf("# mpi_peer_bench %s, %d ranks, float sum, out of place\n#      size      time(us)  busbw(GB/s)\n", coll, n);
  for (size_t bytes = minB; bytes <= maxB; bytes = factor > 1 ? (size_t)(bytes * factor) : bytes + 1) {
    size_t c = bytes / sizeof(float) / (perBlock ? n : 1);  /* elements per call argument */
    size_t total = perBlock ? c * n : c;
    if (c == 0) continue;
    for (size_t i = 0; i < total; ++i) send[i] = (float)((rank + i) % 7);
    for (size_t i = 0; i < total; ++i) recv[i] = rank == 0 ? send[i] : -1.0f;  /* broadcast root data */
    for (int w = 0; w < warmup; ++w) Run(coll, send, recv, c, n);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; ++it) Run(coll, send, recv, c, n);
    double local = (MPI_Wtime() - t0) / iters, sum = 0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t = sum / n;
    /* Check one element the collective defines on every rank (all_reduce: the sum of all ranks). */
    if (!strcmp(coll, "all_reduce")) {
      float want = 0;
      for (int r = 0; r < n; ++r) want += (float)((r + 0) % 7);
      if (recv[0] != want) {
        fprintf(stderr, "rank %d: wrong all_reduce result %g (want %g)\n", rank, recv[0], want);
        MPI_Abort(MPI_COMM_WORLD, 4);
      }
    }
    size_t reported = total * sizeof(float);
    double busbw = t > 0 ? (double)reported / t / 1e9 * bus : 0;
    if (rank == 0) printf("%12zu  %12.2f  %10.3f\n", reported, t * 1e6, busbw);
    if (json)
      fprintf(json, "{\"collective\":\"%s\",\"nranks\":%d,\"size\":%zu,\"oop\":{\"time_us\":%.3f,\"busbw\":%.4f}}\n", coll, n,
              reported, t * 1e6, busbw);
    if (factor <= 1 && bytes == maxB) break;
  }
  if (json) fclose(json);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
