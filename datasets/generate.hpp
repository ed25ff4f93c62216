// Synthetic graphs: a degree-corrected planted-partition (stochastic block) model with
// power-law degrees and class-dependent Gaussian features (`strata generate`; docs/datasets.md).
#pragma once

#include <cstdint>
#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

struct GenerateOptions {
    std::int64_t num_vertices = 1000;  ///< N >= 2
    double avg_degree = 10.0;          ///< requested directed edges per vertex (E ≈ N·D)
    index_t num_features = 16;         ///< F >= 1
    std::int64_t num_classes = 4;      ///< C in [1, N]
    double homophily = 0.8;            ///< probability that an edge stays inside its class
    std::uint64_t seed = 0;            ///< same seed => identical arrays
    double train_fraction = 0.6;       ///< split fractions, each in [0, 1], sum <= 1
    double val_fraction = 0.2;
    double test_fraction = 0.2;
    double degree_exponent = 2.5;  ///< γ > 2 of the power law P(w) ~ w^-γ
    double feature_noise = 2.0;    ///< σ of the Gaussian noise around class centroids
    /// Fraction of vertices whose stored label is redrawn uniformly from the C classes (edges
    /// and features follow the true class; 0: none, the arrays of earlier strata).
    double label_noise = 0.0;
    bool shuffle = false;  ///< randomly permute ids (else classes are contiguous)
    std::string name = "synthetic";
};

/// Generates a symmetric graph without self loops or duplicate edges (see docs/datasets.md for
/// the model). Deterministic in `options` alone: independent of the number of OpenMP threads.
/// Memory is the output CSR plus O(N) (rows are filled in place, then sorted and deduplicated).
/// Throws strata::Error on an invalid option, naming it.
[[nodiscard]] GraphDataset generate_graph(const GenerateOptions& options);

}  // namespace strata
