// The G x F grid (feature_slices, docs/layouts.md) on 2 and 4 ranks, through prepare and
// make_executor as a Session runs them: the layout switch round-trips bitwise; a column-sliced
// SpMM is the matching columns of the full SpMM bit for bit, a GEMM on the grid's row chunks
// (whole GEMM row tiles) the matching rows of the whole too; the grid's aggregation (forward
// and backward) and its model forward equal 1D at G ranks on the same partition bit for bit;
// every grid of the job's ranks trains GCN as one rank does at every epoch and
// recompute mode (losses within 1e-5 relative, accuracies within one vertex) on Cora, and
// every sliceable model of the zoo on a directed graph (Âᵀ != Â); GAT is refused by name; halo
// bytes equal 1D at G's and the switches' bytes the formula (docs/layouts.md), exactly, and the
// metrics' per-epoch bytes the hand count on a ring, also split inside and across pretended nodes
// (by slot, round robin, uneven: the placement's fallback), and the layer pipeline's stage bytes
// too, S x F's feature groups placed inside the nodes; a checkpoint written on one grid
// resumes on another (K x 1, 1 x K) and continues the run; rank (g, f) reads part g's structure
// and feature columns f only, from a partition directory and from the .h5 (bytes = formula), and
// holds its row chunk's features.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/graph_slice_io.hpp"
#include "layers/grid_aggregation.hpp"
#include "layers/layout_switch.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "planner/grid_model.hpp"
#include "planner/machine_model.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/device/backend.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"
#include "tests/support/temp_dir.hpp"
#include "training/make_executor.hpp"
#include "training/prepare.hpp"
#include "training/run_memory.hpp"
#include "training/session.hpp"

#include <unistd.h>

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::all_ranks;

namespace {

const std::string cora = std::string(STRATA_DATA_DIR) + "/cora.h5";

RunConfig base_config(int slices, const std::string& model = "gcn") {
    RunConfig c;
    c.data = cora;
    c.seed = 1;
    c.partition_method = "metis";
    c.model.model = model;
    c.feature_slices = slices;
    return resolve_recipe(c);
}

struct Epoch {
    double loss = 0.0;
    Evaluation eval;
};

struct Trained {
    std::vector<Epoch> epochs;
    std::vector<index_t> split_sizes;  ///< train, val, test vertices (for "one vertex")
    HaloBytes halo;                    ///< this rank's, at the end
    HaloBytes a2a;
};

/// prepare + make_executor + Adam, as a Session does, on `comm`; `epochs` steps with an
/// evaluation after each.
Trained train(const RunConfig& config, Communicator& comm, int epochs,
              const DataInput& input = {}) {
    auto backend = make_cpu_backend(1);
    Prepared prepared = prepare(config, *backend, comm, input);
    ModelParameters parameters(*backend, prepared.model.graph, config.seed);
    MadeExecutor made = make_executor(config, prepared, *backend, comm, parameters);
    Adam adam(*backend, parameters.size(), AdamOptions{.lr = *config.lr});
    Trained t;
    for (int e = 1; e <= epochs; ++e) {
        Epoch r;
        r.loss = made.executor->train_step(e);
        adam.step(parameters.all());
        r.eval = made.executor->evaluate();
        t.epochs.push_back(r);
    }
    t.halo = made.executor->halo_bytes();
    t.a2a = made.executor->switch_bytes();
    return t;
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b));
}

/// Losses within 1e-5 relative at every epoch, accuracies within `vertex` (1 / the smallest
/// split's size).
bool same_run(const Trained& a, const Trained& b, double vertex) {
    if (a.epochs.size() != b.epochs.size()) {
        return false;
    }
    for (std::size_t e = 0; e < a.epochs.size(); ++e) {
        const Epoch& x = a.epochs[e];
        const Epoch& y = b.epochs[e];
        INFO("epoch " << e + 1 << " loss " << x.loss << " vs " << y.loss << " val "
                      << x.eval.val_acc << " vs " << y.eval.val_acc);
        if (!close(x.loss, y.loss) || !close(x.eval.val_loss, y.eval.val_loss) ||
            std::abs(x.eval.train_acc - y.eval.train_acc) > vertex + 1e-12 ||
            std::abs(x.eval.val_acc - y.eval.val_acc) > vertex + 1e-12 ||
            std::abs(x.eval.test_acc - y.eval.test_acc) > vertex + 1e-12) {
            return false;
        }
    }
    return true;
}

constexpr double cora_vertex = 1.0 / 140;  // Cora's smallest split (train)

std::vector<int> slice_counts(int ranks) {
    std::vector<int> counts;
    for (int f = 2; f <= ranks; ++f) {
        if (ranks % f == 0) {
            counts.push_back(f);
        }
    }
    return counts;
}

/// Y = X W on the grid's row chunks (grid_rows) gives the rows of the whole product bit for bit:
/// each chunk starts on a GEMM row tile (before grid_rows, a chunk put other rows in OpenBLAS's
/// row tails, the last m mod 12 of a call on a Zen core, summed apart from its full tiles).
void check_row_chunks(Backend& backend, const std::vector<float>& x, index_t n, index_t width,
                      std::mt19937& rng) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    const index_t out = 24;
    std::vector<float> w(static_cast<std::size_t>(width * out));
    for (float& v : w) {
        v = value(rng);
    }
    std::vector<float> y(static_cast<std::size_t>(n * out));
    backend.gemm(ConstMatrixView{x.data(), n, width}, Transpose::no,
                 ConstMatrixView{w.data(), width, out}, Transpose::no, MatrixView{y.data(), n, out},
                 1.0f, 0.0f);
    for (const int slices : {2, 3, 4}) {
        for (int f = 0; f < slices; ++f) {
            const RowRange rows = grid_rows(n, slices, f);
            std::vector<float> yc(static_cast<std::size_t>(rows.count * out));
            backend.gemm(ConstMatrixView{x.data() + rows.first * width, rows.count, width},
                         Transpose::no, ConstMatrixView{w.data(), width, out}, Transpose::no,
                         MatrixView{yc.data(), rows.count, out}, 1.0f, 0.0f);
            INFO("gemm " << n << " x " << width << ", chunk " << f << " of " << slices);
            CHECK(std::memcmp(yc.data(), y.data() + rows.first * out, yc.size() * 4) == 0);
        }
    }
}

}  // namespace

