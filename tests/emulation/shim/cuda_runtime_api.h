// The CUDA names the kernels of src/device/cuda use, for the host: found instead of the toolkit's
// cuda_runtime_api.h by the emulated build (tests/emulation/CMakeLists.txt puts this folder first
// and defines STRATA_CUDA_EMULATION), so the .cu files compile with g++ unchanged.
//   __global__, __device__, __host__: nothing (kernels are host functions, launched by
//     STRATA_LAUNCH through strata::emu::launch); __shared__: static (blocks run one after another
//     on one host thread, so a static is the block's shared memory); __restrict__: nothing.
//   threadIdx, blockIdx, blockDim, gridDim: the scheduler's values for the running fiber.
//   __syncthreads(): a barrier of the block's fibers; __shfl_xor_sync: a warp exchange (full
//     mask); atomics: plain read-modify-writes (the fibers of a block never run at the same time).
// Every other CUDA construct fails to compile: the intrinsics below with a static_assert naming
// them, anything else (dynamic `extern __shared__`, __constant__, textures, cooperative groups)
// as an undeclared name. Add a construct here, with a test in test_emulator.cpp, before a kernel
// uses it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tests/emulation/checked_ptr.hpp"
#include "tests/emulation/emulator.hpp"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__

using strata::emu::dim3;
using strata::emu::uint3;

inline const uint3& threadIdx = strata::emu::detail::thread_idx;
inline const uint3& blockIdx = strata::emu::detail::block_idx;
inline const dim3& blockDim = strata::emu::detail::block_dim;
inline const dim3& gridDim = strata::emu::detail::grid_dim;
inline constexpr int warpSize = 32;

// --- the runtime API the .cu files call ---------------------------------------------------------

enum cudaError_t : int { cudaSuccess = 0, cudaErrorInvalidConfiguration = 9 };
using cudaStream_t = struct CUstream_st*;

inline cudaError_t cudaGetLastError() {
    return static_cast<cudaError_t>(strata::emu::detail::take_last_error());
}
inline const char* cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : "invalid configuration argument";
}
/// Synchronous: the emulation has no streams. Checked against the buffer like a kernel's writes.
template <class T>
cudaError_t cudaMemsetAsync(strata::emu::checked_ptr<T> p, int value, std::size_t bytes,
                            cudaStream_t /*stream*/) {
    if (bytes > 0) {
        const auto* last = reinterpret_cast<const unsigned char*>(p.get()) + bytes - 1;
        (void)strata::emu::checked_ptr<const unsigned char>(last)[0];  // in its buffer
        (void)p[0];
        std::memset(static_cast<void*>(p.get()), value, bytes);
    }
    return cudaSuccess;
}

// --- device functions ---------------------------------------------------------------------------

inline void __syncthreads() {
    strata::emu::detail::block_barrier();
}

/// __shfl_xor_sync(mask, v, lane_mask): v of lane (lane ^ lane_mask); every lane of a full warp.
template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = warpSize) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(std::uint64_t),
                  "CUDA emulation: __shfl_xor_sync of a type wider than 8 bytes");
    if (mask != 0xffffffffU || width != warpSize) {
        strata::emu::detail::fault("__shfl_xor_sync with a partial mask or width is not emulated");
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    bits = strata::emu::detail::warp_exchange(bits, static_cast<unsigned>(lane_mask) % warpSize);
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}

template <class T>
T atomicAdd(strata::emu::checked_ptr<T> p, std::type_identity_t<T> v) {
    const T old = p[0];
    p[0] = old + v;
    return old;
}
template <class T>
T atomicOr(strata::emu::checked_ptr<T> p, std::type_identity_t<T> v) {
    const T old = p[0];
    p[0] = old | v;
    return old;
}
template <class T>
T atomicMax(strata::emu::checked_ptr<T> p, std::type_identity_t<T> v) {
    const T old = p[0];
    p[0] = old < v ? v : old;
    return old;
}

// CUDA's min/max of the integer and floating types (device overloads in global scope).
#define STRATA_EMU_MIN_MAX(T) \
    inline T min(T a, T b) {  \
        return b < a ? b : a; \
    }                         \
    inline T max(T a, T b) {  \
        return a < b ? b : a; \
    }
STRATA_EMU_MIN_MAX(int)
STRATA_EMU_MIN_MAX(unsigned)
STRATA_EMU_MIN_MAX(long)
STRATA_EMU_MIN_MAX(unsigned long)
STRATA_EMU_MIN_MAX(long long)
STRATA_EMU_MIN_MAX(unsigned long long)
#undef STRATA_EMU_MIN_MAX
using std::max;  // float, double: std's
using std::min;

// --- what the emulation cannot express: a kernel using it does not compile ----------------------

namespace strata::emu::detail {
template <class...>
inline constexpr bool not_emulated = false;
}  // namespace strata::emu::detail

#define STRATA_EMU_NOT_EMULATED(name)                                                             \
    template <class... A>                                                                         \
    int name(A...) {                                                                              \
        static_assert(strata::emu::detail::not_emulated<A...>,                                    \
                      "CUDA emulation: " #name                                                    \
                      " is not emulated (tests/emulation/shim/"                                   \
                      "cuda_runtime_api.h); add it there, with a test, before a kernel uses it"); \
        return 0;                                                                                 \
    }
STRATA_EMU_NOT_EMULATED(__syncwarp)
STRATA_EMU_NOT_EMULATED(__shfl_sync)
STRATA_EMU_NOT_EMULATED(__shfl_up_sync)
STRATA_EMU_NOT_EMULATED(__shfl_down_sync)
STRATA_EMU_NOT_EMULATED(__ballot_sync)
STRATA_EMU_NOT_EMULATED(__any_sync)
STRATA_EMU_NOT_EMULATED(__all_sync)
STRATA_EMU_NOT_EMULATED(__activemask)
STRATA_EMU_NOT_EMULATED(__reduce_add_sync)
STRATA_EMU_NOT_EMULATED(__syncthreads_count)
STRATA_EMU_NOT_EMULATED(__syncthreads_or)
STRATA_EMU_NOT_EMULATED(__syncthreads_and)
STRATA_EMU_NOT_EMULATED(__threadfence)
STRATA_EMU_NOT_EMULATED(__threadfence_block)
STRATA_EMU_NOT_EMULATED(__ldg)
STRATA_EMU_NOT_EMULATED(atomicCAS)
STRATA_EMU_NOT_EMULATED(atomicExch)
STRATA_EMU_NOT_EMULATED(atomicSub)
STRATA_EMU_NOT_EMULATED(atomicMin)
STRATA_EMU_NOT_EMULATED(atomicAnd)
STRATA_EMU_NOT_EMULATED(atomicXor)
STRATA_EMU_NOT_EMULATED(atomicInc)
STRATA_EMU_NOT_EMULATED(atomicDec)
STRATA_EMU_NOT_EMULATED(clock64)
STRATA_EMU_NOT_EMULATED(__nanosleep)
#undef STRATA_EMU_NOT_EMULATED
