// CPU softmax cross-entropy: loss sums and gradient for the masked rows in one pass per row, the
// exponentials in float (computed once, kept in the gradient row), their sum and log in double.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {
namespace {

/// Rows per partial loss sum: partials are added in row order, whatever the thread count.
constexpr index_t chunk_rows = 256;

}  // namespace

LossSums softmax_cross_entropy(const float* logits, index_t rows, index_t classes,
                               const index_t* labels, const std::uint8_t* mask, float grad_scale,
                               float* dlogits, int threads) {
    // Row i selected iff mask[i] != 0 and labels[i] >= 0:
    //   loss_i = log Σ_j exp(logits[i, j]) - logits[i, labels[i]]   (max subtracted; exp in
    //            float, the sum and the log in double),
    //   dlogits[i, :] = grad_scale · (softmax(logits[i, :]) - onehot(labels[i])), 0 if unselected.
    // logits, dlogits: rows x classes. Argmax ties go to the lowest class index.
    const auto width = static_cast<std::size_t>(classes);
    const index_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    std::vector<double> partial(static_cast<std::size_t>(chunks), 0.0);
    std::int64_t count = 0;
    std::int64_t correct = 0;
    const bool parallel = threads > 1 && static_cast<std::size_t>(rows) * width >= (1u << 14);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel) \
    reduction(+ : count, correct)
    for (index_t c = 0; c < chunks; ++c) {
        double loss = 0.0;
        std::vector<float> scratch(dlogits == nullptr ? width : 0);
        const index_t last = std::min(rows, (c + 1) * chunk_rows);
        for (index_t i = c * chunk_rows; i < last; ++i) {
            const float* li = logits + static_cast<std::size_t>(i) * width;
            float* di =
                dlogits == nullptr ? nullptr : dlogits + static_cast<std::size_t>(i) * width;
            const index_t label = labels[i];
            if (mask[i] == 0 || label < 0 || classes == 0) {
                if (di != nullptr) {
                    std::fill(di, di + width, 0.0f);
                }
                continue;
            }
            index_t best = 0;
            for (index_t j = 1; j < classes; ++j) {
                if (li[j] > li[best]) {
                    best = j;
                }
            }
            // e_j = exp(l_j - max) once, in float (into the gradient row when there is one),
            // summed in double; then p_j = e_j / Σ e.
            const float max = li[best];
            float* e = di != nullptr ? di : scratch.data();
            double sum = 0.0;
#pragma omp simd reduction(+ : sum)
            for (index_t j = 0; j < classes; ++j) {
                e[j] = std::exp(li[j] - max);
                sum += static_cast<double>(e[j]);
            }
            const double log_sum = std::log(sum);
            loss += log_sum - (static_cast<double>(li[label]) - static_cast<double>(max));
            ++count;
            correct += best == label ? 1 : 0;
            if (di != nullptr) {
                const auto g = static_cast<float>(static_cast<double>(grad_scale) / sum);
#pragma omp simd
                for (index_t j = 0; j < classes; ++j) {
                    di[j] *= g;
                }
                di[label] -= grad_scale;
            }
        }
        partial[static_cast<std::size_t>(c)] = loss;
    }
    LossSums sums;
    for (double loss : partial) {
        sums.loss += loss;
    }
    sums.count = count;
    sums.correct = correct;
    return sums;
}

}  // namespace strata::cpu
