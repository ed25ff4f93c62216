// CUDA backend against the CPU backend: softmax cross-entropy sums (equal to the rounding of
// expf; counts exact; argmax ties to the lowest class), its gradient, the bad-label error, and Adam
// in both weight-decay modes over several steps (equal to 1e-6).
#include <cstdint>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/device/buffer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;

struct LossRun {
    LossSums sums;
    std::vector<float> dlogits;
};

LossRun run_loss(Backend& be, const HostMatrix& logits, const std::vector<index_t>& labels,
                 const std::vector<std::uint8_t>& mask, bool with_gradient) {
    const DenseMatrix dl = DenseMatrix::upload(be, logits);
    const Buffer<index_t> dlabels(be, std::span<const index_t>(labels));
    const Buffer<std::uint8_t> dmask(be, std::span<const std::uint8_t>(mask));
    DenseMatrix grad(be, static_cast<index_t>(logits.rows), logits.cols);
    MatrixView grad_view = with_gradient ? grad.view() : MatrixView{};
    LossRun run;
    run.sums = be.softmax_cross_entropy(dl.view(), dlabels.span(), dmask.span(), 0.25f, grad_view);
    if (with_gradient) {
        run.dlogits = grad.download().values;
    }
    return run;
}

}  // namespace

TEST_CASE("CUDA softmax cross-entropy sums equal the CPU to rounding", "[gpu]") {
    test::Backends b;
    for (const index_t classes : {1, 7, 40}) {
        const index_t rows = 1000;  // four 256-row chunks, the last one partial
        INFO("classes " << classes);
        HostMatrix logits = test::random_matrix(rows, classes, 3, -4.0f, 4.0f);
        for (index_t c = 0; c < classes; ++c) {
            logits.at(10, c) = 1.5f;  // a tie over all classes: argmax is class 0
        }
        std::vector<index_t> labels(static_cast<std::size_t>(rows));
        std::vector<std::uint8_t> mask(static_cast<std::size_t>(rows));
        for (index_t i = 0; i < rows; ++i) {
            const auto k = static_cast<std::size_t>(i);
            labels[k] = i % 11 == 0 ? -1 : (i * 7) % classes;
            mask[k] = i % 3 == 0 ? 0 : 1;
        }
        labels[10] = 0;
        mask[10] = 1;
        for (const bool gradient : {true, false}) {
            const LossRun want = run_loss(*b.cpu, logits, labels, mask, gradient);
            const LossRun got = run_loss(*b.gpu, logits, labels, mask, gradient);
            CHECK(got.sums.count == want.sums.count);
            CHECK(got.sums.correct == want.sums.correct);
            // The exponentials are in float as on the CPU: CUDA's expf is within 2 ulp of the
            // host's, so each row's log-sum within 2.4e-7 of the CPU's (the emulation, with the
            // host's expf, agrees to 1e-12: tests/emulation).
            CHECK(got.sums.loss == Approx(want.sums.loss).epsilon(1e-6));
            CHECK(want.sums.count > 500);
            if (gradient) {
                CHECK(test::max_relative_difference(got.dlogits, want.dlogits, 1e-6) < 1e-5);
            }
        }
    }
}

TEST_CASE("CUDA softmax cross-entropy throws for a selected label not below the class count",
          "[gpu]") {
    test::Backends b;
    const HostMatrix logits = test::random_matrix(5, 4, 1);
    const std::vector<index_t> labels = {0, 1, 9, 2, 3};
    const std::vector<std::uint8_t> unselected = {1, 1, 0, 1, 1};
    CHECK_NOTHROW(run_loss(*b.gpu, logits, labels, unselected, true));
    const std::vector<std::uint8_t> selected = {1, 1, 1, 1, 1};
    REQUIRE_THROWS_WITH(run_loss(*b.gpu, logits, labels, selected, true),
                        Contains("label 9 of row 2") && Contains("4 classes"));
}

TEST_CASE("CUDA adam equals the CPU to 1e-6 in both weight-decay modes", "[gpu]") {
    test::Backends b;
    const index_t n = 10007;
    const HostMatrix p0 = test::random_matrix(1, n, 1);
    for (const bool decoupled : {false, true}) {
        INFO("decoupled " << decoupled);
        std::vector<std::vector<float>> params;
        std::vector<std::vector<float>> moments;
        for (Backend* be : {b.cpu.get(), b.gpu.get()}) {
            DenseMatrix p = DenseMatrix::upload(*be, p0);
            DenseMatrix m(*be, 1, n);
            DenseMatrix v(*be, 1, n);
            be->fill(m.view(), 0.0f);
            be->fill(v.view(), 0.0f);
            const auto size = static_cast<std::size_t>(n);
            for (std::int64_t step = 1; step <= 3; ++step) {
                const DenseMatrix g = DenseMatrix::upload(
                    *be, test::random_matrix(1, n, static_cast<std::uint32_t>(10 + step)));
                AdamStep s;
                s.lr = 0.01f;
                s.weight_decay = 5e-4f;
                s.decoupled = decoupled;
                s.step = step;
                be->adam({p.data(), size}, {g.data(), size}, {m.data(), size}, {v.data(), size}, s);
            }
            params.push_back(p.download().values);
            std::vector<float> mv = m.download().values;
            const std::vector<float> vv = v.download().values;
            mv.insert(mv.end(), vv.begin(), vv.end());
            moments.push_back(mv);
        }
        double worst = 0.0;
        for (std::size_t i = 0; i < params[0].size(); ++i) {
            worst = std::max(worst, static_cast<double>(std::abs(params[1][i] - params[0][i])));
        }
        CHECK(worst <= 1e-6);
        CHECK(test::max_relative_difference(moments[1], moments[0], 1e-6) < 1e-6);
        CHECK(params[1] != p0.values);  // the step did something
    }
}

}  // namespace strata
