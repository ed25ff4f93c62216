// CUDA backend against the CPU backend: memory (and memory_stats), SpMM (awkward shapes, nnz = 0,
// empty rows, a row longer than 1024 entries, f = 1, beta 0 over NaN, row ranges), the cached SpMM
// plan, the compressed-row scatter SpMM (spmm_scatter_add), GEMM in all transpose
// combinations, row gather / scatter-add with repeated and bad ids, the overwrite scatter
// (scatter_rows, distinct ids) with good and bad ids; the per-width plan
// entries and STRATA_SPMM_ALGORITHM. SpMM and GEMM sum in another order than the CPU (and with
// fused multiply-adds), so they are compared relative to the magnitude of the summed terms
// (test::max_scaled_difference), not to the result, which may cancel to near 0.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cuda/spmm_tuning.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "src/tensor/host_dcsr.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace strata {
namespace {

using Catch::Matchers::Contains;

const float nan = std::numeric_limits<float>::quiet_NaN();

/// y = A x + beta y0 on `backend`, downloaded.
std::vector<float> run_spmm(Backend& backend, const HostCsr& a, const HostMatrix& x,
                            const HostMatrix& y0, float beta) {
    const CsrMatrix da = CsrMatrix::upload(backend, a);
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm(da, dx.view(), dy.view(), beta);
    return dy.download().values;
}

/// y = A x + beta y0 on `backend` with an already uploaded A (its plan is kept), downloaded.
std::vector<float> run_spmm_on(Backend& backend, const CsrMatrix& a, const HostMatrix& x,
                               const HostMatrix& y0, float beta) {
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm(a, dx.view(), dy.view(), beta);
    return dy.download().values;
}

/// y = A[rows] x + beta y0 on `backend` (y0: rows.count x f), downloaded.
std::vector<float> run_spmm_rows(Backend& backend, const HostCsr& a, RowRange rows,
                                 const HostMatrix& x, const HostMatrix& y0, float beta) {
    const CsrMatrix da = CsrMatrix::upload(backend, a);
    const DenseMatrix dx = DenseMatrix::upload(backend, x);
    DenseMatrix dy = DenseMatrix::upload(backend, y0);
    backend.spmm(da, rows, dx.view(), dy.view(), beta);
    return dy.download().values;
}

/// Sets STRATA_SPMM_ALGORITHM for its lifetime (unset afterwards, also when a check throws).
class ForcedAlgorithm {
public:
    /// An empty name unsets the variable (the default choice).
    explicit ForcedAlgorithm(const char* name) {
        if (*name == '\0') {
            unsetenv("STRATA_SPMM_ALGORITHM");
        } else {
            setenv("STRATA_SPMM_ALGORITHM", name, 1);
        }
    }
    ForcedAlgorithm(const ForcedAlgorithm&) = delete;
    ForcedAlgorithm& operator=(const ForcedAlgorithm&) = delete;
    ~ForcedAlgorithm() { unsetenv("STRATA_SPMM_ALGORITHM"); }
};

/// c = alpha op(a) op(b) + beta c0 on `backend`, downloaded.
std::vector<float> run_gemm(Backend& backend, const HostMatrix& a, Transpose ta,
                            const HostMatrix& b, Transpose tb, const HostMatrix& c0, float alpha,
                            float beta) {
    const DenseMatrix da = DenseMatrix::upload(backend, a);
    const DenseMatrix db = DenseMatrix::upload(backend, b);
    DenseMatrix dc = DenseMatrix::upload(backend, c0);
    backend.gemm(da.view(), ta, db.view(), tb, dc.view(), alpha, beta);
    return dc.download().values;
}

}  // namespace

TEST_CASE("CUDA memory round-trips through upload, copy and download", "[gpu]") {
    test::Backends b;
    CHECK(b.gpu->kind() == DeviceKind::cuda);
    CHECK(b.gpu->allocate(0) == nullptr);
    std::vector<float> host(1001);
    for (std::size_t i = 0; i < host.size(); ++i) {
        host[i] = static_cast<float>(i) * 0.5f - 3.0f;
    }
    const Buffer<float> first(*b.gpu, std::span<const float>(host));
    const Buffer<float> second = first.clone();
    CHECK(second.download() == host);
    b.gpu->synchronize();
}

