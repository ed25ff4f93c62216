// Launch geometry shared by the .cu files: 1-D grid-stride loops over 64-bit element counts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace strata::cuda::kernels {

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
