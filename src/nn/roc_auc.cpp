// roc_auc: sort by score, average the ranks of each run of equal scores, sum the positives'.
#include "src/nn/roc_auc.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "src/base/error.hpp"

namespace strata {

double roc_auc(std::span<const float> scores, std::span<const std::uint8_t> positive) {
    STRATA_CHECK(scores.size() == positive.size(), "roc_auc: ", scores.size(), " scores but ",
                 positive.size(), " labels");
    std::vector<std::size_t> order(scores.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
    double positive_rank_sum = 0.0;
    double num_positive = 0.0;
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j < order.size() && scores[order[j]] == scores[order[i]]) {
            ++j;
        }
        const double rank = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 .. j
        for (std::size_t k = i; k < j; ++k) {
            if (positive[order[k]] != 0) {
                positive_rank_sum += rank;
                num_positive += 1.0;
            }
        }
        i = j;
    }
    const double num_negative = static_cast<double>(scores.size()) - num_positive;
    if (num_positive == 0.0 || num_negative == 0.0) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    return (positive_rank_sum - num_positive * (num_positive + 1.0) / 2.0) /
           (num_positive * num_negative);
}

std::array<double, 2> gathered_roc_auc(Backend& backend, Communicator& comm, ConstMatrixView logits,
                                       std::span<const index_t> labels,
                                       const std::array<std::span<const std::uint8_t>, 2>& masks) {
    STRATA_CHECK(logits.cols == 2 && labels.size() == static_cast<std::size_t>(logits.rows),
                 "roc_auc: expected num_rows x 2 logits and num_rows labels");
    const auto rows = static_cast<std::size_t>(logits.rows);
    std::vector<float> host_logits(2 * rows);
    std::vector<index_t> host_labels(rows);
    backend.download(host_logits.data(), logits.data, host_logits.size() * sizeof(float));
    backend.download(host_labels.data(), labels.data(), rows * sizeof(index_t));
    std::array<double, 2> auc{};
    for (std::size_t m = 0; m < masks.size(); ++m) {
        STRATA_CHECK(masks[m].size() == rows, "roc_auc: mask of ", masks[m].size(),
                     " rows, expected ", rows);
        std::vector<std::uint8_t> mask(rows);
        backend.download(mask.data(), masks[m].data(), rows);
        std::vector<float> scores;
        std::vector<std::uint8_t> positive;
        for (std::size_t v = 0; v < rows; ++v) {
            if (mask[v] != 0 && host_labels[v] >= 0) {
                scores.push_back(host_logits[2 * v + 1] - host_logits[2 * v]);
                positive.push_back(host_labels[v] == 1 ? 1 : 0);
            }
        }
        const std::vector<std::byte> all_scores =
            comm.gather(std::as_bytes(std::span<const float>(scores)), 0);
        const std::vector<std::byte> all_positive =
            comm.gather(std::as_bytes(std::span<const std::uint8_t>(positive)), 0);
        if (comm.rank() == 0) {
            auc[m] = roc_auc(std::span(reinterpret_cast<const float*>(all_scores.data()),
                                       all_scores.size() / sizeof(float)),
                             std::span(reinterpret_cast<const std::uint8_t*>(all_positive.data()),
                                       all_positive.size()));
        }
    }
    comm.broadcast(std::as_writable_bytes(std::span<double>(auc)), 0);
    return auc;
}

}  // namespace strata
