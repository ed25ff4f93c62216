// ModelInputs: plan, then upload.
#include "layers/model_inputs.hpp"

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
                         const ModelGraph& model) {
    TrainingInputs::Plan plan = TrainingInputs::plan(part);
    inputs = std::make_unique<TrainingInputs>(backend, part, plan);
    lines = std::move(plan.lines);
    aggregation = std::make_unique<PipelinedAggregation>(inputs->blocks, comm);
    if (has_attention(model)) {
        lines.push_back(GraphHaloExchange::plan_line(part.graph));
        halo = std::make_unique<GraphHaloExchange>(inputs->blocks, part.graph, comm);
    }
}

}  // namespace strata
