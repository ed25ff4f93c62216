// PT-Scotch behind RAII: the distributed graph (SCOTCH_Dgraph over the MpiCommunicator's MPI_Comm),
// the deterministic seeded context (SCOTCH_Context) and the strategy (SCOTCH_Strat); and the
// error hooks PT-Scotch calls (SCOTCH_errorPrint and kin, provided here instead of libptscotcherr:
// an error ends the job in one line). The only file that includes ptscotch.h.
#include "partition/ptscotch_partitioner.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include <mpi.h>
// The scotch-int64 variant's headers (cmake/FindPTScotch.cmake puts their folder on the path).
#include "partition/cluster_contraction.hpp"
#include "partition/ghost_graph.hpp"
#include "partition/label_refinement.hpp"
#include "partition/symmetric_slice.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"
#include "src/comm/end_job.hpp"
#include "src/comm/mpi_communicator.hpp"

#include <ptscotch.h>

// PT-Scotch's error hooks (libptscotcherr's three functions; cmake/FindPTScotch.cmake does not
// link that library). An error ends the job in one line (end_job). PT-Scotch does not always
// return after an error: out of memory while coarsening ("dgraphGhst: out of memory"), its
// coarsening went on and crashed with a segmentation fault (the doubled products graph at P = 2,
// docs/scale.md), so a clean error must be raised here, not from its return code. Warnings are
// printed and the run goes on.
extern "C" {

void SCOTCH_errorProg(const char* /*program*/) {}

void SCOTCH_errorPrint(const char* format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    int rank = 0;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized != 0) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    strata::end_job("[rank " + std::to_string(rank) + "] error: PT-Scotch: " + message +
                    " (partitioning stopped" +
                    (std::strstr(message, "out of memory") != nullptr
                         ? "; more processes, or serial METIS, need less memory per process: "
                           "docs/scale.md)"
                         : ")"));
}

void SCOTCH_errorPrintW(const char* format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    std::fprintf(stderr, "PT-Scotch warning: %s\n", message);
}

}  // extern "C"

