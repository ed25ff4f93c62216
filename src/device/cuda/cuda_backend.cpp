// CudaBackend: device memory, streams and handles, the operations' implementations (dispatch to
// the plain kernels of cuda_kernels.hpp, cuBLAS GEMM; arguments checked by Backend's entry
// points), and make_cuda_backend. SpMM: cuda_spmm.cpp.
#include "src/device/cuda/cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "src/base/error.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cuda/cuda_check.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/operand_checks.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {
namespace {

/// What the kernels report to the host, in one device block copied back at each sync.
struct DeviceStatus {
    unsigned bits;  ///< kernels::StatusBit flags
    unsigned unused;
    cuda::kernels::LossResult loss;
};

/// Frees never throw: a failure is printed, except at process shutdown.
void report_free_failure(const char* what, cudaError_t status) noexcept {
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        if (!cuda::is_shutdown_error(status)) {
            std::fprintf(stderr, "strata: CudaBackend::%s failed: %s\n", what,
                         cudaGetErrorString(status));
        }
    }
}

/// The dropout scalars of `key`, computed on the host exactly as the CPU does (scale in float).
cuda::kernels::DropoutMask dropout_mask(const DropoutKey& key) {
    cuda::kernels::DropoutMask mask{};
    mask.drop = key.rate > 0.0f;
    mask.stream_key = mask.drop ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    mask.threshold = dropout_threshold(key.rate);
    mask.scale = mask.drop ? 1.0f / (1.0f - key.rate) : 1.0f;
    mask.keep_rate = 1.0f - key.rate;
    return mask;
}

}  // namespace

CudaBackend::CudaBackend(int device) : device_(device) {
    int count = 0;
    STRATA_CUDA_CHECK(cudaGetDeviceCount(&count));
    STRATA_CHECK(device >= 0 && device < count, "CudaBackend: device ", device, " does not exist (",
                 count, " CUDA devices visible)");
    STRATA_CUDA_CHECK(cudaSetDevice(device));
    compute_ = cuda::make_stream();
    comm_ = cuda::make_stream();

    cusparseHandle_t sparse = nullptr;
    STRATA_CUDA_CHECK(cusparseCreate(&sparse));
    sparse_ = cuda::SparseHandle(sparse);
    STRATA_CUDA_CHECK(cusparseSetStream(sparse, compute_.get()));

    cublasHandle_t blas = nullptr;
    STRATA_CUDA_CHECK(cublasCreate(&blas));
    blas_ = cuda::BlasHandle(blas);
    STRATA_CUDA_CHECK(cublasSetStream(blas, compute_.get()));
    // Plain FP32 (no TF32 tensor-core rounding), host-side alpha/beta.
    STRATA_CUDA_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    STRATA_CUDA_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));

    status_ = cuda::make_device_memory(sizeof(DeviceStatus));
    host_status_ = cuda::make_pinned_memory(sizeof(DeviceStatus));
    STRATA_CUDA_CHECK(cudaMemsetAsync(status_.get(), 0, sizeof(DeviceStatus), compute_.get()));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
}

CudaBackend::~CudaBackend() {
    (void)cudaSetDevice(device_);
    (void)cudaStreamSynchronize(comm_.get());
    (void)cudaStreamSynchronize(compute_.get());
#ifndef NDEBUG
    if (const std::int64_t live = live_allocations(); live != 0) {
        std::fprintf(stderr,
                     "strata: CudaBackend destroyed with %lld live allocations (a Buffer outlived "
                     "its backend)\n",
                     static_cast<long long>(live));
    }
#endif
}

std::string CudaBackend::describe() const {
    cudaDeviceProp properties{};
    std::string text = "cuda:" + std::to_string(device_);
    if (cudaGetDeviceProperties(&properties, device_) == cudaSuccess) {
        text += std::string(", ") + properties.name + ", " +
                std::to_string(properties.totalGlobalMem >> 30) + " GiB";
    } else {
        (void)cudaGetLastError();
    }
    return text;
}

// --- memory ----------------------------------------------------------------------------------

void* CudaBackend::allocate(std::size_t bytes) {
    if (bytes == 0) {
        return nullptr;
    }
    cuda::DeviceMemory memory = cuda::make_device_memory(bytes);
    ledger_.add(memory.get(), bytes);  // may throw: `memory` is then freed
    return memory.release();
}

void CudaBackend::deallocate(void* ptr) noexcept {
    if (ptr == nullptr) {
        return;
    }
    ledger_.remove(ptr);  // before the free: no use of the pointer value after it
    report_free_failure("deallocate: cudaFree", cudaFree(ptr));
}

