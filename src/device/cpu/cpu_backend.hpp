// CpuBackend: the OpenMP + OpenBLAS reference backend. Memory is plain host memory; its
// operations (checked by Backend's entry points) dispatch to the plain kernels of cpu_kernels.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/device/allocation_ledger.hpp"
#include "src/device/backend.hpp"

namespace strata {

/// Synchronous backend on host memory. Every operation runs with `threads()` OpenMP threads,
/// and its result does not depend on that number (fixed summation orders).
class CpuBackend final : public Backend {
public:
    /// `threads` <= 0 keeps the OpenMP default (omp_get_max_threads()). Also sets OpenBLAS's
    /// thread count (a process-wide setting, re-applied by gemm if another backend changed it).
    explicit CpuBackend(int threads = 0);
    CpuBackend(const CpuBackend&) = delete;
    CpuBackend& operator=(const CpuBackend&) = delete;
    /// Debug builds report live allocations on stderr (every Buffer must die first); never throws.
    ~CpuBackend() override;

    [[nodiscard]] DeviceKind kind() const override { return DeviceKind::cpu; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int threads() const { return threads_; }
    /// Allocations not yet deallocated (allocate(0) returns null and is not counted).
    [[nodiscard]] std::int64_t live_allocations() const { return memory_stats().allocations; }
    [[nodiscard]] MemoryStats memory_stats() const override;

    /// 64-byte aligned; blocks of 2 MiB or more are 2 MiB aligned and marked MADV_HUGEPAGE.
    /// Throws strata::Error when out of memory.
    [[nodiscard]] void* allocate(std::size_t bytes) override;
    void deallocate(void* ptr) noexcept override;
    /// Host memory is all there is: 64-byte aligned, not counted in memory_stats().
    [[nodiscard]] void* allocate_host(std::size_t bytes) override;
    void deallocate_host(void* ptr) noexcept override;
    void upload(void* device_dst, const void* host_src, std::size_t bytes) override;
    void download(void* host_dst, const void* device_src, std::size_t bytes) override;
    void copy(void* device_dst, const void* device_src, std::size_t bytes) override;
    void synchronize() override {}

private:
    // The operations (backend_operations.hpp; checked by Backend's entry points), in
    // cpu_backend.cpp.
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) \
    result name##_impl parameters override;
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION

    /// The row partition of all A's rows over threads_, cached in A's plan slot.
    [[nodiscard]] const index_t* cached_bounds(const CsrMatrix& a) const;

    int threads_;
    AllocationLedger ledger_;
};

}  // namespace strata
