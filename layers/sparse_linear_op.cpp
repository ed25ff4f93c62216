// SparseLinearOp: SpMMs with the CSR input and its transpose; dropout on the stored values.
#include "layers/sparse_linear_op.hpp"

#include <sstream>

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {
namespace {

const SparseInput& sparse_input(const OpContext& context, index_t in) {
    STRATA_CHECK(context.sparse_input != nullptr && context.sparse_input->x != nullptr,
                 "sparse linear: the executor lends no sparse input (features stored dense)");
    STRATA_CHECK(context.sparse_input->x->cols() == in, "sparse linear: the sparse input has ",
                 context.sparse_input->x->cols(), " columns, the layer expects ", in);
    return *context.sparse_input;
}

}  // namespace

SparseLinearOp::SparseLinearOp(index_t in, index_t out, float weight_decay,
                               const SparseLinearOptions& options)
    : in_(in), out_(out), weight_decay_(weight_decay), options_(options) {
    STRATA_CHECK(in > 0 && out > 0, "sparse linear: sizes must be positive, got ", in, " -> ", out);
    STRATA_CHECK(options.dropout >= 0.0f && options.dropout < 1.0f,
                 "dropout rate must be in [0, 1), got ", options.dropout);
}

std::string SparseLinearOp::describe() const {
    std::ostringstream text;
    text << "sparse linear " << in_ << " -> " << out_;
    if (options_.dropout > 0.0f) {
        text << " (input dropout " << options_.dropout << ")";
    }
    return text.str();
}

index_t SparseLinearOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == in_, "sparse linear: input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, the layer expects ", in_);
    return out_;
}

std::vector<ParameterSpec> SparseLinearOp::parameter_specs(
    std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {{"weight", in_, out_, Init::glorot_uniform, weight_decay_}};
}

void SparseLinearOp::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
}

CsrMatrix& SparseLinearOp::dropped(const OpContext& context, const SparseInput& in) const {
    const DropoutKey key{.seed = options_.seed,
                         .epoch = context.epoch,
                         .layer = options_.dropout_id,
                         .rate = options_.dropout};
    CsrMatrix& xd = *in.x_dropped;
    context.backend.copy(xd.mutable_values(), in.x->values(),
                         static_cast<std::size_t>(in.x->nnz()) * sizeof(float));
    context.backend.edge_dropout(xd, key, context.row_ids, in.col_ids,
                                 {xd.mutable_values(), xd.nnz(), 1});
    return xd;
}

void SparseLinearOp::forward(const OpContext& context, const ForwardArgs& args) {
    const SparseInput& in = sparse_input(context, in_);
    const bool drop = context.training && options_.dropout > 0.0f;
    const CsrMatrix& x = drop ? dropped(context, in) : *in.x;
    context.backend.spmm(x, args.rows, weight_.value, args.y.rows_of(args.rows), 0.0f);
}

void SparseLinearOp::backward(const OpContext& context, const BackwardArgs& args) {
    STRATA_CHECK(args.modes[0] == GradMode::skip,
                 "sparse linear: its input is a model input and gets no gradient");
    const SparseInput& in = sparse_input(context, in_);
    STRATA_CHECK(args.rows.first == 0 && args.rows.count == in.x->rows(),
                 "sparse linear: the weight gradient runs over all ", in.x->rows(), " rows");
    Backend& backend = context.backend;
    if (options_.dropout == 0.0f) {
        backend.spmm(*in.xt, args.dy, weight_.grad, 1.0f);
        return;
    }
    const CsrMatrix& xd = dropped(context, in);  // regenerated: the forward's values
    CsrMatrix& xtd = *in.xt_dropped;
    backend.gather_rows({xd.values(), xd.nnz(), 1}, in.xt_entries,
                        {xtd.mutable_values(), xtd.nnz(), 1});
    backend.spmm(xtd, args.dy, weight_.grad, 1.0f);
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(SparseLinearOp, OpNeeds{.sparse_input = true}, [] {
    return op_samples(op_sample(SparseLinearOp(4, 3, 0.0f, {.dropout = 0.3f, .seed = 5}), {4}));
});

}  // namespace strata
