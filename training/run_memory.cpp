// run_memory_lines: the training run's plan on one rank.
#include "training/run_memory.hpp"

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

}  // namespace strata
