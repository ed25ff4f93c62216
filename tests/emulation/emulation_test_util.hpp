// What the kernel tests of tests/emulation share: the emulated kernels' launchers
// (cuda_kernels.hpp, compiled for the host) next to the CPU kernels (cpu_kernels.hpp), the
// inputs and comparisons of tests/gpu (gpu_test_util.hpp), and the host-side arguments the
// CUDA backend derives (the dropout mask, as src/device/cuda/cuda_backend.cpp does).
#pragma once

#include <cstdint>
#include <vector>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "tests/emulation/device_vector.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata::test {

/// Team size of the CPU reference.
inline constexpr int cpu_threads = 2;
/// The launchers' stream (the emulation has none).
inline const cudaStream_t no_stream = nullptr;

/// cuda_backend.cpp's dropout_mask: the dropout scalars of `key`, as the CPU computes them.
inline cuda::kernels::DropoutMask dropout_mask(const DropoutKey& key) {
    cuda::kernels::DropoutMask mask{};
    mask.drop = key.rate > 0.0f;
    mask.stream_key = mask.drop ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    mask.threshold = dropout_threshold(key.rate);
    mask.scale = mask.drop ? 1.0f / (1.0f - key.rate) : 1.0f;
    mask.keep_rate = 1.0f - key.rate;
    return mask;
}

/// Large, scattered global row ids (as a partition's rows have): i · 7919 + 2^40.
inline std::vector<global_id> global_row_ids(index_t rows) {
    std::vector<global_id> ids(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<global_id>(i) * 7919 + (global_id{1} << 40);
    }
    return ids;
}

/// rows x cols, as tests/gpu's shapes: empty, one row, width 1, rows not a multiple of the
/// block (256) or of a warp, more than one block.
struct Shape {
    index_t rows;
    index_t cols;
    [[nodiscard]] std::size_t size() const {
        return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    }
};

}  // namespace strata::test
