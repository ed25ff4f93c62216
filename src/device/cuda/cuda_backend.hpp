// CudaBackend: the Backend on one GPU (cuSPARSE SpMM, cuBLAS GEMM, plain kernels), with its
// compute and communication streams. Only code under src/device/cuda and the NCCL communicator
// include this header; everyone else gets it through make_cuda_backend() (src/device/backend.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "src/device/allocation_ledger.hpp"
#include "src/device/backend.hpp"
#include "src/device/cuda/cuda_handles.hpp"

namespace strata {

/// Backend on CUDA device `device()`. All memory is device memory (cudaMalloc); every operation
/// is queued on the compute stream and returns at once, except those that hand results to the
/// host: download(), synchronize() and softmax_cross_entropy() wait for the compute stream.
/// Formulas and shapes are those of CpuBackend (the same argument checks: Backend's entry points);
/// the elementwise, bias_activation, column-sum, loss and Adam kernels follow the CPU's operation
/// order (dropout masks agree bit for bit).
///
/// Index checks that need device data (row ids of gather_rows / scatter_add_rows / scatter_rows)
/// are made by the kernels, which skip a bad index and raise a flag; the next download(),
/// synchronize() or softmax_cross_entropy() throws strata::Error naming the operation.
///
/// Threads: use one backend from one thread. The device is made current in the constructor;
/// a program driving several devices from one thread must call cudaSetDevice itself.
class CudaBackend final : public Backend {
public:
    /// Makes `device` current, creates the two streams and the cuSPARSE/cuBLAS handles.
    /// Throws strata::Error when there is no usable device (e.g. no driver) or `device` is out of
    /// range.
    explicit CudaBackend(int device);
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;
    /// Waits for both streams; debug builds report live allocations on stderr. Never throws.
    ~CudaBackend() override;

    [[nodiscard]] DeviceKind kind() const override { return DeviceKind::cuda; }
    /// "cuda:0, NVIDIA H200, 139 GiB".
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int device() const { return device_; }
    /// The stream every operation is queued on.
    [[nodiscard]] cudaStream_t compute_stream() const { return compute_.get(); }
    /// A second stream for communication (NcclCommunicator), ordered against the compute stream
    /// with events only.
    [[nodiscard]] cudaStream_t comm_stream() const { return comm_.get(); }
    /// Allocations not yet deallocated (allocate(0) returns null and is not counted).
    [[nodiscard]] std::int64_t live_allocations() const { return memory_stats().allocations; }
    /// What allocate() handed out and did not get back: the backend's own scratch (workspace,
    /// status block) and cuSPARSE plans are not counted.
    [[nodiscard]] MemoryStats memory_stats() const override;

    /// cudaMalloc; throws strata::Error naming the size and free memory when out of memory.
    [[nodiscard]] void* allocate(std::size_t bytes) override;
    /// cudaFree (which waits for the device); ignores errors at process shutdown.
    void deallocate(void* ptr) noexcept override;
    /// cudaMallocHost: page-locked host memory (not counted in memory_stats()).
    [[nodiscard]] void* allocate_host(std::size_t bytes) override;
    /// cudaFreeHost; ignores errors at process shutdown.
    void deallocate_host(void* ptr) noexcept override;
    /// Copies on the compute stream and waits, so the host buffer may be reused on return.
    void upload(void* device_dst, const void* host_src, std::size_t bytes) override;
    /// Waits for the compute stream (and the copy); checks the kernels' index flags.
    void download(void* host_dst, const void* device_src, std::size_t bytes) override;
    /// Device-to-device copy queued on the compute stream.
    void copy(void* device_dst, const void* device_src, std::size_t bytes) override;
    /// Waits for the communication and compute streams; checks the kernels' index flags.
    void synchronize() override;

private:
    // The operations (backend_operations.hpp; checked by Backend's entry points): cuda_backend.cpp,
    // SpMM in cuda_spmm.cpp.
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) \
    result name##_impl parameters override;
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION

    /// A device scratch block of at least `bytes`, valid until the next call (grow-only;
    /// growing waits for the compute stream).
    void* workspace(std::size_t bytes);
    /// Queues the copy of the device status block to the host mirror (compute stream).
    void queue_status_copy();
    /// After a compute-stream sync that followed queue_status_copy(): throws strata::Error if a
    /// kernel flagged a bad index (and clears the flags).
    void check_status();
    [[nodiscard]] unsigned* status_bits();

    int device_;
    // Streams first: they are destroyed last, after the handles bound to them.
    cuda::Stream compute_;
    cuda::Stream comm_;
    cuda::SparseHandle sparse_;
    cuda::BlasHandle blas_;
    cuda::DeviceMemory status_;       ///< DeviceStatus (cuda_backend.cpp) in device memory
    cuda::PinnedMemory host_status_;  ///< its host mirror
    cuda::DeviceMemory workspace_;
    std::size_t workspace_bytes_ = 0;
    AllocationLedger ledger_;
};

}  // namespace strata
