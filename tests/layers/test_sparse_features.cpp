// Sparse input features (layers/sparse_features.hpp, sparse_linear_op.hpp,
// sparse_input_graph.hpp): the CSR upload and its transpose, the sparse linear's forward and
// weight gradient against a host reference (with the dense dropout's mask), the automatic
// choice, the model rewrite, finite differences through a sparse first layer, and a GCN on
// sparse features against the same GCN on dense ones.
#include <cmath>

#include <catch2/catch.hpp>

#include "layers/gcn_model.hpp"
#include "layers/model_zoo.hpp"
#include "layers/sparse_features.hpp"
#include "layers/sparse_input_graph.hpp"
#include "layers/sparse_linear_op.hpp"
#include "src/device/counter_rng.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::check_model_gradients;
using strata::test::jitter;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;
using strata::test::random_matrix;

namespace {

/// rows x cols, about a quarter non-zero, with an empty row (2) and an empty column (1).
HostMatrix bag_of_words(index_t rows, index_t cols, std::uint64_t seed) {
    HostMatrix m = random_matrix(rows, cols, seed);
    for (index_t i = 0; i < rows; ++i) {
        for (index_t c = 0; c < cols; ++c) {
            if (i == 2 || c == 1 || mix32(static_cast<std::uint32_t>(i * 131 + c)) % 4 != 0) {
                m.at(i, c) = 0.0f;
            }
        }
    }
    return m;
}

/// The dense BiasActivationOp's dropout of x (counter_rng.hpp): the reference mask.
HostMatrix dropped(const HostMatrix& x, std::span<const global_id> row_ids, const DropoutKey& k) {
    HostMatrix d = x;
    if (k.rate == 0.0f) {
        return d;
    }
    const std::uint64_t stream = dropout_stream(k.seed, k.epoch, k.layer);
    for (std::int64_t i = 0; i < x.rows; ++i) {
        for (index_t c = 0; c < x.cols; ++c) {
            const bool keep = counter_u32(stream, row_ids[static_cast<std::size_t>(i)], c) >=
                              dropout_threshold(k.rate);
            d.at(i, c) = keep ? x.at(i, c) / (1.0f - k.rate) : 0.0f;
        }
    }
    return d;
}

std::vector<float> download(Backend& backend, const float* data, std::size_t n) {
    std::vector<float> host(n);
    backend.download(host.data(), data, n * sizeof(float));
    return host;
}

/// Trains `d` (dense features) and `s` (sparse) for `epochs` steps: every loss within 1e-5
/// relative; returns the largest difference of their last gradients.
double same_steps(OneRankModel& d, OneRankModel& s, int epochs) {
    for (std::int64_t epoch = 1; epoch <= epochs; ++epoch) {
        const double dl = d.loss(epoch);
        const double sl = s.loss(epoch);
        CHECK(std::abs(sl - dl) <= 1e-5 * std::abs(dl));
    }
    const std::vector<float> dg =
        download(*d.g.backend, d.parameters->grads().data(), d.parameters->size());
    const std::vector<float> sg =
        download(*s.g.backend, s.parameters->grads().data(), s.parameters->size());
    REQUIRE(dg.size() == sg.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < dg.size(); ++i) {
        worst = std::max(worst, static_cast<double>(std::abs(dg[i] - sg[i])));
    }
    return worst;
}

}  // namespace

TEST_CASE("sparse features hold x and xᵀ with the map between their entries", "[sparse]") {
    auto backend = make_cpu_backend(1);
    const HostMatrix x = bag_of_words(7, 5, 1);
    const SparseFeatures sparse(*backend, x);
    const HostCsr csr = sparse.view().x->download();
    const HostCsr t = sparse.view().xt->download();
    const std::vector<index_t> entries = [&] {
        std::vector<index_t> host(sparse.view().xt_entries.size());
        backend->download(host.data(), sparse.view().xt_entries.data(),
                          host.size() * sizeof(index_t));
        return host;
    }();

    REQUIRE(csr.nnz() == count_nonzeros(x));
    CHECK(csr.row_ptr[3] == csr.row_ptr[2]);  // the empty row
    HostMatrix back(7, 5);
    for (index_t i = 0; i < csr.rows; ++i) {
        for (index_t k = csr.row_ptr[i]; k < csr.row_ptr[i + 1]; ++k) {
            back.at(i, csr.col_idx[k]) = csr.values[k];
        }
    }
    CHECK(back.values == x.values);
    REQUIRE(t.rows == 5);
    for (index_t c = 0; c < t.rows; ++c) {
        for (index_t k = t.row_ptr[c]; k < t.row_ptr[c + 1]; ++k) {
            CHECK(t.values[k] == x.at(t.col_idx[k], c));
            CHECK(csr.values[entries[k]] == t.values[k]);
            CHECK(csr.col_idx[entries[k]] == c);
        }
    }
    CHECK(SparseFeatures::bytes(7, 5, csr.nnz()) ==
          2 * (csr_bytes(7, csr.nnz()) + csr_bytes(5, csr.nnz())) + csr.nnz() * 4 + 5 * 8);
}

