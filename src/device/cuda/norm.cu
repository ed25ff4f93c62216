// Normalisation kernels, formulas and operation order of src/device/cpu/cpu_norm.cpp:
//   layer_norm:   one warp per row i: μ, σ² (biased) in double (two passes, warp sums),
//                 r = 1/sqrt(σ² + eps);  y[i, j] = (x[i, j] - μ) r gamma[j] + beta[j].
//   layer_norm_backward: row statistics into the workspace (a warp per row); dgamma[j] +=
//                 Σ_i dy x̂, dbeta[j] += Σ_i dy (double over the CPU's fixed row chunks, chunks
//                 in order); then per row dx = r (g - A/cols - x̂ B/cols) + beta dx with g =
//                 dy gamma, A = Σ_j g, B = Σ_j g x̂ (double warp sums). dx after the sums: it may
//                 alias dy.
//   centered_column_sums: out[j] = Σ_i d (w ? w : d) + beta out[j], d = (x - mean[j]) s[j],
//                 s = 1/sqrt(var[j] + eps) (double) or 1; double over the row chunks.
//   batch_norm:   y = (x - mean[j]) r gamma[j] + beta[j], r = 1/sqrtf(var[j] + eps).
//   batch_norm_backward: dx = gamma r (dy - m1 - x̂ m2) + beta dx, m1 = sum_dy/count,
//                 m2 = sum_dy_xhat/count.
// x, y, dy, dx, w: rows x cols; per-column vectors: cols. Sums in a different order than the CPU
// (warp trees), so results agree to rounding, not bit for bit (the elementwise batch_norm pair is
// bitwise).
#include <algorithm>

#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

constexpr int warp = 32;
constexpr int warps_per_block = block_threads / warp;
// The CPU's row chunks of column reductions: chunk_rows = max(256, ceil(rows / 64)).
constexpr std::int32_t min_chunk_rows = 256;
constexpr std::int32_t max_chunks = 64;

std::int32_t chunk_rows_for(std::int32_t rows) {
    return std::max(min_chunk_rows, (rows + max_chunks - 1) / max_chunks);
}

std::int32_t chunks_for(std::int32_t rows) {
    const std::int32_t chunk_rows = chunk_rows_for(rows);
    return rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
}

/// Blocks for one warp per row (grid-stride over rows beyond the cap).
unsigned row_blocks(std::int32_t rows) {
    const std::size_t blocks =
        (static_cast<std::size_t>(rows) + warps_per_block - 1) / warps_per_block;
    return static_cast<unsigned>(std::min(blocks, max_blocks));
}

unsigned column_blocks(std::int32_t cols) {
    return static_cast<unsigned>((cols + block_threads - 1) / block_threads);
}

/// Σ over the warp; every lane gets the same bits (a symmetric butterfly).
__device__ double warp_sum(double v) {
    for (int offset = warp / 2; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffffU, v, offset);
    }
    return v;
}

struct RowStats {
    float mean;
    float inv_std;
};

/// μ and 1/sqrt(σ² + eps) of row xi, computed by the whole warp (lane = its lane).
__device__ RowStats warp_row_stats(global_ptr<const float> xi, std::int32_t cols, float eps,
                                   int lane) {
    double sum = 0.0;
    for (std::int32_t j = lane; j < cols; j += warp) {
        sum += static_cast<double>(xi[j]);
    }
    sum = warp_sum(sum);
    const double mean = cols > 0 ? sum / static_cast<double>(cols) : 0.0;
    double sq = 0.0;
    for (std::int32_t j = lane; j < cols; j += warp) {
        const double d = static_cast<double>(xi[j]) - mean;
        sq += d * d;
    }
    sq = warp_sum(sq);
    const double var = cols > 0 ? sq / static_cast<double>(cols) : 0.0;
    return {static_cast<float>(mean),
            static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)))};
}

__device__ std::int64_t warp_row() {
    return static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / warp;
}

__device__ std::int64_t warp_row_stride() {
    return static_cast<std::int64_t>(gridDim.x) * warps_per_block;
}