TEST_CASE("grid: blocks split n into contiguous parts, the first n mod parts one longer",
          "[grid]") {
    CHECK(grid_block(7, 2, 0) == RowRange{0, 4});
    CHECK(grid_block(7, 2, 1) == RowRange{4, 3});
    CHECK(grid_block(7, 3, 2) == RowRange{5, 2});
    CHECK(grid_block(8, 4, 3) == RowRange{6, 2});
}

TEST_CASE("grid: row chunks start on GEMM row tiles, within a tile of n / parts", "[grid]") {
    constexpr index_t t = gemm_row_tile;
    // Boundaries at i n / parts rounded to the nearest tile; the last chunk ends at n.
    CHECK(grid_rows(4 * t + 7, 2, 0) == RowRange{0, 2 * t});
    CHECK(grid_rows(4 * t + 7, 2, 1) == RowRange{2 * t, 2 * t + 7});
    CHECK(grid_rows(2 * t + 4, 2, 0) == RowRange{0, t});
    CHECK(grid_rows(2 * t + 4, 2, 1) == RowRange{t, t + 4});
    CHECK(grid_rows(3 * t, 3, 2) == RowRange{2 * t, t});
    CHECK(grid_rows(7 * t, 2, 0) == RowRange{0, 4 * t});  // 3.5 tiles: half up
    // Fewer rows than a tile per chunk: the rows split as grid_block does.
    CHECK(grid_rows(3 * t - 1, 3, 0) == grid_block(3 * t - 1, 3, 0));
    CHECK(grid_rows(3 * t - 1, 3, 2) == grid_block(3 * t - 1, 3, 2));
    // The chunks cover the rows in order, none empty, each within a tile of n / parts.
    for (const index_t n : {index_t{1}, t - 1, 2 * t + 1, 1354, 2708, 100003}) {
        for (const int parts : {1, 2, 3, 4, 8}) {
            if (n < parts) {
                continue;
            }
            index_t next = 0;
            for (int i = 0; i < parts; ++i) {
                const RowRange r = grid_rows(n, parts, i);
                INFO(n << " rows, chunk " << i << " of " << parts);
                CHECK(r.first == next);
                CHECK(r.count >= 1);
                CHECK(std::abs(static_cast<double>(r.count) - static_cast<double>(n) / parts) <=
                      static_cast<double>(t));
                CHECK((n < t * parts || r.first % t == 0));
                next = r.end();
            }
            CHECK(next == n);
        }
    }
}

TEST_CASE(
    "grid: a column-sliced SpMM gives the same bits as the whole, a GEMM on the grid's row chunks "
    "too",
    "[grid]") {
    auto backend = make_cpu_backend(2);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    const index_t n = 300;
    HostCsr a;
    a.rows = n;
    a.cols = n;
    for (index_t i = 0; i < n; ++i) {
        for (index_t j = 0; j < n; ++j) {
            if ((i * 7 + j * 13) % 17 == 0 || i == j) {
                a.col_idx.push_back(j);
                a.values.push_back(value(rng));
            }
        }
        a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
    }
    const CsrMatrix device_a = CsrMatrix::upload(*backend, a);
    for (const index_t width : {7, 16, 33, 64}) {
        std::vector<float> x(static_cast<std::size_t>(n * width));
        for (float& v : x) {
            v = value(rng);
        }
        std::vector<float> whole(x.size());
        backend->spmm(device_a, ConstMatrixView{x.data(), n, width},
                      MatrixView{whole.data(), n, width}, 0.0f);
        for (const int slices : {2, 3, 4}) {
            for (int f = 0; f < slices; ++f) {
                const RowRange cols = grid_block(width, slices, f);
                std::vector<float> xs(static_cast<std::size_t>(n * cols.count));
                for (index_t i = 0; i < n; ++i) {
                    std::copy_n(x.begin() + i * width + cols.first, cols.count,
                                xs.begin() + i * cols.count);
                }
                std::vector<float> ys(xs.size());
                backend->spmm(device_a, ConstMatrixView{xs.data(), n, cols.count},
                              MatrixView{ys.data(), n, cols.count}, 0.0f);
                bool same = true;
                for (index_t i = 0; i < n; ++i) {
                    same = same && std::memcmp(ys.data() + i * cols.count,
                                               whole.data() + i * width + cols.first,
                                               static_cast<std::size_t>(cols.count) * 4) == 0;
                }
                INFO("width " << width << ", slice " << f << " of " << slices);
                CHECK(same);
            }
        }
        // Y = X W on row chunks against the whole.
        const index_t out = 24;
        std::vector<float> w(static_cast<std::size_t>(width * out));
        for (float& v : w) {
            v = value(rng);
        }
        std::vector<float> y(static_cast<std::size_t>(n * out));
        backend->gemm(ConstMatrixView{x.data(), n, width}, Transpose::no,
                      ConstMatrixView{w.data(), width, out}, Transpose::no,
                      MatrixView{y.data(), n, out}, 1.0f, 0.0f);
        check_row_chunks(*backend, x, n, width, rng);
    }
    // Taller than the backend's blocks (tile_cap rows) and not a whole number of tiles.
    const index_t tall = 9000;
    std::vector<float> x(static_cast<std::size_t>(tall * 64));
    for (float& v : x) {
        v = value(rng);
    }
    check_row_chunks(*backend, x, tall, 64, rng);
}

