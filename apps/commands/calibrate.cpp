// `strata calibrate`: measure this machine's kernels (and, under mpirun, the network inside a
// node and across nodes) into machine.json for `strata plan` — by default where the planner looks
// (planner/machine_file.hpp), else where --out says, and then how the planner finds it.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "planner/calibration.hpp"
#include "planner/machine_file.hpp"
#include "src/base/error.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/device/cpu/cpu_backend.hpp"

namespace strata::app {
namespace {

struct CalibrateOptions {
    std::string out;  ///< empty: planner::default_machine_path()
    double seconds = 0.3;
    int rounds = 3;
    bool no_fit = false;
    double link_gbit = 0.0;
    double link_latency_us = 0.0;
};

/// Whether `a` and `b` name the same file (both must exist).
bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    return std::filesystem::equivalent(a, b, ec);
}

/// How strata plan and strata train --plan auto will find the model just written to `out`.
std::string how_plan_finds(const std::string& out) {
    const char* env = std::getenv("STRATA_MACHINE");
    const bool env_set = env != nullptr && *env != '\0';
    if (env_set && same_file(env, out)) {
        return "strata plan and strata train --plan auto use it (STRATA_MACHINE=" +
               std::string(env) + ")";
    }
    if (env_set) {
        return "strata plan reads STRATA_MACHINE=" + std::string(env) + " first: pass --machine " +
               out + " (or set STRATA_MACHINE=" + out + ") to use this one";
    }
    if (same_file(out, planner::default_machine_path())) {
        return "strata plan and strata train --plan auto use it by default";
    }
    return "strata plan uses it with --machine " + out + " or STRATA_MACHINE=" + out +
           " (without either it reads " + planner::default_machine_path() +
           ", where strata calibrate writes without --out)";
}

int run_calibrate(CalibrateOptions o) {
    CpuBackend host(1);
    auto comm = make_communicator(host, CommKind::mpi);
    const bool root = comm->rank() == 0;
    if (o.out.empty()) {
        o.out = planner::default_machine_path();
        if (root) {
            std::error_code ec;
            std::filesystem::create_directories(std::filesystem::path(o.out).parent_path(), ec);
            STRATA_CHECK(!ec, std::filesystem::path(o.out).parent_path().string(),
                         ": cannot create the directory for the machine model (", ec.message(),
                         "; give --out FILE)");
        }
    }
    if (root) {
        std::printf("calibrate: writing %s%s\n", o.out.c_str(),
                    comm->size() > 1 ? " (the network: inside a node, across nodes)"
                                     : " (kernels, then fits; about a minute)");
        const std::string busy = planner::busy_warning(
            planner::load_average(), static_cast<int>(std::thread::hardware_concurrency()));
        if (!busy.empty()) {
            std::fprintf(stderr, "warning: %s\n", busy.c_str());
        }
        std::fflush(stdout);
    }
    planner::MachineModel m =
        planner::calibrate(*comm, {.seconds_per_figure = o.seconds,
                                   .rounds = o.rounds,
                                   .fit = !o.no_fit,
                                   .log =
                                       [](const std::string& line) {
                                           std::printf("calibrate: %s\n", line.c_str());
                                           std::fflush(stdout);
                                       },
                                   .warn =
                                       [](const std::string& line) {
                                           std::fflush(stdout);
                                           std::fprintf(stderr, "warning: %s\n", line.c_str());
                                       }});
    // One process measures the kernels, mpirun the network: each keeps the other's figures
    // from an existing --out.
    const bool exists = std::filesystem::exists(o.out);
    if (comm->size() > 1) {
        STRATA_CHECK(exists, o.out,
                     ": no machine model to add the network figures to (run "
                     "strata calibrate --out ",
                     o.out, " in one process first)");
        m = planner::merge_network(planner::read_machine(o.out), m);
    } else if (exists) {
        const planner::MachineModel old = planner::read_machine(o.out);
        m = planner::merge_network(m, old);
        m.inter_node = old.inter_node;  // measured or given by hand: kept
        m.inter_node_paired = old.inter_node_paired;
    }
    m = planner::with_link_by_hand(std::move(m), o.link_gbit, o.link_latency_us);
    if (root) {
        planner::write_machine(m, o.out);
        std::printf("wrote %s (%s, %d cores; network inside a node: %s; across nodes: %s)\n",
                    o.out.c_str(), m.host.c_str(), m.cores,
                    m.mpi_measured ? "measured"
                                   : "defaults (mpirun -np 2 strata calibrate on one node with "
                                     "the same --out measures it)",
                    m.inter_node_measured ? "measured"
                                          : "by hand or defaults (mpirun across nodes with the "
                                            "same --out measures it)");
        std::printf("%s\n", how_plan_finds(o.out).c_str());
    }
    comm->barrier();
    return 0;
}

}  // namespace

Command add_calibrate_command(CLI::App& root) {
    auto o = std::make_shared<CalibrateOptions>();
    CLI::App* cmd = root.add_subcommand(
        "calibrate",
        "Measure this machine for strata plan: one process times the kernels (bandwidth, GEMM, "
        "SpMM, a step's cost; about a minute), mpirun then adds the network to the same --out: "
        "inside a node, and across nodes when the ranks span several (all of a node's ranks "
        "at once: start as many per node as training will)");
    cmd->add_option("--out", o->out,
                    "Machine model to write (JSON; default ~/.cache/strata/machine.json, where "
                    "strata plan and strata train --plan auto look without --machine)");
    cmd->add_option("--seconds", o->seconds,
                    "Time spent on each measured figure, all rounds together")
        ->check(positive())
        ->capture_default_str();
    cmd->add_option("--rounds", o->rounds,
                    "Interleaved rounds (at least 3): each figure is the median over rounds, "
                    "its spread (max - min) / median is written and warned about above 10 %")
        ->check(in_range(3, 1000))
        ->capture_default_str();
    cmd->add_flag("--no-fit", o->no_fit,
                  "Skip the training run that fits the time scale (measured / predicted)");
    // Not given: an existing --out keeps its figures, a new one gets 10 Gbit/s and 50 us
    // (planner::default_machine()); the captured 0 would read as a default of 0.
    cmd->add_option("--link-gbit", o->link_gbit,
                    "Inter-node link bandwidth in Gbit/s, by hand, replacing a measured one "
                    "(default: kept from an existing --out, else 10)")
        ->check(positive())
        ->default_str("");
    cmd->add_option("--link-latency-us", o->link_latency_us,
                    "Inter-node one-way latency in microseconds, by hand, replacing a measured "
                    "one (default: kept from an existing --out, else 50)")
        ->check(positive())
        ->default_str("");
    return {cmd, [o] { return run_calibrate(*o); }};
}

}  // namespace strata::app
