// The loss and optimizer kernels (loss.cu, adam.cu) run by the emulation against the CPU kernels
// on tests/gpu's inputs: softmax cross-entropy (1000 rows: four 256-row chunks, the last one
// partial; 1, 7 and 40 classes; a tie; unselected and unlabelled rows; with and without the
// gradient; more chunks than the finishing block has threads), the first bad label, and Adam in
// both weight-decay modes over three steps on 10007 parameters (to 1e-6, as tests/gpu).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/emulation/emulation_test_util.hpp"

namespace strata {
namespace {

namespace kernels = cuda::kernels;
using test::DeviceVector;
using test::no_stream;

struct LossRun {
    kernels::LossResult result{};
    std::vector<float> dlogits;
};

LossRun run_emulated(const HostMatrix& logits, const std::vector<index_t>& labels,
                     const std::vector<std::uint8_t>& mask, bool with_gradient) {
    const auto rows = static_cast<index_t>(logits.rows);
    const DeviceVector<float> dl("logits", logits.values);
    const DeviceVector<index_t> dlabels("labels", labels);
    const DeviceVector<std::uint8_t> dmask("mask", mask);
    const DeviceVector<float> grad("dlogits", logits.values.size());
    const DeviceVector<std::uint8_t> workspace(
        "loss workspace", kernels::softmax_cross_entropy_workspace_bytes(rows));
    const DeviceVector<kernels::LossResult> result("result", 1);
    REQUIRE(kernels::softmax_cross_entropy(dl.data(), rows, logits.cols, dlabels.data(),
                                           dmask.data(), 0.25f,
                                           with_gradient ? grad.data() : nullptr, workspace.data(),
                                           result.data(), no_stream) == cudaSuccess);
    LossRun run;
    run.result = result.download()[0];
    if (with_gradient) {
        run.dlogits = grad.download();
    }
    return run;
}

/// tests/gpu's labels and mask: every 11th row unlabelled, every 3rd unselected, row 10 a tie.
void labels_and_mask(HostMatrix& logits, std::vector<index_t>& labels,
                     std::vector<std::uint8_t>& mask) {
    const auto rows = static_cast<index_t>(logits.rows);
    const index_t classes = logits.cols;
    labels.assign(static_cast<std::size_t>(rows), 0);
    mask.assign(static_cast<std::size_t>(rows), 0);
    for (index_t i = 0; i < rows; ++i) {
        const auto k = static_cast<std::size_t>(i);
        labels[k] = i % 11 == 0 ? -1 : (i * 7) % classes;
        mask[k] = i % 3 == 0 ? 0 : 1;
    }
    if (rows > 10) {
        for (index_t c = 0; c < classes; ++c) {
            logits.at(10, c) = 1.5f;  // a tie over all classes: argmax is class 0
        }
        labels[10] = 0;
        mask[10] = 1;
    }
}

}  // namespace

TEST_CASE("emulated softmax cross-entropy equals the CPU to rounding", "[emulation]") {
    struct Case {
        index_t rows;
        index_t classes;
    };
    // tests/gpu's 1000 rows; one row; 70000 rows: 274 chunks, more than the 256 threads of
    // the finishing block (two tiles).
    const Case cases[] = {{1000, 1}, {1000, 7}, {1000, 40}, {1, 7}, {70000, 3}};
    for (const Case c : cases) {
        INFO("rows " << c.rows << ", classes " << c.classes);
        HostMatrix logits = test::random_matrix(c.rows, c.classes, 3, -4.0f, 4.0f);
        std::vector<index_t> labels;
        std::vector<std::uint8_t> mask;
        labels_and_mask(logits, labels, mask);
        for (const bool gradient : {true, false}) {
            INFO("gradient " << gradient);
            std::vector<float> want_grad(logits.values.size());
            const LossSums want = cpu::softmax_cross_entropy(
                logits.values.data(), c.rows, c.classes, labels.data(), mask.data(), 0.25f,
                gradient ? want_grad.data() : nullptr, test::cpu_threads);
            const LossRun got = run_emulated(logits, labels, mask, gradient);
            CHECK(got.result.count == want.count);
            CHECK(got.result.correct == want.correct);
            CHECK(got.result.loss == Approx(want.loss).epsilon(1e-12));
            CHECK(got.result.first_bad_row == -1);
            if (gradient) {
                CHECK(test::max_relative_difference(got.dlogits, want_grad, 1e-6) < 1e-5);
            }
        }
    }
}

TEST_CASE(
    "emulated softmax cross-entropy reports the first selected label not below the class "
    "count, and zero rows",
    "[emulation]") {
    HostMatrix logits = test::random_matrix(5, 4, 1);
    const std::vector<index_t> labels = {0, 1, 9, 2, 7};
    CHECK(run_emulated(logits, labels, {1, 1, 0, 1, 0}, true).result.first_bad_row == -1);
    const LossRun bad = run_emulated(logits, labels, {1, 1, 1, 1, 1}, true);
    CHECK(bad.result.first_bad_row == 2);
    CHECK(bad.result.count == 3);
    const LossRun empty = run_emulated(HostMatrix(0, 4), {}, {}, true);
    CHECK(empty.result.count == 0);
    CHECK(empty.result.loss == 0.0);
    CHECK(empty.result.first_bad_row == -1);
}

TEST_CASE("emulated adam equals the CPU to 1e-6 in both weight-decay modes", "[emulation]") {
    for (const index_t n : {10007, 1}) {
        const std::vector<float> p0 = test::random_matrix(1, n, 1).values;
        for (const bool decoupled : {false, true}) {
            INFO("n " << n << ", decoupled " << decoupled);
            const auto size = static_cast<std::size_t>(n);
            const DeviceVector<float> p("params", p0);
            const std::vector<float> zeros(size, 0.0f);
            const DeviceVector<float> m("m", zeros);
            const DeviceVector<float> v("v", zeros);
            std::vector<float> want_p = p0;
            std::vector<float> want_m = zeros;
            std::vector<float> want_v = zeros;
            for (std::int64_t step = 1; step <= 3; ++step) {
                const std::vector<float> g =
                    test::random_matrix(1, n, static_cast<std::uint32_t>(10 + step)).values;
                const DeviceVector<float> dg("grads", g);
                AdamStep s;
                s.lr = 0.01f;
                s.weight_decay = 5e-4f;
                s.decoupled = decoupled;
                s.step = step;
                // cuda_backend.cpp's scalars: corrections in double, then float.
                const auto t = static_cast<double>(step);
                kernels::AdamScalars k{};
                k.lr = s.lr;
                k.beta1 = s.beta1;
                k.beta2 = s.beta2;
                k.eps = s.eps;
                k.weight_decay = s.weight_decay;
                k.decoupled = s.decoupled;
                k.correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.beta1), t));
                k.correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(s.beta2), t));
                REQUIRE(kernels::adam(p.data(), dg.data(), m.data(), v.data(), size, k,
                                      no_stream) == cudaSuccess);
                cpu::adam(want_p.data(), g.data(), want_m.data(), want_v.data(), size, s,
                          test::cpu_threads);
            }
            const std::vector<float> got_p = p.download();
            double worst = 0.0;
            for (std::size_t i = 0; i < size; ++i) {
                worst = std::max(worst, static_cast<double>(std::abs(got_p[i] - want_p[i])));
            }
            CHECK(worst <= 1e-6);
            CHECK(test::max_relative_difference(m.download(), want_m, 1e-6) < 1e-6);
            CHECK(test::max_relative_difference(v.download(), want_v, 1e-6) < 1e-6);
            CHECK(got_p != p0);  // the step did something
        }
    }
}

}  // namespace strata
