// ModelInputs: what one rank uploads for a model — its TrainingInputs with the model's
// operator (ModelGraph::normalization), the overlapped aggregation over them, and, when the model
// has attention ops, the halo exchange they read — with their memory-plan lines.
#pragma once

#include <memory>
#include <vector>

#include "layers/graph_halo_exchange.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "layers/training_inputs.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_graph.hpp"

namespace strata {

struct ModelInputs {
    /// Uploads `part` for `model`; `part` may be released afterwards. `comm` must outlive it.
    /// `aggregation_options` configure the overlapped aggregation (overlap, halo precision; the
    /// precision is the attention halo exchange's too); `features` how
    /// the features are stored (sparse needs a model made by with_sparse_input).
    ModelInputs(Backend& backend, Communicator& comm, const LocalPart& part,
                const ModelGraph& model, AggregationOptions aggregation_options = {},
                FeatureStorage features = FeatureStorage::dense);

    /// Executor options lending the halo exchange (when there is one).
    [[nodiscard]] ExecutorOptions executor_options(ExecutorOptions options) const {
        options.halo = halo.get();
        return options;
    }
    /// Sends halo rows at `precision` (fp32 or the one uploaded with) from now on: the
    /// aggregation and the attention halo exchange alike (the precision guard).
    void set_halo_precision(HaloPrecision precision) {
        aggregation->set_precision(precision);
        if (halo) {
            halo->set_precision(precision);
        }
    }

    std::unique_ptr<TrainingInputs> uploaded;  ///< graph blocks, features, labels, masks
    std::unique_ptr<OverlappedAggregation> aggregation;
    std::unique_ptr<GraphHaloExchange> halo;  ///< null without attention ops
    std::vector<MemoryLine> lines;            ///< what the upload allocated (planned first)
};

/// Whether any op of `model` is an attention op (needs a HaloExchange).
[[nodiscard]] bool has_attention(const ModelGraph& model);

}  // namespace strata
