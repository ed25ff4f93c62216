// out[i, :] = x[rows[i], :] (halo packing), out[rows[i], :] += x[i, :] (its transpose) and
// out[rows[i], :] = x[i, :] (overwrite, distinct ids).
// Shapes: x, out row-major with f columns; rows: num_rows ids. One thread per element.
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void gather_rows_kernel(global_ptr<const float> __restrict__ x, std::int32_t x_rows,
                                   std::int32_t f, global_ptr<const std::int32_t> __restrict__ rows,
                                   std::int64_t n, global_ptr<float> __restrict__ out,
                                   global_ptr<unsigned> status) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / f;
        const std::int64_t j = e - i * f;
        const std::int32_t row = rows[i];
        if (row < 0 || row >= x_rows) {
            atomicOr(status, bad_gather_row);
            out[e] = 0.0f;
            continue;
        }
        out[e] = x[static_cast<std::int64_t>(row) * f + j];
    }
}

__global__ void scatter_add_rows_kernel(global_ptr<const float> __restrict__ x, std::int32_t f,
                                        global_ptr<const std::int32_t> __restrict__ rows,
                                        std::int64_t n, global_ptr<float> out,
                                        std::int32_t out_rows, global_ptr<unsigned> status) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / f;
        const std::int64_t j = e - i * f;
        const std::int32_t row = rows[i];
        if (row < 0 || row >= out_rows) {
            atomicOr(status, bad_scatter_row);
            continue;
        }
        atomicAdd(out + static_cast<std::int64_t>(row) * f + j, x[e]);
    }
}

__global__ void scatter_rows_kernel(global_ptr<const float> __restrict__ x, std::int32_t f,
                                    global_ptr<const std::int32_t> __restrict__ rows,
                                    std::int64_t n, global_ptr<float> out, std::int32_t out_rows,
                                    global_ptr<unsigned> status) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / f;
        const std::int64_t j = e - i * f;
        const std::int32_t row = rows[i];
        if (row < 0 || row >= out_rows) {
            atomicOr(status, bad_scatter_set_row);
            continue;
        }
        out[static_cast<std::int64_t>(row) * f + j] = x[e];
    }
}

}  // namespace

cudaError_t gather_rows(const float* x, std::int32_t x_rows, std::int32_t f,
                        const std::int32_t* rows, std::int64_t num_rows, float* out,
                        unsigned* status, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(num_rows) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(gather_rows_kernel, grid_blocks(n), block_threads, stream, x, x_rows, f, rows,
                  static_cast<std::int64_t>(n), out, status);
    return cudaGetLastError();
}

cudaError_t scatter_add_rows(const float* x, std::int32_t f, const std::int32_t* rows,
                             std::int64_t num_rows, float* out, std::int32_t out_rows,
                             unsigned* status, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(num_rows) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(scatter_add_rows_kernel, grid_blocks(n), block_threads, stream, x, f, rows,
                  static_cast<std::int64_t>(n), out, out_rows, status);
    return cudaGetLastError();
}

cudaError_t scatter_rows(const float* x, std::int32_t f, const std::int32_t* rows,
                         std::int64_t num_rows, float* out, std::int32_t out_rows, unsigned* status,
                         cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(num_rows) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(scatter_rows_kernel, grid_blocks(n), block_threads, stream, x, f, rows,
                  static_cast<std::int64_t>(n), out, out_rows, status);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
