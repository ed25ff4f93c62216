// PipelinedAggregation: Z = Â H for this rank's rows, overlapping the halo exchange with the
// inner SpMM (and the reverse for backward). The schedule lives here, apart from the layers.
#pragma once

#include "layers/graph_blocks.hpp"
#include "src/comm/communicator.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {

class PipelinedAggregation {
public:
    /// Sizes the send/receive buffers for `width` feature columns (plan once).
    PipelinedAggregation(const GraphBlocks& blocks, Communicator& comm, index_t width);

    /// z = Â h.   h, z: num_owned x width.
    /// pack boundary rows → start exchange → z = A_inner h → z += A_halo[p] h_p per arrival.
    void forward(ConstMatrixView h, MatrixView z);
    /// dh = Âᵀ dz.   dz, dh: num_owned x width.
    /// g_p = A_halo[p]ᵀ dz → start reversed exchange → dh = A_innerᵀ dz →
    /// dh[send rows of p] += received g from p, per arrival.
    void backward(ConstMatrixView dz, MatrixView dh);

    [[nodiscard]] index_t width() const { return width_; }

private:
    const GraphBlocks& blocks_;
    Communicator& comm_;
    index_t width_;
    DenseMatrix send_;  ///< forward: packed rows for peers; backward: received gradients
    DenseMatrix recv_;  ///< forward: rows from peers; backward: gradients for peers
};

}  // namespace strata
