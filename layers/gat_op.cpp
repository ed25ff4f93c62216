// GatOp: forward and a recomputing backward, as backend calls over the halo exchange's
// structure (columns: owned rows, then halo rows).
//
// The head dots s = Wh · a are one GEMM each: s_src = Wh B_srcᵀ with B_src (H x H·F) holding
// a_src[h] at columns hF .. hF + F of row h (zero elsewhere), built in the workspace from H
// row copies; their gradients are dB = dsᵀ Wh (whose diagonal blocks are da) and dWh += ds B.
#include "layers/gat_op.hpp"

#include <sstream>

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {
namespace {

HaloExchange& halo_of(const OpContext& context) {
    STRATA_CHECK(context.halo != nullptr, "gat: the executor lent no halo exchange");
    return *context.halo;
}

/// Sizes of one call: N owned rows, T = N + M columns (owned then halo), nnz entries of A + I.
struct Sizes {
    std::size_t n = 0;
    std::size_t t = 0;
    std::size_t nnz = 0;
};

Sizes sizes_of(const HaloExchange& halo) {
    return {static_cast<std::size_t>(halo.num_owned()),
            static_cast<std::size_t>(halo.num_owned() + halo.num_halo()),
            static_cast<std::size_t>(halo.structure().nnz())};
}

/// Cuts consecutive matrices out of a workspace.
class Carver {
public:
    explicit Carver(std::span<float> workspace) : workspace_(workspace) {}
    MatrixView take(std::size_t rows, std::size_t cols) {
        const std::size_t floats = rows * cols;
        STRATA_CHECK(used_ + floats <= workspace_.size(), "gat: workspace of ", workspace_.size(),
                     " floats is too small");
        const MatrixView v{workspace_.data() + used_, static_cast<index_t>(rows),
                           static_cast<index_t>(cols)};
        used_ += floats;
        return v;
    }
    std::span<float> rest() { return workspace_.subspan(used_); }

private:
    std::span<float> workspace_;
    std::size_t used_ = 0;
};

}  // namespace

/// The forward's buffers (wh: T x H·F, s_src: T x H, s_dst: N x H, e: nnz x H, b: 2H x H·F
/// holding B_src then B_dst) and the exchange scratch.
struct GatOp::Attention {
    MatrixView wh;
    MatrixView s_src;
    MatrixView s_dst;
    MatrixView e;
    MatrixView b;
    std::span<float> exchange;
};

GatOp::GatOp(index_t in, index_t heads, index_t out_per_head, GatOptions options)
    : in_(in), heads_(heads), per_head_(out_per_head), options_(options) {
    STRATA_CHECK(in > 0 && heads > 0 && out_per_head > 0, "gat: sizes must be positive, got ", in,
                 " -> ", heads, " heads x ", out_per_head);
    STRATA_CHECK(options.negative_slope >= 0.0f, "gat: negative slope ", options.negative_slope,
                 " must be >= 0");
    STRATA_CHECK(options.attention_dropout >= 0.0f && options.attention_dropout < 1.0f,
                 "gat: attention dropout rate must be in [0, 1), got ", options.attention_dropout);
}

std::string GatOp::describe() const {
    std::ostringstream out;
    out << "gat " << in_ << " -> " << heads_ << " heads x " << per_head_ << " ("
        << (options_.concat ? "concat" : "mean") << ")";
    if (options_.attention_dropout > 0.0f) {
        out << ", attention dropout " << options_.attention_dropout;
    }
    return out.str();
}

index_t GatOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == in_, "gat: input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, the layer expects ", in_);
    return out_cols();
}

std::vector<ParameterSpec> GatOp::parameter_specs(std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    const float wd = options_.weight_decay;
    std::vector<ParameterSpec> specs{{"weight", in_, width(), Init::glorot_uniform, wd},
                                     {"att_src", heads_, per_head_, Init::glorot_uniform, wd},
                                     {"att_dst", heads_, per_head_, Init::glorot_uniform, wd}};
    if (options_.bias) {
        specs.push_back({"bias", 1, out_cols(), Init::zeros, 0.0f});
    }
    return specs;
}

void GatOp::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
    att_src_ = parameters[1];
    att_dst_ = parameters[2];
    if (options_.bias) {
        bias_ = parameters[3];
    }
}

std::size_t GatOp::forward_workspace(const WorkspaceQuery& query) const {
    if (query.halo == nullptr) {
        return 0;
    }
    const Sizes s = sizes_of(*query.halo);
    const auto hf = static_cast<std::size_t>(width());
    const auto h = static_cast<std::size_t>(heads_);
    return s.t * hf + s.t * h + s.n * h + s.nnz * h + 2 * h * hf +
           query.halo->workspace_floats(width());
}

