// Backend: device memory and the small set of operations every layer is built from (CPU
// reference; CUDA), each a checked entry point over a backend's implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"
#include "src/tensor/packed_rows.hpp"

namespace strata {

class CsrMatrix;

enum class DeviceKind { cpu, cuda };

/// Which dropout mask: the mask bit of (row, col) is a pure function of
/// (seed, epoch, layer, global id of the row, col), so it does not depend on thread count,
/// the number of ranks or the backend (src/device/counter_rng.hpp).
struct DropoutKey {
    std::uint64_t seed = 0;
    std::uint64_t epoch = 0;
    std::uint64_t layer = 0;
    float rate = 0.0f;  ///< probability of dropping; kept entries are scaled by 1/(1-rate)
};

/// The activation of a fused bias_activation call (v = x + bias):
/// relu max(v, 0); elu v > 0 ? v : exp(v) - 1 (alpha 1); leaky_relu v > 0 ? v : slope·v;
/// gelu v·Φ(v) = v/2·(1 + erf(v/√2)) (the exact form, PyTorch's default).
enum class Activation { none, relu, elu, leaky_relu, gelu };

/// An activation and its parameter; converts from a bare Activation.
struct ActivationSpec {
    Activation kind = Activation::none;
    float negative_slope = 0.2f;  ///< leaky_relu only; must be >= 0

    constexpr ActivationSpec() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): Activation::relu reads as a spec
    constexpr ActivationSpec(Activation k, float slope = 0.2f) : kind(k), negative_slope(slope) {}
};

/// Bytes allocated through a backend (Backend::allocate), now and at most so far.
struct MemoryStats {
    std::int64_t bytes_in_use = 0;
    std::int64_t peak_bytes = 0;
    std::int64_t allocations = 0;  ///< live allocations
};

/// Sums produced by the loss kernel for the rows selected by a mask.
struct LossSums {
    double loss = 0.0;         ///< Σ -log softmax(logits)[label] over selected rows
    std::int64_t count = 0;    ///< number of selected rows (mask != 0 and label >= 0)
    std::int64_t correct = 0;  ///< selected rows whose argmax equals the label
};

/// One Adam update (Kingma & Ba) with optional weight decay.
struct AdamStep {
    float lr = 0.01f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.0f;
    bool decoupled = false;  ///< false: L2 (g += wd·p, as Kipf & Welling); true: AdamW
    std::int64_t step = 1;   ///< 1-based step count, for the bias corrections
};

/// A device: memory, and the operations every layer is built from. Each operation (listed once,
/// with its contract, in backend_operations.hpp) is a public non-virtual entry point that checks
/// its arguments (src/device/operand_checks.hpp; the same one-line error on every backend) and
/// then calls the backend's private `name_impl`: a backend implements the `_impl`s and checks
/// nothing itself. Row-major float32 throughout; every pointer and span passed to an operation
/// lives in this backend's memory.
class Backend {
public:
    virtual ~Backend() = default;
    [[nodiscard]] virtual DeviceKind kind() const = 0;
    /// For reports: "cpu, 2 threads", "cuda:0, NVIDIA H200, 139 GiB".
    [[nodiscard]] virtual std::string describe() const = 0;

    // --- memory ---------------------------------------------------------------------------
    [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
    virtual void deallocate(void* ptr) noexcept = 0;
    /// Host memory for staging transfers (e.g. MPI over a GPU backend): page-locked on CUDA so
    /// copies run at full bus speed, ordinary aligned memory on the CPU. Null for 0 bytes.
    [[nodiscard]] virtual void* allocate_host(std::size_t bytes) = 0;
    virtual void deallocate_host(void* ptr) noexcept = 0;
    virtual void upload(void* device_dst, const void* host_src, std::size_t bytes) = 0;
    virtual void download(void* host_dst, const void* device_src, std::size_t bytes) = 0;
    virtual void copy(void* device_dst, const void* device_src, std::size_t bytes) = 0;
    /// Waits for all queued work (no-op on the CPU).
    virtual void synchronize() = 0;
    /// What allocate() handed out and did not get back (allocate_host is not counted).
    [[nodiscard]] virtual MemoryStats memory_stats() const = 0;

    // --- operations: the checked entry points (contracts in backend_operations.hpp) ----------
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) result name parameters;
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION

    /// y = A x + beta y over all rows of A.
    void spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta);

private:
    // What a backend implements: called only by the entry point of the same name, after its
    // argument check.
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) \
    virtual result name##_impl parameters = 0;
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION
};

/// The OpenMP + OpenBLAS backend. `threads` <= 0 keeps the OpenMP default.
[[nodiscard]] std::unique_ptr<Backend> make_cpu_backend(int threads = 0);
/// The CUDA backend on `device`; throws strata::Error when built without CUDA.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(int device);
/// CUDA devices this process can use: 0 when built without CUDA, without a driver or without a
/// device (never throws).
[[nodiscard]] int cuda_device_count();
/// The PCI bus id of CUDA device `device` ("0000:3b:00.0"): the same physical GPU gives the same
/// id in every process, whatever CUDA_VISIBLE_DEVICES says. Empty without CUDA or on error.
[[nodiscard]] std::string cuda_device_pci_id(int device);

}  // namespace strata
