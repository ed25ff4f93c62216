// run_memory_lines: the training run's plan on one rank.
#include "training/run_memory.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "src/nn/optimizer.hpp"
#include "training/best_tracker.hpp"

namespace strata {

std::vector<MemoryLine> run_memory_lines(std::vector<MemoryLine> inputs,
                                         const std::vector<MemoryLine>& executor,
                                         std::size_t num_parameters) {
    inputs.insert(inputs.end(), executor.begin(), executor.end());
    inputs.push_back({"optimizer state", Adam::planned_bytes(num_parameters)});
    inputs.push_back({"best weights", BestTracker::planned_bytes(num_parameters)});
    return inputs;
}

std::int64_t total_bytes(const std::vector<MemoryLine>& lines) {
    std::int64_t total = 0;
    for (const MemoryLine& line : lines) {
        total += line.bytes;
    }
    return total;
}

MemoryPlanSummary summarize_memory(std::vector<MemoryLine> lines, index_t owned,
                                   std::int64_t baseline, Communicator& comm) {
    MemoryPlanSummary summary;
    const std::int64_t total = total_bytes(lines);
    std::array<double, 3> maxima{static_cast<double>(total),
                                 static_cast<double>(total) / std::max<double>(1.0, owned),
                                 static_cast<double>(baseline)};
    comm.allreduce_max(maxima);
    summary.lines = std::move(lines);
    summary.total_bytes = static_cast<std::int64_t>(maxima[0]);
    summary.bytes_per_vertex = maxima[1];
    summary.baseline_rss_bytes = static_cast<std::int64_t>(maxima[2]);
    const std::vector<std::byte> all =
        comm.gather(std::as_bytes(std::span<const std::int64_t>(&total, 1)), 0);
    summary.per_rank_bytes.resize(all.size() / sizeof(std::int64_t));
    if (!all.empty()) {  // rank 0's; memcpy from an empty vector's null data is undefined
        std::memcpy(summary.per_rank_bytes.data(), all.data(),
                    summary.per_rank_bytes.size() * sizeof(std::int64_t));
    }
    return summary;
}

}  // namespace strata
