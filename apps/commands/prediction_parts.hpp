// The predictions of a K-rank `strata predict` (K > 1): a directory of per-rank part files and an
// index, committed as a whole through AtomicOutput (docs/checkpoints.md "Predictions").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/atomic_output.hpp"
#include "src/base/types.hpp"
#include "src/comm/communicator.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata::app {

/// Format of a predictions part file (strata_format = "predictions_part") and of index.json
/// (strata_format = "predictions_index").
inline constexpr std::int64_t prediction_parts_format_version = 1;

/// Root attributes every predictions file (single or part) carries.
struct PredictionsMeta {
    std::string checkpoint;  ///< the checkpoint file read
    std::int64_t epoch = 0;
    std::int64_t best_epoch = 0;
    std::string model;    ///< the checkpoint's model identity
    std::string dataset;  ///< the checkpoint's dataset identity
};

/// This rank's rows: original vertex ids and their predictions (argmax), logits [n x C] and,
/// when not empty, embeddings [n x H].
struct PredictionRows {
    const std::vector<global_id>* ids = nullptr;
    const std::vector<std::int64_t>* predictions = nullptr;
    const HostMatrix* logits = nullptr;
    const HostMatrix* embeddings = nullptr;  ///< nullptr without --embeddings
};

/// "part-00003.h5".
[[nodiscard]] std::string prediction_part_name(int rank);

/// Collective. Rank 0 holds `out` (created before any work, so that an existing --out fails
/// early) and creates its temporary directory; every rank writes "part-<rank>.h5" with its own
/// rows into it (the ranks must share the file system of `out_path`); if any rank fails, rank
/// 0 destroys `out` (removing the temporary) and every rank throws the same line with the
/// failing rank's reason: "<out_path>: rank R failed writing its part of the predictions
/// (<its error>); nothing was written". Then rank 0 gathers the row counts (one integer per rank),
/// checks that they sum to `num_vertices`, writes index.json (the completion marker, last) and
/// commits the directory. No rank holds or sends more than its own rows.
void write_prediction_parts(Communicator& comm, std::unique_ptr<AtomicOutput>& out,
                            const std::string& out_path, const PredictionsMeta& meta,
                            const PredictionRows& rows, global_id num_vertices);

}  // namespace strata::app