TEST_CASE("CUDA memory_stats counts what allocate handed out", "[gpu]") {
    test::Backends b;
    const MemoryStats before = b.gpu->memory_stats();
    {
        const Buffer<float> big(*b.gpu, 1000);
        const Buffer<float> small(*b.gpu, 6);
        void* host = b.gpu->allocate_host(4096);  // not counted
        const MemoryStats during = b.gpu->memory_stats();
        CHECK(during.allocations == before.allocations + 2);
        CHECK(during.bytes_in_use == before.bytes_in_use + 1006 * 4);
        CHECK(during.peak_bytes >= during.bytes_in_use);
        b.gpu->deallocate_host(host);
    }
    const MemoryStats after = b.gpu->memory_stats();
    CHECK(after.allocations == before.allocations);
    CHECK(after.bytes_in_use == before.bytes_in_use);
    CHECK(after.peak_bytes >= before.bytes_in_use + 1006 * 4);
}

TEST_CASE("CUDA spmm matches the CPU on awkward shapes", "[gpu]") {
    struct Case {
        const char* name;
        HostCsr a;
        index_t f;
    };
    const std::vector<Case> cases = {
        {"37 x 53, f 1", test::random_csr(37, 53, 0.2, 1), 1},
        {"200 x 150, f 33", test::random_csr(200, 150, 0.05, 2), 33},
        {"a row of 1500 entries, f 7", test::random_csr(40, 4000, 0.001, 3, 17, 1500), 7},
        {"a row of 3000 entries, f 130", test::random_csr(3, 3001, 0.0, 4, 1, 3000), 130},
        {"nnz 0", test::random_csr(10, 12, 0.0, 5), 5},
        {"0 rows", test::random_csr(0, 9, 0.5, 6), 4},
        {"0 columns", test::random_csr(6, 0, 0.5, 7), 3},
    };
    test::Backends b;
    for (const Case& c : cases) {
        for (const float beta : {0.0f, 1.0f, 0.5f}) {
            INFO(c.name << ", nnz " << c.a.nnz() << ", beta " << beta);
            const HostMatrix x = test::random_matrix(c.a.cols, c.f, 11);
            HostMatrix y0 = test::random_matrix(c.a.rows, c.f, 12);
            if (beta == 0.0f) {
                y0.values.assign(y0.values.size(), nan);  // beta 0 must never read y
            }
            const std::vector<float> want = run_spmm(*b.cpu, c.a, x, y0, beta);
            const std::vector<float> got = run_spmm(*b.gpu, c.a, x, y0, beta);
            const std::vector<float> scale =
                run_spmm(*b.cpu, test::abs_of(c.a), test::abs_of(x), test::abs_of(y0), beta);
            CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
        }
    }
}

TEST_CASE("CUDA spmm of a row range matches the CPU", "[gpu]") {
    struct Case {
        const char* name;
        HostCsr a;
        index_t f;
    };
    const std::vector<Case> cases = {
        {"200 x 150, f 33", test::random_csr(200, 150, 0.05, 2), 33},
        {"37 x 53, f 1", test::random_csr(37, 53, 0.2, 1), 1},
        {"a row of 1500 entries, f 7", test::random_csr(40, 4000, 0.001, 3, 17, 1500), 7},
        {"nnz 0", test::random_csr(10, 12, 0.0, 5), 5},
    };
    test::Backends b;
    for (const Case& c : cases) {
        const index_t m = c.a.rows;
        // Empty (at the start, inside, at the end), the first row, the first rows, one row and a
        // run in the middle (row 17, the long one, inside), the last row, the last rows, all but
        // the first, all but the last, all rows (the cached cuSPARSE plan).
        const std::vector<RowRange> ranges = {{0, 0},     {m / 2, 0}, {m, 0},         {0, 1},
                                              {0, m / 3}, {m / 2, 1}, {m / 4, m / 2}, {m - 1, 1},
                                              {m - 7, 7}, {1, m - 1}, {0, m - 1},     {0, m}};
        const HostMatrix x = test::random_matrix(c.a.cols, c.f, 13);
        for (const RowRange rows : ranges) {
            for (const float beta : {0.0f, 1.0f, 0.5f}) {
                INFO(c.name << ", rows [" << rows.first << ", " << rows.end() << "), beta "
                            << beta);
                HostMatrix y0 = test::random_matrix(rows.count, c.f, 14);
                if (beta == 0.0f) {
                    y0.values.assign(y0.values.size(), nan);  // beta 0 must never read y
                }
                const auto want = run_spmm_rows(*b.cpu, c.a, rows, x, y0, beta);
                const auto got = run_spmm_rows(*b.gpu, c.a, rows, x, y0, beta);
                const auto scale = run_spmm_rows(*b.cpu, test::abs_of(c.a), rows, test::abs_of(x),
                                                 test::abs_of(y0), beta);
                CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
            }
        }
    }
}

