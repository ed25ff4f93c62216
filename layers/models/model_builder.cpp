// ModelBuilder: thin wrappers that keep the model files to their formulas.
#include "layers/models/model_builder.hpp"

#include <memory>

#include "layers/add_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/linear_op.hpp"

namespace strata {

TensorId ModelBuilder::dropout(const std::string& name, TensorId x, float rate) {
    if (rate <= 0.0f) {
        return x;
    }
    return act(name, x, BiasActivationOptions{.dropout = rate});
}

TensorId ModelBuilder::linear(const std::string& name, TensorId x, index_t out,
                              float weight_decay) {
    return graph_.add(name, std::make_unique<LinearOp>(cols(x), out, weight_decay), {x});
}

TensorId ModelBuilder::aggregate(const std::string& name, TensorId x) {
    return graph_.add(name, std::make_unique<AggregateOp>(), {x});
}

TensorId ModelBuilder::act(const std::string& name, TensorId x, BiasActivationOptions options) {
    options.seed = seed_;
    if (options.dropout > 0.0f) {
        options.dropout_id = next_dropout_++;
    }
    return graph_.add(name, std::make_unique<BiasActivationOp>(cols(x), options), {x});
}

TensorId ModelBuilder::add(const std::string& name, TensorId x0, TensorId x1, float a, float b) {
    return graph_.add(name, std::make_unique<AddOp>(a, b), {x0, x1});
}

}  // namespace strata
