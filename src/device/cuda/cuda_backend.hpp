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
/// Formulas, shapes and error checks are those of CpuBackend; the elementwise, bias_activation,
/// column-sum, loss and Adam kernels follow the CPU's operation order (dropout masks agree bit for
/// bit).
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

    /// All rows: cuSPARSE SpMM (CSR, 32-bit indices, row-major dense). Descriptors, the algorithm
    /// and the workspace are created on the first call and cached in the matrix's plan slot.
    /// A smaller row range (chunked execution) runs a plain kernel instead (cuda_spmm.cpp).
    using Backend::spmm;
    /// The plain kernel of spmm_rows.cu (entry order, no cuSPARSE); row ids are not checked.
    void spmm_scatter_add(const CsrMatrix& a, std::span<const index_t> rows, ConstMatrixView x,
                          MatrixView y) override;
    void spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
              float beta) override;
    /// cuBLAS SGEMM on the row-major matrices (computed as cᵀ = op(b)ᵀ op(a)ᵀ, column-major).
    void gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb, MatrixView c,
              float alpha, float beta) override;
    void gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) override;
    /// atomicAdd: repeated row ids are summed in no fixed order (equal to rounding).
    void scatter_add_rows(ConstMatrixView x, std::span<const index_t> rows,
                          MatrixView out) override;
    void scatter_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) override;

    void fill(MatrixView y, float value) override;
    /// Bit-identical to the CPU.
    void axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) override;
    /// Deterministic; bit-identical to the CPU.
    void column_sums(ConstMatrixView x, std::span<float> out, float beta) override;
    /// Throws strata::Error unless 0 <= rate < 1 (and a leaky_relu slope >= 0). Bit-identical to
    /// the CPU (same dropout mask) except elu and gelu (expf/erff rounding).
    void bias_activation(ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                         const DropoutKey& key, std::span<const global_id> row_ids,
                         MatrixView y) override;
    /// Throws strata::Error unless 0 <= rate < 1. Bit-identical to the CPU except gelu.
    void bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                  ConstMatrixView dy, ActivationSpec act, const DropoutKey& key,
                                  std::span<const global_id> row_ids, MatrixView dx,
                                  float beta) override;
    /// Bit-identical to the CPU.
    void axpby_scalar(float shift, std::span<const float> s, ConstMatrixView x, float beta,
                      MatrixView y) override;
    /// Deterministic (fixed grid); equal to the CPU to rounding.
    void dot(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta) override;

    /// The normalisation kernels (norm.cu): deterministic; equal to the CPU to rounding
    /// (batch_norm and batch_norm_backward bit for bit).
    void layer_norm(ConstMatrixView x, std::span<const float> gamma, std::span<const float> beta,
                    float eps, MatrixView y) override;
    void layer_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> gamma,
                             float eps, MatrixView dx, float beta, std::span<float> dgamma,
                             std::span<float> dbeta) override;
    void centered_column_sums(ConstMatrixView x, std::span<const float> mean,
                              std::span<const float> var, float eps, ConstMatrixView w,
                              std::span<float> out, float beta) override;
    void batch_norm(ConstMatrixView x, std::span<const float> mean, std::span<const float> var,
                    float eps, std::span<const float> gamma, std::span<const float> beta,
                    MatrixView y) override;
    void batch_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> mean,
                             std::span<const float> var, float eps, std::span<const float> gamma,
                             std::span<const float> sum_dy, std::span<const float> sum_dy_xhat,
                             double count, MatrixView dx, float beta) override;

    /// Graph attention: plain kernels, one thread per CSR row (per output element for
    /// edge_spmm), the CPU's formulas and order (src/device/edge_rows.hpp); exp may differ from
    /// the CPU's in the last bit.
    void edge_scores(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                     float negative_slope, MatrixView e) override;
    void edge_softmax(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) override;
    void edge_softmax_backward(const CsrMatrix& a, ConstMatrixView alpha, ConstMatrixView dalpha,
                               ConstMatrixView e, float negative_slope, MatrixView dz) override;
    void edge_dropout(const CsrMatrix& a, const DropoutKey& key, std::span<const global_id> row_ids,
                      std::span<const global_id> col_ids, MatrixView values) override;
    void edge_spmm(const CsrMatrix& a, std::span<const index_t> edge_ids, ConstMatrixView alpha,
                   ConstMatrixView x, MatrixView y, float beta) override;
    void edge_dots(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z,
                   MatrixView out) override;

    /// Waits for the result. Throws strata::Error if a selected label is >= classes.
    LossSums softmax_cross_entropy(ConstMatrixView logits, std::span<const index_t> labels,
                                   std::span<const std::uint8_t> mask, float grad_scale,
                                   MatrixView dlogits) override;
    void adam(std::span<float> params, std::span<const float> grads, std::span<float> m,
              std::span<float> v, const AdamStep& step) override;

private:
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
