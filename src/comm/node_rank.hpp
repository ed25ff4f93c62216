// node_rank: this process's rank among the ranks on its node, for one-GPU-per-rank placement;
// any_key_shared_on_node: whether two ranks of a node chose the same GPU; node_ids: the node of
// every rank (the grid's placement and the intra/inter-node byte counts).
#pragma once

#include <string>
#include <vector>

#include <mpi.h>

namespace strata {

struct NodeRank {
    int rank = 0;        ///< 0-based rank among the processes of `parent` on this node
    int size = 1;        ///< processes of `parent` on this node
    std::string source;  ///< where `rank` came from: an environment variable or "MPI"
};

/// Collective over `parent`. The rank comes from the launcher's environment when it sets one
/// (OMPI_COMM_WORLD_LOCAL_RANK for Open MPI's mpirun, SLURM_LOCALID for srun, MPI_LOCALRANKID for
/// MPICH's Hydra), else from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); the size always from the
/// latter. An environment value that is not a rank of [0, size) is ignored. Throws strata::Error.
[[nodiscard]] NodeRank node_rank(MPI_Comm parent = MPI_COMM_WORLD);

/// Collective over `parent`: true on every rank if two ranks on one node passed equal keys
/// (e.g. the PCI id of the GPU each will use). Throws strata::Error.
[[nodiscard]] bool any_key_shared_on_node(const std::string& key, MPI_Comm parent = MPI_COMM_WORLD);

/// Collective over `comm`: the node of each of its ranks (MPI_Comm_split_type
/// MPI_COMM_TYPE_SHARED), nodes numbered 0, 1, ... in the order of their lowest rank; every rank
/// returns the same vector. Throws strata::Error.
[[nodiscard]] std::vector<int> node_ids(MPI_Comm comm);

/// `nodes` (any ids, one per rank) renumbered 0, 1, ... in the order of first appearance.
[[nodiscard]] std::vector<int> canonical_node_ids(const std::vector<int>& nodes);

}  // namespace strata
