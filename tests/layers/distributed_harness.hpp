// Shared by the K ranks ≡ 1 rank tests: the partition every rank agrees on, and the comparison
// of two runs epoch by epoch (the "exact" convention: losses within 1e-5 relative, accuracies
// within one vertex of each split).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "src/comm/communicator.hpp"

namespace strata::test {

/// Rank 0 partitions, everyone receives the owners (as the trainer does); "ptscotch": every rank
/// partitions its slice (by rows) with PT-Scotch and rank 0 gathers the owners.
inline Partition agreed_partition(const GraphDataset& g, Communicator& comm,
                                  const std::string& method = "metis") {
    Partition p;
    p.num_parts = comm.size();
    p.owner.assign(static_cast<std::size_t>(g.num_vertices()), 0);
    if (comm.size() > 1 && method == "ptscotch") {
        const GraphSlice slice =
            slice_of(g, slice_offsets(g.num_vertices(), comm.size()), comm.rank());
        const std::vector<int> local = partition_ptscotch(slice, comm.size(), {.seed = 3}, comm);
        const std::vector<std::byte> all =
            comm.gather(std::as_bytes(std::span<const int>(local)), 0);
        if (comm.rank() == 0) {
            std::memcpy(p.owner.data(), all.data(), all.size());
        }
        comm.broadcast(std::as_writable_bytes(std::span<int>(p.owner)), 0);
    } else if (comm.size() > 1) {
        if (comm.rank() == 0) {
            p = method == "metis" ? partition_metis(g, comm.size(), MetisOptions{.seed = 3})
                                  : partition_random(g.num_vertices(), comm.size(), 3);
        }
        comm.broadcast(std::as_writable_bytes(std::span<int>(p.owner)), 0);
    }
    return p;
}

inline std::int64_t count(const std::vector<std::uint8_t>& mask) {
    return std::count(mask.begin(), mask.end(), std::uint8_t{1});
}

/// Every epoch's loss within 1e-5 relative; every epoch's accuracies within one vertex of
/// each split (halo rows are summed in arrival order, so an argmax may flip on a tie).
template <class Result>
bool same_run(const std::vector<Result>& k, const std::vector<Result>& one, const GraphDataset& g) {
    bool ok = k.size() == one.size();
    const std::array<double, 3> sizes{static_cast<double>(count(g.train_mask)),
                                      static_cast<double>(count(g.val_mask)),
                                      static_cast<double>(count(g.test_mask))};
    for (std::size_t e = 0; ok && e < k.size(); ++e) {
        const double rel = std::abs(k[e].loss - one[e].loss) / std::abs(one[e].loss);
        if (rel > 1e-5) {
            UNSCOPED_INFO("epoch " << e + 1 << ": loss " << k[e].loss << " vs one rank "
                                   << one[e].loss << " (relative " << rel << ")");
            ok = false;
        }
        const std::array<double, 3> diff{std::abs(k[e].eval.train_acc - one[e].eval.train_acc),
                                         std::abs(k[e].eval.val_acc - one[e].eval.val_acc),
                                         std::abs(k[e].eval.test_acc - one[e].eval.test_acc)};
        for (std::size_t s = 0; s < 3; ++s) {
            if (diff[s] * sizes[s] > 1.0 + 1e-9) {
                UNSCOPED_INFO("epoch " << e + 1 << ": split " << s << " accuracy differs by "
                                       << diff[s] * sizes[s] << " vertices");
                ok = false;
            }
        }
    }
    return ok;
}

}  // namespace strata::test