TEST_CASE("CUDA spmm_scatter_add matches the CPU and leaves unlisted rows alone", "[gpu]") {
    struct Case {
        const char* name;
        HostCsr full;  ///< compressed to its nonempty rows
        index_t f;
    };
    const std::vector<Case> cases = {
        {"200 x 150, f 33", test::random_csr(200, 150, 0.02, 2), 33},
        {"37 x 53, f 1", test::random_csr(37, 53, 0.2, 1), 1},
        {"a row of 1500 entries, f 7", test::random_csr(40, 4000, 0.001, 3, 17, 1500), 7},
        {"nnz 0", test::random_csr(10, 12, 0.0, 5), 5},
    };
    test::Backends b;
    for (const Case& c : cases) {
        INFO(c.name);
        const HostDcsr a = compress_rows(c.full);
        const HostMatrix x = test::random_matrix(c.full.cols, c.f, 13);
        const HostMatrix y0 = test::random_matrix(c.full.rows, c.f, 14);
        auto run = [&](Backend& backend, const HostCsr& block, const HostMatrix& xs,
                       const HostMatrix& ys) {
            const CsrMatrix da = CsrMatrix::upload(backend, block);
            const Buffer<index_t> rows(backend, std::span<const index_t>(a.row_ids));
            const DenseMatrix dx = DenseMatrix::upload(backend, xs);
            DenseMatrix dy = DenseMatrix::upload(backend, ys);
            backend.spmm_scatter_add(da, rows.span(), dx.view(), dy.view());
            return dy.download().values;
        };
        const auto want = run(*b.cpu, a.block, x, y0);
        const auto got = run(*b.gpu, a.block, x, y0);
        const auto scale = run(*b.cpu, test::abs_of(a.block), test::abs_of(x), test::abs_of(y0));
        CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
        std::vector<std::uint8_t> listed(static_cast<std::size_t>(c.full.rows), 0);
        for (const index_t r : a.row_ids) {
            listed[static_cast<std::size_t>(r)] = 1;
        }
        bool untouched = true;  // unlisted rows keep y0's bits
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (listed[i / static_cast<std::size_t>(c.f)] == 0) {
                untouched = untouched && got[i] == y0.values[i];
            }
        }
        CHECK(untouched);
    }
}

TEST_CASE("CUDA spmm of a row range leaves the plan of the full matrix alone", "[gpu]") {
    test::Backends b;
    const HostCsr host = test::random_csr(90, 60, 0.1, 31);
    const CsrMatrix gpu_a = CsrMatrix::upload(*b.gpu, host);
    const HostMatrix x = test::random_matrix(60, 9, 32);
    const DenseMatrix gx = DenseMatrix::upload(*b.gpu, x);
    DenseMatrix part(*b.gpu, 30, 9);
    b.gpu->spmm(gpu_a, RowRange{20, 30}, gx.view(), part.view(), 0.0f);
    CHECK(gpu_a.plan() == nullptr);  // a chunk builds no plan
    DenseMatrix full(*b.gpu, 90, 9);
    b.gpu->spmm(gpu_a, gx.view(), full.view(), 0.0f);
    REQUIRE(gpu_a.plan() != nullptr);
    const SpmmPlan* plan = gpu_a.plan();
    b.gpu->spmm(gpu_a, RowRange{20, 30}, gx.view(), part.view(), 0.0f);
    CHECK(gpu_a.plan() == plan);
    const std::vector<float> all = full.download().values;
    const std::vector<float> chunk = part.download().values;
    const std::vector<float> rows_20_to_50(all.begin() + 20 * 9, all.begin() + 50 * 9);
    const auto scale = run_spmm_rows(*b.cpu, test::abs_of(host), RowRange{20, 30}, test::abs_of(x),
                                     HostMatrix(30, 9), 0.0f);
    CHECK(test::max_scaled_difference(chunk, rows_20_to_50, scale) < 1e-5);
}

