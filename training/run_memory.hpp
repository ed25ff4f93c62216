// The memory plan of a training run on one rank — the upload's lines, the executor's, the
// optimizer state and the best weights — as `strata train` prints it and `strata plan` predicts
// it (one function, so the two cannot drift apart).
#pragma once

#include <cstddef>
#include <vector>

#include "src/nn/executor.hpp"

namespace strata {

/// `inputs` (ModelInputs::lines) followed by `executor` (Executor::memory_plan()), the Adam
/// moments and the best weights of `num_parameters` parameters.
[[nodiscard]] std::vector<MemoryLine> run_memory_lines(std::vector<MemoryLine> inputs,
                                                       const std::vector<MemoryLine>& executor,
                                                       std::size_t num_parameters);

/// Σ bytes of `lines`.
[[nodiscard]] std::int64_t total_bytes(const std::vector<MemoryLine>& lines);

}  // namespace strata