MemoryStats CudaBackend::memory_stats() const {
    return ledger_.stats();
}

void* CudaBackend::allocate_host(std::size_t bytes) {
    return bytes == 0 ? nullptr : cuda::make_pinned_memory(bytes).release();
}

void CudaBackend::deallocate_host(void* ptr) noexcept {
    if (ptr == nullptr) {
        return;
    }
    report_free_failure("deallocate_host: cudaFreeHost", cudaFreeHost(ptr));
}

void CudaBackend::upload(void* device_dst, const void* host_src, std::size_t bytes) {
    if (bytes == 0) {
        return;
    }
    STRATA_CUDA_CHECK(
        cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, compute_.get()));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
}

void CudaBackend::download(void* host_dst, const void* device_src, std::size_t bytes) {
    if (bytes > 0) {
        STRATA_CUDA_CHECK(
            cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, compute_.get()));
    }
    queue_status_copy();
    STRATA_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
    check_status();
}

void CudaBackend::copy(void* device_dst, const void* device_src, std::size_t bytes) {
    if (bytes == 0 || device_dst == device_src) {
        return;
    }
    STRATA_CUDA_CHECK(
        cudaMemcpyAsync(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice, compute_.get()));
}

void CudaBackend::synchronize() {
    STRATA_CUDA_CHECK(cudaStreamSynchronize(comm_.get()));
    queue_status_copy();
    STRATA_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
    check_status();
}

void* CudaBackend::workspace(std::size_t bytes) {
    if (bytes > workspace_bytes_) {
        // cudaFree of the old block waits for the kernels that may still use it.
        workspace_.reset();
        workspace_bytes_ = 0;
        const std::size_t grown = bytes + bytes / 4;
        workspace_ = cuda::make_device_memory(grown);
        workspace_bytes_ = grown;
    }
    return workspace_.get();
}

unsigned* CudaBackend::status_bits() {
    return &static_cast<DeviceStatus*>(status_.get())->bits;
}

void CudaBackend::queue_status_copy() {
    STRATA_CUDA_CHECK(cudaMemcpyAsync(host_status_.get(), status_.get(), sizeof(unsigned),
                                      cudaMemcpyDeviceToHost, compute_.get()));
}

void CudaBackend::check_status() {
    const unsigned bits = *static_cast<const unsigned*>(host_status_.get());
    if (bits == 0) {
        return;
    }
    *static_cast<unsigned*>(host_status_.get()) = 0;
    STRATA_CUDA_CHECK(cudaMemsetAsync(status_bits(), 0, sizeof(unsigned), compute_.get()));
    STRATA_CHECK((bits & cuda::kernels::bad_gather_row) == 0,
                 "gather_rows: a row id was outside [0, x.rows) (found by the kernel, reported at "
                 "the next synchronisation)");
    STRATA_CHECK((bits & cuda::kernels::bad_scatter_row) == 0,
                 "scatter_add_rows: a row id was outside [0, out.rows) (found by the kernel, "
                 "reported at the next synchronisation)");
    STRATA_CHECK((bits & cuda::kernels::bad_scatter_set_row) == 0,
                 "scatter_rows: a row id was outside [0, out.rows) (found by the kernel, reported "
                 "at the next synchronisation)");
    STRATA_FAIL("CudaBackend: unknown kernel status bits ", bits);
}

// --- dense linear algebra ----------------------------------------------------------------------

// cuBLAS SGEMM on the row-major matrices (computed as cᵀ = op(b)ᵀ op(a)ᵀ, column-major).
void CudaBackend::gemm_impl(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                            MatrixView c, float alpha, float beta) {
    const auto [m, n, k, trans_a, trans_b] = gemm_shape(a, ta, b, tb);
    if (m == 0 || n == 0) {
        return;
    }
    if (k == 0) {  // an empty product: cuBLAS would reject a leading dimension of 0
        if (beta == 0.0f) {
            STRATA_CUDA_CHECK(cuda::kernels::fill(c.data, c.size(), 0.0f, compute_.get()));
        } else if (beta != 1.0f) {
            STRATA_CUDA_CHECK(cuda::kernels::scale(c.data, c.size(), beta, compute_.get()));
        }
        return;
    }
    // Row-major c (m x n) is column-major cᵀ (n x m, ld n) = op(b)ᵀ op(a)ᵀ, and a row-major
    // matrix is its own transpose in column-major order: the transpose flags carry over.
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    STRATA_CUDA_CHECK(cublasSgemm(blas_.get(), op_b, op_a, n, m, k, &alpha, b.data, b.cols, a.data,
                                  a.cols, &beta, c.data, n));
}