TEST_CASE("grid: the layout switch goes R -> C -> R bit for bit and sends what it should",
          "[grid][mpi]") {
    MpiCommunicator world;
    auto backend = make_cpu_backend(1);
    const index_t part_rows = 23;
    for (const index_t width : {1, 5, 8, 13}) {
        LayoutSwitch layout(*backend, world, part_rows);
        const RowRange chunk = layout.chunk();
        const RowRange cols = layout.columns(width);
        // R holds value(global row, column) for the chunk's rows.
        const auto value = [&](index_t row, index_t col) {
            return static_cast<float>(row * 1000 + col) + 0.25f;
        };
        std::vector<float> r(static_cast<std::size_t>(chunk.count * width));
        for (index_t i = 0; i < chunk.count; ++i) {
            for (index_t j = 0; j < width; ++j) {
                r[static_cast<std::size_t>(i * width + j)] = value(chunk.first + i, j);
            }
        }
        std::vector<float> c(static_cast<std::size_t>(part_rows * cols.count), -1.0f);
        std::vector<float> staging(layout.staging_floats(width));
        layout.to_columns(ConstMatrixView{r.data(), chunk.count, width},
                          MatrixView{c.data(), part_rows, cols.count}, staging,
                          ExchangePurpose::forward);
        bool columns_right = true;
        for (index_t i = 0; i < part_rows; ++i) {
            for (index_t j = 0; j < cols.count; ++j) {
                columns_right = columns_right && c[static_cast<std::size_t>(i * cols.count + j)] ==
                                                     value(i, cols.first + j);
            }
        }
        CHECK(all_ranks(columns_right));
        std::vector<float> back(r.size(), -1.0f);
        layout.to_rows(ConstMatrixView{c.data(), part_rows, cols.count},
                       MatrixView{back.data(), chunk.count, width}, staging,
                       ExchangePurpose::backward);
        CHECK(all_ranks(std::memcmp(back.data(), r.data(), r.size() * 4) == 0));
        // Sent: the chunk's rows of the other slices' columns, then the other chunks' rows of
        // this slice's columns.
        const auto forward = static_cast<std::int64_t>(chunk.count * (width - cols.count) * 4);
        const auto backward = static_cast<std::int64_t>((part_rows - chunk.count) * cols.count * 4);
        CHECK(layout.bytes_sent().forward == forward);
        CHECK(layout.bytes_sent().backward == backward);
        // Over the group, each direction moves every entry but the diagonal blocks'.
        std::array<std::int64_t, 2> sums{forward, backward};
        world.allreduce_sum(sums);
        std::int64_t diagonal = 0;
        for (int f = 0; f < world.size(); ++f) {
            diagonal += grid_rows(part_rows, world.size(), f).count *
                        grid_block(width, world.size(), f).count;
        }
        CHECK(sums[0] == (part_rows * width - diagonal) * 4);
        CHECK(sums[1] == sums[0]);
    }
}

TEST_CASE("grid: an aggregation on G x F equals 1D at G ranks bit for bit, both directions",
          "[grid][mpi]") {
    // Also with bf16 halos rounded stochastically: a value's random number is keyed by its
    // vertex and its column of the whole width, so a slice rounds as 1D does.
    MpiCommunicator world;
    for (const int slices : slice_counts(world.size()))
        for (const bool stochastic : {false, true}) {
            INFO(world.size() / slices << "x" << slices << (stochastic ? ", bf16 stochastic" : ""));
            auto backend = make_cpu_backend(1);
            const auto config = [stochastic](int f) {
                RunConfig c = base_config(f);
                if (stochastic) {
                    c.halo_precision = "bf16";
                    c.halo_rounding = "stochastic";
                }
                return c;
            };
            const ExchangeCall forward(ExchangePurpose::forward, 3, 2);
            const ExchangeCall backward(ExchangePurpose::backward, 3, 2);
            const RunConfig grid_config = config(slices);
            Prepared grid = prepare(grid_config, *backend, world, {}, {.keep_rows = true});
            const int f = world.rank() % slices;
            auto graph_group = world.split(f, world.rank() / slices);
            Prepared oned = prepare(config(1), *backend, *graph_group, {}, {.keep_rows = true});
            const RowRange chunk = grid.grid.layout->chunk();
            const index_t n = grid.grid.layout->part_rows();
            REQUIRE(oned.owned == n);
            // The same part in the same local order.
            CHECK(std::equal(grid.rows->ids.begin(), grid.rows->ids.end(),
                             oned.rows->ids.begin() + chunk.first));
            GraphOperator& b = *oned.inputs->aggregation;
            // In column blocks too (3 of 7 columns: blocks of 3, 2, 2 and uneven slices).
            GridAggregation blocked(*grid.inputs->aggregation, *grid.grid.layout, 3);
            for (GridAggregation* grid_op : {grid.grid.aggregation.get(), &blocked})
                for (const index_t width : {7, 16, 29}) {
                    GridAggregation& a = *grid_op;
                    const int blocks = GridAggregation::blocks_at(width, slices, a.blocks());
                    INFO("width " << width << ", " << blocks << " column blocks");
                    std::mt19937 rng(static_cast<unsigned>(width));
                    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
                    std::vector<float> h(static_cast<std::size_t>(n * width));
                    std::vector<float> dh(h.size());
                    for (std::size_t i = 0; i < h.size(); ++i) {
                        h[i] = value(rng);
                        dh[i] = value(rng);
                    }
                    const std::size_t first = static_cast<std::size_t>(chunk.first * width);
                    const std::size_t count = static_cast<std::size_t>(chunk.count * width);
                    // Exactly the sizes asked: forward and overwriting backward stage in the idle C
                    // buffer, so only accumulating asks for a staging of its own; a block's buffers
                    // are the widest block's.
                    const SliceBlock widest{blocks, 0};
                    const index_t cols = grid.grid.layout->columns(width, widest).count;
                    const std::size_t staging = grid.grid.layout->staging_floats(width, widest);
                    CHECK(a.workspace_floats(width) ==
                          2 * std::max(static_cast<std::size_t>(n * cols), staging) +
                              b.workspace_floats(cols));
                    CHECK(a.backward_workspace_floats(width, true) ==
                          a.workspace_floats(width) + staging);
                    std::vector<float> wa(a.workspace_floats(width));
                    std::vector<float> wacc(a.backward_workspace_floats(width, true));
                    std::vector<float> wb(b.workspace_floats(width));
                    std::vector<float> za(count);
                    std::vector<float> zb(h.size());
                    a.forward(ConstMatrixView{h.data() + first, chunk.count, width},
                              MatrixView{za.data(), chunk.count, width}, {0, chunk.count}, wa,
                              forward);
                    b.forward(ConstMatrixView{h.data(), n, width}, MatrixView{zb.data(), n, width},
                              {0, n}, wb, forward);
                    CHECK(all_ranks(std::memcmp(za.data(), zb.data() + first, count * 4) == 0));
                    for (const float beta : {0.0f, 1.0f}) {
                        std::vector<float> ga(
                            dh.begin() + static_cast<std::ptrdiff_t>(first),
                            dh.begin() + static_cast<std::ptrdiff_t>(first + count));
                        std::vector<float> gb(dh);
                        a.backward(
                            ConstMatrixView{h.data() + first, chunk.count, width},
                            MatrixView{ga.data(), chunk.count, width}, {0, chunk.count}, beta,
                            beta != 0.0f ? std::span<float>(wacc) : std::span<float>(wa), backward);
                        b.backward(ConstMatrixView{h.data(), n, width},
                                   MatrixView{gb.data(), n, width}, {0, n}, beta, wb, backward);
                        INFO("backward, beta " << beta);
                        CHECK(all_ranks(std::memcmp(ga.data(), gb.data() + first, count * 4) == 0));
                    }
                }
        }
}

