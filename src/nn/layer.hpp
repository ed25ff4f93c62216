// Layer: the interface every layer implements (forward/backward pairs on DenseMatrix).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/nn/parameter.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {

/// What a forward pass is for: training (dropout active, keep state for backward) or not.
struct LayerContext {
    bool training = false;
    std::uint64_t epoch = 0;
};

/// Non-virtual interface: the public calls check shapes once; implementations stay short.
/// forward and backward strictly alternate; forward keeps in members what backward needs
/// (e.g. a pointer to its input, which the Model keeps alive until backward).
class Layer {
public:
    virtual ~Layer() = default;

    /// y = f(x).   x: rows x input_cols, y: rows x output_cols(input_cols).
    void forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context);
    /// dx = J_f(x)ᵀ dy (overwritten; skipped when dx is null, e.g. for the input features);
    /// parameter gradients are *accumulated* (+=).
    void backward(const DenseMatrix& dy, DenseMatrix* dx);

    [[nodiscard]] virtual index_t output_cols(index_t input_cols) const = 0;
    [[nodiscard]] virtual std::vector<ParameterSpec> parameter_specs(index_t input_cols) const {
        (void)input_cols;
        return {};
    }
    /// Receives views of its parameters, in the order of parameter_specs().
    virtual void bind_parameters(std::span<const Parameter> parameters) { (void)parameters; }
    [[nodiscard]] virtual std::string name() const = 0;

private:
    virtual void do_forward(const DenseMatrix& x, DenseMatrix& y, const LayerContext& context) = 0;
    virtual void do_backward(const DenseMatrix& dy, DenseMatrix* dx) = 0;

    index_t input_cols_ = -1;
    index_t rows_ = -1;
};

}  // namespace strata