void CudaBackend::gather_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                   MatrixView out) {
    STRATA_CUDA_CHECK(cuda::kernels::gather_rows(x.data, x.rows, x.cols, rows.data(),
                                                 static_cast<std::int64_t>(rows.size()), out.data,
                                                 status_bits(), compute_.get()));
}

// atomicAdd: repeated row ids are summed in no fixed order (equal to rounding).
void CudaBackend::scatter_add_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                        MatrixView out) {
    STRATA_CUDA_CHECK(cuda::kernels::scatter_add_rows(
        x.data, x.cols, rows.data(), static_cast<std::int64_t>(rows.size()), out.data, out.rows,
        status_bits(), compute_.get()));
}

// Packed halo records are read on the host only: compressed halos are refused on CUDA
// (OverlappedAggregation), so these are never reached from a run.
void CudaBackend::scatter_add_packed_rows_impl(ConstPackedMatrix /*x*/,
                                               std::span<const index_t> /*rows*/,
                                               MatrixView /*out*/) {
    STRATA_FAIL("scatter_add_packed_rows: packed halo records need device = cpu");
}

void CudaBackend::spmm_scatter_add_packed_impl(const CsrMatrix& /*a*/,
                                               std::span<const index_t> /*rows*/,
                                               ConstPackedMatrix /*x*/, MatrixView /*y*/) {
    STRATA_FAIL("spmm_scatter_add_packed: packed halo records need device = cpu");
}

void CudaBackend::scatter_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                    MatrixView out) {
    STRATA_CUDA_CHECK(cuda::kernels::scatter_rows(x.data, x.cols, rows.data(),
                                                  static_cast<std::int64_t>(rows.size()), out.data,
                                                  out.rows, status_bits(), compute_.get()));
}

// --- elementwise -----------------------------------------------------------------------------

void CudaBackend::fill_impl(MatrixView y, float value) {
    STRATA_CUDA_CHECK(cuda::kernels::fill(y.data, y.size(), value, compute_.get()));
}

// Bit-identical to the CPU.
void CudaBackend::axpby_impl(float alpha, ConstMatrixView x, float beta, MatrixView y) {
    STRATA_CUDA_CHECK(cuda::kernels::axpby(alpha, x.data, beta, y.data, x.size(), compute_.get()));
}

// Deterministic; bit-identical to the CPU.
void CudaBackend::column_sums_impl(ConstMatrixView x, std::span<float> out, float beta) {
    void* scratch = workspace(cuda::kernels::column_sums_workspace_bytes(x.rows, x.cols));
    STRATA_CUDA_CHECK(cuda::kernels::column_sums(x.data, x.rows, x.cols, out.data(), beta, scratch,
                                                 compute_.get()));
}

// Bit-identical to the CPU (same dropout mask) except elu and gelu (expf/erff rounding).
void CudaBackend::bias_activation_impl(ConstMatrixView x, std::span<const float> bias,
                                       ActivationSpec act, const DropoutKey& key,
                                       std::span<const global_id> row_ids, MatrixView y) {
    const cuda::kernels::DropoutMask mask = dropout_mask(key);
    STRATA_CUDA_CHECK(cuda::kernels::bias_activation(
        x.data, bias.empty() ? nullptr : bias.data(), x.rows, x.cols, static_cast<int>(act.kind),
        act.negative_slope, mask, mask.drop ? row_ids.data() : nullptr, y.data, compute_.get()));
}

// Bit-identical to the CPU except gelu.
void CudaBackend::bias_activation_backward_impl(ConstMatrixView saved, std::span<const float> bias,
                                                ConstMatrixView dy, ActivationSpec act,
                                                const DropoutKey& key,
                                                std::span<const global_id> row_ids, MatrixView dx,
                                                float beta) {
    const bool relu = act.kind == Activation::relu;
    // With relu, y > 0 already says "kept": the mask is regenerated only without relu.
    const cuda::kernels::DropoutMask mask = dropout_mask(key);
    STRATA_CUDA_CHECK(cuda::kernels::bias_activation_backward(
        act.kind == Activation::none ? nullptr : saved.data,
        act.kind == Activation::gelu && !bias.empty() ? bias.data() : nullptr, dy.data, dy.rows,
        dy.cols, static_cast<int>(act.kind), act.negative_slope, mask,
        mask.drop && !relu ? row_ids.data() : nullptr, dx.data, beta, compute_.get()));
}

// --- graph attention ---------------------------------------------------------------------------
// Plain kernels, one thread per CSR row (per output element for edge_spmm), the CPU's formulas
// and order (src/device/edge_rows.hpp); exp may differ from the CPU's in the last bit.