TEST_CASE("CUDA spmm rejects a row range outside A like the CPU", "[gpu]") {
    test::Backends b;
    const CsrMatrix a = CsrMatrix::upload(*b.gpu, test::random_csr(4, 5, 0.5, 1));
    DenseMatrix x(*b.gpu, 5, 2);
    DenseMatrix y(*b.gpu, 2, 2);
    REQUIRE_THROWS_WITH(b.gpu->spmm(a, RowRange{3, 2}, x.view(), y.view(), 0.0f),
                        Contains("not inside A"));
}

TEST_CASE("CUDA spmm caches its plan and reuses it across buffers and widths", "[gpu]") {
    test::Backends b;
    const HostCsr host = test::random_csr(123, 77, 0.1, 21);
    const CsrMatrix gpu_a = CsrMatrix::upload(*b.gpu, host);
    const CsrMatrix cpu_a = CsrMatrix::upload(*b.cpu, host);
    CHECK(gpu_a.plan() == nullptr);
    const SpmmPlan* first_plan = nullptr;
    int round = 0;
    for (const index_t f : {16, 16, 5, 16}) {
        INFO("round " << round << ", f " << f);
        const HostMatrix x = test::random_matrix(77, f, static_cast<std::uint32_t>(30 + round));
        const DenseMatrix gx = DenseMatrix::upload(*b.gpu, x);
        DenseMatrix gy(*b.gpu, 123, f);
        b.gpu->spmm(gpu_a, gx.view(), gy.view(), 0.0f);
        const DenseMatrix cx = DenseMatrix::upload(*b.cpu, x);
        DenseMatrix cy(*b.cpu, 123, f);
        b.cpu->spmm(cpu_a, cx.view(), cy.view(), 0.0f);
        const std::vector<float> scale =
            run_spmm(*b.cpu, test::abs_of(host), test::abs_of(x), HostMatrix(123, f), 0.0f);
        CHECK(test::max_scaled_difference(gy.download().values, cy.download().values, scale) <
              1e-5);
        REQUIRE(gpu_a.plan() != nullptr);
        if (first_plan == nullptr) {
            first_plan = gpu_a.plan();
        }
        CHECK(gpu_a.plan() == first_plan);  // one plan per matrix, whatever the width
        ++round;
    }
}

TEST_CASE("CUDA spmm keeps one plan entry per width, chosen by measurement", "[gpu]") {
    const ForcedAlgorithm forced("auto");
    test::Backends b;
    const HostCsr host = test::random_csr(300, 250, 0.05, 41);
    const CsrMatrix gpu_a = CsrMatrix::upload(*b.gpu, host);
    const std::vector<std::string> names = {"default", "alg1", "alg2", "alg3"};
    std::string first_choice;
    int round = 0;
    for (const index_t f : {7, 64, 7}) {
        INFO("round " << round << ", f " << f);
        for (const float beta : {0.0f, 0.5f}) {
            const HostMatrix x =
                test::random_matrix(250, f, static_cast<std::uint32_t>(50 + round));
            HostMatrix y0 = test::random_matrix(300, f, 60);
            if (beta == 0.0f) {
                y0.values.assign(y0.values.size(), nan);
            }
            const auto want = run_spmm(*b.cpu, host, x, y0, beta);
            const auto got = run_spmm_on(*b.gpu, gpu_a, x, y0, beta);
            const auto scale =
                run_spmm(*b.cpu, test::abs_of(host), test::abs_of(x), test::abs_of(y0), beta);
            CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
        }
        const std::string chosen = chosen_spmm_algorithm(gpu_a, f);
        CHECK(std::find(names.begin(), names.end(), chosen) != names.end());
        if (round == 0) {
            first_choice = chosen;
        }
        ++round;
    }
    CHECK(chosen_spmm_algorithm(gpu_a, 7) == first_choice);  // width 7 was planned once
    CHECK(chosen_spmm_algorithm(gpu_a, 13).empty());         // never run at width 13
}

