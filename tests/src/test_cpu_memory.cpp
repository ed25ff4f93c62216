// Tests of CPU backend memory (alignment, huge-page blocks, live count, memory_stats), Buffer
// move semantics, DenseMatrix/CsrMatrix upload and download, and the CUDA stub.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/buffer.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

std::uintptr_t address(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

}  // namespace

TEST_CASE("cpu allocations are 64-byte aligned, large ones 2 MiB aligned", "[device]") {
    CpuBackend backend(1);

    void* small = backend.allocate(100);
    void* large = backend.allocate(3u << 20);

    CHECK(address(small) % 64 == 0);
    CHECK(address(large) % (2u << 20) == 0);
    CHECK(backend.live_allocations() == 2);
    backend.deallocate(small);
    backend.deallocate(large);
    CHECK(backend.live_allocations() == 0);
}

TEST_CASE("allocating zero bytes gives null and is not counted", "[device]") {
    CpuBackend backend(1);

    void* p = backend.allocate(0);

    CHECK(p == nullptr);
    CHECK(backend.live_allocations() == 0);
    backend.deallocate(nullptr);
    CHECK(backend.live_allocations() == 0);
}

TEST_CASE("memory_stats counts allocate and deallocate exactly, in requested bytes", "[device]") {
    CpuBackend backend(1);
    const MemoryStats fresh = backend.memory_stats();

    void* a = backend.allocate(100);  // not a multiple of the 64-byte alignment
    void* b = backend.allocate(1000);
    const MemoryStats two_live = backend.memory_stats();
    backend.deallocate(a);
    const MemoryStats one_live = backend.memory_stats();
    void* c = backend.allocate(50);
    const MemoryStats below_peak = backend.memory_stats();
    backend.deallocate(b);
    backend.deallocate(c);
    const MemoryStats none_live = backend.memory_stats();

    CHECK(fresh.bytes_in_use == 0);
    CHECK(fresh.peak_bytes == 0);
    CHECK(fresh.allocations == 0);
    CHECK(two_live.bytes_in_use == 1100);
    CHECK(two_live.peak_bytes == 1100);
    CHECK(two_live.allocations == 2);
    CHECK(one_live.bytes_in_use == 1000);
    CHECK(one_live.peak_bytes == 1100);
    CHECK(one_live.allocations == 1);
    CHECK(below_peak.bytes_in_use == 1050);
    CHECK(below_peak.peak_bytes == 1100);
    CHECK(below_peak.allocations == 2);
    CHECK(none_live.bytes_in_use == 0);
    CHECK(none_live.peak_bytes == 1100);
    CHECK(none_live.allocations == 0);
}

TEST_CASE("memory_stats counts a huge-page block by its requested size", "[device]") {
    CpuBackend backend(1);
    const std::size_t bytes = (3u << 20) + 1;  // rounded up to 4 MiB inside

    void* p = backend.allocate(bytes);
    const MemoryStats live = backend.memory_stats();
    backend.deallocate(p);

    CHECK(live.bytes_in_use == static_cast<std::int64_t>(bytes));
    CHECK(live.peak_bytes == static_cast<std::int64_t>(bytes));
    CHECK(backend.memory_stats().bytes_in_use == 0);
}

TEST_CASE("memory_stats does not count allocate(0)", "[device]") {
    CpuBackend backend(1);

    void* p = backend.allocate(0);
    const MemoryStats stats = backend.memory_stats();
    backend.deallocate(p);

    CHECK(stats.bytes_in_use == 0);
    CHECK(stats.peak_bytes == 0);
    CHECK(stats.allocations == 0);
}

TEST_CASE("memory_stats does not count allocate_host", "[device]") {
    CpuBackend backend(1);

    void* p = backend.allocate_host(4096);
    const MemoryStats while_live = backend.memory_stats();
    backend.deallocate_host(p);
    const MemoryStats after = backend.memory_stats();

    CHECK(p != nullptr);
    CHECK(while_live.bytes_in_use == 0);
    CHECK(while_live.peak_bytes == 0);
    CHECK(while_live.allocations == 0);
    CHECK(after.allocations == 0);
}

TEST_CASE("memory_stats follows a Buffer from construction to destruction", "[device]") {
    CpuBackend backend(1);
    MemoryStats live;

    {
        const Buffer<float> buffer(backend, 10);
        const HostBuffer<float> staging(backend, 1000);  // staging memory: not counted
        live = backend.memory_stats();
    }
    const MemoryStats after = backend.memory_stats();

    CHECK(live.bytes_in_use == 40);
    CHECK(live.allocations == 1);
    CHECK(after.bytes_in_use == 0);
    CHECK(after.peak_bytes == 40);
    CHECK(after.allocations == 0);
}