namespace strata {
namespace {

static_assert(std::is_same_v<SCOTCH_Num, std::int64_t>,
              "PT-Scotch must be the 64-bit variant (SCOTCH_Num = int64_t): scotch-int64");

/// SCOTCH_Dgraph: SCOTCH_dgraphInit / SCOTCH_dgraphExit. The arrays given to build() must outlive
/// it (PT-Scotch does not copy them).
class ScotchDgraph {
public:
    explicit ScotchDgraph(MPI_Comm comm) {
        STRATA_CHECK(SCOTCH_dgraphInit(&graph_, comm) == 0, "PT-Scotch: SCOTCH_dgraphInit failed");
    }
    ScotchDgraph(const ScotchDgraph&) = delete;
    ScotchDgraph& operator=(const ScotchDgraph&) = delete;
    ~ScotchDgraph() { SCOTCH_dgraphExit(&graph_); }
    [[nodiscard]] SCOTCH_Dgraph* get() { return &graph_; }

private:
    SCOTCH_Dgraph graph_{};
};

/// SCOTCH_Context: SCOTCH_contextInit / SCOTCH_contextExit, set up for reproducible runs:
/// SCOTCH_OPTIONNUMDETERMINISTIC (no result depends on thread timing), a fixed seed
/// (SCOTCH_OPTIONNUMRANDOMFIXEDSEED, SCOTCH_contextRandomSeed). The global generator
/// (SCOTCH_randomSeed + SCOTCH_randomReset) alone is not enough: two calls in one process gave
/// different parts on a 100 x 100 grid.
class ScotchContext {
public:
    explicit ScotchContext(std::uint64_t seed) {
        STRATA_CHECK(SCOTCH_contextInit(&context_) == 0, "PT-Scotch: SCOTCH_contextInit failed");
        STRATA_CHECK(
            SCOTCH_contextOptionSetNum(&context_, SCOTCH_OPTIONNUMDETERMINISTIC, 1) == 0 &&
                SCOTCH_contextOptionSetNum(&context_, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1) == 0,
            "PT-Scotch: cannot make the context deterministic");
        SCOTCH_contextRandomSeed(&context_, static_cast<SCOTCH_Num>(seed));
        STRATA_CHECK(SCOTCH_contextThreadSpawn(&context_, 1, nullptr) == 0,
                     "PT-Scotch: cannot set up its thread");
    }
    ScotchContext(const ScotchContext&) = delete;
    ScotchContext& operator=(const ScotchContext&) = delete;
    ~ScotchContext() { SCOTCH_contextExit(&context_); }
    [[nodiscard]] SCOTCH_Context* get() { return &context_; }

private:
    SCOTCH_Context context_{};
};

/// SCOTCH_Strat: SCOTCH_stratInit / SCOTCH_stratExit.
class ScotchStrat {
public:
    ScotchStrat() {
        STRATA_CHECK(SCOTCH_stratInit(&strat_) == 0, "PT-Scotch: SCOTCH_stratInit failed");
    }
    ScotchStrat(const ScotchStrat&) = delete;
    ScotchStrat& operator=(const ScotchStrat&) = delete;
    ~ScotchStrat() { SCOTCH_stratExit(&strat_); }
    [[nodiscard]] SCOTCH_Strat* get() { return &strat_; }

private:
    SCOTCH_Strat strat_{};
};

}  // namespace

namespace {

/// The sequential bipartitioning strategy of SCOTCH_stratDgraphMapBuild (Scotch 7.0,
/// SCOTCH_STRATDEFAULT): the better of two multilevel runs down to 80 vertices (greedy graph
/// growing, then Fiduccia-Mattheyses on a band around the frontier while uncoarsening).
std::string sequential_bipartition(const std::string& bal) {
    const std::string fm = "f{bal=" + bal + ",move=80}";
    const std::string ml =
        "m{vert=80,low=h{pass=10}" + fm + ",asc=b{bnd=(d{pass=40}|)" + fm + ",org=" + fm + "}}";
    return "(" + ml + "|" + ml + ")";
}

}  // namespace

std::string ptscotch_strategy(int processes, double imbalance) {
    char bal[32];
    std::snprintf(bal, sizeof(bal), "%f", imbalance);
    const std::string seq = sequential_bipartition(bal);
    const std::string b = bal;
    // Band refinement while uncoarsening: diffusion on the band graph, then the band graph
    // gathered on every process for a sequential Fiduccia-Mattheyses pass (q{strat=f}) ...
    const std::string refine = "q{strat=f}x{bal=" + b + "}";
    const std::string gathered = "b{bnd=(d{pass=40}|)" + refine + ",org=" + refine + "}";
    // ... except on levels averaging over 500 arcs per vertex (the coarsest levels of a graph
    // whose edges barely shrink when coarsened): there the band is the whole level, and gathering
    // it while every finer level is still held set the peak. Diffusion alone there.
    const std::string parallel = "b{bnd=d{pass=40}x{bal=" + b + "},org=x{bal=" + b + "}}";
    const std::string asc = "/(edge>vert*500)?" + parallel + ":" + gathered + ";";
    const std::string vert = std::to_string(std::max(processes, 1) * 1000);
    return "r{bal=" + b + ",sep=m{vert=" + vert + ",asc=" + asc + ",low=q{strat=" + seq +
           "},seq=q{strat=" + seq + "}},seq=r{bal=" + b + ",poli=S,sep=" + seq + "}}";
}

namespace {

/// The MPI communicator PT-Scotch runs on: `comm` itself when it is one, otherwise (a NCCL or
/// staged communicator of a GPU run) a duplicate of MPI_COMM_WORLD of its own, checked on every
/// rank to hold the same ranks in the same order. Collective.
class ScotchComm {
public:
    explicit ScotchComm(Communicator& comm) : mpi_(dynamic_cast<MpiCommunicator*>(&comm)) {
        if (mpi_ != nullptr) {
            return;
        }
        own_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
        mpi_ = own_.get();
        std::vector<std::int64_t> mismatch{
            mpi_->rank() != comm.rank() || mpi_->size() != comm.size() ? 1 : 0};
        mpi_->allreduce_max(mismatch);
        STRATA_CHECK(mismatch[0] == 0, "PT-Scotch: the job's communicator (rank ", comm.rank(),
                     " of ", comm.size(), ") does not order its ranks as MPI_COMM_WORLD (rank ",
                     mpi_->rank(), " of ", mpi_->size(), ") on every rank");
    }
    [[nodiscard]] MpiCommunicator& get() { return *mpi_; }

private:
    MpiCommunicator* mpi_;
    std::unique_ptr<MpiCommunicator> own_;
};

/// The checks both overloads make.
void check_arguments(const GraphSlice& slice, int num_parts, const PtScotchOptions& options) {
    STRATA_CHECK(SCOTCH_numSizeof() == static_cast<int>(sizeof(SCOTCH_Num)),
                 "PT-Scotch: the linked library has a ", SCOTCH_numSizeof(),
                 "-byte SCOTCH_Num, this build expects ", sizeof(SCOTCH_Num),
                 " (link the scotch-int64 variant)");
    STRATA_CHECK(num_parts >= 1 && num_parts <= std::max<global_id>(slice.num_vertices, 1),
                 "PT-Scotch: cannot split ", slice.num_vertices, " vertices into ", num_parts,
                 " parts (need 1 <= K <= N)");
    STRATA_CHECK(options.seed <= static_cast<std::uint64_t>(std::numeric_limits<SCOTCH_Num>::max()),
                 "PT-Scotch: seed ", options.seed, " exceeds ",
                 std::numeric_limits<SCOTCH_Num>::max());
}

/// Vertex weights: 1, or 1 + stored in-degree with balance_edges.
std::vector<std::int64_t> vertex_weights(const GraphSlice& slice, const PtScotchOptions& options) {
    std::vector<std::int64_t> weights(static_cast<std::size_t>(slice.num_local()), 1);
    if (options.balance_edges) {
        for (std::size_t i = 0; i < weights.size(); ++i) {
            weights[i] = 1 + slice.indptr[i + 1] - slice.indptr[i];
        }
    }
    return weights;
}

/// SCOTCH_dgraphPart of a symmetric distributed graph given as this rank's rows (global
/// columns); its arrays are PT-Scotch's graph (not copied). Empty weights: all 1.
std::vector<int> dgraph_part(std::span<std::int64_t> indptr, std::span<std::int64_t> indices,
                             std::span<std::int64_t> vertex_weight,
                             std::span<std::int64_t> edge_weight, int num_parts,
                             const PtScotchOptions& options, MpiCommunicator& mpi) {
    // PT-Scotch's collectives run on the communicator's private duplicate: nothing else is in
    // flight on it during partitioning (MpiCommunicator's ordering contract).
    ScotchDgraph graph(mpi.comm());
    const auto num_local = static_cast<SCOTCH_Num>(indptr.size() - 1);
    const auto num_arcs = static_cast<SCOTCH_Num>(indices.size());
    STRATA_CHECK(
        SCOTCH_dgraphBuild(graph.get(), 0, num_local, num_local, indptr.data(), indptr.data() + 1,
                           vertex_weight.empty() ? nullptr : vertex_weight.data(), nullptr,
                           num_arcs, num_arcs, indices.data(), nullptr,
                           edge_weight.empty() ? nullptr : edge_weight.data()) == 0,
        "PT-Scotch: SCOTCH_dgraphBuild failed on rank ", mpi.rank());
    if (options.check_graph) {
        STRATA_CHECK(SCOTCH_dgraphCheck(graph.get()) == 0,
                     "PT-Scotch: SCOTCH_dgraphCheck refused the distributed graph");
    }
    // The graph seen through a seeded, deterministic context (declared after `graph`, which it
    // refers to, so destroyed before it).
    ScotchContext context(options.seed);
    ScotchDgraph bound(mpi.comm());
    STRATA_CHECK(SCOTCH_contextBindDgraph(context.get(), graph.get(), bound.get()) == 0,
                 "PT-Scotch: SCOTCH_contextBindDgraph failed");
    ScotchStrat strat;
    const std::string strategy = ptscotch_strategy(mpi.size(), options.imbalance);
    STRATA_CHECK(SCOTCH_stratDgraphMap(strat.get(), strategy.c_str()) == 0,
                 "PT-Scotch: SCOTCH_stratDgraphMap refused the strategy ", strategy);
    std::vector<SCOTCH_Num> parts(static_cast<std::size_t>(num_local));
    STRATA_CHECK(SCOTCH_dgraphPart(bound.get(), num_parts, strat.get(), parts.data()) == 0,
                 "PT-Scotch: SCOTCH_dgraphPart failed (K = ", num_parts, ")");
    return std::vector<int>(parts.begin(), parts.end());
}

/// The symmetric graph `adj` of slice `rank` (freed here) into K parts: contracted by clusters
/// when they merge anything (cluster_contraction.hpp), PT-Scotch on the contracted graph (or on
/// `adj` itself), then refined on `adj` (label_refinement.hpp).
std::vector<int> partition_symmetric(SliceAdjacency&& adj, const std::vector<std::int64_t>& weights,
                                     const std::vector<global_id>& offsets, int rank, int num_parts,
                                     const PtScotchOptions& options, MpiCommunicator& mpi) {
    std::vector<std::int64_t> totals{0};
    std::vector<std::int64_t> heaviest{0};
    for (const std::int64_t w : weights) {
        totals[0] += w;
        heaviest[0] = std::max(heaviest[0], w);
    }
    mpi.allreduce_sum(totals);
    mpi.allreduce_max(heaviest);
    const std::int64_t cluster_bound =
        options.clusters_per_part > 0
            ? totals[0] / (static_cast<std::int64_t>(num_parts) * options.clusters_per_part)
            : 0;
    std::vector<int> part;
    GhostGraph fine;
    if (cluster_bound > heaviest[0]) {
        fine = ghost_graph(std::move(adj), offsets, rank, mpi);
        const LocalClusters clusters =
            cluster_locally(fine, weights, cluster_bound, options.cluster_rounds, options.seed);
        std::vector<int> cluster_part;
        {
            ContractedGraph contracted = contract_clusters(fine, clusters, weights, mpi);
            cluster_part =
                dgraph_part(contracted.indptr, contracted.indices, contracted.vertex_weight,
                            contracted.edge_weight, num_parts, options, mpi);
        }
        part.resize(weights.size());
        for (std::size_t v = 0; v < part.size(); ++v) {
            part[v] = cluster_part[static_cast<std::size_t>(clusters.of[v])];
        }
    } else {
        std::vector<std::int64_t> scotch_weights;
        if (options.balance_edges) {
            scotch_weights = weights;
        }
        part = dgraph_part(adj.indptr, adj.indices, scotch_weights, {}, num_parts, options, mpi);
        fine = ghost_graph(std::move(adj), offsets, rank, mpi);
    }
    if (options.refine_rounds > 0) {
        refine_parts(fine, weights, part,
                     RefineOptions{.num_parts = num_parts,
                                   .imbalance = options.imbalance,
                                   .max_rounds = options.refine_rounds},
                     mpi);
    }
    return part;
}

}  // namespace

std::vector<int> partition_ptscotch(const GraphSlice& slice, int num_parts,
                                    const PtScotchOptions& options, Communicator& comm) {
    check_arguments(slice, num_parts, options);
    if (num_parts == 1) {
        return std::vector<int>(static_cast<std::size_t>(slice.num_local()), 0);
    }
    ScotchComm mpi(comm);
    return partition_symmetric(symmetric_adjacency(slice, mpi.get()),
                               vertex_weights(slice, options), slice.vertex_offsets, slice.rank,
                               num_parts, options, mpi.get());
}

std::vector<int> partition_ptscotch(GraphSlice&& slice, int num_parts,
                                    const PtScotchOptions& options, Communicator& comm) {
    check_arguments(slice, num_parts, options);
    std::vector<int> parts(static_cast<std::size_t>(slice.num_local()), 0);
    const std::vector<std::int64_t> weights = vertex_weights(slice, options);
    SliceAdjacency adj;
    std::optional<ScotchComm> mpi;
    if (num_parts > 1) {
        mpi.emplace(comm);
        adj = symmetric_adjacency(slice, mpi->get());
    }
    // The stored edges are not needed any more: PT-Scotch runs on `adj` alone.
    release(slice.indices);
    release(slice.edge_weight);
    if (num_parts > 1) {
        parts = partition_symmetric(std::move(adj), weights, slice.vertex_offsets, slice.rank,
                                    num_parts, options, mpi->get());
    }
    return parts;
}

}  // namespace strata
