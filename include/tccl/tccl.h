/*
 * Tessera Collectives (tccl) — public C API.
 *
 * The shape follows NCCL 2.2x so that porting is mechanical: replace the `nccl` prefix with `tccl`.
 * This header compiles as C99 and as C++.
 */
#ifndef TCCL_TCCL_H_
#define TCCL_TCCL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TCCL_MAJOR 0
#define TCCL_MINOR 1
#define TCCL_PATCH 0
/* Encoded as in NCCL >= 2.9: major*10000 + minor*100 + patch. */
#define TCCL_VERSION_CODE (TCCL_MAJOR * 10000 + TCCL_MINOR * 100 + TCCL_PATCH)

/* Result codes mirror ncclResult_t. */
typedef enum {
  tcclSuccess = 0,
  tcclUnhandledDeviceError = 1, /* named after ncclUnhandledCudaError */
  tcclSystemError = 2,
  tcclInternalError = 3,
  tcclInvalidArgument = 4,
  tcclInvalidUsage = 5,
  tcclRemoteError = 6,
  tcclInProgress = 7,
  tcclTimeout = 8,
  tcclNumResults = 9
} tcclResult_t;

typedef enum {
  tcclInt8 = 0, tcclChar = 0,
  tcclUint8 = 1,
  tcclInt32 = 2, tcclInt = 2,
  tcclUint32 = 3,
  tcclInt64 = 4,
  tcclUint64 = 5,
  tcclFloat16 = 6, tcclHalf = 6,
  tcclFloat32 = 7, tcclFloat = 7,
  tcclFloat64 = 8, tcclDouble = 8,
  tcclBfloat16 = 9,
  tcclNumTypes = 10
} tcclDataType_t;

typedef enum {
  tcclSum = 0,
  tcclProd = 1,
  tcclMax = 2,
  tcclMin = 3,
  tcclAvg = 4,
  tcclNumOps = 5
} tcclRedOp_t;

/* Determinism levels (SPEC section 4). */
typedef enum {
  tcclDeterminismStrict = 0, /* default: canonical tree order, independent of everything */
  tcclDeterminismRun = 1     /* same bits run to run for identical calls */
} tcclDeterminism_t;

#define TCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[TCCL_UNIQUE_ID_BYTES];
} tcclUniqueId;

typedef struct tcclComm* tcclComm_t;
/* A host stream (see tcclStreamCreate) or, for a CUDA communicator, a cudaStream_t. */
typedef void* tcclStream_t;

#define TCCL_SPLIT_NOCOLOR (-1)
#define TCCL_CONFIG_UNDEF_INT (-2147483647 - 1)
#define TCCL_CONFIG_UNDEF_PTR NULL

/* Communicator configuration. Starts with size, magic, version so it can grow without breaking
 * binaries; always initialise with TCCL_CONFIG_INITIALIZER. Fields left undefined take their value
 * from the environment / config file / built-in default (see `tccl-info -c`). */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;          /* 1: init and collectives block (the only mode in this version) */
  int determinism;       /* tcclDeterminism_t */
  int timeoutSec;        /* deadline for every blocking step, seconds */
  const char* commName;  /* shown in logs and errors */
  const char* algo;      /* algorithm override for this communicator, TCCL_ALGO grammar */
  int cudaDevice;        /* memory domain: TCCL_HOST_MEMORY (-1), a CUDA device ordinal, or
                            TCCL_CUDA_DEVICE_CURRENT (the calling thread's current device) */
} tcclConfig_t;

#define TCCL_HOST_MEMORY (-1)
#define TCCL_CUDA_DEVICE_CURRENT (-2)

#define TCCL_CONFIG_MAGIC 0x7cc1c0f6u
#define TCCL_CONFIG_INITIALIZER                                                                  \
  {                                                                                              \
    sizeof(tcclConfig_t), TCCL_CONFIG_MAGIC, TCCL_VERSION_CODE, TCCL_CONFIG_UNDEF_INT,          \
        TCCL_CONFIG_UNDEF_INT, TCCL_CONFIG_UNDEF_INT, TCCL_CONFIG_UNDEF_PTR, TCCL_CONFIG_UNDEF_PTR, \
        TCCL_CONFIG_UNDEF_INT                                                                    \
  }

/* ---- version and errors ---- */
tcclResult_t tcclGetVersion(int* version);
const char* tcclGetErrorString(tcclResult_t result);
/* A sentence describing the last error on the calling thread (comm may be NULL). */
const char* tcclGetLastError(tcclComm_t comm);

/* ---- communicators ---- */
tcclResult_t tcclGetUniqueId(tcclUniqueId* uniqueId);
tcclResult_t tcclCommInitRank(tcclComm_t* comm, int nranks, tcclUniqueId commId, int rank);
tcclResult_t tcclCommInitRankConfig(tcclComm_t* comm, int nranks, tcclUniqueId commId, int rank,
                                    tcclConfig_t* config);