__global__ void layer_norm_kernel(global_ptr<const float> __restrict__ x, std::int32_t rows,
                                  std::int32_t cols, global_ptr<const float> __restrict__ gamma,
                                  global_ptr<const float> __restrict__ beta, float eps,
                                  global_ptr<float> __restrict__ y) {
    const int lane = static_cast<int>(threadIdx.x % warp);
    for (std::int64_t i = warp_row(); i < rows; i += warp_row_stride()) {
        global_ptr<const float> xi = x + i * cols;
        global_ptr<float> yi = y + i * cols;
        const RowStats s = warp_row_stats(xi, cols, eps, lane);
        for (std::int32_t j = lane; j < cols; j += warp) {
            yi[j] = (xi[j] - s.mean) * s.inv_std * gamma[j] + beta[j];
        }
    }
}

/// stats[2 i] = μ_i, stats[2 i + 1] = r_i.
__global__ void row_stats_kernel(global_ptr<const float> __restrict__ x, std::int32_t rows,
                                 std::int32_t cols, float eps,
                                 global_ptr<float> __restrict__ stats) {
    const int lane = static_cast<int>(threadIdx.x % warp);
    for (std::int64_t i = warp_row(); i < rows; i += warp_row_stride()) {
        const RowStats s = warp_row_stats(x + i * cols, cols, eps, lane);
        if (lane == 0) {
            stats[2 * i] = s.mean;
            stats[2 * i + 1] = s.inv_std;
        }
    }
}

/// partial[c, 0, j] = Σ_{i in chunk c} dy x̂, partial[c, 1, j] = Σ dy (double).
__global__ void layer_norm_param_partials_kernel(global_ptr<const float> __restrict__ x,
                                                 global_ptr<const float> __restrict__ dy,
                                                 std::int32_t rows, std::int32_t cols,
                                                 std::int32_t chunk_rows,
                                                 global_ptr<const float> __restrict__ stats,
                                                 global_ptr<double> __restrict__ partial) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    const std::int32_t c = static_cast<std::int32_t>(blockIdx.y);
    const std::int32_t last = min(rows, (c + 1) * chunk_rows);
    double pg = 0.0;
    double pb = 0.0;
    for (std::int32_t i = c * chunk_rows; i < last; ++i) {
        const std::int64_t e = static_cast<std::int64_t>(i) * cols + j;
        const float xhat = (x[e] - stats[2 * i]) * stats[2 * i + 1];
        const float d = dy[e];
        pg += static_cast<double>(d) * static_cast<double>(xhat);
        pb += static_cast<double>(d);
    }
    partial[(2 * static_cast<std::int64_t>(c)) * cols + j] = pg;
    partial[(2 * static_cast<std::int64_t>(c) + 1) * cols + j] = pb;
}

__global__ void layer_norm_param_finish_kernel(global_ptr<const double> __restrict__ partial,
                                               std::int32_t chunks, std::int32_t cols,
                                               global_ptr<float> __restrict__ dgamma,
                                               global_ptr<float> __restrict__ dbeta) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    double sg = 0.0;
    double sb = 0.0;
    for (std::int32_t c = 0; c < chunks; ++c) {
        sg += partial[(2 * static_cast<std::int64_t>(c)) * cols + j];
        sb += partial[(2 * static_cast<std::int64_t>(c) + 1) * cols + j];
    }
    if (dgamma != nullptr) {
        dgamma[j] += static_cast<float>(sg);
    }
    if (dbeta != nullptr) {
        dbeta[j] += static_cast<float>(sb);
    }
}

