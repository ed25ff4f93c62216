// Tests of the CPU softmax cross-entropy: hand-computed sums and gradient, finite differences,
// mask and label -1 exclusion, argmax ties, thread-count independence.
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

struct LossResult {
    LossSums sums;
    std::vector<float> dlogits;
};

LossResult run_loss(Backend& backend, const HostMatrix& logits, const std::vector<index_t>& labels,
                    const std::vector<std::uint8_t>& mask, float grad_scale) {
    const DenseMatrix dl = DenseMatrix::upload(backend, logits);
    DenseMatrix grad(backend, static_cast<index_t>(logits.rows), logits.cols);
    backend.fill(grad.view(), -99.0f);  // every entry must be written
    LossResult result;
    result.sums = backend.softmax_cross_entropy(dl.view(), labels, mask, grad_scale, grad.view());
    result.dlogits = grad.download().values;
    return result;
}

/// Row r of m as a 1-row matrix.
HostMatrix row_of(const HostMatrix& m, index_t r) {
    HostMatrix row(1, m.cols);
    row.values.assign(m.row(r), m.row(r) + m.cols);
    return row;
}

}  // namespace

TEST_CASE("softmax cross-entropy of 2 rows x 3 classes matches hand-computed values", "[device]") {
    CpuBackend backend(2);
    // row 0: [1, 2, 3], label 2: loss = log(e + e² + e³) - 3 = log(1 + e⁻¹ + e⁻²) = 0.40760596
    //        softmax = [0.09003057, 0.24472847, 0.66524096]; argmax 2 = label
    // row 1: [1, 1, 0], label 0: loss = log(2e + 1) - 1 = 0.86199480
    //        softmax = [0.4223188, 0.4223188, 0.1553624]; argmax tie -> class 0 = label
    const HostMatrix logits = test::matrix(2, 3, {1, 2, 3, 1, 1, 0});

    const LossResult r = run_loss(backend, logits, {2, 0}, {1, 1}, 0.5f);

    CHECK(r.sums.loss == Approx(0.4076059644443806 + 0.8619948040582512).epsilon(1e-7));
    CHECK(r.sums.count == 2);
    CHECK(r.sums.correct == 2);
    const std::vector<double> expected = {0.04501529, 0.12236424, -0.16737952,
                                          -0.2888406, 0.2111594,  0.0776812};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CHECK(r.dlogits[i] == Approx(expected[i]).margin(1e-7));
    }
}

TEST_CASE("softmax cross-entropy breaks argmax ties toward the lowest class", "[device]") {
    CpuBackend backend(1);
    const HostMatrix logits = test::matrix(1, 3, {1, 1, 0});

    // Label 1 ties with class 0 for the maximum: the prediction is class 0, so it is wrong.
    const LossResult r = run_loss(backend, logits, {1}, {1}, 1.0f);

    CHECK(r.sums.correct == 0);
    CHECK(r.sums.loss == Approx(0.8619948040582512).epsilon(1e-7));
}

TEST_CASE("softmax cross-entropy skips masked-out rows and label -1", "[device]") {
    CpuBackend backend(2);
    const HostMatrix logits = test::random_matrix(4, 5, 9, -3.0f, 3.0f);
    const std::vector<index_t> labels = {0, 1, -1, 4};
    const std::vector<std::uint8_t> mask = {1, 0, 1, 1};

    const LossResult all = run_loss(backend, logits, labels, mask, 1.0f);
    const LossResult row0 = run_loss(backend, row_of(logits, 0), {0}, {1}, 1.0f);
    const LossResult row3 = run_loss(backend, row_of(logits, 3), {4}, {1}, 1.0f);

    CHECK(all.sums.count == 2);
    CHECK(all.sums.loss == Approx(row0.sums.loss + row3.sums.loss).epsilon(1e-12));
    for (std::size_t j = 5; j < 15; ++j) {  // rows 1 and 2 get zero gradient
        CHECK(all.dlogits[j] == 0.0f);
    }
    CHECK(std::vector<float>(all.dlogits.begin(), all.dlogits.begin() + 5) == row0.dlogits);
}