TEST_CASE("grid: the forward on G x F equals 1D at G ranks bit for bit (same partition)",
          "[grid][mpi]") {
    // Every op is row-local or an aggregation (bitwise above), and every product's row chunk
    // starts on a GEMM row tile (grid_rows), so the chunk's rows are the part's bits.
    MpiCommunicator world;
    for (const int slices : slice_counts(world.size())) {
        for (const ModelInfo& info : model_zoo()) {
            if (info.name == "gat") {  // refused on the grid (below)
                continue;
            }
            const std::string& model = info.name;
            INFO(model << " at " << world.size() / slices << "x" << slices);
            auto backend = make_cpu_backend(1);
            const RunConfig grid_config = base_config(slices, model);
            Prepared grid = prepare(grid_config, *backend, world);
            ModelParameters grid_parameters(*backend, grid.model.graph, 1);
            MadeExecutor grid_made =
                make_executor(grid_config, grid, *backend, world, grid_parameters);
            grid_made.executor->evaluate();
            const int f = world.rank() % slices;
            auto graph_group = world.split(f, world.rank() / slices);
            RunConfig oned_config = base_config(1, model);
            // The grid reads dense features; 1D's sparse first layer (an SpMM over the
            // non-zeros) would sum in another order.
            oned_config.sparse_features = "off";
            Prepared oned = prepare(oned_config, *backend, *graph_group);
            ModelParameters oned_parameters(*backend, oned.model.graph, 1);
            MadeExecutor oned_made =
                make_executor(oned_config, oned, *backend, *graph_group, oned_parameters);
            oned_made.executor->evaluate();
            const std::string logits = grid.model.graph.tensor(grid.model.graph.output()).name;
            const ConstMatrixView a =
                dynamic_cast<FullGraphExecutor&>(*grid_made.executor).evaluation_output(logits);
            const ConstMatrixView b =
                dynamic_cast<FullGraphExecutor&>(*oned_made.executor).evaluation_output(logits);
            const RowRange chunk = grid.grid.layout->chunk();
            REQUIRE(b.rows == grid.grid.layout->part_rows());
            REQUIRE(a.rows == chunk.count);
            REQUIRE(a.cols == b.cols);
            double worst = 0.0;
            double scale = 0.0;
            const ConstMatrixView rows = b.row_range(chunk.first, chunk.count);
            for (std::size_t i = 0; i < a.size(); ++i) {
                worst = std::max(worst, static_cast<double>(std::abs(a.data[i] - rows.data[i])));
                scale = std::max(scale, static_cast<double>(std::abs(rows.data[i])));
            }
            INFO("largest difference " << worst << " of " << scale);
            CHECK(all_ranks(std::memcmp(a.data, rows.data, a.size() * 4) == 0));
        }
    }
}

TEST_CASE("grid: GCN on Cora trains on every G x F grid as on one rank, every recompute mode",
          "[grid][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    for (const std::string recompute : {"none", "aggregation", "all"}) {
        RunConfig one_config = base_config(1);
        one_config.recompute = recompute;
        const Trained one = train(one_config, self, 12);
        std::vector<int> grids{1};  // G x 1: 1D at the job's ranks
        for (const int slices : slice_counts(world.size())) {
            grids.push_back(slices);
        }
        for (const int slices : grids) {
            INFO("gcn, recompute " << recompute << ", " << world.size() / slices << "x" << slices);
            RunConfig config = one_config;
            config.feature_slices = slices;
            const Trained grid = train(config, world, 12);
            CHECK(all_ranks(same_run(grid, one, cora_vertex)));
        }
    }
}

TEST_CASE("grid: in column blocks, GCN trains as on one rank with the same bytes", "[grid][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    for (const std::string recompute : {"none", "aggregation"}) {
        RunConfig one_config = base_config(1);
        one_config.recompute = recompute;
        one_config.model.layers = 3;
        const Trained one = train(one_config, self, 6);
        for (const int slices : slice_counts(world.size())) {
            INFO("recompute " << recompute << ", " << world.size() / slices << "x" << slices);
            RunConfig config = one_config;
            config.feature_slices = slices;
            const Trained whole = train(config, world, 6);
            config.column_blocks = 2;
            const Trained blocked = train(config, world, 6);
            CHECK(all_ranks(same_run(blocked, one, cora_vertex)));
            for (const auto& [x, y] :
                 {std::pair{blocked.halo, whole.halo}, std::pair{blocked.a2a, whole.a2a}}) {
                CHECK(x.forward == y.forward);
                CHECK(x.backward == y.backward);
                CHECK(x.recompute == y.recompute);
            }
        }
    }
}

TEST_CASE("grid: every sliceable model trains on a directed graph as on one rank; GAT is refused",
          "[grid][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::community_graph(300, 4, 6, 12, 23, /*directed=*/true);
    const DataInput input{.graph = &g};
    const int slices = world.size() >= 4 ? 2 : world.size();  // 2x2 on 4 ranks, 1x2 on 2
    int trained = 0;
    for (const ModelInfo& info : model_zoo()) {
        RunConfig config = base_config(slices, info.name);
        config.data.clear();
        config.model.layers = std::min(config.model.layers, 4);
        config.model.hidden = 8;
        config.model.hops = 4;
        config.model.heads = 2;
        INFO(info.name << " at " << world.size() / slices << "x" << slices);
        if (info.name == "gat") {
            auto backend = make_cpu_backend(1);
            CHECK_THROWS_WITH(prepare(config, *backend, world, input),
                              Contains("feature_slices = 2: model gat: attention needs whole rows "
                                       "of every neighbour") &&
                                  Contains("use feature_slices = 1"));
            continue;
        }
        const Trained grid = train(config, world, 8, input);
        RunConfig one_config = config;
        one_config.feature_slices = 1;
        const Trained one = train(one_config, self, 8, input);
        // The graph's smallest split, for "one vertex".
        CHECK(all_ranks(same_run(grid, one, 1.0 / 30)));
        ++trained;
    }
    CHECK(trained == static_cast<int>(model_zoo().size()) - 1);
}

