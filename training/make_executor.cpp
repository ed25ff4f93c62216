// make_executor: full-graph (1D or the feature grid's row chunk) or layer pipeline.
#include "training/make_executor.hpp"

#include "src/base/error.hpp"
#include "src/nn/full_graph_executor.hpp"

namespace strata {
namespace {

/// Rows `chunk` of `data` (views into the same memory). The features are the chunk's already
/// (prepare loads only them: docs/layouts.md, "Loading"); labels, masks and row ids the part's.
TrainingData rows_of(const TrainingData& data, RowRange chunk) {
    const auto first = static_cast<std::size_t>(chunk.first);
    const auto count = static_cast<std::size_t>(chunk.count);
    TrainingData part = data;
    for (const ConstMatrixView& input : part.inputs) {
        STRATA_CHECK(input.rows == chunk.count, "make_executor: the grid's features have ",
                     input.rows, " rows, expected the row chunk's ", chunk.count);
    }
    part.labels = data.labels.subspan(first, count);
    part.train_mask = data.train_mask.subspan(first, count);
    part.val_mask = data.val_mask.subspan(first, count);
    part.test_mask = data.test_mask.subspan(first, count);
    part.row_ids = data.row_ids.subspan(first, count);
    STRATA_CHECK(data.sparse_input == nullptr,
                 "make_executor: the feature grid reads dense features");
    return part;
}

}  // namespace

MadeExecutor make_executor(const RunConfig& config, Prepared& prepared, Backend& backend,
                           Communicator& comm, ModelParameters& parameters,
                           const ExecutorRequest& request) {
    ModelGraph& graph = prepared.model.graph;
    ModelInputs& inputs = *prepared.inputs;
    MadeExecutor made;
    if (config.parallel == "pipeline" && request.training) {
        // S x F placed into nodes: the job's ranks renumbered stage x F + f (prepare.hpp).
        Communicator& world = prepared.pipeline_world ? *prepared.pipeline_world : comm;
        auto pipeline = std::make_unique<PipelineExecutor>(
            backend, world, *prepared.self, graph, parameters, *inputs.aggregation,
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
                            .recompute = *parse_recompute(config.recompute),
                            .slices = prepared.stage_slices.get(),
                            .progress = config.overlap,
                            .precision = *parse_halo_precision(config.halo_precision)});
        prepared.structure.reset();  // read in the constructor only
        made.pipeline = pipeline.get();
        made.executor = std::move(pipeline);
        return made;
    }
    STRATA_CHECK(config.parallel != "pipeline",
                 "make_executor: the layer pipeline's data cannot be evaluated apart from it");
    // The grid runs on the rank's row chunk of its part (layout R), through the grid's operator.
    GraphOperator& graph_operator = prepared.grid.aggregation
                                        ? static_cast<GraphOperator&>(*prepared.grid.aggregation)
                                        : *inputs.aggregation;
    TrainingData data = inputs.uploaded->data();
    if (prepared.grid.layout) {
        data = rows_of(data, prepared.grid.layout->chunk());
    }
    made.executor = std::make_unique<FullGraphExecutor>(
        backend, comm, graph, parameters, graph_operator, std::move(data),
        inputs.executor_options({.recompute = *parse_recompute(config.recompute),
                                 .evaluation_outputs = request.evaluation_outputs,
                                 .training = request.training,
                                 .progress = config.overlap,
                                 .profile = config.profile}));
    return made;
}

}  // namespace strata