TEST_CASE("CUDA spmm with each algorithm forced by STRATA_SPMM_ALGORITHM", "[gpu]") {
    test::Backends b;
    const HostCsr host = test::random_csr(300, 250, 0.05, 42);
    int supported = 0;
    for (const char* name : {"default", "alg1", "alg2", "alg3"}) {
        const ForcedAlgorithm forced(name);
        const CsrMatrix gpu_a = CsrMatrix::upload(*b.gpu, host);  // a fresh plan
        for (const index_t f : {7, 64, 7}) {
            INFO(name << ", f " << f);
            const HostMatrix x = test::random_matrix(250, f, 70);
            const HostMatrix y0 = test::random_matrix(300, f, 71);
            const auto want = run_spmm(*b.cpu, host, x, y0, 0.5f);
            std::vector<float> got;
            try {
                got = run_spmm_on(*b.gpu, gpu_a, x, y0, 0.5f);
            } catch (const Error& e) {  // allowed only as the documented refusal
                CHECK_THAT(e.what(), Contains("does not support"));
                WARN(name << " not supported at f " << f << ": " << e.what());
                continue;
            }
            const auto scale =
                run_spmm(*b.cpu, test::abs_of(host), test::abs_of(x), test::abs_of(y0), 0.5f);
            CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
            CHECK(chosen_spmm_algorithm(gpu_a, f) == name);
            ++supported;
        }
    }
    CHECK(supported > 0);
}

// STRATA_SPMM_ALGORITHM=reproducible gives the same bits in every run, with a fresh plan (a new
// run) and with the same plan. Unset and every named algorithm are tried the same way and
// reported (WARN): on an H200 with CUDA 13.0 only CSR_ALG3 did (2026-12-04; ALG_DEFAULT, ALG1
// and ALG2 gave other last bits in 8 of 8 reruns). Compared as one bool per run: Catch would
// print 192k floats.
TEST_CASE("CUDA spmm with STRATA_SPMM_ALGORITHM=reproducible gives the same bits in every run",
          "[gpu]") {
    test::Backends b;
    const HostCsr host = test::random_csr(3000, 2500, 0.01, 43);
    for (const char* name : {"reproducible", "", "default", "alg1", "alg2", "alg3"}) {
        const ForcedAlgorithm forced(name);
        for (const index_t f : {64, 7}) {
            const HostMatrix x = test::random_matrix(2500, f, 80);
            const HostMatrix y0 = test::random_matrix(3000, f, 81);
            const CsrMatrix first = CsrMatrix::upload(*b.gpu, host);
            std::vector<float> once;
            try {
                once = run_spmm_on(*b.gpu, first, x, y0, 0.5f);
            } catch (const Error& e) {  // an algorithm cuSPARSE refuses
                CHECK(std::string_view(name) != "reproducible");
                WARN((*name == '\0' ? "unset" : name)
                     << " not supported at f " << f << ": " << e.what());
                continue;
            }
            int same = 0;
            for (int run = 0; run < 4; ++run) {
                const CsrMatrix fresh = CsrMatrix::upload(*b.gpu, host);  // as a new run has
                same += static_cast<int>(run_spmm_on(*b.gpu, fresh, x, y0, 0.5f) == once);
                same += static_cast<int>(run_spmm_on(*b.gpu, first, x, y0, 0.5f) == once);
            }
            const std::string chosen = chosen_spmm_algorithm(first, f);
            WARN((*name == '\0' ? "unset" : name) << " (runs " << chosen << ") at f " << f << ": "
                                                  << same << " of 8 reruns bit for bit");
            if (std::string_view(name) == "reproducible") {
                CHECK(chosen == "alg3");
                CHECK(same == 8);
            } else if (*name == '\0') {
                CHECK(chosen == "default");
            }
        }
    }
}

TEST_CASE("CUDA spmm rejects an unknown STRATA_SPMM_ALGORITHM", "[gpu]") {
    test::Backends b;
    const ForcedAlgorithm forced("alg9");
    const CsrMatrix a = CsrMatrix::upload(*b.gpu, test::random_csr(4, 5, 0.5, 1));
    DenseMatrix x(*b.gpu, 5, 2);
    DenseMatrix y(*b.gpu, 4, 2);
    b.gpu->fill(x.view(), 1.0f);
    REQUIRE_THROWS_WITH(b.gpu->spmm(a, x.view(), y.view(), 0.0f),
                        Contains("STRATA_SPMM_ALGORITHM") && Contains("alg9") &&
                            Contains("or auto to choose by measurement"));
}

TEST_CASE("CUDA spmm rejects mismatched shapes like the CPU", "[gpu]") {
    test::Backends b;
    const CsrMatrix a = CsrMatrix::upload(*b.gpu, test::random_csr(4, 5, 0.5, 1));
    DenseMatrix x(*b.gpu, 6, 2);
    DenseMatrix y(*b.gpu, 4, 2);
    REQUIRE_THROWS_WITH(b.gpu->spmm(a, x.view(), y.view(), 0.0f), Contains("x has 6 rows"));
}

