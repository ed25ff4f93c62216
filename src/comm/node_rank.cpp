// node_rank: the launcher's local-rank variable, checked against MPI's shared-memory split;
// any_key_shared_on_node: an all-gather of key hashes within each node; node_ids: each node's
// lowest rank, all-gathered.
#include "src/comm/node_rank.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "src/comm/mpi_check.hpp"

namespace strata {
namespace {

/// The variable's value as a rank of [0, size), or -1.
int rank_from_environment(const char* name, int size) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') {
        return -1;
    }
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < 0 || value >= size) {
        return -1;
    }
    return static_cast<int>(value);
}

}  // namespace

NodeRank node_rank(MPI_Comm parent) {
    MPI_Comm node = MPI_COMM_NULL;
    STRATA_MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    NodeRank result;
    result.source = "MPI";
    const int split_rank_code = MPI_Comm_rank(node, &result.rank);
    const int split_size_code = MPI_Comm_size(node, &result.size);
    MPI_Comm_free(&node);
    STRATA_MPI_CHECK(split_rank_code);
    STRATA_MPI_CHECK(split_size_code);
    constexpr std::array<const char*, 3> variables{"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                                   "MPI_LOCALRANKID"};
    for (const char* name : variables) {
        if (const int rank = rank_from_environment(name, result.size); rank >= 0) {
            result.rank = rank;
            result.source = name;
            break;
        }
    }
    return result;
}

bool any_key_shared_on_node(const std::string& key, MPI_Comm parent) {
    MPI_Comm node = MPI_COMM_NULL;
    STRATA_MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int size = 0;
    MPI_Comm_size(node, &size);
    const auto mine = static_cast<std::uint64_t>(std::hash<std::string>{}(key));
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(size));
    const int gather_code =
        MPI_Allgather(&mine, 1, MPI_UINT64_T, keys.data(), 1, MPI_UINT64_T, node);
    MPI_Comm_free(&node);
    STRATA_MPI_CHECK(gather_code);
    std::sort(keys.begin(), keys.end());
    int shared = std::adjacent_find(keys.begin(), keys.end()) != keys.end() ? 1 : 0;
    STRATA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_LOR, parent));
    return shared != 0;
}

std::vector<int> node_ids(MPI_Comm comm) {
    int rank = 0;
    int size = 0;
    STRATA_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    STRATA_MPI_CHECK(MPI_Comm_size(comm, &size));
    MPI_Comm node = MPI_COMM_NULL;
    STRATA_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int lowest = rank;  // the node's lowest rank of `comm` names the node
    const int reduce_code = MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    STRATA_MPI_CHECK(reduce_code);
    std::vector<int> lowest_of(static_cast<std::size_t>(size));
    STRATA_MPI_CHECK(MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm));
    return canonical_node_ids(lowest_of);
}

std::vector<int> canonical_node_ids(const std::vector<int>& nodes) {
    std::map<int, int> number;
    std::vector<int> result;
    result.reserve(nodes.size());
    for (const int id : nodes) {
        result.push_back(number.emplace(id, static_cast<int>(number.size())).first->second);
    }
    return result;
}

}  // namespace strata
