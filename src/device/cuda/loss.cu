// Softmax cross-entropy over the selected rows (mask[i] != 0 and labels[i] >= 0).
//   logits, dlogits: rows x classes; labels, mask: rows.
//   loss_i = log Σ_j e_ij - (l_i,label - max_i),  e_ij = exp(l_ij - max_i) in float, the sum
//            and the log in double
//   dlogits[i, :] = e_i · float(grad_scale / Σ_j e_ij) - grad_scale · onehot(label_i); 0 for
//            unselected rows.
// Three kernels, deterministic and in the CPU's order (src/device/cpu/cpu_loss.cpp): one thread
// per row (sequential over classes; argmax ties go to the lowest index), one thread per chunk of
// 256 rows summing in row order, then one block adding the chunk partials in chunk order.
#include <cmath>

#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

/// Rows per partial loss sum, as on the CPU.
constexpr std::int32_t chunk_rows = 256;

enum RowState : std::uint8_t { unselected = 0, selected = 1, selected_correct = 2 };

/// The kernels' scratch, carved out of one workspace block (8-byte aligned fields first).
struct Scratch {
    global_ptr<unsigned long long> bad;  ///< max over bad rows of (rows - row); 0 when none
    global_ptr<double> chunk_loss;
    global_ptr<long long> chunk_count;
    global_ptr<long long> chunk_correct;
    global_ptr<double> row_loss;
    global_ptr<std::uint8_t> row_state;
};

__host__ __device__ std::int32_t chunks_for(std::int32_t rows) {
    return (rows + chunk_rows - 1) / chunk_rows;
}

Scratch carve(void* workspace, std::int32_t rows) {
    const auto chunks = static_cast<std::size_t>(chunks_for(rows));
    char* p = static_cast<char*>(workspace);
    Scratch s{};
    s.bad = reinterpret_cast<unsigned long long*>(p);
    p += sizeof(unsigned long long);
    s.chunk_loss = reinterpret_cast<double*>(p);
    p += chunks * sizeof(double);
    s.chunk_count = reinterpret_cast<long long*>(p);
    p += chunks * sizeof(long long);
    s.chunk_correct = reinterpret_cast<long long*>(p);
    p += chunks * sizeof(long long);
    s.row_loss = reinterpret_cast<double*>(p);
    p += static_cast<std::size_t>(rows) * sizeof(double);
    s.row_state = reinterpret_cast<std::uint8_t*>(p);
    return s;
}

__global__ void row_kernel(global_ptr<const float> __restrict__ logits, std::int32_t rows,
                           std::int32_t classes, global_ptr<const std::int32_t> __restrict__ labels,
                           global_ptr<const std::uint8_t> __restrict__ mask, float grad_scale,
                           global_ptr<float> __restrict__ dlogits, Scratch s) {
    for (std::int64_t r = thread_index(); r < rows; r += grid_stride()) {
        global_ptr<const float> li = logits + r * classes;
        global_ptr<float> di = dlogits == nullptr ? nullptr : dlogits + r * classes;
        const std::int32_t label = labels[r];
        s.row_loss[r] = 0.0;
        s.row_state[r] = unselected;
        if (mask[r] == 0 || label < 0 || classes == 0 || label >= classes) {
            if (mask[r] != 0 && label >= classes) {
                atomicMax(s.bad, static_cast<unsigned long long>(rows - r));
            }
            if (di != nullptr) {
                for (std::int32_t j = 0; j < classes; ++j) {
                    di[j] = 0.0f;
                }
            }
            continue;
        }
        std::int32_t best = 0;
        for (std::int32_t j = 1; j < classes; ++j) {
            if (li[j] > li[best]) {
                best = j;
            }
        }
        // As the CPU: e_j = exp(l_j - max) once, in float (kept in the gradient row), summed in
        // double; the log in double; then dlogits_j = e_j · float(grad_scale / Σ e).
        const float max = li[best];
        double sum = 0.0;
        for (std::int32_t j = 0; j < classes; ++j) {
            const float e = expf(li[j] - max);
            if (di != nullptr) {
                di[j] = e;
            }
            sum += static_cast<double>(e);
        }
        const double log_sum = log(sum);
        s.row_loss[r] = log_sum - (static_cast<double>(li[label]) - static_cast<double>(max));
        s.row_state[r] = best == label ? selected_correct : selected;
        if (di != nullptr) {
            const auto g = static_cast<float>(static_cast<double>(grad_scale) / sum);
            for (std::int32_t j = 0; j < classes; ++j) {
                di[j] *= g;
            }
            di[label] -= grad_scale;
        }
    }
}

