// roc_auc against the definition: the fraction of (positive, negative) pairs ordered correctly,
// ties counting one half, by a plain double loop.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "src/nn/roc_auc.hpp"

namespace {

double pair_count_auc(const std::vector<float>& s, const std::vector<std::uint8_t>& y) {
    double wins = 0.0;
    double pairs = 0.0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        for (std::size_t j = 0; j < s.size(); ++j) {
            if (y[i] == 1 && y[j] == 0) {
                pairs += 1.0;
                wins += s[i] > s[j] ? 1.0 : (s[i] == s[j] ? 0.5 : 0.0);
            }
        }
    }
    return wins / pairs;
}

}  // namespace

TEST_CASE("roc_auc equals the pair-counting definition, ties included", "[nn]") {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 20; ++trial) {
        const std::size_t n = 2 + rng() % 200;
        std::vector<float> scores(n);
        std::vector<std::uint8_t> positive(n);
        for (std::size_t i = 0; i < n; ++i) {
            scores[i] = static_cast<float>(rng() % 13) * 0.25f - 1.0f;  // many ties
            positive[i] = static_cast<std::uint8_t>(rng() % 3 == 0 ? 1 : 0);
        }
        positive[0] = 1;
        positive[1] = 0;
        INFO("trial " << trial << ", n " << n);
        CHECK(strata::roc_auc(scores, positive) == Approx(pair_count_auc(scores, positive)));
    }
}

TEST_CASE("roc_auc: perfect, reversed, constant, and one-class inputs", "[nn]") {
    const std::vector<float> s{0.1f, 0.4f, 0.35f, 0.8f};
    CHECK(strata::roc_auc(s, std::vector<std::uint8_t>{0, 1, 0, 1}) == 1.0);
    CHECK(strata::roc_auc(s, std::vector<std::uint8_t>{1, 0, 1, 0}) == 0.0);
    CHECK(strata::roc_auc(s, std::vector<std::uint8_t>{0, 0, 1, 1}) == 0.75);
    CHECK(strata::roc_auc(std::vector<float>(4, 2.0f), std::vector<std::uint8_t>{0, 1, 0, 1}) ==
          0.5);
    CHECK(std::isnan(strata::roc_auc(s, std::vector<std::uint8_t>{1, 1, 1, 1})));
    CHECK(std::isnan(strata::roc_auc({}, {})));
}
