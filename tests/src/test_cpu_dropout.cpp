// Tests of the CPU dropout: the identity at rate 0, the keep rate, the mask as a pure function
// of (key, global row id, column), and backward = forward mask.
#include <algorithm>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

/// dropout(x) with `key` and `ids`, downloaded.
std::vector<float> run_dropout(Backend& backend, const HostMatrix& x, const DropoutKey& key,
                               const std::vector<global_id>& ids) {
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix y(backend, x.rows, x.cols);
    backend.dropout(dx.view(), y.view(), key, ids);
    return y.download().values;
}

std::vector<global_id> iota_ids(std::size_t n, global_id first) {
    std::vector<global_id> ids(n);
    std::iota(ids.begin(), ids.end(), first);
    return ids;
}

}  // namespace

TEST_CASE("dropout with rate 0 is the identity, also in place", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(7, 5, 1);
    const DropoutKey key{.seed = 1, .epoch = 2, .layer = 3, .rate = 0.0f};
    const std::vector<global_id> ids = iota_ids(7, 100);

    CHECK(test::bitwise_equal(run_dropout(backend, x, key, ids), x.values));
    DenseMatrix y = DenseMatrix::upload(backend, x);
    backend.dropout(y.view(), y.view(), key, ids);
    CHECK(test::bitwise_equal(y.download().values, x.values));
}

TEST_CASE("dropout keeps entry (i, j) iff counter_u32 reaches the threshold", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::matrix(2, 3, {1, 2, 3, 4, 5, 6});
    const DropoutKey key{.seed = 9, .epoch = 4, .layer = 1, .rate = 0.25f};
    const std::vector<global_id> ids = {42, 7};

    const std::vector<float> y = run_dropout(backend, x, key, ids);

    const std::uint64_t stream = dropout_stream(9, 4, 1);
    for (index_t i = 0; i < 2; ++i) {
        for (index_t j = 0; j < 3; ++j) {
            const bool keep = counter_u32(stream, ids[static_cast<std::size_t>(i)], j) >=
                              dropout_threshold(0.25f);
            CHECK(y[static_cast<std::size_t>(i * 3 + j)] ==
                  (keep ? x.at(i, j) * (1.0f / 0.75f) : 0.0f));
        }
    }
}

TEST_CASE("dropout at rate 0.5 keeps about half of a 1000x64 matrix, scaled by 2", "[device]") {
    CpuBackend backend(2);
    const HostMatrix ones(1000, 64, 1.0f);
    const DropoutKey key{.seed = 123, .epoch = 0, .layer = 0, .rate = 0.5f};

    const std::vector<float> y = run_dropout(backend, ones, key, iota_ids(1000, 0));

    const auto kept = std::count(y.begin(), y.end(), 2.0f);
    const auto dropped = std::count(y.begin(), y.end(), 0.0f);
    CHECK(kept + dropped == 64000);
    // Binomial(64000, 0.5): sd = 126.5; ±640 (1%) is over 5 sd.
    CHECK(kept > 32000 - 640);
    CHECK(kept < 32000 + 640);
}

TEST_CASE("the dropout mask depends on the global row id, not the row position", "[device]") {
    CpuBackend backend(2);
    const HostMatrix ones(10, 16, 1.0f);
    const DropoutKey key{.seed = 5, .epoch = 3, .layer = 2, .rate = 0.5f};
    const std::vector<global_id> ids = iota_ids(10, 1000);
    std::vector<global_id> reversed(ids.rbegin(), ids.rend());

    const std::vector<float> a = run_dropout(backend, ones, key, ids);
    const std::vector<float> b = run_dropout(backend, ones, key, reversed);

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

    const auto base =
        run_dropout(backend, ones, {.seed = 1, .epoch = 0, .layer = 0, .rate = 0.5f}, ids);
    const auto epoch =
        run_dropout(backend, ones, {.seed = 1, .epoch = 1, .layer = 0, .rate = 0.5f}, ids);
    const auto layer =
        run_dropout(backend, ones, {.seed = 1, .epoch = 0, .layer = 1, .rate = 0.5f}, ids);

    CHECK(base != epoch);
    CHECK(base != layer);
}

TEST_CASE("dropout backward applies the forward mask to the gradient", "[device]") {
    CpuBackend backend(2);
    const HostMatrix x = test::random_matrix(30, 12, 2, 0.5f, 1.0f);  // no zeros in x
    HostMatrix dy = test::random_matrix(30, 12, 3, 0.5f, 1.0f);
    const DropoutKey key{.seed = 77, .epoch = 5, .layer = 1, .rate = 0.3f};
    const std::vector<global_id> ids = iota_ids(30, 500);

    const std::vector<float> y = run_dropout(backend, x, key, ids);
    DenseMatrix ddy = DenseMatrix::upload(backend, dy);
    backend.dropout(ddy.view(), ddy.view(), key, ids);  // backward, in place
    const std::vector<float> dx = ddy.download().values;

    int mismatches = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const float expected = y[i] == 0.0f ? 0.0f : dy.values[i] * (1.0f / 0.7f);
        mismatches += dx[i] == Approx(expected).epsilon(1e-6) ? 0 : 1;
    }
    CHECK(mismatches == 0);
}

TEST_CASE("dropout gives bitwise equal results with 1 and 2 threads", "[device]") {
    const HostMatrix x = test::random_matrix(700, 64, 4);
    const DropoutKey key{.seed = 8, .epoch = 1, .layer = 0, .rate = 0.4f};
    const std::vector<global_id> ids = iota_ids(700, 3);
    CpuBackend one(1);
    CpuBackend two(2);

    CHECK(test::bitwise_equal(run_dropout(one, x, key, ids), run_dropout(two, x, key, ids)));
}

TEST_CASE("dropout rejects rate 1 and a wrong number of row ids", "[device]") {
    CpuBackend backend(1);
    DenseMatrix x(backend, 2, 2);

    REQUIRE_THROWS_WITH(
        backend.dropout(x.view(), x.view(), {.rate = 1.0f}, std::vector<global_id>{0, 1}),
        Catch::Contains("rate 1 not in [0, 1)"));
    REQUIRE_THROWS_WITH(
        backend.dropout(x.view(), x.view(), {.rate = 0.5f}, std::vector<global_id>{0}),
        Catch::Contains("1 row ids for 2 rows"));
}

}  // namespace strata