std::size_t GatOp::backward_workspace(const WorkspaceQuery& query) const {
    if (query.halo == nullptr) {
        return 0;
    }
    const Sizes s = sizes_of(*query.halo);
    const auto hf = static_cast<std::size_t>(width());
    const auto h = static_cast<std::size_t>(heads_);
    // alpha, d (nnz x H); dwh (T x H·F), ds_src (T x H), ds_dst (N x H), ones (T x H), db.
    return forward_workspace(query) + 2 * s.nnz * h + s.t * hf + s.t * h + s.n * h + s.t * h +
           2 * h * hf;
}

DropoutKey GatOp::key(const OpContext& context) const {
    return {.seed = options_.seed,
            .epoch = context.epoch,
            .layer = options_.dropout_id,
            .rate = context.training ? options_.attention_dropout : 0.0f};
}

void GatOp::attend(const OpContext& context, ConstMatrixView x, const Attention& a,
                   ExchangePurpose purpose) const {
    Backend& backend = context.backend;
    HaloExchange& halo = *context.halo;
    const index_t n = halo.num_owned();
    const index_t m = halo.num_halo();
    const index_t hf = width();
    // B_src, B_dst: a[h] at row h, columns hF .. hF + F.
    backend.fill(a.b, 0.0f);
    for (index_t h = 0; h < heads_; ++h) {
        const std::size_t src =
            static_cast<std::size_t>(h) * hf + static_cast<std::size_t>(h) * per_head_;
        const std::size_t dst = src + static_cast<std::size_t>(heads_) * hf;
        backend.axpby(1.0f, att_src_.value.row_range(h, 1), 0.0f, {a.b.data + src, 1, per_head_});
        backend.axpby(1.0f, att_dst_.value.row_range(h, 1), 0.0f, {a.b.data + dst, 1, per_head_});
    }
    const MatrixView b_src = a.b.row_range(0, heads_);
    const MatrixView b_dst = a.b.row_range(heads_, heads_);
    const MatrixView wh = a.wh.row_range(0, n);
    const MatrixView s_src = a.s_src.row_range(0, n);
    backend.gemm(x, Transpose::no, weight_.value, Transpose::no, wh, 1.0f, 0.0f);
    backend.gemm(wh, Transpose::no, b_src, Transpose::yes, s_src, 1.0f, 0.0f);
    backend.gemm(wh, Transpose::no, b_dst, Transpose::yes, a.s_dst, 1.0f, 0.0f);
    // Every rank calls both gathers (a rank may send rows without receiving any).
    halo.gather(wh, a.wh.row_range(n, m), a.exchange,
                ExchangeCall(purpose, context.epoch, context.node, 0));
    halo.gather(s_src, a.s_src.row_range(n, m), a.exchange,
                ExchangeCall(purpose, context.epoch, context.node, 1));
    backend.edge_scores(halo.structure(), a.s_dst, a.s_src, options_.negative_slope, a.e);
}

namespace {

/// Throws unless `rows` is every owned row.
void check_whole(const HaloExchange& halo, RowRange rows) {
    STRATA_CHECK(rows.first == 0 && rows.count == halo.num_owned(), "gat: rows [", rows.first, ", ",
                 rows.end(), ") of ", halo.num_owned(),
                 ": the op needs all rows at once (each softmax reads a whole neighbourhood)");
}

}  // namespace

void GatOp::forward(const OpContext& context, const ForwardArgs& args) {
    HaloExchange& halo = halo_of(context);
    check_whole(halo, args.rows);
    Backend& backend = context.backend;
    const Sizes s = sizes_of(halo);
    const auto h = static_cast<std::size_t>(heads_);
    const auto hf = static_cast<std::size_t>(width());
    Carver ws(args.workspace);
    Attention a{.wh = ws.take(s.t, hf),
                .s_src = ws.take(s.t, h),
                .s_dst = ws.take(s.n, h),
                .e = ws.take(s.nnz, h),
                .b = ws.take(2 * h, hf),
                .exchange = {}};
    a.exchange = ws.rest();
    attend(context, args.x[0], a,
           context.recompute ? ExchangePurpose::recompute : ExchangePurpose::forward);
    const CsrMatrix& structure = halo.structure();
    backend.edge_softmax(structure, a.e, a.e);
    const DropoutKey k = key(context);
    if (k.rate > 0.0f) {
        backend.edge_dropout(structure, k, halo.row_ids(), halo.column_ids(), a.e);
    }
    backend.edge_spmm(structure, {}, a.e, a.wh, args.y, 0.0f);
    if (bias_) {
        backend.bias_activation(args.y, {bias_->value.data, static_cast<std::size_t>(out_cols())},
                                Activation::none, DropoutKey{}, {}, args.y);
    }
}

