// MachineModel: interpolation and machine.json.
#include "planner/machine_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

namespace strata::planner {
namespace {

using nlohmann::json;

json points_json(const std::vector<RatePoint>& points) {
    json out = json::array();
    for (const RatePoint& p : points) {
        out.push_back({{"x", p.x}, {"rate", p.rate}});
    }
    return out;
}

std::vector<RatePoint> points_from(const json& j) {
    std::vector<RatePoint> out;
    for (const json& p : j) {
        out.push_back({p.at("x").get<double>(), p.at("rate").get<double>()});
    }
    std::sort(out.begin(), out.end(),
              [](const RatePoint& a, const RatePoint& b) { return a.x < b.x; });
    return out;
}

json network_json(const Network& n) {
    return {{"latency_s", n.latency_s}, {"bandwidth_gbs", n.bandwidth_gbs}};
}

Network network_from(const json& j) {
    return {j.at("latency_s").get<double>(), j.at("bandwidth_gbs").get<double>()};
}

/// A name -> spread object; absent (version 1): empty, every spread 0.
std::map<std::string, double> spreads_from(const json& j, const char* key) {
    std::map<std::string, double> out;
    if (j.contains(key)) {
        for (const auto& [name, value] : j.at(key).items()) {
            out[name] = value.get<double>();
        }
    }
    return out;
}

void points_figures(
    const char* key, std::vector<RatePoint>& points,
    const std::function<void(const std::string& name, double& value, bool rate)>& f) {
    for (RatePoint& p : points) {
        char x[32];
        std::snprintf(x, sizeof(x), "%g", p.x);
        f(std::string(key) + "@" + x, p.rate, true);
    }
}

}  // namespace

void write_text_atomically(const std::string& path, const std::string& text) {
    AtomicOutput out(path, /*overwrite=*/true);
    {
        std::ofstream file(out.temp_path());
        file << text;
        STRATA_CHECK(file.good(), path, ": cannot write");
    }
    out.commit();
}

void for_each_figure(
    ThreadRates& r,
    const std::function<void(const std::string& name, double& value, bool rate)>& f) {
    f("memory_gbs", r.memory_gbs, true);
    f("cache_gbs", r.cache_gbs, true);
    f("step_s", r.step_s, false);
    f("dropout_entry_s", r.dropout_entry_s, false);
    points_figures("gemm_gflops", r.gemm, f);
    points_figures("gemm_tn_gflops", r.gemm_tn, f);
    f("softmax_entry_s", r.softmax_entry_s, false);
    f("blas_switch_s", r.blas_switch_s, false);
    points_figures("spmm_in_cache_g", r.spmm_in_cache, f);
    points_figures("spmm_out_of_cache_g", r.spmm_out_of_cache, f);
    f("spmm_scale", r.spmm_scale, false);
    f("time_scale", r.time_scale, false);
}

MachineModel slowed_by_spread(MachineModel m) {
    const auto spread_of = [](const std::map<std::string, double>& spreads,
                              const std::string& name) {
        const auto it = spreads.find(name);
        return it == spreads.end() ? 0.0 : std::max(0.0, it->second);
    };
    for (ThreadRates& r : m.by_threads) {
        const std::map<std::string, double> spreads = r.spread;
        for_each_figure(r, [&](const std::string& name, double& value, bool rate) {
            const double factor = 1.0 + spread_of(spreads, name);
            value = rate ? value / factor : value * factor;
        });
    }
    const auto slow = [&](Network& network, const std::string& key) {
        network.latency_s *= 1.0 + spread_of(m.network_spread, key + ".latency_s");
        network.bandwidth_gbs /= 1.0 + spread_of(m.network_spread, key + ".bandwidth_gbs");
    };
    slow(m.shared_memory, "shared_memory");
    slow(m.inter_node, "inter_node");
    slow(m.inter_node_paired, "inter_node_paired");
    return m;
}

void paired_as_inter_node(MachineModel& m) {
    m.inter_node_paired = m.inter_node;
    for (const char* figure : {".latency_s", ".bandwidth_gbs"}) {
        const auto it = m.network_spread.find(std::string("inter_node") + figure);
        if (it != m.network_spread.end()) {
            m.network_spread[std::string("inter_node_paired") + figure] = it->second;
        }
    }
}

const ThreadRates& MachineModel::rates(int threads) const {
    STRATA_CHECK(!by_threads.empty(), "machine model: no measured rates (run strata calibrate)");
    const ThreadRates* best = &by_threads.front();
    for (const ThreadRates& r : by_threads) {
        if (std::abs(r.threads - threads) < std::abs(best->threads - threads)) {
            best = &r;
        }
    }
    return *best;
}

double interpolate(const std::vector<RatePoint>& points, double x) {
    STRATA_CHECK(!points.empty(), "machine model: a rate without measurements");
    if (x <= points.front().x) {
        return points.front().rate;
    }
    if (x >= points.back().x) {
        return points.back().rate;
    }
    for (std::size_t i = 1; i < points.size(); ++i) {
        if (x <= points[i].x) {
            const double t =
                std::log(x / points[i - 1].x) / std::log(points[i].x / points[i - 1].x);
            return points[i - 1].rate + t * (points[i].rate - points[i - 1].rate);
        }
    }
    return points.back().rate;
}

std::string to_json(const MachineModel& m) {
    json rates = json::array();
    for (const ThreadRates& r : m.by_threads) {
        rates.push_back({{"threads", r.threads},
                         {"memory_gbs", r.memory_gbs},
                         {"cache_gbs", r.cache_gbs},
                         {"step_s", r.step_s},
                         {"dropout_entry_s", r.dropout_entry_s},
                         {"gemm_gflops", points_json(r.gemm)},
                         {"gemm_tn_gflops", points_json(r.gemm_tn)},
                         {"softmax_entry_s", r.softmax_entry_s},
                         {"blas_switch_s", r.blas_switch_s},
                         {"spmm_in_cache_g", points_json(r.spmm_in_cache)},
                         {"spmm_out_of_cache_g", points_json(r.spmm_out_of_cache)},
                         {"spmm_scale", r.spmm_scale},
                         {"time_scale", r.time_scale},
                         {"spread", r.spread}});
    }
    const json j = {{"format", "strata-machine"},
                    {"version", MachineModel::format_version},
                    {"host", m.host},
                    {"cores", m.cores},
                    {"cache_bytes", m.cache_bytes},
                    {"by_threads", rates},
                    {"shared_memory", network_json(m.shared_memory)},
                    {"inter_node", network_json(m.inter_node)},
                    {"inter_node_paired", network_json(m.inter_node_paired)},
                    {"mpi_measured", m.mpi_measured},
                    {"inter_node_measured", m.inter_node_measured},
                    {"overlap_slowdown", m.overlap_slowdown},
                    {"baseline_rss_bytes", m.baseline_rss_bytes},
                    {"network_spread", m.network_spread}};
    return j.dump(2) + "\n";
}

MachineModel machine_from_json(const std::string& text, const std::string& what) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        STRATA_FAIL(what, ": not JSON (", e.what(), ")");
    }
    STRATA_CHECK(j.is_object() && j.value("format", std::string()) == "strata-machine", what,
                 ": not a machine model (\"format\" is not \"strata-machine\")");
    // Version 1 lacks the spreads (read as 0), 1 and 2 inter_node_measured (false), 1 to 3
    // inter_node_paired (inter_node's figures).
    const int version = j.value("version", 0);
    STRATA_CHECK(version >= 1 && version <= MachineModel::format_version, what,
                 ": machine model version ", version, " is not supported (this strata reads 1 to ",
                 MachineModel::format_version, "): run strata calibrate again");
    try {
        MachineModel m;
        m.host = j.at("host").get<std::string>();
        m.cores = j.at("cores").get<int>();
        m.cache_bytes = j.at("cache_bytes").get<double>();
        for (const json& r : j.at("by_threads")) {
            m.by_threads.push_back({.threads = r.at("threads").get<int>(),
                                    .memory_gbs = r.at("memory_gbs").get<double>(),
                                    .cache_gbs = r.value("cache_gbs", 0.0),
                                    .step_s = r.at("step_s").get<double>(),
                                    .dropout_entry_s = r.value("dropout_entry_s", 0.0),
                                    .gemm = points_from(r.at("gemm_gflops")),
                                    .gemm_tn = r.contains("gemm_tn_gflops")
                                                   ? points_from(r.at("gemm_tn_gflops"))
                                                   : points_from(r.at("gemm_gflops")),
                                    .softmax_entry_s = r.value("softmax_entry_s", 0.0),
                                    .blas_switch_s = r.value("blas_switch_s", 0.0),
                                    .spmm_in_cache = points_from(r.at("spmm_in_cache_g")),
                                    .spmm_out_of_cache = points_from(r.at("spmm_out_of_cache_g")),
                                    .spmm_scale = r.value("spmm_scale", 1.0),
                                    .time_scale = r.value("time_scale", 1.0),
                                    .spread = spreads_from(r, "spread")});
        }
        STRATA_CHECK(!m.by_threads.empty(), what, ": by_threads is empty");
        m.shared_memory = network_from(j.at("shared_memory"));
        m.inter_node = network_from(j.at("inter_node"));
        m.mpi_measured = j.at("mpi_measured").get<bool>();
        m.inter_node_measured = version >= 3 && j.at("inter_node_measured").get<bool>();
        m.overlap_slowdown = j.at("overlap_slowdown").get<double>();
        m.baseline_rss_bytes = j.at("baseline_rss_bytes").get<double>();
        m.network_spread = spreads_from(j, "network_spread");
        if (version >= 4) {
            m.inter_node_paired = network_from(j.at("inter_node_paired"));
        } else {
            paired_as_inter_node(m);
        }
        return m;
    } catch (const json::exception& e) {
        STRATA_FAIL(what, ": ", e.what());
    }
}

MachineModel read_machine(const std::string& path) {
    std::ifstream in(path);
    STRATA_CHECK(in.good(), path,
                 ": cannot read the machine model (make one with strata "
                 "calibrate --out ",
                 path, ")");
    std::stringstream text;
    text << in.rdbuf();
    return machine_from_json(text.str(), path);
}

void write_machine(const MachineModel& model, const std::string& path) {
    write_text_atomically(path, to_json(model));
}

MachineModel default_machine() {
    MachineModel m;
    m.host = "default (not calibrated)";
    m.cores = 1;
    m.cache_bytes = 32e6;
    m.by_threads.push_back({.threads = 1,
                            .memory_gbs = 10.0,
                            .step_s = 20e-6,
                            .gemm = {{16, 20}, {256, 60}},
                            .gemm_tn = {{16, 20}, {256, 60}},
                            .spmm_in_cache = {{16, 1.0}, {256, 1.5}},
                            .spmm_out_of_cache = {{16, 0.3}, {256, 0.8}}});
    m.shared_memory = {5e-6, 5.0};
    m.inter_node = {50e-6, 1.25};
    m.inter_node_paired = m.inter_node;
    m.baseline_rss_bytes = 60e6;
    return m;
}

}  // namespace strata::planner