TEST_CASE("sparse linear: forward and weight gradient equal the host reference", "[sparse]") {
    OneRankGraph g(40, 9);
    Backend& backend = *g.backend;
    const HostMatrix x = bag_of_words(40, 9, 2);
    const SparseFeatures sparse(backend, x);
    const std::vector<global_id> ids = [&] {
        std::vector<global_id> host(40);
        backend.download(host.data(), g.inputs->blocks.row_ids().data(), 40 * sizeof(global_id));
        return host;
    }();
    const HostMatrix w = random_matrix(9, 4, 11);
    const HostMatrix dy = random_matrix(40, 4, 12);
    for (const float rate : {0.0f, 0.4f}) {
        for (const bool training : {true, false}) {
            INFO("rate " << rate << (training ? ", training" : ", evaluation"));
            SparseLinearOp op(9, 4, 0.0f,
                              SparseLinearOptions{.dropout = rate, .seed = 5, .dropout_id = 0});
            strata::test::OpParameters params(op, backend, std::vector<index_t>{9});
            backend.upload(params.values[0].data(), w.values.data(), w.values.size() * 4);
            OpContext context = g.context(training, 7);
            context.sparse_input = &sparse.view();
            DenseMatrix y(backend, 40, 4);
            const std::array<ConstMatrixView, 1> in{ConstMatrixView{nullptr, 40, 9}};
            op.forward(context,
                       ForwardArgs{.x = in, .y = y.view(), .rows = {0, 40}, .workspace = {}});
            const HostMatrix d =
                dropped(x, ids, {.seed = 5, .epoch = 7, .layer = 0, .rate = training ? rate : 0});
            double worst = 0.0;
            const HostMatrix out = y.download();
            for (index_t i = 0; i < 40; ++i) {
                for (index_t f = 0; f < 4; ++f) {
                    double ref = 0.0;
                    for (index_t c = 0; c < 9; ++c) {
                        ref += static_cast<double>(d.at(i, c)) * w.at(c, f);
                    }
                    worst = std::max(worst, std::abs(out.at(i, f) - ref));
                }
            }
            CHECK(worst < 1e-5);
            if (!training) {
                continue;
            }
            const DenseMatrix dy_dev = DenseMatrix::upload(backend, dy);
            const std::array<MatrixView, 1> no_dx{MatrixView{}};
            const std::array<GradMode, 1> skip{GradMode::skip};
            op.backward(context, BackwardArgs{.x = in,
                                              .y = {},
                                              .dy = dy_dev.view(),
                                              .dx = no_dx,
                                              .modes = skip,
                                              .rows = {0, 40},
                                              .workspace = {}});
            const std::vector<float> dw = download(backend, params.grads[0].data(), 9 * 4);
            worst = 0.0;
            for (index_t c = 0; c < 9; ++c) {
                for (index_t f = 0; f < 4; ++f) {
                    double ref = 0.0;
                    for (index_t i = 0; i < 40; ++i) {
                        ref += static_cast<double>(d.at(i, c)) * dy.at(i, f);
                    }
                    worst =
                        std::max(worst, std::abs(dw[static_cast<std::size_t>(c * 4 + f)] - ref));
                }
            }
            CHECK(worst < 1e-5);
            const std::array<MatrixView, 1> dx{MatrixView{nullptr, 40, 9}};
            const std::array<GradMode, 1> overwrite{GradMode::overwrite};
            CHECK_THROWS_WITH(op.backward(context, BackwardArgs{.x = in,
                                                                .y = {},
                                                                .dy = dy_dev.view(),
                                                                .dx = dx,
                                                                .modes = overwrite,
                                                                .rows = {0, 40},
                                                                .workspace = {}}),
                              Contains("its input is a model input and gets no gradient"));
        }
    }
}

TEST_CASE("auto stores features sparse at or below the threshold, when the model can", "[sparse]") {
    MpiCommunicator comm(MPI_COMM_SELF);
    const HostMatrix sparse = bag_of_words(40, 50, 3);  // about 20 % after the empty row/col
    REQUIRE(static_cast<double>(count_nonzeros(sparse)) / 2000.0 > sparse_features_threshold);
    HostMatrix thin(40, 50);
    thin.at(3, 4) = 1.0f;
    const double thin_density = 1.0 / 2000.0;

    const FeatureChoice a = choose_feature_storage(SparseFeaturesMode::automatic, thin, "", comm);
    CHECK(a.storage == FeatureStorage::sparse);
    CHECK(a.density == thin_density);
    CHECK(a.reason == "0.05 % non-zero <= 8.00 % (auto)");
    const FeatureChoice b = choose_feature_storage(SparseFeaturesMode::automatic, sparse, "", comm);
    CHECK(b.storage == FeatureStorage::dense);
    CHECK_THAT(b.reason, Contains("> 8.00 % (auto)"));
    const FeatureChoice c =
        choose_feature_storage(SparseFeaturesMode::automatic, thin, "it cannot", comm);
    CHECK(c.storage == FeatureStorage::dense);
    CHECK(c.reason == "0.05 % non-zero, but it cannot (auto)");
    CHECK(choose_feature_storage(SparseFeaturesMode::on, sparse, "", comm).storage ==
          FeatureStorage::sparse);
    CHECK(choose_feature_storage(SparseFeaturesMode::off, thin, "", comm).storage ==
          FeatureStorage::dense);
    CHECK_THROWS_WITH(choose_feature_storage(SparseFeaturesMode::on, thin, "it cannot", comm),
                      Contains("sparse_features = 'on': it cannot"));
    CHECK(parse_sparse_features("auto") == SparseFeaturesMode::automatic);
    CHECK_FALSE(parse_sparse_features("yes").has_value());
}

