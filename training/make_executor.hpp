// make_executor: the run's executor over a prepared rank — the exact full-graph executor (graph
// parallelism) or the layer pipeline — chosen and configured from the run configuration, in one
// place for training, prediction and the benches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/nn/executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "training/prepare.hpp"

namespace strata {

struct ExecutorRequest {
    bool training = true;  ///< false: evaluation only (predict): no training schedule or arena
    /// Tensors evaluate() keeps besides the logits (predict's embeddings).
    std::vector<std::string> evaluation_outputs{};
};

struct MadeExecutor {
    std::unique_ptr<Executor> executor;
    PipelineExecutor* pipeline =
        nullptr;  ///< the layer pipeline's (its guard and state), else null
};

/// The executor of `config` (resolved) over `prepared`; the pipeline takes the structure it
/// needs out of `prepared`. `parameters` and `prepared` must outlive it. Throws strata::Error as
/// the executors' constructors do.
[[nodiscard]] MadeExecutor make_executor(const RunConfig& config, Prepared& prepared,
                                         Backend& backend, Communicator& comm,
                                         ModelParameters& parameters,
                                         const ExecutorRequest& request = {});

}  // namespace strata
