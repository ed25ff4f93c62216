// ModelInputs: plan, then upload.
#include "layers/model_inputs.hpp"

#include "partition/local_normalize.hpp"

namespace strata {

bool has_attention(const ModelGraph& model) {
    for (const Node& node : model.nodes()) {
        if (node.op->kind() == OpKind::attention) {
            return true;
        }
    }
    return false;
}

ModelInputs::ModelInputs(Backend& backend, Communicator& comm, const LocalPart& part,
                         const ModelGraph& model, AggregationOptions aggregation_options,
                         FeatureStorage features) {
    TrainingInputs::Plan plan = TrainingInputs::plan(part, model.normalization(), features);
    plan.rounding_ids = aggregation_options.rounding == HaloRoundingMode::stochastic;
    uploaded = std::make_unique<TrainingInputs>(backend, part, plan);
    lines = std::move(plan.lines);
    aggregation =
        std::make_unique<OverlappedAggregation>(uploaded->blocks, comm, aggregation_options);
    if (has_attention(model)) {  // attention runs over the pattern of A + I
        const LocalGraph structure = normalized(part.graph, Normalization::symmetric);
        lines.push_back(GraphHaloExchange::plan_line(structure));
        halo = std::make_unique<GraphHaloExchange>(
            uploaded->blocks, structure, comm, aggregation_options.precision,
            aggregation_options.rounding, aggregation_options.seed);
    }
}

}  // namespace strata
