// Tests of the CPU Adam step: one and two steps against hand-computed values, in L2 and
// decoupled (AdamW) weight-decay modes.
#include <vector>

#include <catch2/catch.hpp>

#include "src/device/cpu/cpu_backend.hpp"

namespace strata {
namespace {

struct AdamState {
    std::vector<float> p = {1.0f, -2.0f};
    std::vector<float> m = {0.0f, 0.0f};
    std::vector<float> v = {0.0f, 0.0f};
};

void step(Backend& backend, AdamState& s, bool decoupled, std::int64_t t) {
    const std::vector<float> grads = {0.5f, 0.1f};
    const AdamStep config{.lr = 0.1f,
                          .beta1 = 0.9f,
                          .beta2 = 0.999f,
                          .eps = 1e-8f,
                          .weight_decay = 0.1f,
                          .decoupled = decoupled,
                          .step = t};
    backend.adam(s.p, grads, s.m, s.v, config);
}

}  // namespace

TEST_CASE("adam with L2 weight decay matches hand-computed steps", "[device]") {
    CpuBackend backend(1);
    AdamState s;

    // step 1: g = [0.5, 0.1] + 0.1·[1, -2] = [0.6, -0.1]; m = 0.1 g = [0.06, -0.01];
    // v = 0.001 g² = [3.6e-4, 1e-5]; m̂ = [0.6, -0.1], v̂ = [0.36, 0.01];
    // p -= 0.1 · m̂ / (sqrt(v̂) + eps) = 0.1 · [1, -1]  ->  [0.9, -1.9]
    step(backend, s, false, 1);
    // v is checked to 1e-4 relative: 1 - 0.999f is itself 1.3e-5 off in float.
    CHECK(s.m[0] == Approx(0.06).epsilon(1e-6));
    CHECK(s.m[1] == Approx(-0.01).epsilon(1e-6));
    CHECK(s.v[0] == Approx(3.6e-4).epsilon(1e-4));
    CHECK(s.v[1] == Approx(1e-5).epsilon(1e-4));
    CHECK(s.p[0] == Approx(0.9).epsilon(1e-6));
    CHECK(s.p[1] == Approx(-1.9).epsilon(1e-6));

    // step 2: g = [0.59, -0.09]; m = [0.113, -0.018]; v = [7.0774e-4, 1.809e-5];
    // corrections 1 - 0.9² = 0.19 and 1 - 0.999² = 0.001999
    step(backend, s, false, 2);
    CHECK(s.m[0] == Approx(0.113).epsilon(1e-6));
    CHECK(s.m[1] == Approx(-0.018).epsilon(1e-6));
    CHECK(s.v[0] == Approx(7.0774e-4).epsilon(1e-4));
    CHECK(s.v[1] == Approx(1.809e-5).epsilon(1e-4));
    CHECK(s.p[0] == Approx(0.80004734).epsilon(1e-6));
    CHECK(s.p[1] == Approx(-1.80041225).epsilon(1e-6));
}

TEST_CASE("adam with decoupled weight decay matches hand-computed steps", "[device]") {
    CpuBackend backend(1);
    AdamState s;

    // step 1: p = p - 0.1·0.1·p = [0.99, -1.98]; g = [0.5, 0.1]; m = [0.05, 0.01];
    // v = [2.5e-4, 1e-5]; m̂ / sqrt(v̂) = [1, 1]  ->  p = [0.89, -2.08]
    step(backend, s, true, 1);
    CHECK(s.m[0] == Approx(0.05).epsilon(1e-6));
    CHECK(s.v[0] == Approx(2.5e-4).epsilon(1e-4));
    CHECK(s.p[0] == Approx(0.89).epsilon(1e-6));
    CHECK(s.p[1] == Approx(-2.08).epsilon(1e-6));

    // step 2: p = [0.89·0.99, -2.08·0.99]; m = [0.095, 0.019]; v = [4.9975e-4, 1.999e-5]
    step(backend, s, true, 2);
    CHECK(s.m[0] == Approx(0.095).epsilon(1e-6));
    CHECK(s.m[1] == Approx(0.019).epsilon(1e-6));
    CHECK(s.v[0] == Approx(4.9975e-4).epsilon(1e-4));
    CHECK(s.v[1] == Approx(1.999e-5).epsilon(1e-4));
    CHECK(s.p[0] == Approx(0.7811).epsilon(1e-6));
    CHECK(s.p[1] == Approx(-2.15919998).epsilon(1e-6));
}

TEST_CASE("adam without weight decay is the same in both modes", "[device]") {
    CpuBackend backend(1);
    std::vector<float> p1 = {0.3f, -0.7f, 2.0f};
    std::vector<float> p2 = p1;
    std::vector<float> m1(3, 0.0f);
    std::vector<float> v1(3, 0.0f);
    std::vector<float> m2(3, 0.0f);
    std::vector<float> v2(3, 0.0f);
    const std::vector<float> g = {0.1f, -0.2f, 0.3f};

    backend.adam(p1, g, m1, v1, {.weight_decay = 0.0f, .decoupled = false});
    backend.adam(p2, g, m2, v2, {.weight_decay = 0.0f, .decoupled = true});

    CHECK(p1 == p2);
    CHECK(p1[0] == Approx(0.3 - 0.01).epsilon(1e-6));  // first step moves each by lr·sign(g)
}

TEST_CASE("adam rejects buffers of different sizes", "[device]") {
    CpuBackend backend(1);
    std::vector<float> p(3);
    std::vector<float> g(2);
    std::vector<float> m(3);
    std::vector<float> v(3);

    REQUIRE_THROWS_WITH(backend.adam(p, g, m, v, {}), Catch::Contains("grads 2"));
}

}  // namespace strata
