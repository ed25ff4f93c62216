// The op catalogue: one row per Op subclass, registered with one line where the op is defined
// (STRATA_REGISTER_OP in its .cpp), like the model zoo's table of models. The tests that hold for
// every op (finite-difference gradients, row chunks, `+=` gradients: tests/layers) loop over it,
// so a new op is tested by its row, and tests/layers/test_op_catalogue.cpp fails on a class
// deriving from Op in the sources that has no row.
//
// Linking: registration is a static object in the op's object file, which a static library
// only adds to a program that refers to something in that file. A program that wants every
// row links strata_layers whole (`$<LINK_LIBRARY:WHOLE_ARCHIVE,strata_layers>`, as
// tests/layers/CMakeLists.txt does); the scan test catches a row that did not make it.
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "src/base/types.hpp"
#include "src/nn/op.hpp"

namespace strata {

/// One configured instance of an op and the widths of its inputs (what a test feeds it).
struct OpSample {
    std::unique_ptr<Op> op;
    std::vector<index_t> input_cols;
};

/// What an op reads from its OpContext besides the backend, the row ids and the flags.
struct OpNeeds {
    bool graph = false;  ///< context.graph: the graph operator (aggregations)
    bool halo = false;   ///< context.halo: peers' rows and the A + I structure (attention)
    bool comm = false;   ///< context.comm: statistics over every rank (null: one rank)
    /// context.sparse_input: input 0 is the model's features stored sparse, read from there;
    /// it gets no gradient (its mode is always GradMode::skip).
    bool sparse_input = false;
};

/// A row of the catalogue. What the op itself declares (kind(), row_local(), in_place(),
/// saves(), identity_in_evaluation(), and with them runs_on_row_chunks()) is read from the
/// samples; the row adds what the op does not say.
struct OpCatalogueEntry {
    const char* name = "";  ///< the class name ("LinearOp"), as the source scan finds it
    OpNeeds needs;
    /// Fresh configured instances, new on every call: the first is representative, the others
    /// take the other code paths a generic test should see (an activation, a head mode, ...).
    std::vector<OpSample> (*samples)() = nullptr;
};

/// Every registered op, sorted by name (the order of registration is the linker's).
[[nodiscard]] std::span<const OpCatalogueEntry> op_catalogue();

/// Adds its entry to the catalogue when constructed (STRATA_REGISTER_OP makes a static one).
class OpRegistration {
public:
    explicit OpRegistration(const OpCatalogueEntry& entry);
};

/// A sample of `op` over inputs of widths `input_cols`.
template <typename OpType>
[[nodiscard]] OpSample op_sample(OpType op, std::vector<index_t> input_cols) {
    return {std::make_unique<OpType>(std::move(op)), std::move(input_cols)};
}

/// The samples of a row, in order.
template <typename... Samples>
[[nodiscard]] std::vector<OpSample> op_samples(Samples... samples) {
    std::vector<OpSample> all;
    all.reserve(sizeof...(samples));
    (all.push_back(std::move(samples)), ...);
    return all;
}

}  // namespace strata

/// Registers an op class in the catalogue, at namespace scope in the .cpp that defines it, with
/// its OpNeeds and its samples function:
///   STRATA_REGISTER_OP(AggregateOp, OpNeeds{.graph = true},
///                      [] { return op_samples(op_sample(AggregateOp(), {4})); });
#define STRATA_REGISTER_OP(op_class, ...)                                                     \
    [[maybe_unused]] static const ::strata::OpRegistration strata_op_registration_##op_class( \
        ::strata::OpCatalogueEntry{#op_class, __VA_ARGS__})
