// CsrMatrix: a CSR matrix in a backend's memory, plus an opaque per-matrix plan slot.
#pragma once

#include <memory>

#include "src/device/buffer.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata {

/// A backend's per-matrix state (e.g. cuSPARSE descriptors, chosen algorithm, workspace),
/// created on first use and reused: plan once, execute many.
class SpmmPlan {
public:
    virtual ~SpmmPlan() = default;
};

/// rows x cols; row_ptr (rows+1), col_idx and values (nnz), 32-bit indices.
class CsrMatrix {
public:
    CsrMatrix() = default;
    [[nodiscard]] static CsrMatrix upload(Backend& backend, const HostCsr& host);
    [[nodiscard]] HostCsr download() const;

    [[nodiscard]] index_t rows() const { return rows_; }
    [[nodiscard]] index_t cols() const { return cols_; }
    [[nodiscard]] index_t nnz() const { return static_cast<index_t>(col_idx_.size()); }
    [[nodiscard]] const index_t* row_ptr() const { return row_ptr_.data(); }
    [[nodiscard]] const index_t* col_idx() const { return col_idx_.data(); }
    [[nodiscard]] const float* values() const { return values_.data(); }
    /// The values, to rewrite in place (same structure, e.g. a dropout of the entries): a
    /// backend's plan holds the structure and the buffers' addresses, so it stays valid.
    [[nodiscard]] float* mutable_values() { return values_.data(); }

    /// The backend's cached plan for this matrix (null until the backend sets one).
    [[nodiscard]] SpmmPlan* plan() const { return plan_.get(); }
    void set_plan(std::unique_ptr<SpmmPlan> plan) const { plan_ = std::move(plan); }

private:
    index_t rows_ = 0;
    index_t cols_ = 0;
    Buffer<index_t> row_ptr_;
    Buffer<index_t> col_idx_;
    Buffer<float> values_;
    mutable std::unique_ptr<SpmmPlan> plan_;
};

}  // namespace strata
