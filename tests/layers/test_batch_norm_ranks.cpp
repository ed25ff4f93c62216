// BatchNormOp over K ranks equals one rank (mpirun -np 1, 2, 3): each rank holds a block of the
// rows; forward values, running estimates, evaluation, input gradients and the rank-summed
// parameter gradients all match the op run on every row of one rank.
#include <mpi.h>

#include <catch2/catch.hpp>

#include "layers/batch_norm_op.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/support/matrices.hpp"

using namespace strata;
using strata::test::random_matrix;

namespace {

/// Everything one run of the op produces, on the host.
struct BnRun {
    std::vector<float> y;
    std::vector<float> dx;
    std::vector<float> dgamma;
    std::vector<float> dbeta;
    std::vector<float> running_mean;
    std::vector<float> running_var;
    std::vector<float> eval;
};

/// Rows [first, first + count) of x and dy through one BatchNormOp with `comm` (null: alone).
BnRun run(Backend& backend, Communicator* comm, const HostMatrix& x, const HostMatrix& dy,
          index_t first, index_t count) {
    const index_t cols = x.cols;
    const auto c = static_cast<std::size_t>(cols);
    BatchNormOp op(cols, 1e-5f, 0.3f);
    const std::vector<std::vector<float>> host{
        random_matrix(1, cols, 5).values, random_matrix(1, cols, 6).values,
        std::vector<float>(c, 0.5f), std::vector<float>(c, 2.0f)};
    std::vector<Buffer<float>> values;
    std::vector<Buffer<float>> grads;
    std::vector<Parameter> views;
    for (std::size_t p = 0; p < 4; ++p) {
        values.emplace_back(backend, std::span<const float>(host[p]));
        const std::vector<float> zeros(c, 0.0f);
        grads.emplace_back(backend, std::span<const float>(zeros));
        views.push_back({.name = "p",
                         .value = {values.back().data(), 1, cols},
                         .grad = {grads.back().data(), 1, cols},
                         .trainable = p < 2});
    }
    op.bind_parameters(views);
    HostMatrix xs(count, cols);
    HostMatrix dys(count, cols);
    const auto begin = static_cast<std::ptrdiff_t>(first) * cols;
    const auto end = begin + static_cast<std::ptrdiff_t>(count) * cols;
    xs.values.assign(x.values.begin() + begin, x.values.begin() + end);
    dys.values.assign(dy.values.begin() + begin, dy.values.begin() + end);
    const DenseMatrix dx_in = DenseMatrix::upload(backend, xs);
    const DenseMatrix ddy = DenseMatrix::upload(backend, dys);
    DenseMatrix y(backend, count, cols);
    DenseMatrix dx(backend, count, cols);
    Buffer<float> ws(backend, 4 * c);
    const OpContext training{.backend = backend, .training = true, .comm = comm};
    const std::vector<ConstMatrixView> in{dx_in.view()};
    op.forward(training,
               ForwardArgs{.x = in, .y = y.view(), .rows = {0, count}, .workspace = ws.span()});
    const std::vector<MatrixView> dxs{dx.view()};
    const std::vector<GradMode> modes{GradMode::overwrite};
    op.backward(training, BackwardArgs{.x = in,
                                       .y = {},
                                       .dy = ddy.view(),
                                       .dx = dxs,
                                       .modes = modes,
                                       .rows = {0, count},
                                       .workspace = ws.span()});
    DenseMatrix z(backend, count, cols);
    const OpContext evaluation{.backend = backend, .training = false, .comm = comm};
    op.forward(evaluation,
               ForwardArgs{.x = in, .y = z.view(), .rows = {0, count}, .workspace = ws.span()});
    return {y.download().values,  dx.download().values, grads[0].download(), grads[1].download(),
            values[2].download(), values[3].download(), z.download().values};
}

double worst(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double w = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        w = std::max(w, std::abs(static_cast<double>(a[k]) - b[k]) /
                            (1.0 + std::abs(static_cast<double>(b[k]))));
    }
    return w;
}

std::vector<float> slice(const std::vector<float>& v, index_t first, index_t count, index_t cols) {
    return {v.begin() + static_cast<std::ptrdiff_t>(first) * cols,
            v.begin() + static_cast<std::ptrdiff_t>(first + count) * cols};
}

}  // namespace

TEST_CASE("batch norm over K ranks equals one rank", "[layers][mpi]") {
    MpiCommunicator comm(MPI_COMM_WORLD);
    const int k = comm.size();
    const int rank = comm.rank();
    auto backend = make_cpu_backend(1);
    const index_t rows = 37;
    const index_t cols = 5;
    // A common offset (the two-pass statistics must not cancel). Not larger: μ is a float,
    // exact to half an ulp of the offset, and an ulp moves Σ dy ⊙ x̂ by ulp·r·|Σ dy| — K ranks
    // and one rank may round μ differently (their sums are added in another order).
    HostMatrix x = random_matrix(rows, cols, 1);
    for (float& v : x.values) {
        v = 10.0f + 3.0f * v;
    }
    const HostMatrix dy = random_matrix(rows, cols, 2);
    // Uneven blocks: rank r holds rows [r·rows/k, (r+1)·rows/k).
    const index_t first = static_cast<index_t>(static_cast<std::int64_t>(rank) * rows / k);
    const index_t last = static_cast<index_t>(static_cast<std::int64_t>(rank + 1) * rows / k);

    const BnRun one = run(*backend, nullptr, x, dy, 0, rows);
    const BnRun many = run(*backend, &comm, x, dy, first, last - first);
    std::vector<float> dgamma = many.dgamma;
    std::vector<float> dbeta = many.dbeta;
    comm.allreduce_sum(dgamma);  // what the executor's gradient all-reduce does
    comm.allreduce_sum(dbeta);
    INFO("rank " << rank << " of " << k);

    CHECK(worst(many.y, slice(one.y, first, last - first, cols)) < 1e-5);
    CHECK(worst(many.dx, slice(one.dx, first, last - first, cols)) < 1e-5);
    CHECK(worst(dgamma, one.dgamma) < 1e-5);
    CHECK(worst(dbeta, one.dbeta) < 1e-5);
    CHECK(worst(many.running_mean, one.running_mean) < 1e-6);
    CHECK(worst(many.running_var, one.running_var) < 1e-5);
    CHECK(worst(many.eval, slice(one.eval, first, last - first, cols)) < 1e-5);
}
