// Element operations on the device with exactly the semantics of the host kernels
// (kernels/host/reduce.h, docs/determinism.md): integers wrap; floats round to nearest even in
// their own precision; 16-bit floats widen to float32, operate, and round back once per node;
// every NaN result is the canonical quiet NaN (GPUs produce 0x7fffffff, x86 keeps a payload:
// neither may leak into results); max/min order +0 above -0.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/host/half.h"

namespace tccl {
namespace cuda {

__device__ __forceinline__ float CanonF(float r) { return r != r ? __int_as_float(0x7fc00000) : r; }
__device__ __forceinline__ double CanonD(double r) {
  return r != r ? __longlong_as_double(0x7ff8000000000000ll) : r;
}

template <typename T>
struct IntOps {
  using Store = T;
  using U = typename std::make_unsigned<T>::type;
  __device__ static T Sum(T a, T b) { return (T)(U)((U)a + (U)b); }
  __device__ static T Prod(T a, T b) { return (T)(U)((U)a * (U)b); }
  __device__ static T Max(T a, T b) { return a > b ? a : b; }
  __device__ static T Min(T a, T b) { return a < b ? a : b; }
  __device__ static T Divide(T a, int n) { return (T)(a / (T)n); }
};

template <typename T>
__device__ __forceinline__ T Canon(T r);
template <>
__device__ __forceinline__ float Canon<float>(float r) { return CanonF(r); }
template <>
__device__ __forceinline__ double Canon<double>(double r) { return CanonD(r); }

template <typename T>
__device__ __forceinline__ bool SignBit(T x) { return signbit(x); }

// A NaN operand of a division comes back quieted with its payload, as x86 returns it: for N = 1
// the tree is the input itself, so avg divides the input's own NaN (tcclReduceReference's bits).
__device__ __forceinline__ float Quiet(float a) { return __int_as_float(__float_as_int(a) | 0x00400000); }
__device__ __forceinline__ double Quiet(double a) {
  return __longlong_as_double(__double_as_longlong(a) | 0x0008000000000000ll);
}

template <typename T>
struct FloatOps {
  using Store = T;
  __device__ static T Sum(T a, T b) { return Canon<T>(a + b); }
  __device__ static T Prod(T a, T b) { return Canon<T>(a * b); }
  __device__ static T Max(T a, T b) {
    if (a > b) return a;
    if (b > a) return b;
    if (a == b) return SignBit(a) ? b : a;
    return Canon<T>(a + b);  // a NaN operand: the canonical NaN
  }
  __device__ static T Min(T a, T b) {
    if (a < b) return a;
    if (b < a) return b;
    if (a == b) return SignBit(a) ? a : b;
    return Canon<T>(a + b);
  }
  __device__ static T Divide(T a, int n) { return a != a ? Quiet(a) : a / (T)n; }
};

// 16-bit floats stored as uint16_t; Widen/Narrow are the host's own conversions (half.h).
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
struct Half16Ops {
  using Store = uint16_t;
  using F = FloatOps<float>;
  __device__ static uint16_t Sum(uint16_t a, uint16_t b) { return Narrow(F::Sum(Widen(a), Widen(b))); }
  __device__ static uint16_t Prod(uint16_t a, uint16_t b) { return Narrow(F::Prod(Widen(a), Widen(b))); }
  __device__ static uint16_t Max(uint16_t a, uint16_t b) { return Narrow(F::Max(Widen(a), Widen(b))); }
  __device__ static uint16_t Min(uint16_t a, uint16_t b) { return Narrow(F::Min(Widen(a), Widen(b))); }
  __device__ static uint16_t Divide(uint16_t a, int n) { return Narrow(F::Divide(Widen(a), n)); }
};
// float16 through the hardware conversions (exact widening; round-to-nearest-even narrowing with
// IEEE overflow and subnormals, as FloatToHalf does), except for NaNs, whose payload handling the
// hardware does not share with the host: those take the host's functions. The software
// conversion alone ran the float16 sum at 37-82% of memcpy bandwidth on an H100.
__device__ __forceinline__ float HalfToFloatFast(uint16_t h) {
  return ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) ? HalfToFloat(h) : __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ uint16_t FloatToHalfFast(float f) {
  return f != f ? FloatToHalf(f) : __half_as_ushort(__float2half_rn(f));
}
using HalfOps = Half16Ops<&HalfToFloatFast, &FloatToHalfFast>;
using Bf16Ops = Half16Ops<&Bf16ToFloat, &FloatToBf16>;

// The binary op as a type, so kernels are instantiated per (dtype, op).
enum class OpKind { Sum, Prod, Max, Min };

template <class Ops, OpKind K>
struct Bin {
  using T = typename Ops::Store;
  __device__ static T Apply(T a, T b) {
    if constexpr (K == OpKind::Sum) return Ops::Sum(a, b);
    else if constexpr (K == OpKind::Prod) return Ops::Prod(a, b);
    else if constexpr (K == OpKind::Max) return Ops::Max(a, b);
    else return Ops::Min(a, b);
  }
};

// The canonical tree over v[LO..HI): split at LO + ceil((HI-LO)/2), left subtree is the left operand.
template <class B, int LO, int HI>
__device__ __forceinline__ typename B::T Tree(const typename B::T* v) {
  if constexpr (HI - LO == 1) {
    return v[LO];
  } else {
    constexpr int MID = LO + (HI - LO + 1) / 2;
    return B::Apply(Tree<B, LO, MID>(v), Tree<B, MID, HI>(v));
  }
}

// The same tree for a rank count known only at run time, as a postfix program (TreeInputs):
// a stack machine, because recursion would need a stack deeper than CUDA's default.
template <class B>
__device__ typename B::T TreeProgram(const typename B::T* v, const signed char* program, int length) {
  typename B::T stack[16];  // depth <= log2(64) + 2
  int top = 0;
  for (int i = 0; i < length; ++i) {
    int op = program[i];
    if (op >= 0) {
      stack[top++] = v[op];
    } else {
      typename B::T right = stack[--top];
      stack[top - 1] = B::Apply(stack[top - 1], right);
    }
  }
  return stack[0];
}

}  // namespace cuda
}  // namespace tccl