TEST_CASE("softmax cross-entropy gradient matches central finite differences", "[device]") {
    CpuBackend backend(1);
    HostMatrix logits = test::random_matrix(4, 5, 17, -2.0f, 2.0f);
    const std::vector<index_t> labels = {3, 0, 4, 1};
    const std::vector<std::uint8_t> mask = {1, 1, 0, 1};
    const float scale = 0.25f;
    const std::vector<float> grad = run_loss(backend, logits, labels, mask, scale).dlogits;

    int bad = 0;
    for (std::size_t k = 0; k < logits.values.size(); ++k) {
        const float original = logits.values[k];
        logits.values[k] = original + 1e-2f;
        const float up = logits.values[k];
        const double loss_up = run_loss(backend, logits, labels, mask, scale).sums.loss;
        logits.values[k] = original - 1e-2f;
        const float down = logits.values[k];
        const double loss_down = run_loss(backend, logits, labels, mask, scale).sums.loss;
        logits.values[k] = original;
        const double numeric = scale * (loss_up - loss_down) / (static_cast<double>(up) - down);
        bad += std::abs(numeric - grad[k]) <= 1e-4 ? 0 : 1;
    }
    CHECK(bad == 0);
}

TEST_CASE("softmax cross-entropy counts correct predictions", "[device]") {
    CpuBackend backend(1);
    const HostMatrix logits = test::matrix(3, 2, {5, 1, 0, 2, 3, -1});

    const LossSums sums = run_loss(backend, logits, {0, 0, 0}, {1, 1, 1}, 1.0f).sums;

    CHECK(sums.count == 3);
    CHECK(sums.correct == 2);  // rows 0 and 2 predict class 0
}

TEST_CASE("softmax cross-entropy without dlogits returns only the sums", "[device]") {
    CpuBackend backend(1);
    const DenseMatrix logits = DenseMatrix::upload(backend, test::matrix(1, 3, {1, 2, 3}));
    const std::vector<index_t> labels = {2};
    const std::vector<std::uint8_t> mask = {1};

    const LossSums sums = backend.softmax_cross_entropy(logits.view(), labels, mask, 1.0f, {});

    CHECK(sums.loss == Approx(0.4076059644443806).epsilon(1e-7));
}

TEST_CASE("softmax cross-entropy rejects a label beyond the classes", "[device]") {
    CpuBackend backend(1);
    const DenseMatrix logits(backend, 2, 3);
    const std::vector<index_t> labels = {0, 3};
    const std::vector<std::uint8_t> mask = {1, 1};

    REQUIRE_THROWS_WITH(backend.softmax_cross_entropy(logits.view(), labels, mask, 1.0f, {}),
                        Catch::Contains("label 3 of row 1"));
}

TEST_CASE("softmax cross-entropy gives bitwise equal results with 1 and 2 threads", "[device]") {
    const HostMatrix logits = test::random_matrix(3001, 40, 23, -5.0f, 5.0f);
    std::vector<index_t> labels(3001);
    std::vector<std::uint8_t> mask(3001);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        labels[i] = static_cast<index_t>(i % 41) - 1;  // includes -1
        mask[i] = static_cast<std::uint8_t>(i % 3 != 0);
    }
    CpuBackend one(1);
    CpuBackend two(2);

    const LossResult a = run_loss(one, logits, labels, mask, 0.1f);
    const LossResult b = run_loss(two, logits, labels, mask, 0.1f);

    CHECK(a.sums.loss == b.sums.loss);  // exact: same summation order
    CHECK(a.sums.count == b.sums.count);
    CHECK(a.sums.correct == b.sums.correct);
    CHECK(test::bitwise_equal(a.dlogits, b.dlogits));
}

}  // namespace strata
