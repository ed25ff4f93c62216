// The emulation itself: __shared__ memory per block and __syncthreads() as a barrier, the warp
// shuffle, atomics, the launch geometry check, and the faults: an out-of-bounds access (a
// deliberately wrong kernel), a null or foreign pointer, and a barrier not every thread reaches,
// each naming the kernel, the buffer and the index.
#include <cstdint>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cuda/cuda_launch.cuh"
#include "tests/emulation/device_vector.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;
using cuda::global_ptr;
using emu::KernelFault;
using test::DeviceVector;

constexpr int threads = 64;

/// y[block's range] = the block's x reversed, through shared memory: needs the barrier.
__global__ void reverse_in_block_kernel(global_ptr<const float> x, global_ptr<float> y) {
    __shared__ float tile[threads];
    const unsigned base = blockIdx.x * blockDim.x;
    tile[threadIdx.x] = x[base + threadIdx.x];
    __syncthreads();
    y[base + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

/// out[t] = Σ over t's warp of x (a butterfly of shuffles).
__global__ void warp_sum_kernel(global_ptr<const double> x, global_ptr<double> out) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    double v = x[t];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffffU, v, offset);
    }
    out[t] = v;
}

__global__ void count_kernel(global_ptr<float> sum, global_ptr<unsigned> bits) {
    atomicAdd(sum, 1.0f);
    atomicOr(bits, 1u << (threadIdx.x % 32));
}

/// Deliberately wrong: reads x[e + 1], one past the end for the last element.
__global__ void off_by_one_kernel(global_ptr<const float> x, std::int64_t n, global_ptr<float> y) {
    for (std::int64_t e = cuda::kernels::thread_index(); e < n; e += cuda::kernels::grid_stride()) {
        y[e] = x[e + 1];
    }
}

/// Deliberately wrong: the thread's index minus 1 (reads before the start for thread 0).
__global__ void before_start_kernel(global_ptr<const float> x, global_ptr<float> y) {
    const std::int64_t e = cuda::kernels::thread_index();
    y[e] = x[e - 1];
}

/// Deliberately wrong: half the block returns before the barrier.
__global__ void divergent_barrier_kernel(global_ptr<float> y) {
    if (threadIdx.x % 2 == 1) {
        return;
    }
    __syncthreads();
    y[threadIdx.x] = 1.0f;
}

std::vector<float> iota(std::size_t n) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), 0.0f);
    return v;
}

const cudaStream_t stream = nullptr;

}  // namespace

TEST_CASE("emulation: __shared__ is per block and __syncthreads a barrier", "[emulation]") {
    const DeviceVector<float> x("x", iota(3 * threads));
    const DeviceVector<float> y("y", 3 * threads);
    STRATA_LAUNCH(reverse_in_block_kernel, 3, threads, stream, x.data(), y.data());
    REQUIRE(cudaGetLastError() == cudaSuccess);
    const std::vector<float> out = y.download();
    for (int b = 0; b < 3; ++b) {
        for (int t = 0; t < threads; ++t) {
            CHECK(out[static_cast<std::size_t>(b * threads + t)] ==
                  static_cast<float>(b * threads + threads - 1 - t));
        }
    }
}

TEST_CASE("emulation: __shfl_xor_sync exchanges within each warp", "[emulation]") {
    std::vector<double> values(128);
    std::iota(values.begin(), values.end(), 1.0);
    const DeviceVector<double> x("x", values);
    const DeviceVector<double> out("out", values.size());
    STRATA_LAUNCH(warp_sum_kernel, 2, threads, stream, x.data(), out.data());
    const std::vector<double> sums = out.download();
    for (std::size_t t = 0; t < sums.size(); ++t) {
        const double first = static_cast<double>(t / 32 * 32 + 1);
        CHECK(sums[t] == 16.0 * (2.0 * first + 31.0));  // 32 consecutive integers
    }
}

TEST_CASE("emulation: atomics see every thread", "[emulation]") {
    const DeviceVector<float> sum("sum", std::vector<float>{0.0f});
    const DeviceVector<unsigned> bits("bits", std::vector<unsigned>{0u});
    STRATA_LAUNCH(count_kernel, 5, threads, stream, sum.data(), bits.data());
    CHECK(sum.download()[0] == 5.0f * threads);
    CHECK(bits.download()[0] == 0xffffffffU);
}

TEST_CASE("emulation: an invalid launch geometry is cudaGetLastError's", "[emulation]") {
    const DeviceVector<float> y("y", 1);
    STRATA_LAUNCH(divergent_barrier_kernel, 0, threads, stream, y.data());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess);
    STRATA_LAUNCH(divergent_barrier_kernel, 1, 1025, stream, y.data());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
}

TEST_CASE("emulation: an out-of-bounds read names the kernel, the buffer and the index",
          "[emulation]") {
    const DeviceVector<float> x("x", iota(100));
    const DeviceVector<float> y("y", 100);
    REQUIRE_THROWS_WITH(
        STRATA_LAUNCH(off_by_one_kernel, 1, threads, stream, x.data(), std::int64_t{100}, y.data()),
        "kernel 'off_by_one_kernel' (test_emulator.cpp, block 0,0,0, thread 35,0,0): buffer 'x' "
        "accessed at index 100 (4-byte elements), outside its 100 elements");
    REQUIRE_THROWS_WITH(STRATA_LAUNCH(before_start_kernel, 1, threads, stream, x.data(), y.data()),
                        "kernel 'before_start_kernel' (test_emulator.cpp, block 0,0,0, thread "
                        "0,0,0): buffer 'x' accessed at index -1 (4-byte elements), outside its "
                        "100 elements");
    // The same kernels in bounds run clean.
    STRATA_LAUNCH(off_by_one_kernel, 1, threads, stream, x.data(), std::int64_t{99}, y.data());
    CHECK(y.download()[98] == 99.0f);
}

TEST_CASE("emulation: null and foreign pointers are faults", "[emulation]") {
    const DeviceVector<float> x("x", iota(4));
    std::vector<float> host(4);
    REQUIRE_THROWS_WITH(STRATA_LAUNCH(off_by_one_kernel, 1, 1, stream, x.data(), std::int64_t{1},
                                      static_cast<float*>(nullptr)),
                        "kernel 'off_by_one_kernel' (test_emulator.cpp, block 0,0,0, thread "
                        "0,0,0): dereferenced a null pointer");
    REQUIRE_THROWS_WITH(
        STRATA_LAUNCH(off_by_one_kernel, 1, 1, stream, x.data(), std::int64_t{1}, host.data()),
        Contains("kernel 'off_by_one_kernel' (test_emulator.cpp): pointer ") &&
            Contains("is not in any buffer of the emulated device memory"));
}

TEST_CASE("emulation: a barrier some threads never reach is a fault, not a hang", "[emulation]") {
    const DeviceVector<float> y("y", threads);
    REQUIRE_THROWS_WITH(STRATA_LAUNCH(divergent_barrier_kernel, 1, threads, stream, y.data()),
                        Contains("kernel 'divergent_barrier_kernel'") &&
                            Contains("__syncthreads() or a warp shuffle is not reached by every "
                                     "thread of block 0,0,0"));
}

}  // namespace strata
