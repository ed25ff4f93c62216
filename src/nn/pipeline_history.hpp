// PipelineHistory: what one layer-pipeline rank carries from an epoch to the next besides the
// weights — the staleness settings in force and its stage's historical rows — typed, so that a
// checkpoint (training/checkpoint.hpp, format 5) stores integers as integers and each tensor's
// rows as a matrix. PipelineExecutor::history() makes it; restore_history() puts it back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// The rows of one model tensor on one stage.
struct HistoryTensor {
    std::string name;  ///< the ModelGraph tensor's name, e.g. "conv3.dropout"
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<float> values{};  ///< rows x cols, row-major
};

struct PipelineHistory {
    std::int64_t chunks = 0;           ///< chunks in flight (the accuracy guard may lower them)
    std::int64_t snapshot_period = 0;  ///< T3's period in force (0: off)
    bool has_snapshot = false;         ///< T3 has taken a snapshot
    /// The stage's aggregation inputs, every row as the last epoch left it (the rows a chunk
    /// reads before the chunk owning them is processed).
    std::vector<HistoryTensor> embeddings{};
    std::vector<HistoryTensor> snapshot{};   ///< their T3 snapshot (when has_snapshot)
    std::vector<HistoryTensor> gradients{};  ///< aggregation outputs' gradients (T2 off only)
    /// Read from a format-4 checkpoint: the tensor lists above are empty and format4_rows holds
    /// the rows untyped, in one array — embeddings, then the snapshot, then the gradients —
    /// which restore_history splits by the stage's layout.
    bool from_format4 = false;
    std::vector<float> format4_rows{};
};

}  // namespace strata
