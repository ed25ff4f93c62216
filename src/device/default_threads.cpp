// default_threads: the decision (pure) and this process's inputs (sysconf, sched_getaffinity,
// getenv).
#include "src/device/default_threads.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <sched.h>
#include <unistd.h>

namespace strata {
namespace {

/// The leading positive integer of `text` ("4" and OMP's nested list "4,2" give 4), else 0.
int positive_prefix(const std::string& text) {
    if (text.empty()) {
        return 0;
    }
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || (*end != '\0' && *end != ',') || value <= 0 ||
        value > 1 << 20) {
        return 0;
    }
    return static_cast<int>(value);
}

}  // namespace

ThreadChoice choose_threads(const ThreadInputs& in) {
    const int cores = std::max(1, in.node_cores);
    if (in.affinity_cpus > 0 && in.affinity_cpus < cores) {
        return {in.affinity_cpus, "this rank's CPU affinity mask (" +
                                      std::to_string(in.affinity_cpus) + " of the node's " +
                                      std::to_string(cores) + " CPUs)"};
    }
    std::string skipped;
    const int omp = positive_prefix(in.omp_num_threads);
    if (omp > 0) {
        return {omp, "OMP_NUM_THREADS=" + in.omp_num_threads};
    }
    if (!in.omp_num_threads.empty()) {
        skipped += "; OMP_NUM_THREADS='" + in.omp_num_threads + "' ignored";
    }
    const int slurm = positive_prefix(in.slurm_cpus_per_task);
    if (slurm > 0) {
        return {slurm, "SLURM_CPUS_PER_TASK=" + in.slurm_cpus_per_task + skipped};
    }
    if (!in.slurm_cpus_per_task.empty()) {
        skipped += "; SLURM_CPUS_PER_TASK='" + in.slurm_cpus_per_task + "' ignored";
    }
    const int ranks = std::max(1, in.ranks_on_node);
    return {std::max(1, cores / ranks), "the node's " + std::to_string(cores) + " CPUs / " +
                                            std::to_string(ranks) + " rank(s) on the node" +
                                            skipped};
}

ThreadInputs thread_inputs(int ranks_on_node) {
    ThreadInputs in;
    in.node_cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
        in.affinity_cpus = CPU_COUNT(&mask);
    }
    if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp != nullptr) {
        in.omp_num_threads = omp;
    }
    if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK"); slurm != nullptr) {
        in.slurm_cpus_per_task = slurm;
    }
    in.ranks_on_node = ranks_on_node;
    return in;
}

}  // namespace strata
