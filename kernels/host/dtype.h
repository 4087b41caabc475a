// Data-type facts shared by every layer: element sizes, names, validity.
#pragma once

#include <cstddef>

#include "tccl/tccl.h"

namespace tccl {

inline bool ValidDtype(int dt) { return dt >= 0 && dt < tcclNumTypes; }
inline bool ValidOp(int op) { return op >= 0 && op < tcclNumOps; }

inline size_t DtypeSize(tcclDataType_t dt) {
  switch (dt) {
    case tcclInt8: case tcclUint8: return 1;
    case tcclFloat16: case tcclBfloat16: return 2;
    case tcclInt32: case tcclUint32: case tcclFloat32: return 4;
    case tcclInt64: case tcclUint64: case tcclFloat64: return 8;
    default: return 0;
  }
}

inline bool DtypeIsFloat(tcclDataType_t dt) {
  return dt == tcclFloat16 || dt == tcclBfloat16 || dt == tcclFloat32 || dt == tcclFloat64;
}

inline const char* DtypeName(tcclDataType_t dt) {
  static const char* names[] = {"int8",    "uint8",   "int32",  "uint32", "int64",
                                "uint64",  "half",    "float",  "double", "bfloat16"};
  return ValidDtype(dt) ? names[dt] : "invalid";
}

inline const char* OpName(tcclRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return ValidOp(op) ? names[op] : "invalid";
}

}  // namespace tccl