TEST_CASE("grid: halo bytes are 1D at G's, switch bytes are the formula", "[grid][mpi]") {
    MpiCommunicator world;
    for (const int slices : slice_counts(world.size())) {
        INFO(world.size() / slices << "x" << slices);
        auto backend = make_cpu_backend(1);
        const RunConfig config = base_config(slices);
        Prepared grid = prepare(config, *backend, world);
        ModelParameters parameters(*backend, grid.model.graph, 1);
        MadeExecutor made = make_executor(config, grid, *backend, world, parameters);
        made.executor->train_step(1);
        made.executor->evaluate();
        const auto& executor = dynamic_cast<FullGraphExecutor&>(*made.executor);
        // Every aggregation call switches its input to C and its output back (2 switches of its
        // width), a backward that accumulates its input gradient switches that too (3).
        const ModelGraph& graph = grid.model.graph;
        std::vector<std::pair<index_t, int>> calls;  // width, switches
        for (const Schedule* schedule :
             {&executor.plan().training(), &executor.plan().evaluation()}) {
            for (const PlanStep& step : schedule->steps) {
                const auto cols = [&](int slot) {
                    return schedule->slots[static_cast<std::size_t>(slot)].cols;
                };
                if (step.kind == StepKind::loss) {
                    continue;
                }
                const bool aggregate = graph.node(step.node).op->kind() == OpKind::aggregate;
                if (step.kind == StepKind::backward && step.folded >= 0) {
                    calls.emplace_back(cols(step.dy), 2);
                } else if (aggregate && step.kind == StepKind::backward) {
                    if (step.modes[0] != GradMode::skip) {
                        calls.emplace_back(cols(step.dy),
                                           step.modes[0] == GradMode::accumulate ? 3 : 2);
                    }
                } else if (aggregate) {
                    calls.emplace_back(cols(step.y), 2);
                }
            }
        }
        REQUIRE(!calls.empty());
        // One switch of width w moves, over all ranks, every entry of the part but the diagonal
        // blocks: 4 (n_g w - Σ_f r_f c_f(w)) bytes per part.
        const index_t part_rows = grid.grid.layout->part_rows();
        std::int64_t expected = 0;
        for (const auto& [width, switches] : calls) {
            std::int64_t diagonal = 0;
            for (int f = 0; f < slices; ++f) {
                diagonal +=
                    grid_rows(part_rows, slices, f).count * grid_block(width, slices, f).count;
            }
            expected += switches * 4 * (part_rows * width - diagonal);
        }
        // Summed over the feature group (part g's ranks), then over the parts.
        const HaloBytes sent = executor.switch_bytes();
        std::array<std::int64_t, 1> total{sent.forward + sent.backward + sent.recompute};
        grid.grid.feature_group->allreduce_sum(total);
        CHECK(all_ranks(total[0] == expected));

        // The halo: the slices' widths add up to the 1D width, so the group's halo is 1D at G's.
        const int f = world.rank() % slices;
        auto graph_group = world.split(f, world.rank() / slices);
        const RunConfig oned_config = base_config(1);
        Prepared oned = prepare(oned_config, *backend, *graph_group);
        ModelParameters oned_parameters(*backend, oned.model.graph, 1);
        MadeExecutor oned_made =
            make_executor(oned_config, oned, *backend, *graph_group, oned_parameters);
        oned_made.executor->train_step(1);
        oned_made.executor->evaluate();
        const HaloBytes a = made.executor->halo_bytes();
        const HaloBytes b = oned_made.executor->halo_bytes();
        std::array<std::int64_t, 2> halo{a.forward + a.backward, b.forward + b.backward};
        world.allreduce_sum(halo);
        CHECK(all_ranks(halo[0] * slices == halo[1]));
        CHECK((halo[1] > 0) == (slices < world.size()));  // no halo at G = 1
    }
}

TEST_CASE("grid: the planner's bytes and memory plan are the run's", "[grid][mpi][planner]") {
    MpiCommunicator world;
    const GraphDataset cora_graph = read_graph(cora);
    const planner::MachineModel machine = planner::default_machine();
    std::vector<int> grids{world.size()};  // 1 x K
    if (world.size() == 4) {
        grids.push_back(2);  // 2 x 2
    }
    for (const int slices : grids)
        for (const int blocks : {1, 2}) {
            for (const std::string mode : {"none", "all"}) {
                INFO(world.size() / slices << "x" << slices << ", recompute " << mode << ", "
                                           << blocks << " column blocks");
                auto backend = make_cpu_backend(1);
                RunConfig config = base_config(slices);
                config.recompute = mode;
                config.model.layers = 3;
                config.column_blocks = blocks;
                Prepared grid = prepare(config, *backend, world);
                ModelParameters parameters(*backend, grid.model.graph, 1);
                MadeExecutor made = make_executor(config, grid, *backend, world, parameters);
                made.executor->train_step(1);
                made.executor->evaluate();
                const HaloBytes halo = made.executor->halo_bytes();
                const HaloBytes a2a = made.executor->switch_bytes();
                std::array<std::int64_t, 4> sent{halo.forward + halo.backward, halo.recompute,
                                                 a2a.forward + a2a.backward, a2a.recompute};
                world.allreduce_sum(sent);
                std::array<std::int64_t, 1> planned{total_bytes(
                    run_memory_lines(grid.lines, made.executor->memory_plan(), parameters.size()))};
                world.allreduce_max(planned);

                const Recompute recompute = *parse_recompute(mode);
                const planner::PartitionStats stats =
                    planner::measure_partition(cora_graph, "cora", world.size() / slices,
                                               grid.model.graph.normalization(), config.seed);
                const planner::GridPrediction p = planner::predict_grid_epoch(
                    grid.model.graph, recompute, stats, slices,
                    {.machine = &machine, .network = machine.shared_memory, .threads = 1},
                    machine.shared_memory, blocks);
                CHECK(p.time.halo_bytes == sent[0]);
                CHECK(p.time.recompute_halo_bytes == sent[1]);
                CHECK(p.a2a_bytes == sent[2]);
                CHECK(p.recompute_a2a_bytes == sent[3]);
                const planner::MemoryPrediction memory = planner::predict_grid_memory(
                    grid.model.graph, recompute, stats, slices, machine, true, blocks);
                CHECK(memory.planned_bytes == planned[0]);
                CHECK(p.time.epoch_s > 0.0);
            }
        }
}

