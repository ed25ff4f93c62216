// `strata calibrate`: measure this machine's kernels (and, under mpirun, the network between
// ranks 0 and 1) into machine.json for `strata plan`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "planner/calibration.hpp"
#include "src/base/error.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/device/cpu/cpu_backend.hpp"

namespace strata::app {
namespace {

struct CalibrateOptions {
    std::string out = "machine.json";
    double seconds = 0.3;
    bool no_fit = false;
    double link_gbit = 0.0;
    double link_latency_us = 0.0;
};

int run_calibrate(const CalibrateOptions& o) {
    CpuBackend host(1);
    auto comm = make_communicator(host, CommKind::mpi);
    const bool root = comm->rank() == 0;
    planner::MachineModel m = planner::calibrate(
        *comm,
        {.seconds_per_figure = o.seconds, .fit = !o.no_fit, .log = [](const std::string& line) {
             std::printf("calibrate: %s\n", line.c_str());
             std::fflush(stdout);
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
        if (old.mpi_measured) {
            m = planner::merge_network(m, old);
        }
        m.inter_node = old.inter_node;
    }
    if (o.link_gbit > 0) {
        m.inter_node.bandwidth_gbs = o.link_gbit / 8.0;
    }
    if (o.link_latency_us > 0) {
        m.inter_node.latency_s = o.link_latency_us * 1e-6;
    }
    if (root) {
        planner::write_machine(m, o.out);
        std::printf("wrote %s (%s, %d cores, %s)\n", o.out.c_str(), m.host.c_str(), m.cores,
                    m.mpi_measured ? "network measured between ranks 0 and 1"
                                   : "network figures are defaults: run mpirun -np 2 strata "
                                     "calibrate --out FILE to measure them");
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
        "SpMM, a step's cost; about a minute), mpirun -np 2 then adds the network between ranks "
        "to the same --out");
    cmd->add_option("--out", o->out, "Machine model to write (JSON)")->capture_default_str();
    cmd->add_option("--seconds", o->seconds, "Time spent on each measured figure")
        ->check(positive())
        ->capture_default_str();
    cmd->add_flag("--no-fit", o->no_fit,
                  "Skip the training run that fits the time scale (measured / predicted)");
    cmd->add_option("--link-gbit", o->link_gbit,
                    "Inter-node link bandwidth in Gbit/s (by hand; default 10)")
        ->check(positive());
    cmd->add_option("--link-latency-us", o->link_latency_us,
                    "Inter-node one-way latency in microseconds (by hand; default 50)")
        ->check(positive());
    return {cmd, [o] { return run_calibrate(*o); }};
}

}  // namespace strata::app