TEST_CASE("CUDA gemm matches the CPU for every transpose combination", "[gpu]") {
    test::Backends b;
    const index_t m = 37;
    const index_t n = 29;
    const index_t k = 45;
    for (const Transpose ta : {Transpose::no, Transpose::yes}) {
        for (const Transpose tb : {Transpose::no, Transpose::yes}) {
            for (const float beta : {0.0f, 1.3f}) {
                INFO("ta " << (ta == Transpose::yes) << ", tb " << (tb == Transpose::yes)
                           << ", beta " << beta);
                const HostMatrix a = ta == Transpose::no ? test::random_matrix(m, k, 1)
                                                         : test::random_matrix(k, m, 1);
                const HostMatrix bm = tb == Transpose::no ? test::random_matrix(k, n, 2)
                                                          : test::random_matrix(n, k, 2);
                HostMatrix c0 = test::random_matrix(m, n, 3);
                if (beta == 0.0f) {
                    c0.values.assign(c0.values.size(), nan);
                }
                const auto want = run_gemm(*b.cpu, a, ta, bm, tb, c0, 0.7f, beta);
                const auto got = run_gemm(*b.gpu, a, ta, bm, tb, c0, 0.7f, beta);
                const auto scale = run_gemm(*b.cpu, test::abs_of(a), ta, test::abs_of(bm), tb,
                                            test::abs_of(c0), 0.7f, beta);
                CHECK(test::max_scaled_difference(got, want, scale) < 1e-5);
            }
        }
    }
}

TEST_CASE("CUDA gemm with an empty inner dimension scales c by beta", "[gpu]") {
    test::Backends b;
    const HostMatrix a(3, 0);
    const HostMatrix bm(0, 4);
    const HostMatrix c0 = test::random_matrix(3, 4, 9);
    const auto got = run_gemm(*b.gpu, a, Transpose::no, bm, Transpose::no, c0, 1.0f, 0.5f);
    const auto want = run_gemm(*b.cpu, a, Transpose::no, bm, Transpose::no, c0, 1.0f, 0.5f);
    CHECK(test::bitwise_equal(got, want));
    CHECK(got[5] == 0.5f * c0.values[5]);
}

TEST_CASE("CUDA gather_rows and scatter_add_rows match the CPU with repeated ids", "[gpu]") {
    test::Backends b;
    for (const index_t f : {1, 33}) {
        INFO("f " << f);
        const HostMatrix x = test::random_matrix(50, f, 4);
        std::vector<index_t> ids;
        for (index_t i = 0; i < 77; ++i) {
            ids.push_back((i * 13 + 5) % 50);  // every id, several of them twice
        }
        const HostMatrix out0 = test::random_matrix(50, f, 5);
        const HostMatrix packed = test::random_matrix(77, f, 6);
        std::vector<float> gathered[2];
        std::vector<float> scattered[2];
        Backend* backends[2] = {b.cpu.get(), b.gpu.get()};
        for (int k = 0; k < 2; ++k) {
            Backend& be = *backends[k];
            const Buffer<index_t> rows(be, std::span<const index_t>(ids));
            const DenseMatrix dx = DenseMatrix::upload(be, x);
            DenseMatrix dout(be, 77, f);
            be.gather_rows(dx.view(), rows.span(), dout.view());
            gathered[k] = dout.download().values;
            const DenseMatrix dpacked = DenseMatrix::upload(be, packed);
            DenseMatrix dsum = DenseMatrix::upload(be, out0);
            be.scatter_add_rows(dpacked.view(), rows.span(), dsum.view());
            scattered[k] = dsum.download().values;
        }
        CHECK(test::bitwise_equal(gathered[1], gathered[0]));
        CHECK(test::max_relative_difference(scattered[1], scattered[0]) < 1e-6);
    }
}