TEST_CASE("grid: rank (g, f) reads part g's structure and feature columns f only (bytes = formula)",
          "[grid][mpi][load]") {
    MpiCommunicator world;
    const GraphDataset cora_graph = read_graph(cora);
    const std::int64_t w = cora_graph.features.cols;
    const std::int64_t splits = cora_graph.num_splits;
    test::TempDir dir("grid_load");  // this rank's own copy of each partition directory
    for (const int slices : slice_counts(world.size())) {
        const int parts = world.size() / slices;
        const int g = world.rank() / slices;  // one node: rank r = g F + f
        const int f = world.rank() % slices;
        const std::int64_t c_f = column_block(w, {f, slices}).count;
        INFO(parts << "x" << slices << ", rank (" << g << ", " << f << "), " << c_f << " columns");
        auto backend = make_cpu_backend(1);
        RunConfig config = base_config(slices);
        config.partition_method = "block";
        // From the graph file: the G-way row slice g (indptr, indices, weights), its feature
        // columns f, labels and masks (docs/scale.md, "Bytes read").
        {
            const Prepared prepared = prepare(config, *backend, world);
            const std::vector<global_id> offsets = slice_offsets(cora, parts);
            const auto first = static_cast<std::size_t>(offsets[static_cast<std::size_t>(g)]);
            const auto last = static_cast<std::size_t>(offsets[static_cast<std::size_t>(g) + 1]);
            const auto n = static_cast<std::int64_t>(last - first);
            const std::int64_t e = cora_graph.indptr[last] - cora_graph.indptr[first];
            const std::int64_t weights = cora_graph.edge_weight.empty() ? 0 : 4;
            CHECK(all_ranks(prepared.bytes_read ==
                            8 * (n + 1) + (8 + weights) * e + (4 * c_f + 8 + 3 * splits) * n));
            // The features held are the row chunk's (layout R), not the part's.
            CHECK(all_ranks(prepared.inputs->uploaded->features.rows() == prepared.owned));
        }
        // From a partition directory: part g's structure, its feature columns f, labels, masks.
        const std::string out = dir.file("cora." + std::to_string(parts));
        PartitionInfo info;
        info.source_path = cora;
        info.method = "block";
        (void)write_partition(cora_graph, adjacency_matrix(cora_graph),
                              partition_block(cora_graph.num_vertices(), parts), info, out,
                              /*force=*/true);
        config.data = out;
        const Prepared prepared = prepare(config, *backend, world);
        const PartitionReport report = read_partition_report(out);
        const PartStats& part = report.parts[static_cast<std::size_t>(g)];
        const LocalPart whole = read_part(out, g, parts);
        const auto peers = static_cast<std::int64_t>(whole.graph.pattern.peers.size());
        const std::int64_t n = part.num_owned;
        const std::int64_t h = part.halo;
        const std::int64_t structure = 8 * n + 4 * peers + 8 * (peers + 1) + 4 * part.rows_sent +
                                       16 * h + 8 * n + 8 * h + 8 * (n + 1) + 8 * part.edges;
        CHECK(all_ranks(prepared.bytes_read == structure + 4 * n * c_f + 8 * n + 3 * splits * n));
        CHECK(all_ranks(prepared.inputs->uploaded->features.rows() == prepared.owned));
    }
}

namespace {

/// A ring of 12 vertices (each the in-neighbour of the next and the previous), 12 features,
/// 4 classes: hand-countable bytes.
GraphDataset ring() {
    const std::int64_t n = 12;
    GraphDataset g;
    g.name = "ring";
    g.num_classes = 4;
    g.indptr.assign(1, 0);
    for (std::int64_t v = 0; v < n; ++v) {
        g.indices.push_back((v + n - 1) % n);
        g.indices.push_back((v + 1) % n);
        std::sort(g.indices.end() - 2, g.indices.end());
        g.indptr.push_back(static_cast<std::int64_t>(g.indices.size()));
    }
    g.features = HostMatrix(static_cast<index_t>(n), 12);
    for (std::int64_t v = 0; v < n; ++v) {
        for (index_t f = 0; f < 12; ++f) {
            g.features.at(static_cast<index_t>(v), f) = static_cast<float>((v * 5 + f) % 7);
        }
        g.labels.push_back(static_cast<int>(v % 4));
    }
    g.train_mask.assign(static_cast<std::size_t>(n), 1);
    g.val_mask.assign(static_cast<std::size_t>(n), 1);
    g.test_mask.assign(static_cast<std::size_t>(n), 1);
    return g;
}

class EpochBytes final : public RunObserver {
public:
    void epoch(const EpochStats& s) override { stats.push_back(s); }
    void warning(const std::string& text) override { warnings.push_back(text); }
    std::vector<EpochStats> stats;
    std::vector<std::string> warnings;
};

/// GCN 12 -> 8 -> 4 on the ring, 2 epochs, block partition, through a Session on `runtime`
/// with `slices` feature slices (`parallel` = "pipeline": the layer pipeline instead).
EpochBytes run_ring(Runtime& runtime, const GraphDataset& g, int slices,
                    const std::string& parallel = "graph", int chunks = 0) {
    RunConfig c;
    c.chunks = chunks;
    c.seed = 1;
    c.partition_method = "block";
    c.model.model = "gcn";
    c.model.hidden = 8;
    c.epochs = 2;
    c.feature_slices = slices;
    c.parallel = parallel;
    EpochBytes observer;
    Session session(c, runtime, {.input = {.graph = &g}, .observer = &observer});
    session.run();
    REQUIRE(observer.stats.size() == 2);
    return observer;
}

}  // namespace