/* Creates ndev communicators in this process, one per rank, ranks as threads. devlist NULL: host
 * memory; otherwise rank i is a CUDA communicator on device devlist[i] (several ranks may share a
 * device). */
tcclResult_t tcclCommInitAll(tcclComm_t* comms, int ndev, const int* devlist);
/* Reads the launcher's environment (torchrun, Open MPI, Slurm, PMI) and joins that job. */
tcclResult_t tcclCommInitFromEnv(tcclComm_t* comm, tcclConfig_t* config);
tcclResult_t tcclCommSplit(tcclComm_t comm, int color, int key, tcclComm_t* newcomm,
                           tcclConfig_t* config);
tcclResult_t tcclCommFinalize(tcclComm_t comm);
tcclResult_t tcclCommDestroy(tcclComm_t comm);
tcclResult_t tcclCommAbort(tcclComm_t comm);
tcclResult_t tcclCommGetAsyncError(tcclComm_t comm, tcclResult_t* asyncError);
/* The communicator's flight recorder: its last TCCL_FLIGHT_RECORDER_ENTRIES operations (sequence
 * number, operation, count, dtype, root, algorithm, peers, state, timing). With buf == NULL the
 * text goes to the log (at WARN level); otherwise up to size-1 bytes of it are copied into buf,
 * NUL-terminated. */
tcclResult_t tcclCommDumpFlightRecorder(tcclComm_t comm, char* buf, size_t size);
tcclResult_t tcclCommCount(const tcclComm_t comm, int* count);
tcclResult_t tcclCommUserRank(const tcclComm_t comm, int* rank);
/* -1 for a host-memory communicator, else the CUDA device ordinal. */
tcclResult_t tcclCommCuDevice(const tcclComm_t comm, int* device);

/* ---- memory for single-copy transfers (docs/single_copy.md) ---- */
/* Host memory that same-host peers in other processes can map: large messages from it are read
 * by the receiver in one copy. Page-aligned; size rounded up to whole pages. */
tcclResult_t tcclMemAlloc(void** ptr, size_t size);
/* Frees what tcclMemAlloc returned (NULL: nothing); any other pointer is tcclInvalidArgument. */
tcclResult_t tcclMemFree(void* ptr);
/* Registers a buffer with the communicator (NCCL's shape). Local (no peer involved). Accepted and,
 * for now, without effect: on host memory its messages go through the shared-memory rings (read
 * with process_vm_readv they measured slower, docs/single_copy.md; for single copy use
 * tcclMemAlloc), and on a CUDA communicator device buffers go through the IPC window. Deregister
 * before freeing the buffer. */
tcclResult_t tcclCommRegister(const tcclComm_t comm, void* buff, size_t size, void** handle);
tcclResult_t tcclCommDeregister(const tcclComm_t comm, void* handle);

/* ---- host streams ---- */
tcclResult_t tcclStreamCreate(tcclStream_t* stream);
tcclResult_t tcclStreamSynchronize(tcclStream_t stream);
/* tcclSuccess when all work is done, tcclInProgress while some remains, or the first error. */
tcclResult_t tcclStreamQuery(tcclStream_t stream);
tcclResult_t tcclStreamDestroy(tcclStream_t stream);

/* ---- collectives ---- */
tcclResult_t tcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           tcclDataType_t datatype, tcclRedOp_t op, tcclComm_t comm,
                           tcclStream_t stream);
tcclResult_t tcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           tcclDataType_t datatype, int root, tcclComm_t comm, tcclStream_t stream);
tcclResult_t tcclReduce(const void* sendbuff, void* recvbuff, size_t count, tcclDataType_t datatype,
                        tcclRedOp_t op, int root, tcclComm_t comm, tcclStream_t stream);
tcclResult_t tcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           tcclDataType_t datatype, tcclComm_t comm, tcclStream_t stream);
tcclResult_t tcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               tcclDataType_t datatype, tcclRedOp_t op, tcclComm_t comm,
                               tcclStream_t stream);
/* count elements go to every peer: sendbuff holds nranks*count elements, as does recvbuff. */
tcclResult_t tcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          tcclDataType_t datatype, tcclComm_t comm, tcclStream_t stream);
tcclResult_t tcclSend(const void* sendbuff, size_t count, tcclDataType_t datatype, int peer,
                      tcclComm_t comm, tcclStream_t stream);
tcclResult_t tcclRecv(void* recvbuff, size_t count, tcclDataType_t datatype, int peer,
                      tcclComm_t comm, tcclStream_t stream);

/* ---- groups ---- */
tcclResult_t tcclGroupStart(void);
tcclResult_t tcclGroupEnd(void);

/* ---- determinism reference ---- */
/* Computes on the calling thread the result a reduction over nranks inputs must produce
 * (inputs[i] is rank i's buffer of count elements). See docs/determinism.md. */
tcclResult_t tcclReduceReference(const void* const* inputs, int nranks, void* output, size_t count,
                                 tcclDataType_t datatype, tcclRedOp_t op);

#ifdef __cplusplus
}
#endif

#endif /* TCCL_TCCL_H_ */