__global__ void chunk_kernel(std::int32_t rows, Scratch s) {
    const std::int32_t chunks = chunks_for(rows);
    for (std::int64_t c = thread_index(); c < chunks; c += grid_stride()) {
        double loss = 0.0;
        long long count = 0;
        long long correct = 0;
        const std::int64_t first = c * chunk_rows;
        const std::int64_t last = min(static_cast<std::int64_t>(rows), first + chunk_rows);
        for (std::int64_t r = first; r < last; ++r) {
            const std::uint8_t state = s.row_state[r];
            if (state != unselected) {
                loss += s.row_loss[r];
                ++count;
                correct += state == selected_correct ? 1 : 0;
            }
        }
        s.chunk_loss[c] = loss;
        s.chunk_count[c] = count;
        s.chunk_correct[c] = correct;
    }
}

/// One block: tiles of partials are staged in shared memory, thread 0 adds them in order.
__global__ void finish_kernel(std::int32_t rows, Scratch s, global_ptr<LossResult> result) {
    __shared__ double tile[block_threads];
    const std::int32_t chunks = chunks_for(rows);
    double loss = 0.0;
    long long count = 0;
    long long correct = 0;
    for (std::int32_t base = 0; base < chunks; base += block_threads) {
        const std::int32_t c = base + static_cast<std::int32_t>(threadIdx.x);
        tile[threadIdx.x] = c < chunks ? s.chunk_loss[c] : 0.0;
        __syncthreads();
        if (threadIdx.x == 0) {
            const std::int32_t n = min(block_threads, chunks - base);
            for (std::int32_t k = 0; k < n; ++k) {
                loss += tile[k];
                count += s.chunk_count[base + k];
                correct += s.chunk_correct[base + k];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        result->loss = loss;
        result->count = count;
        result->correct = correct;
        const unsigned long long bad = *s.bad;
        result->first_bad_row =
            bad == 0 ? -1 : static_cast<long long>(rows) - static_cast<long long>(bad);
    }
}

}  // namespace

std::size_t softmax_cross_entropy_workspace_bytes(std::int32_t rows) {
    const auto chunks = static_cast<std::size_t>(chunks_for(rows));
    const auto n = static_cast<std::size_t>(rows);
    return sizeof(unsigned long long) + chunks * (sizeof(double) + 2 * sizeof(long long)) +
           n * (sizeof(double) + sizeof(std::uint8_t));
}

cudaError_t softmax_cross_entropy(const float* logits, std::int32_t rows, std::int32_t classes,
                                  const std::int32_t* labels, const std::uint8_t* mask,
                                  float grad_scale, float* dlogits, void* workspace,
                                  LossResult* result, cudaStream_t stream) {
    const Scratch s = carve(workspace, rows);
    if (const cudaError_t status = cudaMemsetAsync(s.bad, 0, sizeof(unsigned long long), stream);
        status != cudaSuccess) {
        return status;
    }
    if (rows > 0) {
        const auto n = static_cast<std::size_t>(rows);
        STRATA_LAUNCH(row_kernel, grid_blocks(n), block_threads, stream, logits, rows, classes,
                      labels, mask, grad_scale, dlogits, s);
        const auto chunks = static_cast<std::size_t>(chunks_for(rows));
        STRATA_LAUNCH(chunk_kernel, grid_blocks(chunks), block_threads, stream, rows, s);
    }
    STRATA_LAUNCH(finish_kernel, 1, block_threads, stream, rows, s, result);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