TEST_CASE("grid: the metrics' bytes per epoch on a ring of 12 are the hand count", "[grid][mpi]") {
    // GCN 12 -> 8 -> 4 (transform first in both layers: aggregations at widths 8 and 4), an
    // evaluation every epoch: per width, 3 aggregation calls (training forward, backward,
    // evaluation), each with 2 switches of 4 N w (F - 1) / F bytes (F divides n_g and w here),
    // and a halo of 4 w M(G) bytes, M(2) = 4 for the block partition (2 rows each way).
    Runtime runtime = open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
    const int ranks = runtime.comm->size();
    const GraphDataset g = ring();
    for (const int slices : slice_counts(ranks)) {
        const int parts = ranks / slices;
        INFO(parts << "x" << slices);
        const EpochBytes observer = run_ring(runtime, g, slices);
        const std::int64_t switches = 3 * 2 * 4 * 12 * (8 + 4) * (slices - 1) / slices;
        const std::int64_t halo = parts == 1 ? 0 : parts == 2 ? 3 * 4 * 4 * (8 + 4) : -1;
        for (const EpochStats& s : observer.stats) {
            CHECK(s.a2a_bytes == switches);
            CHECK(s.recompute_a2a_bytes == 0);
            if (halo >= 0) {
                CHECK(s.halo_bytes == halo);
            }
        }
    }
}

TEST_CASE("grid: on pretended nodes, the bytes inside and across nodes are the hand count",
          "[grid][mpi]") {
    // The ring of 12 as above on 4 ranks whose communicator pretends they sit on 2 nodes. Per
    // epoch: 1D K = 4 sends 3 x 4 x 8 x (8 + 4) = 1152 halo bytes (each rank 1 row to each ring
    // neighbour), 2 x 2 sends 576 halo bytes (graph groups of 2) and 1728 switch bytes. The
    // all-reduces span both nodes: inter-node. By slot (nodes 0 0 1 1), 1D sends half its halo
    // across; round robin (0 1 0 1), all of it; the grid's feature groups sit inside nodes either
    // way (halo across, switches inside). Nodes 0 0 0 1 cannot hold 2 feature groups of 2: the
    // consecutive grid, with its warning; one graph group and one feature group span the nodes.
    Runtime runtime = open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
    if (runtime.comm->size() != 4) {
        return;
    }
    auto& world = dynamic_cast<MpiCommunicator&>(*runtime.comm);
    CHECK(world.num_nodes() == 1);  // a real run on this machine: one node
    const GraphDataset g = ring();
    struct Case {
        std::vector<int> nodes;
        int slices;
        std::int64_t intra;  ///< without all-reduces
        std::int64_t inter;  ///< likewise
        bool warned;
    };
    const std::vector<Case> cases{
        {{0, 0, 1, 1}, 1, 576, 576, false},
        {{0, 1, 0, 1}, 1, 0, 1152, false},
        {{0, 0, 1, 1}, 2, 1728, 576, false},
        {{0, 1, 0, 1}, 2, 1728, 576, false},
        {{0, 0, 0, 1}, 2, 288 + 864, 288 + 864, true},
    };
    std::vector<double> grid_losses;
    for (const Case& k : cases) {
        INFO("nodes " << k.nodes[0] << k.nodes[1] << k.nodes[2] << k.nodes[3]
                      << ", F = " << k.slices);
        world.set_node_map(k.nodes);
        const EpochBytes observer = run_ring(runtime, g, k.slices);
        for (const EpochStats& s : observer.stats) {
            CHECK(s.allreduce_bytes > 0);
            CHECK(s.bytes_intra_node == k.intra);
            CHECK(s.bytes_inter_node == k.inter + s.allreduce_bytes);
            CHECK(s.bytes_intra_node + s.bytes_inter_node ==
                  s.halo_bytes + s.recompute_halo_bytes + s.a2a_bytes + s.recompute_a2a_bytes +
                      s.allreduce_bytes);
            if (k.slices == 2) {
                grid_losses.push_back(s.loss);
            }
        }
        if (k.warned) {
            CHECK(observer.warnings ==
                  std::vector<std::string>{"feature_slices = 2: node 0 has 3 ranks, not a "
                                           "multiple of 2, so feature groups are consecutive "
                                           "ranks (some span nodes)"});
        } else {
            CHECK(observer.warnings.empty());
        }
    }
    // Where the ranks sit changes the bytes' split, not the run (to the all-reduces' rounding).
    REQUIRE(grid_losses.size() == 6);
    for (std::size_t i = 2; i < grid_losses.size(); ++i) {
        CHECK(close(grid_losses[i], grid_losses[i % 2]));
    }
    world.set_node_map(std::vector<int>(4, 0));
}

TEST_CASE("topology: the layer pipeline's stage bytes split by the pretended node of the peer",
          "[grid][mpi]") {
    // 2 stages on 2 ranks: every stage transfer goes to the other rank, so on nodes 0 1 it is
    // all inter-node (with the all-reduces), on one node all intra-node.
    Runtime runtime = open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
    if (runtime.comm->size() != 2) {
        return;
    }
    auto& world = dynamic_cast<MpiCommunicator&>(*runtime.comm);
    const GraphDataset g = ring();
    for (const std::vector<int>& nodes : {std::vector<int>{0, 1}, std::vector<int>{0, 0}}) {
        const bool apart = nodes[1] != nodes[0];
        INFO((apart ? "2 nodes" : "1 node"));
        world.set_node_map(nodes);
        const EpochBytes observer = run_ring(runtime, g, 1, "pipeline");
        for (const EpochStats& s : observer.stats) {
            REQUIRE(s.pipeline.has_value());
            const std::int64_t stage = s.pipeline->stage_bytes + s.pipeline->way_bytes;
            CHECK(stage > 0);
            CHECK(s.halo_bytes == 0);
            const std::int64_t all = stage + s.allreduce_bytes;
            CHECK(s.bytes_inter_node == (apart ? all : 0));
            CHECK(s.bytes_intra_node == (apart ? 0 : all));
        }
    }
    world.set_node_map({0, 0});
}