TEST_CASE("the sparse rewrite fuses the input dropout into the first linear", "[sparse]") {
    const GcnOptions narrow{.layers = 2, .hidden = 4, .dropout = 0.5f, .seed = 3};
    ModelGraph gcn = build_gcn(9, 3, narrow);
    REQUIRE(sparse_input_blocker(gcn).empty());
    const std::size_t nodes = gcn.nodes().size();
    const ModelGraph fused = with_sparse_input(gcn);

    CHECK(fused.nodes().size() == nodes - 1);
    CHECK_FALSE(fused.find("gcn0.dropout").has_value());
    CHECK(fused.node(0).name == "gcn0.linear");
    CHECK(fused.node(0).op->describe() == "sparse linear 9 -> 4 (input dropout 0.5)");
    CHECK(fused.find("gcn0.act").has_value());
    // Hidden wider than the input: the first layer aggregates the features first.
    const ModelGraph wide = build_gcn(9, 3, {.layers = 2, .hidden = 16, .dropout = 0.5f});
    CHECK(sparse_input_blocker(wide) ==
          "its node gcn0.aggregate (aggregate (the model's graph operator)) reads the input "
          "features (after dropout) other than through a linear layer");
}

TEST_CASE("a GCN on sparse features equals the dense one, gradients included", "[sparse]") {
    OneRankGraph dense(60, 12);
    OneRankGraph sparse(60, 12, false, Normalization::symmetric, FeatureStorage::sparse);
    const GcnOptions gcn{.layers = 2, .hidden = 5, .dropout = 0.5f, .seed = 8};
    ModelGraph sparse_graph = build_gcn(12, 3, gcn);
    OneRankModel d(dense, build_gcn(12, 3, gcn), Recompute::none);
    OneRankModel s(sparse, with_sparse_input(sparse_graph), Recompute::none);
    CHECK(same_steps(d, s, 4) < 1e-5);
    CHECK(s.executor->evaluate().train_loss ==
          Approx(d.executor->evaluate().train_loss).epsilon(1e-5));

    jitter(s);
    const auto check = check_model_gradients(s);
    CHECK(static_cast<std::size_t>(check.checked) == s.parameters->size());
    CHECK(check.worst_error < 2e-3);
}

TEST_CASE("which zoo models can read Cora's features sparse", "[sparse]") {
    // The published recipes' shapes on Cora (1433 features, 7 classes): a model whose first op
    // on the features is a linear (after an optional dropout) can; one that aggregates or
    // normalises them first cannot, and auto keeps them dense.
    std::string eligible;
    for (const ModelInfo& info : model_zoo()) {
        ModelSpec spec;
        spec.model = info.name;
        BuiltModel built = info.build(1433, 7, spec);
        if (sparse_input_blocker(built.graph).empty()) {
            eligible += (eligible.empty() ? "" : " ") + info.name;
            const ModelGraph fused = with_sparse_input(built.graph);
            CHECK(fused.nodes().size() < built.graph.nodes().size() + 1);
        }
    }
    CHECK(eligible == "gcn gcnii gcnii* resgcn+ appnp sage gin mlp");
}

TEST_CASE("every eligible zoo model trains on sparse features as on dense ones", "[sparse]") {
    OneRankGraph dense(60, 80);
    OneRankGraph sparse(60, 80, false, Normalization::symmetric, FeatureStorage::sparse);
    int checked = 0;
    for (const ModelInfo& info : model_zoo()) {
        ModelSpec spec;
        spec.model = info.name;
        spec.seed = 6;
        BuiltModel s_built = info.build(80, 3, spec);
        if (!sparse_input_blocker(s_built.graph).empty()) {
            continue;
        }
        INFO(info.name);
        OneRankModel d(dense, info.build(80, 3, spec).graph, Recompute::none);
        OneRankModel s(sparse, with_sparse_input(s_built.graph), Recompute::none);
        CHECK(same_steps(d, s, 3) < 1e-5);
        ++checked;
    }
    CHECK(checked == 8);
}
