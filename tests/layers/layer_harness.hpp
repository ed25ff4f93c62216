// Test harness: a one-rank LocalGraph of a small graph, and finite-difference checks of a
// layer's backward against its forward.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include <mpi.h>

#include "datasets/normalize.hpp"
#include "layers/graph_blocks.hpp"
#include "partition/local_graph.hpp"
#include "partition/partition.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/layer.hpp"
#include "tests/support/graphs.hpp"
#include "tests/support/matrices.hpp"

namespace strata::test {

/// Everything a layer needs on one rank (MPI_COMM_SELF), for a small community graph.
struct OneRankGraph {
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    MpiCommunicator comm{MPI_COMM_SELF};
    GraphDataset graph;
    LocalGraph local;
    std::unique_ptr<GraphBlocks> blocks;

    explicit OneRankGraph(std::int64_t n = 12, index_t features = 5) {
        graph = community_graph(n, 3, 3, features, 7);
        local = build_local_graph(gcn_normalize(graph), partition_block(n, 1), 0);
        blocks = std::make_unique<GraphBlocks>(*backend, local);
    }
};

/// Result of comparing analytic and central finite-difference derivatives.
struct GradientCheck {
    double worst_error = 0.0;  ///< max |analytic - numeric| / max(1, |numeric|)
    int checked = 0;
};

/// L(x, θ) = Σ r ⊙ layer(x): checks dL/dx (when `check_input`) and dL/dθ for every parameter.
inline GradientCheck check_layer_gradients(Layer& layer, Backend& backend, const HostMatrix& x_host,
                                           bool training, bool check_input = true) {
    const index_t rows = x_host.rows;
    const index_t out_cols = layer.output_cols(x_host.cols);
    // Parameters: random values, zero gradients, in one buffer each.
    const auto specs = layer.parameter_specs(x_host.cols);
    std::vector<Buffer<float>> values;
    std::vector<Buffer<float>> grads;
    std::vector<Parameter> params;
    std::uint64_t seed = 11;
    for (const auto& spec : specs) {
        const HostMatrix init = random_matrix(spec.rows, spec.cols, seed++);
        values.emplace_back(backend, std::span<const float>(init.values));
        const std::vector<float> zeros(init.values.size(), 0.0f);
        grads.emplace_back(backend, std::span<const float>(zeros));
        params.push_back({spec.name,
                          {values.back().data(), spec.rows, spec.cols},
                          {grads.back().data(), spec.rows, spec.cols},
                          0.0f});
    }
    layer.bind_parameters(params);
    const HostMatrix r = random_matrix(rows, out_cols, 99);
    const LayerContext context{.training = training, .epoch = 3};

    DenseMatrix x = DenseMatrix::upload(backend, x_host);
    DenseMatrix y(backend, rows, out_cols);
    auto loss = [&]() {
        layer.forward(x, y, context);
        const HostMatrix out = y.download();
        double sum = 0.0;
        for (std::size_t i = 0; i < out.values.size(); ++i) {
            sum += static_cast<double>(out.values[i]) * r.values[i];
        }
        return sum;
    };
    (void)loss();
    const DenseMatrix dy = DenseMatrix::upload(backend, r);
    DenseMatrix dx(backend, rows, x_host.cols);
    layer.backward(dy, check_input ? &dx : nullptr);

    GradientCheck result;
    const float eps = 1e-2f;
    auto compare = [&](double analytic, double numeric) {
        result.worst_error = std::max(
            result.worst_error, std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric)));
        ++result.checked;
    };
    if (check_input) {
        const HostMatrix analytic = dx.download();
        HostMatrix probe = x_host;
        for (std::size_t i = 0; i < probe.values.size(); ++i) {
            const float saved = probe.values[i];
            probe.values[i] = saved + eps;
            x = DenseMatrix::upload(backend, probe);
            const double plus = loss();
            probe.values[i] = saved - eps;
            x = DenseMatrix::upload(backend, probe);
            const double minus = loss();
            probe.values[i] = saved;
            compare(analytic.values[i], (plus - minus) / (2.0 * eps));
        }
        x = DenseMatrix::upload(backend, x_host);
    }
    for (std::size_t p = 0; p < params.size(); ++p) {
        const std::vector<float> analytic = grads[p].download();
        std::vector<float> host = values[p].download();
        for (std::size_t i = 0; i < host.size(); ++i) {
            const float saved = host[i];
            host[i] = saved + eps;
            backend.upload(values[p].data(), host.data(), host.size() * sizeof(float));
            const double plus = loss();
            host[i] = saved - eps;
            backend.upload(values[p].data(), host.data(), host.size() * sizeof(float));
            const double minus = loss();
            host[i] = saved;
            backend.upload(values[p].data(), host.data(), host.size() * sizeof(float));
            compare(analytic[i], (plus - minus) / (2.0 * eps));
        }
    }
    return result;
}

}  // namespace strata::test
