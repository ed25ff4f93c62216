// Tests of the dropout inside the fused CPU bias_activation: the identity at rate 0, the keep
// rate, the mask as a pure function of (key, global row id, column), the backward pass (mask
// regenerated without relu, read from y with relu), the fused order, and thread independence.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"
#include "tests/support/dropout_reference.hpp"

namespace strata {
namespace {

/// bias_activation(x, bias, act, key, ids) on `backend`, downloaded.
std::vector<float> run_forward(Backend& backend, const HostMatrix& x,
                               const std::vector<float>& bias, Activation act,
                               const DropoutKey& key, const std::vector<global_id>& ids) {
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix y(backend, static_cast<index_t>(x.rows), x.cols);
    backend.bias_activation(dx.view(), bias, act, key, ids, y.view());
    return y.download().values;
}

/// bias_activation_backward(y, dy, act, key, ids) with beta 0 on `backend`, downloaded.
std::vector<float> run_backward(Backend& backend, const HostMatrix& y, const HostMatrix& dy,
                                Activation act, const DropoutKey& key,
                                const std::vector<global_id>& ids) {
    const DenseMatrix dev_y = DenseMatrix::upload(backend, y);
    const DenseMatrix dev_dy = DenseMatrix::upload(backend, dy);
    DenseMatrix dx(backend, static_cast<index_t>(dy.rows), dy.cols);
    backend.bias_activation_backward(dev_y.view(), {}, dev_dy.view(), act, key, ids, dx.view(),
                                     0.0f);
    return dx.download().values;
}

std::vector<global_id> iota_ids(std::size_t n, global_id first) {
    std::vector<global_id> ids(n);
    std::iota(ids.begin(), ids.end(), first);
    return ids;
}

/// `values` as a rows x cols matrix (for feeding a forward output to backward).
HostMatrix as_matrix(index_t rows, index_t cols, const std::vector<float>& values) {
    HostMatrix m(rows, cols);
    m.values = values;
    return m;
}

}  // namespace

TEST_CASE("bias_activation with dropout rate 0 is the identity, also in place", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(7, 5, 1);
    const DropoutKey key{.seed = 1, .epoch = 2, .layer = 3, .rate = 0.0f};
    const std::vector<global_id> ids = iota_ids(7, 100);

    const std::vector<float> y = run_forward(backend, x, {}, Activation::none, key, ids);
    DenseMatrix in_place = DenseMatrix::upload(backend, x);
    backend.bias_activation(in_place.view(), {}, Activation::none, key, ids, in_place.view());

    CHECK(test::bitwise_equal(y, x.values));
    CHECK(test::bitwise_equal(in_place.download().values, x.values));
}

TEST_CASE("dropout keeps entry (i, j) iff counter_u32 reaches the threshold", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::matrix(3, 4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    const DropoutKey key{.seed = 9, .epoch = 4, .layer = 1, .rate = 0.25f};
    const std::vector<global_id> ids = {42, 7, 1000000007};

    const std::vector<float> y = run_forward(backend, x, {}, Activation::none, key, ids);

    const float scale = 1.0f / (1.0f - 0.25f);
    int kept_count = 0;
    for (index_t i = 0; i < 3; ++i) {
        for (index_t j = 0; j < 4; ++j) {
            const bool keep = counter_u32(dropout_stream(9, 4, 1), ids[static_cast<std::size_t>(i)],
                                          j) >= dropout_threshold(0.25f);
            kept_count += keep ? 1 : 0;
            CHECK(y[static_cast<std::size_t>(i * 4 + j)] == (keep ? x.at(i, j) * scale : 0.0f));
        }
    }
    CHECK(kept_count > 0);  // both outcomes occur, so the loop checks both branches
    CHECK(kept_count < 12);
}

TEST_CASE("dropout at rate 0.5 keeps about half of a 1000x64 matrix, scaled by 2", "[device]") {
    CpuBackend backend(2);
    const HostMatrix ones(1000, 64, 1.0f);
    const DropoutKey key{.seed = 123, .epoch = 0, .layer = 0, .rate = 0.5f};

    const std::vector<float> y =
        run_forward(backend, ones, {}, Activation::none, key, iota_ids(1000, 0));

    const auto kept_count = std::count(y.begin(), y.end(), 2.0f);
    const auto dropped = std::count(y.begin(), y.end(), 0.0f);
    CHECK(kept_count + dropped == 64000);
    // Binomial(64000, 0.5): sd = 126.5; ±640 (1%) is over 5 sd.
    CHECK(kept_count > 32000 - 640);
    CHECK(kept_count < 32000 + 640);
}

TEST_CASE("the mask generator keeps each rate and neighbouring entries are independent",
          "[device]") {
    // counter_at (one 32-bit round per entry, counter_rng.hpp) over 2000 rows x 512 columns:
    // the keep fraction within 5 sd of 1 - rate, and entries kept together with their right
    // neighbour (same row), the one below (next row id) and the row id 2^32 apart (the key's
    // halves differ) as often as independent draws would be: (1 - rate)^2, within 5 sd.
    constexpr int rows = 2000;
    constexpr int cols = 512;
    for (const float rate : {0.1f, 0.5f, 0.8f}) {
        const std::uint64_t stream = dropout_stream(42, 7, 3);
        const std::uint32_t threshold = dropout_threshold(rate);
        const auto keep = [&](std::int64_t row, int col) {
            return counter_u32(stream, row, col) >= threshold;
        };
        double n = 0;
        double kept_count = 0;
        double right = 0;
        double below = 0;
        double far = 0;
        for (std::int64_t i = 0; i < rows; ++i) {
            for (int j = 0; j + 1 < cols; ++j) {
                const bool k = keep(i, j);
                n += 1;
                kept_count += k ? 1 : 0;
                right += k && keep(i, j + 1) ? 1 : 0;
                below += k && keep(i + 1, j) ? 1 : 0;
                far += k && keep(i + (std::int64_t{1} << 32), j) ? 1 : 0;
            }
        }
        const double p = 1.0 - rate;
        const double sd1 = std::sqrt(p * (1 - p) / n);
        const double p2 = p * p;
        const double sd2 = std::sqrt(p2 * (1 - p2) / n);
        INFO("rate " << rate);
        CHECK(std::abs(kept_count / n - p) < 5 * sd1);
        CHECK(std::abs(right / n - p2) < 5 * sd2);
        CHECK(std::abs(below / n - p2) < 5 * sd2);
        CHECK(std::abs(far / n - p2) < 5 * sd2);
    }
}

TEST_CASE("the dropout mask depends on the global row id, not the row position", "[device]") {
    CpuBackend backend(2);
    const HostMatrix ones(10, 16, 1.0f);
    const DropoutKey key{.seed = 5, .epoch = 3, .layer = 2, .rate = 0.5f};
    const std::vector<global_id> ids = iota_ids(10, 1000);
    const std::vector<global_id> reversed(ids.rbegin(), ids.rend());

    const std::vector<float> a = run_forward(backend, ones, {}, Activation::none, key, ids);
    const std::vector<float> b = run_forward(backend, ones, {}, Activation::none, key, reversed);

    for (std::size_t i = 0; i < 10; ++i) {
        const auto row_a = a.begin() + static_cast<std::ptrdiff_t>(i * 16);
        const auto row_b = b.begin() + static_cast<std::ptrdiff_t>((9 - i) * 16);
        CHECK(std::equal(row_a, row_a + 16, row_b));
    }
    CHECK(a != b);  // the rows do differ, so the check above is not vacuous
}

TEST_CASE("dropout masks change with the epoch and layer", "[device]") {
    CpuBackend backend(1);
    const HostMatrix ones(20, 16, 1.0f);
    const std::vector<global_id> ids = iota_ids(20, 0);
    const auto run = [&](std::uint64_t epoch, std::uint64_t layer) {
        return run_forward(backend, ones, {}, Activation::none,
                           {.seed = 1, .epoch = epoch, .layer = layer, .rate = 0.5f}, ids);
    };

    const std::vector<float> base = run(0, 0);
    const std::vector<float> next_epoch = run(1, 0);
    const std::vector<float> next_layer = run(0, 1);

    CHECK(base != next_epoch);
    CHECK(base != next_layer);
    CHECK(next_epoch != next_layer);
}

TEST_CASE("bias_activation_backward without relu regenerates exactly the forward mask",
          "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(30, 12, 2, 0.5f, 1.0f);  // no zeros in x
    const HostMatrix dy = test::random_matrix(30, 12, 3, 0.5f, 1.0f);
    const DropoutKey key{.seed = 77, .epoch = 5, .layer = 1, .rate = 0.3f};
    const std::vector<global_id> ids = iota_ids(30, 500);
    const std::vector<float> y = run_forward(backend, x, {}, Activation::none, key, ids);

    // y is not read without relu: pass zeros, so only a regenerated mask can drop entries.
    const std::vector<float> dx =
        run_backward(backend, HostMatrix(30, 12, 0.0f), dy, Activation::none, key, ids);

    const float scale = 1.0f / (1.0f - 0.3f);
    int mismatches = 0;
    int dropped = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const float expected = y[i] == 0.0f ? 0.0f : dy.values[i] * scale;
        mismatches += dx[i] == expected ? 0 : 1;
        dropped += y[i] == 0.0f ? 1 : 0;
    }
    CHECK(mismatches == 0);
    CHECK(dropped > 0);
}

TEST_CASE(
    "bias_activation_backward with relu and dropout passes dy scaled where the output is "
    "positive",
    "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(40, 9, 6);
    const HostMatrix dy = test::random_matrix(40, 9, 7);
    const std::vector<float> bias = {0.5f, -0.5f, 0.0f, 0.25f, -0.25f, 1.0f, -1.0f, 0.1f, -0.1f};
    const DropoutKey key{.seed = 3, .epoch = 11, .layer = 2, .rate = 0.4f};
    const std::vector<global_id> ids = iota_ids(40, 2000);
    const std::vector<float> y = run_forward(backend, x, bias, Activation::relu, key, ids);

    // With relu no row ids are needed: y > 0 already says "kept and positive".
    const std::vector<float> dx =
        run_backward(backend, as_matrix(40, 9, y), dy, Activation::relu, key, {});

    const float scale = 1.0f / (1.0f - 0.4f);
    int mismatches = 0;
    int passed = 0;
    int dropped_positive = 0;
    for (index_t i = 0; i < 40; ++i) {
        for (index_t j = 0; j < 9; ++j) {
            const bool keep = test::dropout_kept(key, ids[static_cast<std::size_t>(i)], j);
            const bool positive = x.at(i, j) + bias[static_cast<std::size_t>(j)] > 0.0f;
            const std::size_t k = static_cast<std::size_t>(i) * 9 + static_cast<std::size_t>(j);
            const float expected = keep && positive ? dy.values[k] * scale : 0.0f;
            mismatches += dx[k] == expected ? 0 : 1;
            passed += keep && positive ? 1 : 0;
            dropped_positive += !keep && positive ? 1 : 0;
        }
    }
    CHECK(mismatches == 0);
    CHECK(passed > 0);
    CHECK(dropped_positive > 0);  // the mask, not only the sign, decides some entries
}

TEST_CASE("fused bias_activation equals bias, then relu, then dropout done separately in float",
          "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(50, 17, 8);
    const HostMatrix bias_row = test::random_matrix(1, 17, 9, -0.5f, 0.5f);
    const std::vector<float>& bias = bias_row.values;
    const DropoutKey key{.seed = 42, .epoch = 6, .layer = 3, .rate = 0.35f};
    const std::vector<global_id> ids = iota_ids(50, 77);

    const std::vector<float> fused = run_forward(backend, x, bias, Activation::relu, key, ids);

    const float scale = 1.0f / (1.0f - key.rate);
    std::vector<float> expected(x.values.size());
    for (index_t i = 0; i < 50; ++i) {
        for (index_t j = 0; j < 17; ++j) {
            float v = x.at(i, j) + bias[static_cast<std::size_t>(j)];  // bias
            v = v > 0.0f ? v : 0.0f;                                   // relu
            v = test::dropout_kept(key, ids[static_cast<std::size_t>(i)], j) ? v * scale
                                                                             : 0.0f;  // dropout
            expected[static_cast<std::size_t>(i) * 17 + static_cast<std::size_t>(j)] = v;
        }
    }
    CHECK(test::bitwise_equal(fused, expected));
}

TEST_CASE("bias_activation with dropout gives bitwise equal results with 1 and 2 threads",
          "[device]") {
    const HostMatrix x = test::random_matrix(700, 64, 4);  // 44800 entries: above the serial cut
    const HostMatrix dy = test::random_matrix(700, 64, 5);
    const HostMatrix bias_row = test::random_matrix(1, 64, 6);
    const DropoutKey key{.seed = 8, .epoch = 1, .layer = 0, .rate = 0.4f};
    const std::vector<global_id> ids = iota_ids(700, 3);
    const std::unique_ptr<Backend> one = make_cpu_backend(1);
    const std::unique_ptr<Backend> two = make_cpu_backend(2);

    const std::vector<float> y1 = run_forward(*one, x, bias_row.values, Activation::relu, key, ids);
    const std::vector<float> y2 = run_forward(*two, x, bias_row.values, Activation::relu, key, ids);
    const HostMatrix y = as_matrix(700, 64, y1);

    CHECK(test::bitwise_equal(y1, y2));
    CHECK(test::bitwise_equal(run_backward(*one, y, dy, Activation::relu, key, ids),
                              run_backward(*two, y, dy, Activation::relu, key, ids)));
    CHECK(test::bitwise_equal(run_backward(*one, y, dy, Activation::none, key, ids),
                              run_backward(*two, y, dy, Activation::none, key, ids)));
}

TEST_CASE("bias_activation rejects rate 1 and a wrong number of row ids", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 2);
    DenseMatrix dx(backend, 2, 2);
    const std::vector<global_id> two_ids = {0, 1};
    const std::vector<global_id> one_id = {0};

