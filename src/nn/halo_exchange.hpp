// HaloExchange: the halo rows service an executor lends to ops that need whole neighbourhoods
// rather than a fixed Â (graph attention). It gathers the rows of peers that this rank's rows
// reference, sends their gradients back to the owners, and holds the local attention structure:
// the pattern of A + I over owned columns then halo columns. Ops never see partitions or
// messages (layers/graph_halo_exchange.hpp implements it over a Communicator).
#pragma once

#include <cstddef>
#include <span>

#include "src/base/types.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

class CsrMatrix;

class HaloExchange {
public:
    virtual ~HaloExchange() = default;
    /// Rows this rank owns (N).
    [[nodiscard]] virtual index_t num_owned() const = 0;
    /// Peers' rows this rank's rows reference (M), in halo order: peer after peer (ascending
    /// rank), each peer's rows by original id.
    [[nodiscard]] virtual index_t num_halo() const = 0;
    /// Floats of scratch one gather or scatter_add at `width` columns needs (the caller's).
    [[nodiscard]] virtual std::size_t workspace_floats(index_t width) const = 0;

    /// halo_rows[j] = row of h (on its owner) of halo column j.   h: N x w (owned rows, all of
    /// them), halo_rows: M x w. Returns when the rows have arrived. Collective over the ranks
    /// that share halo rows: every rank calls it in the same order.
    virtual void gather(ConstMatrixView h, MatrixView halo_rows, std::span<float> workspace,
                        ExchangeCall call) = 0;
    /// The reverse: dh[owner row of halo column j] += dhalo[j] on the owner of that row.
    /// dhalo: M x w, dh: N x w. Counted as ExchangePurpose::backward (`call`'s key: the
    /// gather's node and part).
    virtual void scatter_add(ConstMatrixView dhalo, MatrixView dh, std::span<float> workspace,
                             ExchangeCall call) = 0;

    /// N x (N + M) in backend memory: row i holds i's in-neighbours and i itself (the pattern
    /// of A + I), columns < N are owned rows, N + j is halo row j; columns sorted in each row.
    /// Its values are not meaningful (ops use the structure only).
    [[nodiscard]] virtual const CsrMatrix& structure() const = 0;
    /// (N + M) x N: the transpose of structure(), and for each of its entries the index of the
    /// same entry in structure() (Backend::edge_spmm's edge_ids).
    [[nodiscard]] virtual const CsrMatrix& structure_t() const = 0;
    [[nodiscard]] virtual std::span<const index_t> transpose_edges() const = 0;
    /// Global (dataset) id of each owned row (N) and of each column of structure() (N + M),
    /// backend memory: dropout keys that do not depend on the number of ranks.
    [[nodiscard]] virtual std::span<const global_id> row_ids() const = 0;
    [[nodiscard]] virtual std::span<const global_id> column_ids() const = 0;

    /// Payload sent so far, by purpose (bytes, this rank).
    [[nodiscard]] virtual HaloBytes bytes_sent() const = 0;
};

}  // namespace strata
