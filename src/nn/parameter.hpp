// Parameters: what a layer asks for (ParameterSpec) and the views it gets into the model's
// flat parameter and gradient buffers (Parameter).
#pragma once

#include <string>

#include "src/tensor/matrix_view.hpp"

namespace strata {

enum class Init { zeros, ones, glorot_uniform };

/// One parameter tensor a layer needs: rows x cols, its initializer and its L2 coefficient.
/// `trainable = false`: state the op updates itself (BatchNorm's running statistics): the
/// optimizer leaves it alone and its gradient stays 0, but it is checkpointed with the rest.
struct ParameterSpec {
    std::string name;
    index_t rows = 0;
    index_t cols = 0;
    Init init = Init::zeros;
    float weight_decay = 0.0f;
    bool trainable = true;
};

/// Views of one parameter and its gradient inside the model's flat buffers (backend memory).
struct Parameter {
    std::string name;
    MatrixView value;
    MatrixView grad;
    float weight_decay = 0.0f;
    bool trainable = true;  ///< false: skipped by the optimizer (ParameterSpec::trainable)
};

}  // namespace strata