TEST_CASE("topology: S x F's feature groups sit inside the pretended nodes", "[grid][mpi]") {
    // 2 stages x 2 feature slices on 4 ranks, 2 chunks. One node, and nodes 0 0 1 1
    // (by slot): the consecutive groups {0, 1}, {2, 3}, the same bits. Round robin (0 1 0 1):
    // place_grid's groups {0, 2} and {1, 3} (stage 0 on node 0, stage 1 on node 1), so every
    // layout switch stays inside a node and every stage transfer crosses; the same run to the
    // all-reduces' rounding. Consecutive groups there would put every switch across nodes.
    Runtime runtime = open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
    if (runtime.comm->size() != 4) {
        return;
    }
    auto& world = dynamic_cast<MpiCommunicator&>(*runtime.comm);
    const GraphDataset g = ring();
    world.set_node_map({0, 0, 0, 0});
    const EpochBytes one = run_ring(runtime, g, 2, "pipeline", 2);
    for (const std::vector<int>& nodes :
         {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 1, 0, 1}}) {
        INFO("nodes " << nodes[0] << nodes[1] << nodes[2] << nodes[3]);
        world.set_node_map(nodes);
        const EpochBytes observer = run_ring(runtime, g, 2, "pipeline", 2);
        CHECK(observer.warnings.empty());
        REQUIRE(observer.stats.size() == one.stats.size());
        for (std::size_t e = 0; e < observer.stats.size(); ++e) {
            const EpochStats& s = observer.stats[e];
            REQUIRE(s.pipeline.has_value());
            CHECK(s.a2a_bytes > 0);
            CHECK(s.a2a_bytes == one.stats[e].a2a_bytes);
            CHECK(s.pipeline->stage_bytes == one.stats[e].pipeline->stage_bytes);
            CHECK(s.bytes_intra_node == s.a2a_bytes + s.recompute_a2a_bytes);
            CHECK(s.bytes_inter_node == s.pipeline->stage_bytes + s.allreduce_bytes);
            if (nodes[1] == 0) {
                CHECK(s.loss == one.stats[e].loss);
            } else {
                CHECK(close(s.loss, one.stats[e].loss));
            }
        }
    }
    world.set_node_map(std::vector<int>(4, 0));
}

TEST_CASE("grid: a checkpoint written on one grid resumes on another and continues the run",
          "[grid][mpi]") {
    // The weights and Adam's moments are replicated on every rank, as in 1D: elastic resume.
    Runtime runtime = open_runtime({.device = "cpu", .comm = "mpi", .threads = 1});
    const int ranks = runtime.comm->size();
    int pid = static_cast<int>(getpid());
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("strata-test-grid-" + std::to_string(pid));
    const auto run = [&](int slices, int epochs, bool resume) {
        RunConfig c = base_config(slices);
        c.epochs = epochs;
        c.checkpoint_dir = dir.string();
        c.checkpoint_every = 4;
        c.resume = resume;
        EpochBytes observer;
        Session session(c, runtime, {.observer = &observer});
        session.run();
        return observer.stats;
    };
    const int first = ranks >= 4 ? 2 : ranks;  // 2x2 on 4 ranks, 1x2 on 2
    std::vector<int> then{1, ranks};           // K x 1 (1D) and 1 x K
    for (const int slices : then) {
        INFO(ranks / first << "x" << first << " then " << ranks / slices << "x" << slices);
        if (runtime.comm->rank() == 0) {
            std::filesystem::remove_all(dir);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const std::vector<EpochStats> whole = run(first, 8, false);
        if (runtime.comm->rank() == 0) {
            std::filesystem::remove_all(dir);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        (void)run(first, 4, false);
        const std::vector<EpochStats> resumed = run(slices, 8, true);
        REQUIRE(resumed.size() == 4);
        REQUIRE(whole.size() == 8);
        for (std::size_t e = 0; e < resumed.size(); ++e) {
            const EpochStats& a = resumed[e];
            const EpochStats& b = whole[e + 4];
            INFO("epoch " << a.epoch << " loss " << a.loss << " vs " << b.loss);
            CHECK(a.epoch == b.epoch);
            CHECK(close(a.loss, b.loss));
            CHECK(std::abs(a.val_acc - b.val_acc) <= 1.0 / 500 + 1e-12);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (runtime.comm->rank() == 0) {
        std::filesystem::remove_all(dir);
    }
}

TEST_CASE("grid: an aggregation narrower than the slices is refused before training",
          "[grid][mpi]") {
    // A column per slice: a hidden width of 1 on 2 slices cannot be split (refused on every rank
    // alike, not on the rank whose slice would be empty while its group waits for it).
    MpiCommunicator world;
    auto backend = make_cpu_backend(1);
    const GraphDataset g = ring();
    RunConfig c = base_config(2);
    c.data.clear();
    c.partition_method = "block";
    c.model.hidden = 1;
    CHECK_THROWS_WITH(prepare(c, *backend, world, {.graph = &g}),
                      Catch::Matchers::StartsWith("feature_slices = 2: model gcn: op gcn0.") &&
                          Contains("at width 1, under one column per slice"));
}

TEST_CASE("grid: column blocks: at most one per column of a slice; the grid's only",
          "[grid][mpi]") {
    CHECK(GridAggregation::blocks_at(256, 4, 2) == 2);
    CHECK(GridAggregation::blocks_at(7, 4, 2) == 1);  // Cora's 7 classes on 4 slices
    CHECK(GridAggregation::blocks_at(9, 2, 8) == 4);
    CHECK(GridAggregation::blocks_at(3, 4, 8) == 1);
    RunConfig oned = base_config(1);
    oned.column_blocks = 2;
    CHECK_THROWS_WITH(validate(oned),
                      Catch::Matchers::StartsWith("column_blocks = 2: needs the grid of graph "
                                                  "parallelism (feature_slices > 1"));
    RunConfig int8 = base_config(2);
    int8.column_blocks = 2;
    int8.halo_precision = "int8";
    CHECK_THROWS_WITH(validate(int8),
                      Catch::Matchers::StartsWith("column_blocks = 2: with halo_precision = int8"));
}

TEST_CASE("grid: feature_slices must divide the ranks", "[grid][mpi]") {
    MpiCommunicator world;
    auto backend = make_cpu_backend(1);
    const int slices = world.size() + 1;
    CHECK_THROWS_WITH(resolve_layout(base_config(slices), world.size()),
                      Catch::Matchers::StartsWith("feature_slices = " + std::to_string(slices) +
                                                  ": must divide the number of ranks (" +
                                                  std::to_string(world.size()) + ")"));
}
