// Launch geometry shared by the .cu files: 1-D grid-stride loops over 64-bit element counts, and
// STRATA_LAUNCH(kernel, grid, block, stream, args...), the one way a .cu file launches a kernel:
// kernel<<<grid, block, 0, stream>>>(args...) on the device. In the test-only host emulation
// (tests/emulation, STRATA_CUDA_EMULATION) it is strata::emu::launch, which runs the same kernel
// on the host, a fiber per CUDA thread, every global_ptr access bounds-checked: the code under
// test there is the code a GPU runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>  // the emulation's shim in the emulated build

#include "src/device/cuda/global_ptr.hpp"

#if defined(STRATA_CUDA_EMULATION)
#define STRATA_LAUNCH(kernel, grid, block, stream, ...) \
    ::strata::emu::launch(#kernel, __FILE__, kernel, (grid), (block), (stream), __VA_ARGS__)
#else
#define STRATA_LAUNCH(kernel, grid, block, stream, ...) \
    kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif

namespace strata::cuda::kernels {

using cuda::global_ptr;

/// Threads per block of the elementwise kernels.
inline constexpr int block_threads = 256;
/// Grid cap: enough blocks to fill any current GPU; the loops stride over the rest.
inline constexpr std::size_t max_blocks = std::size_t{1} << 16;

/// Blocks for n elements, one per thread, capped (n > 0).
inline unsigned grid_blocks(std::size_t n) {
    const std::size_t blocks = (n + block_threads - 1) / block_threads;
    return static_cast<unsigned>(std::min(blocks, max_blocks));
}

/// Index of this thread in a 1-D grid and the grid's stride, both 64-bit.
__device__ inline std::int64_t thread_index() {
    return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() {
    return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace strata::cuda::kernels
