// Op: one operation of a model graph (src/nn/model_graph.hpp). A call gets everything it needs
// as arguments, including the tensors backward reads, so an op object holds only its
// configuration and parameter views: the same op can run on several row chunks. Every Op
// subclass registers in the op catalogue (src/nn/op_catalogue.hpp) where it is defined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/device/backend.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/nn/halo_exchange.hpp"
#include "src/nn/parameter.hpp"
#include "src/nn/sparse_input.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

class Communicator;

/// How a backward call writes one input's gradient: not at all (the input needs none), `=`
/// (first writer) or `+=` (the tensor has another consumer whose gradient is already there).
enum class GradMode { skip, overwrite, accumulate };

/// What the memory plan (execution_plan.hpp) needs to know about an op beyond its shapes.
enum class OpKind {
    linear,     ///< y = x W: row-local, and commutes with an aggregation (Â (x W) = (Â x) W)
    aggregate,  ///< y = Â x through a GraphOperator: reads every row of x
    pointwise,  ///< row-local elementwise (bias, activation, dropout, sums)
    attention,  ///< reads every row of x and peers' rows through a HaloExchange; never folded
                ///< (it does not commute with a linear); recomputed like an aggregation
};

/// The tensors an op's backward reads besides dy.
struct Saves {
    std::vector<int> inputs;  ///< indices of inputs
    bool output = false;
};

/// What the executor lends an op for one call.
struct OpContext {
    Backend& backend;
    GraphOperator* graph = nullptr;        ///< for aggregations
    HaloExchange* halo = nullptr;          ///< for attention ops (halo rows, A + I structure)
    std::span<const global_id> row_ids{};  ///< global id of each owned row (dropout keys)
    bool training = false;                 ///< dropout on, values may be kept for backward
    std::uint64_t epoch = 0;               ///< dropout masks are keyed by it
    int node = -1;  ///< the model node being run (set per call by node_runner): halo rounding keys
    bool recompute = false;  ///< a forward re-run during backward
    /// The ranks' communicator, for ops whose statistics span all ranks (BatchNormOp); null
    /// means one rank.
    Communicator* comm = nullptr;
    /// Model input 0 as CSR when it is stored sparse (its dense view then has no data): read
    /// by SparseLinearOp only (layers/sparse_linear_op.hpp).
    const SparseInput* sparse_input = nullptr;
};

/// Forward over rows [rows.first, rows.end()) of the output. Views hold all rows.
struct ForwardArgs {
    std::span<const ConstMatrixView> x;  ///< inputs
    MatrixView y;                        ///< output; only `rows` are written
    RowRange rows;
    std::span<float> workspace;  ///< forward_workspace() floats
};

/// Backward over rows [rows.first, rows.end()) of the input gradients (for an aggregation a
/// "pull": dx[rows] = (Âᵀ dy)[rows]); parameter gradients are accumulated (+=).
struct BackwardArgs {
    std::span<const ConstMatrixView> x;  ///< inputs (valid where saves() lists them)
    ConstMatrixView y;                   ///< output (valid if saves().output)
    ConstMatrixView dy;                  ///< gradient of the output, all rows
    std::span<const MatrixView> dx;      ///< gradient of each input, all rows
    std::span<const GradMode> modes;     ///< per input
    RowRange rows;
    std::span<float> workspace;  ///< backward_workspace() floats
};

/// Sizes an op is asked about when a plan is made.
struct WorkspaceQuery {
    index_t rows = 0;
    std::span<const index_t> input_cols;
    index_t output_cols = 0;
    const GraphOperator* graph = nullptr;
    const HaloExchange* halo = nullptr;
    std::span<const GradMode> modes{};  ///< backward only
};

class Op {
public:
    virtual ~Op() = default;
    [[nodiscard]] virtual OpKind kind() const = 0;
    /// "linear 1433 -> 16", "aggregate (the model's graph operator)", "bias+relu+dropout 0.5"
    /// (reports, messages).
    [[nodiscard]] virtual std::string describe() const = 0;
    [[nodiscard]] virtual int num_inputs() const = 0;
    /// Throws strata::Error if the input widths do not fit the op.
    [[nodiscard]] virtual index_t output_cols(std::span<const index_t> input_cols) const = 0;
    [[nodiscard]] virtual std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const {
        (void)input_cols;
        return {};
    }
    /// Views of its parameters in the model's flat buffers, in parameter_specs() order.
    virtual void bind_parameters(std::span<const Parameter> parameters) { (void)parameters; }
    [[nodiscard]] virtual Saves saves() const = 0;
    /// The output may share the buffer of input 0, and dx[0] the buffer of dy.
    [[nodiscard]] virtual bool in_place() const { return false; }
    /// Outside training the output equals input 0 (e.g. a bare dropout): evaluation skips the
    /// op and reads its input instead.
    [[nodiscard]] virtual bool identity_in_evaluation() const { return false; }
    /// Output row i depends only on input rows i (and parameters), so the op may run on row
    /// chunks apart, at any time (the layer-pipeline executor relies on it). Linear and
    /// pointwise ops are; an op whose statistics span rows (BatchNorm) overrides it.
    [[nodiscard]] virtual bool row_local() const {
        return kind() == OpKind::linear || kind() == OpKind::pointwise;
    }
    [[nodiscard]] virtual std::size_t forward_workspace(const WorkspaceQuery& query) const {
        (void)query;
        return 0;
    }
    [[nodiscard]] virtual std::size_t backward_workspace(const WorkspaceQuery& query) const {
        (void)query;
        return 0;
    }
    virtual void forward(const OpContext& context, const ForwardArgs& args) = 0;
    virtual void backward(const OpContext& context, const BackwardArgs& args) = 0;
};

/// Whether forward and backward run over any row range (a chunk of the rows; the layer
/// pipeline's chunked execution): row-local ops, and aggregations (a chunk of Â x "pulls" the
/// rows it needs). Any other op may refuse a partial range.
[[nodiscard]] inline bool runs_on_row_chunks(const Op& op) {
    return op.row_local() || op.kind() == OpKind::aggregate;
}

}  // namespace strata