__global__ void layer_norm_dx_kernel(global_ptr<const float> __restrict__ x,
                                     global_ptr<const float> dy, std::int32_t rows,
                                     std::int32_t cols, global_ptr<const float> __restrict__ gamma,
                                     global_ptr<const float> __restrict__ stats,
                                     global_ptr<float> dx, float beta) {
    const int lane = static_cast<int>(threadIdx.x % warp);
    for (std::int64_t i = warp_row(); i < rows; i += warp_row_stride()) {
        global_ptr<const float> xi = x + i * cols;
        global_ptr<const float> dyi = dy + i * cols;
        global_ptr<float> dxi = dx + i * cols;
        const float mean = stats[2 * i];
        const float r = stats[2 * i + 1];
        double a = 0.0;
        double b = 0.0;
        for (std::int32_t j = lane; j < cols; j += warp) {
            const float xhat = (xi[j] - mean) * r;
            const float g = dyi[j] * gamma[j];
            a += static_cast<double>(g);
            b += static_cast<double>(g) * static_cast<double>(xhat);
        }
        a = warp_sum(a);
        b = warp_sum(b);
        const auto mean_g = static_cast<float>(a / static_cast<double>(cols));
        const auto mean_gx = static_cast<float>(b / static_cast<double>(cols));
        for (std::int32_t j = lane; j < cols; j += warp) {  // each lane its own j: dy read first
            const float xhat = (xi[j] - mean) * r;
            const float v = r * (dyi[j] * gamma[j] - mean_g - xhat * mean_gx);
            dxi[j] = beta == 0.0f ? v : v + beta * dxi[j];
        }
    }
}

__global__ void centered_partials_kernel(global_ptr<const float> __restrict__ x, std::int32_t rows,
                                         std::int32_t cols, std::int32_t chunk_rows,
                                         global_ptr<const float> __restrict__ mean,
                                         global_ptr<const float> __restrict__ var, float eps,
                                         global_ptr<const float> __restrict__ w,
                                         global_ptr<double> __restrict__ partial) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    const double scale =
        var != nullptr ? 1.0 / sqrt(static_cast<double>(var[j]) + static_cast<double>(eps)) : 1.0;
    const std::int32_t c = static_cast<std::int32_t>(blockIdx.y);
    const std::int32_t last = min(rows, (c + 1) * chunk_rows);
    double acc = 0.0;
    for (std::int32_t i = c * chunk_rows; i < last; ++i) {
        const std::int64_t e = static_cast<std::int64_t>(i) * cols + j;
        const double d = (static_cast<double>(x[e]) - static_cast<double>(mean[j])) * scale;
        acc += d * (w != nullptr ? static_cast<double>(w[e]) : d);
    }
    partial[static_cast<std::int64_t>(c) * cols + j] = acc;
}

__global__ void centered_finish_kernel(global_ptr<const double> __restrict__ partial,
                                       std::int32_t chunks, std::int32_t cols,
                                       global_ptr<float> __restrict__ out, float beta) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    double sum = 0.0;
    for (std::int32_t c = 0; c < chunks; ++c) {
        sum += partial[static_cast<std::int64_t>(c) * cols + j];
    }
    const auto s = static_cast<float>(sum);
    out[j] = beta == 0.0f ? s : s + beta * out[j];
}

__global__ void batch_norm_kernel(global_ptr<const float> x, std::int64_t n, std::int32_t cols,
                                  global_ptr<const float> __restrict__ mean,
                                  global_ptr<const float> __restrict__ var, float eps,
                                  global_ptr<const float> __restrict__ gamma,
                                  global_ptr<const float> __restrict__ beta, global_ptr<float> y) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t j = e % cols;
        const float r = 1.0f / sqrtf(var[j] + eps);
        y[e] = (x[e] - mean[j]) * r * gamma[j] + beta[j];
    }
}

__global__ void batch_norm_backward_kernel(
    global_ptr<const float> __restrict__ x, global_ptr<const float> dy, std::int64_t n,
    std::int32_t cols, global_ptr<const float> __restrict__ mean,
    global_ptr<const float> __restrict__ var, float eps, global_ptr<const float> __restrict__ gamma,
    global_ptr<const float> __restrict__ sum_dy, global_ptr<const float> __restrict__ sum_dy_xhat,
    double count, global_ptr<float> dx, float beta) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t j = e % cols;
        const float r = 1.0f / sqrtf(var[j] + eps);
        const auto m1 = static_cast<float>(static_cast<double>(sum_dy[j]) / count);
        const auto m2 = static_cast<float>(static_cast<double>(sum_dy_xhat[j]) / count);
        const float xhat = (x[e] - mean[j]) * r;
        const float v = gamma[j] * r * (dy[e] - m1 - xhat * m2);
        dx[e] = beta == 0.0f ? v : v + beta * dx[e];
    }
}

}  // namespace