namespace {

cuda::kernels::EdgeCsr edge_csr(const CsrMatrix& a, index_t heads) {
    return {a.row_ptr(), a.col_idx(), a.rows(), heads};
}

}  // namespace

void CudaBackend::edge_scores_impl(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                                   float negative_slope, MatrixView e) {
    STRATA_CUDA_CHECK(cuda::kernels::edge_scores(edge_csr(a, e.cols), s_dst.data, s_src.data,
                                                 negative_slope, e.data, compute_.get()));
}

void CudaBackend::edge_softmax_impl(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) {
    STRATA_CUDA_CHECK(
        cuda::kernels::edge_softmax(edge_csr(a, e.cols), e.data, alpha.data, compute_.get()));
}

void CudaBackend::edge_softmax_backward_impl(const CsrMatrix& a, ConstMatrixView alpha,
                                             ConstMatrixView dalpha, ConstMatrixView e,
                                             float negative_slope, MatrixView dz) {
    STRATA_CUDA_CHECK(cuda::kernels::edge_softmax_backward(edge_csr(a, alpha.cols), alpha.data,
                                                           dalpha.data, e.data, negative_slope,
                                                           dz.data, compute_.get()));
}

void CudaBackend::edge_dropout_impl(const CsrMatrix& a, const DropoutKey& key,
                                    std::span<const global_id> row_ids,
                                    std::span<const global_id> col_ids, MatrixView values) {
    STRATA_CUDA_CHECK(cuda::kernels::edge_dropout(edge_csr(a, values.cols), dropout_mask(key),
                                                  row_ids.data(), col_ids.data(), values.data,
                                                  compute_.get()));
}

void CudaBackend::edge_spmm_impl(const CsrMatrix& a, std::span<const index_t> edge_ids,
                                 ConstMatrixView alpha, ConstMatrixView x, MatrixView y,
                                 float beta) {
    STRATA_CUDA_CHECK(cuda::kernels::edge_spmm(
        edge_csr(a, alpha.cols), edge_ids.empty() ? nullptr : edge_ids.data(), alpha.data, x.data,
        x.cols, y.data, y.cols, beta, compute_.get()));
}

void CudaBackend::edge_dots_impl(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z,
                                 MatrixView out) {
    STRATA_CUDA_CHECK(cuda::kernels::edge_dots(edge_csr(a, out.cols), x.data, x.cols, z.data,
                                               z.cols, out.data, compute_.get()));
}

// Bit-identical to the CPU.
void CudaBackend::axpby_scalar_impl(float shift, std::span<const float> s, ConstMatrixView x,
                                    float beta, MatrixView y) {
    STRATA_CUDA_CHECK(cuda::kernels::axpby_scalar(shift, s.data(), x.data, beta, y.data, x.size(),
                                                  compute_.get()));
}

// Deterministic (fixed grid); equal to the CPU to rounding.
void CudaBackend::dot_impl(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta) {
    void* scratch = workspace(cuda::kernels::dot_workspace_bytes(a.size()));
    STRATA_CUDA_CHECK(
        cuda::kernels::dot(a.data, b.data, a.size(), out.data(), beta, scratch, compute_.get()));
}

// --- normalisation -------------------------------------------------------------------------
// The kernels of norm.cu: deterministic; equal to the CPU to rounding (batch_norm and
// batch_norm_backward bit for bit).

void CudaBackend::layer_norm_impl(ConstMatrixView x, std::span<const float> gamma,
                                  std::span<const float> beta, float eps, MatrixView y) {
    STRATA_CUDA_CHECK(cuda::kernels::layer_norm(x.data, x.rows, x.cols, gamma.data(), beta.data(),
                                                eps, y.data, compute_.get()));
}

void CudaBackend::layer_norm_backward_impl(ConstMatrixView x, ConstMatrixView dy,
                                           std::span<const float> gamma, float eps, MatrixView dx,
                                           float beta, std::span<float> dgamma,
                                           std::span<float> dbeta) {
    void* scratch = workspace(cuda::kernels::layer_norm_backward_workspace_bytes(x.rows, x.cols));
    STRATA_CUDA_CHECK(cuda::kernels::layer_norm_backward(
        x.data, dy.data, x.rows, x.cols, gamma.data(), eps, dx.data, beta,
        dgamma.empty() ? nullptr : dgamma.data(), dbeta.empty() ? nullptr : dbeta.data(), scratch,
        compute_.get()));
}

