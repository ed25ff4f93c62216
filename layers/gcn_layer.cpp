// GcnLayer forward/backward in both orders.
#include "layers/gcn_layer.hpp"

#include "src/base/error.hpp"

namespace strata {

GcnLayer::GcnLayer(const GraphBlocks& blocks, Communicator& comm, index_t in_features,
                   index_t out_features, float weight_decay, bool bias)
    : backend_(blocks.backend()),
      in_(in_features),
      out_(out_features),
      weight_decay_(weight_decay),
      bias_(bias),
      aggregation_(blocks, comm, out_features < in_features ? out_features : in_features),
      mid_(blocks.backend(), blocks.num_owned(), aggregation_.width()),
      d_mid_(blocks.backend(), blocks.num_owned(), aggregation_.width()) {
    STRATA_CHECK(in_features > 0 && out_features > 0, "gcn: sizes must be positive, got ",
                 in_features, " -> ", out_features);
}

index_t GcnLayer::output_cols(index_t input_cols) const {
    STRATA_CHECK(input_cols == in_, "gcn: input has ", input_cols, " columns, layer expects ", in_);
    return out_;
}

std::vector<ParameterSpec> GcnLayer::parameter_specs(index_t input_cols) const {
    (void)output_cols(input_cols);
    std::vector<ParameterSpec> specs{{"weight", in_, out_, Init::glorot_uniform, weight_decay_}};
    if (bias_) {
        specs.push_back({"bias", 1, out_, Init::zeros, 0.0f});
    }
    return specs;
}

void GcnLayer::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
    if (bias_) {
        bias_param_ = parameters[1];
    }
}

void GcnLayer::do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& /*context*/) {
    x_ = &x;
    if (transform_first()) {
        // t = x W (n x out);  y = Â t
        backend_.gemm(x.view(), Transpose::no, weight_.value, Transpose::no, mid_.view(), 1.0f,
                      0.0f);
        aggregation_.forward(mid_.view(), y.view());
    } else {
        // z = Â x (n x in);  y = z W
        aggregation_.forward(x.view(), mid_.view());
        backend_.gemm(mid_.view(), Transpose::no, weight_.value, Transpose::no, y.view(), 1.0f,
                      0.0f);
    }
    if (bias_param_) {
        backend_.add_bias(y.view(), {bias_param_->value.data, static_cast<std::size_t>(out_)});
    }
}

void GcnLayer::do_backward(const DenseMatrix& dy, DenseMatrix* dx) {
    if (bias_param_) {
        backend_.column_sums(dy.view(), {bias_param_->grad.data, static_cast<std::size_t>(out_)},
                             1.0f);
    }
    if (transform_first()) {
        // dt = Âᵀ dy;  dW += xᵀ dt;  dx = dt Wᵀ
        aggregation_.backward(dy.view(), d_mid_.view());
        backend_.gemm(x_->view(), Transpose::yes, d_mid_.view(), Transpose::no, weight_.grad, 1.0f,
                      1.0f);
        if (dx != nullptr) {
            backend_.gemm(d_mid_.view(), Transpose::no, weight_.value, Transpose::yes, dx->view(),
                          1.0f, 0.0f);
        }
    } else {
        // dW += zᵀ dy;  dz = dy Wᵀ;  dx = Âᵀ dz
        backend_.gemm(mid_.view(), Transpose::yes, dy.view(), Transpose::no, weight_.grad, 1.0f,
                      1.0f);
        if (dx != nullptr) {
            backend_.gemm(dy.view(), Transpose::no, weight_.value, Transpose::yes, d_mid_.view(),
                          1.0f, 0.0f);
            aggregation_.backward(d_mid_.view(), dx->view());
        }
    }
}

}  // namespace strata
