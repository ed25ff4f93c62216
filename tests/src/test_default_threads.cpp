// choose_threads: each rule with injected inputs (not the machine's), in priority order.
#include <catch2/catch.hpp>

#include "src/device/default_threads.hpp"

namespace strata {

TEST_CASE("default threads: a narrower affinity mask wins over everything", "[threads]") {
    const ThreadChoice c = choose_threads({.node_cores = 16,
                                           .affinity_cpus = 3,
                                           .omp_num_threads = "8",
                                           .slurm_cpus_per_task = "4",
                                           .ranks_on_node = 2});
    CHECK(c.threads == 3);
    CHECK(c.rule == "this rank's CPU affinity mask (3 of the node's 16 CPUs)");
}

TEST_CASE("default threads: a whole-node mask falls through to OMP_NUM_THREADS", "[threads]") {
    const ThreadChoice c = choose_threads({.node_cores = 16,
                                           .affinity_cpus = 16,
                                           .omp_num_threads = "5,2",
                                           .slurm_cpus_per_task = "4",
                                           .ranks_on_node = 2});
    CHECK(c.threads == 5);
    CHECK(c.rule == "OMP_NUM_THREADS=5,2");
}

TEST_CASE("default threads: SLURM_CPUS_PER_TASK without OMP_NUM_THREADS", "[threads]") {
    const ThreadChoice c = choose_threads({.node_cores = 16,
                                           .affinity_cpus = 16,
                                           .omp_num_threads = "",
                                           .slurm_cpus_per_task = "4",
                                           .ranks_on_node = 2});
    CHECK(c.threads == 4);
    CHECK(c.rule == "SLURM_CPUS_PER_TASK=4");
}

TEST_CASE("default threads: the node's cores divided by its ranks, at least 1", "[threads]") {
    ThreadInputs in{.node_cores = 2,
                    .affinity_cpus = 2,
                    .omp_num_threads = "",
                    .slurm_cpus_per_task = "",
                    .ranks_on_node = 4};
    ThreadChoice c = choose_threads(in);
    CHECK(c.threads == 1);
    CHECK(c.rule == "the node's 2 CPUs / 4 rank(s) on the node");
    in.node_cores = 16;
    in.affinity_cpus = 0;  // unknown mask
    in.ranks_on_node = 3;
    c = choose_threads(in);
    CHECK(c.threads == 5);
    CHECK(c.rule == "the node's 16 CPUs / 3 rank(s) on the node");
}

TEST_CASE("default threads: malformed variables are skipped and named", "[threads]") {
    const ThreadChoice c = choose_threads({.node_cores = 8,
                                           .affinity_cpus = 8,
                                           .omp_num_threads = "many",
                                           .slurm_cpus_per_task = "0",
                                           .ranks_on_node = 2});
    CHECK(c.threads == 4);
    CHECK(c.rule ==
          "the node's 8 CPUs / 2 rank(s) on the node; OMP_NUM_THREADS='many' ignored; "
          "SLURM_CPUS_PER_TASK='0' ignored");
}

TEST_CASE("default threads: this process's inputs are sane", "[threads]") {
    const ThreadInputs in = thread_inputs(3);
    CHECK(in.node_cores >= 1);
    CHECK(in.affinity_cpus >= 1);
    CHECK(in.affinity_cpus <= in.node_cores);
    CHECK(in.ranks_on_node == 3);
    CHECK(choose_threads(in).threads >= 1);
}

}  // namespace strata
