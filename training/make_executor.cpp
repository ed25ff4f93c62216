// make_executor: full-graph or layer pipeline.
#include "training/make_executor.hpp"

#include "src/base/error.hpp"
#include "src/nn/full_graph_executor.hpp"

namespace strata {

MadeExecutor make_executor(const RunConfig& config, Prepared& prepared, Backend& backend,
                           Communicator& comm, ModelParameters& parameters,
                           const ExecutorRequest& request) {
    ModelGraph& graph = prepared.model.graph;
    ModelInputs& inputs = *prepared.inputs;
    MadeExecutor made;
    if (config.parallel == "pipeline" && request.training) {
        auto pipeline = std::make_unique<PipelineExecutor>(
            backend, comm, *prepared.self, graph, parameters, *inputs.aggregation,
            inputs.uploaded->data(),
            PipelineOptions{.stages = config.stages,
                            .ways = config.ways,
                            .structure = prepared.structure ? &*prepared.structure : nullptr,
                            .chunk_offsets = prepared.chunk_offsets,
                            .shuffle = config.chunk_shuffle,
                            .grad_zero_scale = config.grad_zero_scale,
                            .snapshot_period = config.snapshot_period,
                            .seed = config.seed,
                            .nnz = prepared.nnz,
                            .recompute = *parse_recompute(config.recompute)});
        prepared.structure.reset();  // read in the constructor only
        made.pipeline = pipeline.get();
        made.executor = std::move(pipeline);
        return made;
    }
    STRATA_CHECK(config.parallel != "pipeline",
                 "make_executor: the layer pipeline's data cannot be evaluated apart from it");
    made.executor = std::make_unique<FullGraphExecutor>(
        backend, comm, graph, parameters, *inputs.aggregation, inputs.uploaded->data(),
        inputs.executor_options({.recompute = *parse_recompute(config.recompute),
                                 .evaluation_outputs = request.evaluation_outputs,
                                 .training = request.training,
                                 .progress = config.overlap,
                                 .profile = config.profile}));
    return made;
}

}  // namespace strata