TEST_CASE("CUDA scatter_add_rows with distinct ids per call is the CPU's sum, bit for bit",
          "[gpu]") {
    // What reproducible callers do (GraphHaloExchange::scatter_add, the overlapped aggregation):
    // one call per peer, each with distinct ids, so no two atomics meet on one element and the
    // sums happen in call order, as on the CPU.
    test::Backends b;
    const index_t f = 33;
    const HostMatrix out0 = test::random_matrix(50, f, 7);
    std::vector<std::vector<index_t>> calls = {{3, 9, 20, 41}, {0, 3, 9, 49}, {9, 10, 20}};
    std::vector<float> result[2];
    Backend* backends[2] = {b.cpu.get(), b.gpu.get()};
    for (int k = 0; k < 2; ++k) {
        Backend& be = *backends[k];
        DenseMatrix dsum = DenseMatrix::upload(be, out0);
        std::uint32_t seed = 8;
        for (const std::vector<index_t>& ids : calls) {
            const Buffer<index_t> rows(be, std::span<const index_t>(ids));
            const DenseMatrix dx = DenseMatrix::upload(
                be, test::random_matrix(static_cast<index_t>(ids.size()), f, seed++));
            be.scatter_add_rows(dx.view(), rows.span(), dsum.view());
        }
        result[k] = dsum.download().values;
    }
    CHECK(test::bitwise_equal(result[1], result[0]));
}

TEST_CASE("CUDA gather_rows reports an out-of-range row id at the next synchronisation", "[gpu]") {
    test::Backends b;
    const DenseMatrix x = DenseMatrix::upload(*b.gpu, test::random_matrix(4, 3, 1));
    const std::vector<index_t> ids = {0, 4, 2};
    const Buffer<index_t> rows(*b.gpu, std::span<const index_t>(ids));
    DenseMatrix out(*b.gpu, 3, 3);
    b.gpu->gather_rows(x.view(), rows.span(), out.view());
    REQUIRE_THROWS_WITH(b.gpu->synchronize(), Contains("gather_rows"));
    CHECK_NOTHROW(b.gpu->synchronize());  // the flag is cleared once reported

    DenseMatrix sum(*b.gpu, 2, 3);
    b.gpu->fill(sum.view(), 0.0f);
    b.gpu->scatter_add_rows(out.view(), rows.span(), sum.view());
    REQUIRE_THROWS_WITH(sum.download(), Contains("scatter_add_rows"));
}

TEST_CASE("CUDA scatter_rows matches the CPU bit for bit with distinct shuffled ids", "[gpu]") {
    test::Backends b;
    for (const index_t f : {1, 33}) {
        INFO("f " << f);
        std::vector<index_t> ids;
        for (index_t i = 0; i < 50; ++i) {
            const index_t id = (i * 17 + 3) % 50;  // a permutation of 0..49
            if (id % 4 != 2) {
                ids.push_back(id);  // rows 2, 6, 10, ... are not listed and must stay
            }
        }
        const auto m = static_cast<index_t>(ids.size());
        const HostMatrix x = test::random_matrix(m, f, 7);
        const HostMatrix out0 = test::random_matrix(50, f, 8);
        std::vector<float> scattered[2];
        Backend* backends[2] = {b.cpu.get(), b.gpu.get()};
        for (int k = 0; k < 2; ++k) {
            Backend& be = *backends[k];
            const Buffer<index_t> rows(be, std::span<const index_t>(ids));
            const DenseMatrix dx = DenseMatrix::upload(be, x);
            DenseMatrix dout = DenseMatrix::upload(be, out0);
            be.scatter_rows(dx.view(), rows.span(), dout.view());
            scattered[k] = dout.download().values;
        }
        CHECK(test::bitwise_equal(scattered[1], scattered[0]));
        CHECK(scattered[0][static_cast<std::size_t>(2 * f)] == out0.at(2, 0));  // untouched
    }
}

TEST_CASE("CUDA scatter_rows reports an out-of-range row id at the next synchronisation", "[gpu]") {
    test::Backends b;
    const DenseMatrix x = DenseMatrix::upload(*b.gpu, test::random_matrix(3, 2, 1));
    const std::vector<index_t> ids = {0, 3, 1};
    const Buffer<index_t> rows(*b.gpu, std::span<const index_t>(ids));
    DenseMatrix out(*b.gpu, 3, 2);
    b.gpu->fill(out.view(), 0.0f);
    b.gpu->scatter_rows(x.view(), rows.span(), out.view());
    REQUIRE_THROWS_WITH(b.gpu->synchronize(), Contains("scatter_rows: a row id was outside"));
    CHECK_NOTHROW(b.gpu->synchronize());  // the flag is cleared once reported
}

}  // namespace strata