void CudaBackend::centered_column_sums_impl(ConstMatrixView x, std::span<const float> mean,
                                            std::span<const float> var, float eps,
                                            ConstMatrixView w, std::span<float> out, float beta) {
    void* scratch = workspace(cuda::kernels::centered_column_sums_workspace_bytes(x.rows, x.cols));
    STRATA_CUDA_CHECK(cuda::kernels::centered_column_sums(
        x.data, x.rows, x.cols, mean.data(), var.empty() ? nullptr : var.data(), eps, w.data,
        out.data(), beta, scratch, compute_.get()));
}

void CudaBackend::batch_norm_impl(ConstMatrixView x, std::span<const float> mean,
                                  std::span<const float> var, float eps,
                                  std::span<const float> gamma, std::span<const float> beta,
                                  MatrixView y) {
    STRATA_CUDA_CHECK(cuda::kernels::batch_norm(x.data, x.rows, x.cols, mean.data(), var.data(),
                                                eps, gamma.data(), beta.data(), y.data,
                                                compute_.get()));
}

void CudaBackend::batch_norm_backward_impl(ConstMatrixView x, ConstMatrixView dy,
                                           std::span<const float> mean, std::span<const float> var,
                                           float eps, std::span<const float> gamma,
                                           std::span<const float> sum_dy,
                                           std::span<const float> sum_dy_xhat, double count,
                                           MatrixView dx, float beta) {
    STRATA_CUDA_CHECK(cuda::kernels::batch_norm_backward(
        x.data, dy.data, x.rows, x.cols, mean.data(), var.data(), eps, gamma.data(), sum_dy.data(),
        sum_dy_xhat.data(), count, dx.data, beta, compute_.get()));
}

// --- loss and optimizer ------------------------------------------------------------------------

// Waits for the result; a selected label >= classes, found by the kernel, throws here.
LossSums CudaBackend::softmax_cross_entropy_impl(ConstMatrixView logits,
                                                 std::span<const index_t> labels,
                                                 std::span<const std::uint8_t> mask,
                                                 float grad_scale, MatrixView dlogits) {
    void* scratch = workspace(cuda::kernels::softmax_cross_entropy_workspace_bytes(logits.rows));
    auto* device_status = static_cast<DeviceStatus*>(status_.get());
    STRATA_CUDA_CHECK(cuda::kernels::softmax_cross_entropy(
        logits.data, logits.rows, logits.cols, labels.data(), mask.data(), grad_scale, dlogits.data,
        scratch, &device_status->loss, compute_.get()));
    STRATA_CUDA_CHECK(cudaMemcpyAsync(host_status_.get(), status_.get(), sizeof(DeviceStatus),
                                      cudaMemcpyDeviceToHost, compute_.get()));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
    const cuda::kernels::LossResult result =
        static_cast<const DeviceStatus*>(host_status_.get())->loss;
    check_status();
    if (result.first_bad_row >= 0) {
        index_t label = 0;
        download(&label, labels.data() + result.first_bad_row, sizeof(index_t));
        STRATA_FAIL("softmax_cross_entropy: label ", label, " of row ", result.first_bad_row,
                    " is not below the ", logits.cols, " classes");
    }
    LossSums sums;
    sums.loss = result.loss;
    sums.count = result.count;
    sums.correct = result.correct;
    return sums;
}

void CudaBackend::adam_impl(std::span<float> params, std::span<const float> grads,
                            std::span<float> m, std::span<float> v, const AdamStep& step) {
    // Bias corrections exactly as src/device/cpu/cpu_adam.cpp: in double, then rounded to float.
    const auto t = static_cast<double>(step.step);
    cuda::kernels::AdamScalars s{};
    s.lr = step.lr;
    s.beta1 = step.beta1;
    s.beta2 = step.beta2;
    s.eps = step.eps;
    s.weight_decay = step.weight_decay;
    s.decoupled = step.decoupled;
    s.correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(step.beta1), t));
    s.correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(step.beta2), t));
    STRATA_CUDA_CHECK(cuda::kernels::adam(params.data(), grads.data(), m.data(), v.data(),
                                          params.size(), s, compute_.get()));
}

std::unique_ptr<Backend> make_cuda_backend(int device) {
    return std::make_unique<CudaBackend>(device);
}

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();  // no driver, or a driver older than the runtime
        return 0;
    }
    return count;
}

std::string cuda_device_pci_id(int device) {
    std::array<char, 32> id{};
    if (cudaDeviceGetPCIBusId(id.data(), static_cast<int>(id.size()), device) != cudaSuccess) {
        (void)cudaGetLastError();
        return {};
    }
    return id.data();
}

}  // namespace strata
