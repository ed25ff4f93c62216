// node_rank and any_key_shared_on_node under a real mpirun on one node: local ranks are a
// permutation of [0, size), Open MPI's variable is the source, and shared keys are detected.
#include <algorithm>
#include <string>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "src/comm/node_rank.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {

TEST_CASE("on one node the local ranks are the world ranks' permutation", "[mpi]") {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const NodeRank node = node_rank();

    std::vector<int> all(static_cast<std::size_t>(size));
    MPI_Allgather(&node.rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::sort(all.begin(), all.end());
    bool ok = node.size == size;
    for (int r = 0; r < size; ++r) {
        ok = ok && all[static_cast<std::size_t>(r)] == r;
    }
    // mpirun sets OMPI_COMM_WORLD_LOCAL_RANK (and, on one node, it equals the world rank).
    ok = ok && node.source == "OMPI_COMM_WORLD_LOCAL_RANK" && node.rank == rank;
    INFO("rank " << rank << ": local rank " << node.rank << " of " << node.size << " from "
                 << node.source);
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("a key shared by two ranks of a node is seen by every rank", "[mpi]") {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const bool distinct = any_key_shared_on_node("gpu-" + std::to_string(rank));
    // Ranks 0 and 1 pick the same key, the others their own.
    const bool pair = any_key_shared_on_node("gpu-" + std::to_string(rank == 1 ? 0 : rank));
    const bool ok = !distinct && pair == (size > 1);
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

}  // namespace strata
