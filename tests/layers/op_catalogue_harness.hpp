// The op catalogue (src/nn/op_catalogue.hpp) in the tests that hold for every op: each sample of
// each row with a graph that lends what the row needs and inputs of the sample's widths.
// Programs using it link strata_layers whole (tests/layers/CMakeLists.txt), so that every op's
// registration is in them.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/nn/op_catalogue.hpp"
#include "tests/layers/layer_harness.hpp"

namespace strata::test {

/// Entries moved away from 0 so that a ±eps probe never crosses a ReLU kink.
inline HostMatrix away_from_zero(HostMatrix m) {
    for (auto& v : m.values) {
        v += v >= 0.0f ? 0.1f : -0.1f;
    }
    return m;
}

/// One sample of a catalogue row, ready to run.
struct CatalogueCase {
    const OpCatalogueEntry* entry = nullptr;
    OpSample sample;

    [[nodiscard]] Op& op() const { return *sample.op; }
    /// "LinearOp: linear 4 -> 3", for INFO.
    [[nodiscard]] std::string label() const {
        return std::string(entry->name) + ": " + sample.op->describe();
    }
    /// False for an op reading the model's sparse features: its input gets no gradient.
    [[nodiscard]] bool input_gradients() const { return !entry->needs.sparse_input; }
    [[nodiscard]] index_t output_cols() const { return sample.op->output_cols(sample.input_cols); }
};

/// Every sample of every row, in catalogue order (fresh op instances).
inline std::vector<CatalogueCase> catalogue_cases() {
    std::vector<CatalogueCase> cases;
    for (const OpCatalogueEntry& entry : op_catalogue()) {
        for (OpSample& sample : entry.samples()) {
            cases.push_back({&entry, std::move(sample)});
        }
    }
    return cases;
}

/// A directed graph of `rows` vertices (Âᵀ != Â) lending a graph operator and a halo exchange,
/// with the features stored sparse at the sample's input width when the row reads them.
inline std::unique_ptr<OneRankGraph> graph_for(const CatalogueCase& c, std::int64_t rows) {
    const bool sparse = c.entry->needs.sparse_input;
    return std::make_unique<OneRankGraph>(rows, sparse ? c.sample.input_cols[0] : 5,
                                          /*directed=*/true, Normalization::symmetric,
                                          sparse ? FeatureStorage::sparse : FeatureStorage::dense);
}

/// Inputs of the sample's widths (seeds seed, seed + 1, ...), away from 0.
inline std::vector<HostMatrix> inputs_for(const CatalogueCase& c, index_t rows,
                                          std::uint64_t seed) {
    std::vector<HostMatrix> x;
    for (const index_t cols : c.sample.input_cols) {
        x.push_back(away_from_zero(random_matrix(rows, cols, seed++)));
    }
    return x;
}

}  // namespace strata::test