    SECTION("forward") {
        REQUIRE_THROWS_WITH(backend.bias_activation(x.view(), {}, Activation::none, {.rate = 1.0f},
                                                    two_ids, x.view()),
                            Catch::Contains("bias_activation: dropout rate 1 not in [0, 1)"));
        REQUIRE_THROWS_WITH(backend.bias_activation(x.view(), {}, Activation::relu, {.rate = -0.5f},
                                                    two_ids, x.view()),
                            Catch::Contains("dropout rate -0.5 not in [0, 1)"));
        REQUIRE_THROWS_WITH(backend.bias_activation(x.view(), {}, Activation::relu, {.rate = 0.5f},
                                                    one_id, x.view()),
                            Catch::Contains("bias_activation: 1 row ids for 2 rows"));
    }
    SECTION("backward") {
        REQUIRE_THROWS_WITH(
            backend.bias_activation_backward(x.view(), {}, x.view(), Activation::relu,
                                             {.rate = 1.0f}, {}, dx.view(), 0.0f),
            Catch::Contains("bias_activation_backward: dropout rate 1 not in [0, 1)"));
        REQUIRE_THROWS_WITH(
            backend.bias_activation_backward(x.view(), {}, x.view(), Activation::none,
                                             {.rate = 0.5f}, one_id, dx.view(), 0.0f),
            Catch::Contains("bias_activation_backward: 1 row ids for 2 rows"));
    }
}

}  // namespace strata
