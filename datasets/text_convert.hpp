// Plain-text graph directory -> GraphDataset (`strata convert --from text`; layout in
// docs/datasets.md).
#pragma once

#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

struct TextConvertOptions {
    std::string name;         ///< the dataset's name attribute
    bool undirected = false;  ///< add v -> u for every listed u -> v
};

/// Reads `dir`: edges.txt ("u v" or "u v w" per line: an edge u -> v, 0-based ids),
/// features.mtx (MatrixMarket coordinate real/integer/pattern general, 1-based) or
/// features.txt (one dense row per line), labels.txt (one class id per line, -1 = unlabeled;
/// it defines N, and num_classes = max label + 1), and optional train.txt/val.txt/test.txt
/// (vertex ids; a missing file is an empty split). Blank lines and lines starting with '#'
/// (or '%' in .mtx) are skipped. Duplicate edges are dropped (the first weight is kept);
/// self loops are kept as given. The result is validated.
/// Throws strata::Error naming "file:line" and the offending field on any bad input.
[[nodiscard]] GraphDataset convert_text(const std::string& dir, const TextConvertOptions& options);

}  // namespace strata
