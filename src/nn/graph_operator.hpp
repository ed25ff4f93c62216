// GraphOperator: Z = Â H for this rank's rows, the aggregation service an executor lends to the
// ops of a model. The full-graph executor's implementation overlaps the halo exchange with the
// SpMMs (layers/pipelined_aggregation.hpp); ops never see partitions or messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Why rows are exchanged: counted separately so that recomputation's traffic is visible.
enum class ExchangePurpose { forward, backward, recompute };

/// Halo payload sent by an operator, by purpose (bytes, this rank).
struct HaloBytes {
    std::int64_t forward = 0;
    std::int64_t backward = 0;
    std::int64_t recompute = 0;
};

class GraphOperator {
public:
    virtual ~GraphOperator() = default;
    /// Rows this rank owns (rows of H and Z).
    [[nodiscard]] virtual index_t num_rows() const = 0;
    /// Floats of scratch one forward or backward call needs at `width` columns (the exchange
    /// buffers). The caller provides it: executors plan it with the other buffers.
    [[nodiscard]] virtual std::size_t workspace_floats(index_t width) const = 0;

    /// z[rows] = (Â h)[rows].   h, z: num_rows x w (all owned rows; only `rows` of z written).
    /// Reads every row of h (and peers' rows of H through the exchange).
    virtual void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                         ExchangePurpose purpose) = 0;
    /// dh[rows] = (Âᵀ dz)[rows] + beta dh[rows].   dz, dh: num_rows x w. Reads every row of dz.
    virtual void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                          std::span<float> workspace) = 0;

    /// Payload sent so far, by purpose.
    [[nodiscard]] virtual HaloBytes bytes_sent() const = 0;
};

}  // namespace strata
