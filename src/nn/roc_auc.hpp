// roc_auc: the area under the ROC curve of binary scores, and its gather over ranks for the
// evaluation of two-class tasks.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "src/base/types.hpp"
#include "src/comm/communicator.hpp"
#include "src/device/backend.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// AUC = P(score of a random positive > score of a random negative) + 0.5 P(equal), computed as
/// the Mann-Whitney U statistic with average ranks for ties: (sum of the positives' ranks -
/// P(P+1)/2) / (P N). O(n log n). Returns NaN when there is no positive or no negative.
/// `positive[i]` is 1 for a positive example, 0 for a negative one; sizes must match.
[[nodiscard]] double roc_auc(std::span<const float> scores, std::span<const std::uint8_t> positive);

/// Two-class evaluation over all ranks (a collective): for each of `masks` (backend memory,
/// like `labels` and `logits`, num_rows x 2), the AUC of the positive-class score
/// logits[v][1] - logits[v][0] (a monotone function of softmax p(class 1 | v)) over the masked
/// vertices with a label, class 1 positive. Every rank's (score, label) pairs are gathered to
/// rank 0, which computes the AUCs and broadcasts them; NaN when a set lacks a class.
[[nodiscard]] std::array<double, 2> gathered_roc_auc(
    Backend& backend, Communicator& comm, ConstMatrixView logits, std::span<const index_t> labels,
    const std::array<std::span<const std::uint8_t>, 2>& masks);

}  // namespace strata