cudaError_t layer_norm(const float* x, std::int32_t rows, std::int32_t cols, const float* gamma,
                       const float* beta, float eps, float* y, cudaStream_t stream) {
    if (rows == 0 || cols == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(layer_norm_kernel, row_blocks(rows), block_threads, stream, x, rows, cols, gamma,
                  beta, eps, y);
    return cudaGetLastError();
}

std::size_t layer_norm_backward_workspace_bytes(std::int32_t rows, std::int32_t cols) {
    return 2 * static_cast<std::size_t>(chunks_for(rows)) * static_cast<std::size_t>(cols) *
               sizeof(double) +
           2 * static_cast<std::size_t>(rows) * sizeof(float);
}

cudaError_t layer_norm_backward(const float* x, const float* dy, std::int32_t rows,
                                std::int32_t cols, const float* gamma, float eps, float* dx,
                                float beta, float* dgamma, float* dbeta, void* workspace,
                                cudaStream_t stream) {
    if (rows == 0 || cols == 0) {
        return cudaSuccess;
    }
    const std::int32_t chunks = chunks_for(rows);
    auto* partial = static_cast<double*>(workspace);
    auto* stats = reinterpret_cast<float*>(partial + 2 * static_cast<std::size_t>(chunks) *
                                                         static_cast<std::size_t>(cols));
    STRATA_LAUNCH(row_stats_kernel, row_blocks(rows), block_threads, stream, x, rows, cols, eps,
                  stats);
    if (dgamma != nullptr || dbeta != nullptr) {
        STRATA_LAUNCH(layer_norm_param_partials_kernel,
                      dim3(column_blocks(cols), static_cast<unsigned>(chunks)), block_threads,
                      stream, x, dy, rows, cols, chunk_rows_for(rows), stats, partial);
        STRATA_LAUNCH(layer_norm_param_finish_kernel, column_blocks(cols), block_threads, stream,
                      partial, chunks, cols, dgamma, dbeta);
    }
    if (dx != nullptr) {
        STRATA_LAUNCH(layer_norm_dx_kernel, row_blocks(rows), block_threads, stream, x, dy, rows,
                      cols, gamma, stats, dx, beta);
    }
    return cudaGetLastError();
}

std::size_t centered_column_sums_workspace_bytes(std::int32_t rows, std::int32_t cols) {
    return static_cast<std::size_t>(chunks_for(rows)) * static_cast<std::size_t>(cols) *
           sizeof(double);
}

cudaError_t centered_column_sums(const float* x, std::int32_t rows, std::int32_t cols,
                                 const float* mean, const float* var, float eps, const float* w,
                                 float* out, float beta, void* workspace, cudaStream_t stream) {
    if (cols == 0) {
        return cudaSuccess;
    }
    const std::int32_t chunks = chunks_for(rows);
    auto* partial = static_cast<double*>(workspace);
    if (chunks > 0) {
        STRATA_LAUNCH(centered_partials_kernel,
                      dim3(column_blocks(cols), static_cast<unsigned>(chunks)), block_threads,
                      stream, x, rows, cols, chunk_rows_for(rows), mean, var, eps, w, partial);
    }
    STRATA_LAUNCH(centered_finish_kernel, column_blocks(cols), block_threads, stream, partial,
                  chunks, cols, out, beta);
    return cudaGetLastError();
}

cudaError_t batch_norm(const float* x, std::int32_t rows, std::int32_t cols, const float* mean,
                       const float* var, float eps, const float* gamma, const float* beta, float* y,
                       cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(batch_norm_kernel, grid_blocks(n), block_threads, stream, x,
                  static_cast<std::int64_t>(n), cols, mean, var, eps, gamma, beta, y);
    return cudaGetLastError();
}

cudaError_t batch_norm_backward(const float* x, const float* dy, std::int32_t rows,
                                std::int32_t cols, const float* mean, const float* var, float eps,
                                const float* gamma, const float* sum_dy, const float* sum_dy_xhat,
                                double count, float* dx, float beta, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(batch_norm_backward_kernel, grid_blocks(n), block_threads, stream, x, dy,
                  static_cast<std::int64_t>(n), cols, mean, var, eps, gamma, sum_dy, sum_dy_xhat,
                  count, dx, beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
