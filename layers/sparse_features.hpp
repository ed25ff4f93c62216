// SparseFeatures: a rank's input features uploaded as CSR (with their transpose, for the first
// layer's weight gradient) when they are sparse enough that x W is cheaper as an SpMM than as a
// GEMM, and the choice between that and the dense upload (`strata train --sparse-features`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/comm/communicator.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/sparse_input.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

enum class FeatureStorage { dense, sparse };

/// `--sparse-features`: auto (by density), on, off.
enum class SparseFeaturesMode { automatic, on, off };
/// "auto", "on", "off" -> the mode; nullopt for any other text.
[[nodiscard]] std::optional<SparseFeaturesMode> parse_sparse_features(std::string_view text);

/// auto stores the features sparse at or below this fraction of non-zeros. Measured with
/// bench/sparse_features on Cora's shapes (2708 x 1433 times 1433 x W, input dropout 0.5,
/// forward and weight gradient, one thread, CPU time; docs/benchmarks.md "Sparse input
/// features"), since the dropout hash vectorizes (2026-12-05): sparse ÷ dense at W = 16 0.13 at
/// 1.27 %, 0.52 at 5 %, 1.05 at 10 %; at W = 64 0.53 at 10 %, 1.15 at 20 %: the crossover is near
/// 9.5 % at the narrowest first layer, later for wider ones.
inline constexpr double sparse_features_threshold = 0.08;

/// What was chosen and why, the same on every rank (for the run's report and metrics).
struct FeatureChoice {
    FeatureStorage storage = FeatureStorage::dense;
    double density = 0.0;  ///< non-zeros / entries over all ranks
    std::string reason;    ///< "1.27 % non-zero <= 10 % (auto)"
};

/// Decides from the density of all ranks' features (one all-reduce). `blocker` is why the model
/// cannot read sparse features (empty: it can): auto then keeps them dense; on throws
/// strata::Error with it.
[[nodiscard]] FeatureChoice choose_feature_storage(SparseFeaturesMode mode,
                                                   const HostMatrix& features,
                                                   const std::string& blocker, Communicator& comm);

/// Non-zero entries of a dense host matrix.
[[nodiscard]] std::int64_t count_nonzeros(const HostMatrix& m);

/// The device side of a SparseInput: x as CSR, xᵀ with the map from its entries to x's, a copy
/// of each whose values a dropout rewrites, and the column ids (dropout keys).
class SparseFeatures {
public:
    /// The non-zeros of `dense` (rows x cols), in row order.
    SparseFeatures(Backend& backend, const HostMatrix& dense);
    SparseFeatures(const SparseFeatures&) = delete;
    SparseFeatures& operator=(const SparseFeatures&) = delete;

    /// Backend bytes the upload takes for `nnz` non-zeros.
    [[nodiscard]] static std::int64_t bytes(index_t rows, index_t cols, std::int64_t nnz);
    /// The view an executor lends (valid while this object lives, which must not move).
    [[nodiscard]] const SparseInput& view() const { return view_; }

private:
    CsrMatrix x_;
    CsrMatrix xt_;
    CsrMatrix x_dropped_;
    CsrMatrix xt_dropped_;
    Buffer<index_t> xt_entries_;
    Buffer<global_id> col_ids_;
    SparseInput view_;
};

}  // namespace strata