TEST_CASE("CsrMatrix upload allocates csr_bytes(rows, nnz)", "[device]") {
    CpuBackend backend(1);
    HostCsr host;  // [[1, 0, 2], [0, 0, 0], [0, -1, 0.5]]
    host.rows = 3;
    host.cols = 3;
    host.row_ptr = {0, 2, 2, 4};
    host.col_idx = {0, 2, 1, 2};
    host.values = {1.0f, 2.0f, -1.0f, 0.5f};

    const CsrMatrix m = CsrMatrix::upload(backend, host);

    // 4 row pointers, 4 column ids, 4 values: 16 + 16 + 16 bytes
    CHECK(backend.memory_stats().bytes_in_use == 48);
    CHECK(backend.memory_stats().bytes_in_use == csr_bytes(3, 4));
}

TEST_CASE("make_cpu_backend gives a cpu backend", "[device]") {
    const auto backend = make_cpu_backend(2);

    CHECK(backend->kind() == DeviceKind::cpu);
}

TEST_CASE("make_cuda_backend throws in a build without CUDA", "[device]") {
    REQUIRE_THROWS_WITH(make_cuda_backend(0), Catch::Contains("built without CUDA support"));
}

TEST_CASE("a moved-from Buffer is empty and the allocation moves with it", "[device]") {
    CpuBackend backend(1);
    const std::vector<int> host = {1, 2, 3};
    Buffer<int> a(backend, std::span<const int>(host));
    const int* data = a.data();

    SECTION("move construction") {
        Buffer<int> b(std::move(a));
        CHECK(b.data() == data);
        CHECK(b.size() == 3);
        CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move): the contract under test
        CHECK(a.size() == 0);
        CHECK(backend.live_allocations() == 1);
        CHECK(b.download() == host);
    }
    SECTION("move assignment frees the target's old block") {
        Buffer<int> b(backend, 5);
        REQUIRE(backend.live_allocations() == 2);
        b = std::move(a);
        CHECK(backend.live_allocations() == 1);
        CHECK(b.data() == data);
        CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move)
        CHECK(b.download() == host);
    }
    SECTION("destruction frees") {
        { Buffer<int> b(std::move(a)); }
        CHECK(backend.live_allocations() == 0);
    }
}

TEST_CASE("Buffer clone is a deep copy", "[device]") {
    CpuBackend backend(1);
    std::vector<float> host(1000);
    std::iota(host.begin(), host.end(), 0.0f);
    Buffer<float> a(backend, std::span<const float>(host));

    Buffer<float> b = a.clone();
    b.data()[0] = -1.0f;

    CHECK(b.data() != a.data());
    CHECK(a.download() == host);
    CHECK(b.download()[0] == -1.0f);
    CHECK(backend.live_allocations() == 2);
}

TEST_CASE("DenseMatrix round-trips through upload and download", "[device]") {
    CpuBackend backend(2);
    const HostMatrix host = test::random_matrix(1100, 1000, 3);  // > 4 MiB: the parallel copy

    const DenseMatrix m = DenseMatrix::upload(backend, host);
    const HostMatrix back = m.download();

    CHECK(m.rows() == 1100);
    CHECK(m.cols() == 1000);
    CHECK(back.rows == 1100);
    CHECK(back.cols == 1000);
    CHECK(test::bitwise_equal(back.values, host.values));
}

TEST_CASE("DenseMatrix upload rejects a value count that does not match the shape", "[device]") {
    CpuBackend backend(1);
    HostMatrix host(2, 2);
    host.values.resize(3);

    REQUIRE_THROWS_WITH(DenseMatrix::upload(backend, host), Catch::Contains("3 values for 2 x 2"));
}

TEST_CASE("CsrMatrix round-trips through upload and download", "[device]") {
    CpuBackend backend(1);
    const HostCsr host = test::random_csr(30, 20, 0.2, 4);

    const CsrMatrix m = CsrMatrix::upload(backend, host);
    const HostCsr back = m.download();

    CHECK(m.rows() == 30);
    CHECK(m.cols() == 20);
    CHECK(m.nnz() == host.nnz());
    CHECK(back.row_ptr == host.row_ptr);
    CHECK(back.col_idx == host.col_idx);
    CHECK(back.values == host.values);
}

TEST_CASE("CsrMatrix upload validates its input", "[device]") {
    CpuBackend backend(1);
    HostCsr bad;
    bad.rows = 1;
    bad.cols = 2;
    bad.row_ptr = {0, 1};
    bad.col_idx = {2};
    bad.values = {1.0f};

    REQUIRE_THROWS_WITH(CsrMatrix::upload(backend, bad),
                        Catch::Contains("CsrMatrix::upload: column id 2 at entry 0"));
}

}  // namespace strata
