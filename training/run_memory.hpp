// The memory plan of a training run on one rank — the upload's lines, the executor's, the
// optimizer state and the best weights — as `strata train` prints it and `strata plan` predicts
// it (one function, so the two cannot drift apart).
#pragma once

#include <cstddef>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/nn/executor.hpp"

namespace strata {

/// `inputs` (ModelInputs::lines) followed by `executor` (Executor::memory_plan()), the Adam
/// moments and the best weights of `num_parameters` parameters.
[[nodiscard]] std::vector<MemoryLine> run_memory_lines(std::vector<MemoryLine> inputs,
                                                       const std::vector<MemoryLine>& executor,
                                                       std::size_t num_parameters);

/// Σ bytes of `lines`.
[[nodiscard]] std::int64_t total_bytes(const std::vector<MemoryLine>& lines);

/// A run's memory plan: this rank's lines, and totals reduced over ranks.
struct MemoryPlanSummary {
    std::vector<MemoryLine> lines;        ///< this rank's lines
    std::int64_t total_bytes = 0;         ///< max over ranks
    double bytes_per_vertex = 0.0;        ///< max over ranks of total / owned vertices
    std::int64_t baseline_rss_bytes = 0;  ///< max over ranks: resident before loading the data
    /// Every rank's total, in rank order (rank 0 only; the layer pipeline's stages differ).
    std::vector<std::int64_t> per_rank_bytes;
};

/// Collective: `lines` of this rank (which owns `owned` rows; `baseline` resident bytes before
/// the data) summed and reduced over `comm`.
[[nodiscard]] MemoryPlanSummary summarize_memory(std::vector<MemoryLine> lines, index_t owned,
                                                 std::int64_t baseline, Communicator& comm);

}  // namespace strata