void GatOp::backward(const OpContext& context, const BackwardArgs& args) {
    HaloExchange& halo = halo_of(context);
    check_whole(halo, args.rows);
    Backend& backend = context.backend;
    const Sizes s = sizes_of(halo);
    const auto h = static_cast<std::size_t>(heads_);
    const auto hf = static_cast<std::size_t>(width());
    const auto n = static_cast<index_t>(s.n);
    const auto m = static_cast<index_t>(s.t - s.n);
    Carver ws(args.workspace);
    Attention a{.wh = ws.take(s.t, hf),
                .s_src = ws.take(s.t, h),
                .s_dst = ws.take(s.n, h),
                .e = ws.take(s.nnz, h),
                .b = ws.take(2 * h, hf),
                .exchange = {}};
    const MatrixView alpha = ws.take(s.nnz, h);
    const MatrixView d = ws.take(s.nnz, h);
    const MatrixView dwh = ws.take(s.t, hf);
    const MatrixView ds_src = ws.take(s.t, h);
    const MatrixView ds_dst = ws.take(s.n, h);
    const MatrixView ones = ws.take(s.t, h);
    const MatrixView db = ws.take(2 * h, hf);
    a.exchange = ws.rest();
    const ConstMatrixView x = args.x[0];
    attend(context, x, a, ExchangePurpose::recompute);
    const CsrMatrix& structure = halo.structure();
    const CsrMatrix& transposed = halo.structure_t();
    const std::span<const index_t> edges = halo.transpose_edges();
    backend.edge_softmax(structure, a.e, alpha);
    // d = dα after dropout = dy · Wh per edge and head; back through the dropout and softmax
    // (and the LeakyReLU): d = dz, the gradient of the pre-activation scores.
    backend.edge_dots(structure, args.dy, a.wh, d);
    const DropoutKey k = key(context);
    if (k.rate > 0.0f) {
        backend.edge_dropout(structure, k, halo.row_ids(), halo.column_ids(), d);
    }
    backend.edge_softmax_backward(structure, alpha, d, a.e, options_.negative_slope, d);
    if (k.rate > 0.0f) {
        backend.edge_dropout(structure, k, halo.row_ids(), halo.column_ids(), alpha);
    }
    // dWh of every column (owned and halo) = (α ⊙ mask)ᵀ dy; ds_src, ds_dst: column and row sums
    // of dz (an edge SpMM against ones).
    backend.edge_spmm(transposed, edges, alpha, args.dy, dwh, 0.0f);
    backend.fill(ones, 1.0f);
    backend.edge_spmm(transposed, edges, d, ones.row_range(0, n), ds_src, 0.0f);
    backend.edge_spmm(structure, {}, d, ones, ds_dst, 0.0f);
    const MatrixView dwh_own = dwh.row_range(0, n);
    const MatrixView ds_src_own = ds_src.row_range(0, n);
    halo.scatter_add(dwh.row_range(n, m), dwh_own, a.exchange,
                     ExchangeCall(ExchangePurpose::backward, context.epoch, context.node, 0));
    halo.scatter_add(ds_src.row_range(n, m), ds_src_own, a.exchange,
                     ExchangeCall(ExchangePurpose::backward, context.epoch, context.node, 1));
    // s = Wh Bᵀ:  dB = dsᵀ Wh (its diagonal blocks are da),  dWh += ds B.
    const MatrixView wh = a.wh.row_range(0, n);
    const MatrixView db_src = db.row_range(0, heads_);
    const MatrixView db_dst = db.row_range(heads_, heads_);
    backend.gemm(ds_src_own, Transpose::yes, wh, Transpose::no, db_src, 1.0f, 0.0f);
    backend.gemm(ds_dst, Transpose::yes, wh, Transpose::no, db_dst, 1.0f, 0.0f);
    for (index_t head = 0; head < heads_; ++head) {
        const std::size_t at = static_cast<std::size_t>(head) * hf +
                               static_cast<std::size_t>(head) * static_cast<std::size_t>(per_head_);
        backend.axpby(1.0f, ConstMatrixView{db_src.data + at, 1, per_head_}, 1.0f,
                      att_src_.grad.row_range(head, 1));
        backend.axpby(1.0f, ConstMatrixView{db_dst.data + at, 1, per_head_}, 1.0f,
                      att_dst_.grad.row_range(head, 1));
    }
    backend.gemm(ds_src_own, Transpose::no, a.b.row_range(0, heads_), Transpose::no, dwh_own, 1.0f,
                 1.0f);
    backend.gemm(ds_dst, Transpose::no, a.b.row_range(heads_, heads_), Transpose::no, dwh_own, 1.0f,
                 1.0f);
    // Wh = x W.
    backend.gemm(x, Transpose::yes, dwh_own, Transpose::no, weight_.grad, 1.0f, 1.0f);
    if (args.modes[0] != GradMode::skip) {
        backend.gemm(dwh_own, Transpose::no, weight_.value, Transpose::yes, args.dx[0], 1.0f,
                     args.modes[0] == GradMode::accumulate ? 1.0f : 0.0f);
    }
    if (bias_) {
        backend.column_sums(args.dy, {bias_->grad.data, static_cast<std::size_t>(out_cols())},
                            1.0f);
    }
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(GatOp, OpNeeds{.halo = true}, [] {
    return op_samples(
        op_sample(GatOp(4, 2, 3, {.attention_dropout = 0.3f, .seed = 7, .dropout_id = 1}), {4}),
        op_sample(GatOp(4, 2, 3, {.concat = false, .bias = false}), {4}));
});

}  // namespace strata
