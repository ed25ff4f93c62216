// RunReport: what `strata train` prints on rank 0 — a header (data, ranks, device, model, the
// memory plan), one line per epoch (a fit hook) and the final `test_accuracy=` line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/nn/executor.hpp"
#include "training/fit.hpp"

namespace strata::app {

/// A run's memory plan: lines summed over what this rank allocates, reduced over ranks.
struct MemoryPlanSummary {
    std::vector<MemoryLine> lines;        ///< this rank's lines
    std::int64_t total_bytes = 0;         ///< max over ranks
    double bytes_per_vertex = 0.0;        ///< max over ranks of total / owned vertices
    std::int64_t baseline_rss_bytes = 0;  ///< max over ranks: resident before loading the data
};

class RunReport final : public FitHook {
public:
    /// Only the root rank prints. `quiet`: only the final lines.
    RunReport(bool root, bool quiet);
    void start(const std::string& data, int ranks, const std::string& device,
               const std::string& comm, const std::string& model, std::uint64_t seed, int epochs,
               std::int64_t num_vertices, const MemoryPlanSummary& memory,
               const std::string& recompute);
    void end_epoch(const EpochStats& stats, FitState& state) override;
    /// A line on stdout of the root rank; `even_if_quiet` prints it under --quiet too.
    void note(const std::string& text, bool even_if_quiet = false);
    /// A "warning: ..." line on stderr of the root rank (also under --quiet).
    void warn(const std::string& text);
    /// The final lines (always, even when quiet, on the root rank).
    void finish(const std::optional<EpochStats>& best);

private:
    bool print_;
    bool root_;
};

}  // namespace strata::app
