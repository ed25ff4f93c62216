// Calibration in rounds (planner/timed_rounds.hpp) on a fake clock: the fastest of repetitions,
// the median and spread over interleaved rounds (an outlier round moves the spread, not the
// median), the warning about spread and load, machine.json's spreads and whether the inter-node
// figures were measured (version 3; versions 1 and 2 still read), the ranks the network is timed
// between, merging a network run into the kernels' file, and the plan's error band growing with
// the spreads.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "layers/model_zoo.hpp"
#include "planner/calibration.hpp"
#include "planner/grid_model.hpp"
#include "planner/layout_plan.hpp"
#include "planner/machine_model.hpp"
#include "planner/pipeline_model.hpp"
#include "planner/timed_rounds.hpp"
#include "tests/support/small_plan_request.hpp"

#include <unistd.h>

namespace fs = std::filesystem;
namespace planner = strata::planner;

namespace {

/// A clock that only moves when a fake kernel runs: each run advances it by the next of
/// `durations` (cycling), so time_fastest sees exactly those times.
struct FakeTime {
    double now = 0.0;
    std::vector<double> durations;
    std::size_t next = 0;
    planner::Clock clock() {
        return [this] { return now; };
    }
    void run() { now += durations[next++ % durations.size()]; }
};

}  // namespace

TEST_CASE("time_fastest: the fastest repetition after an untimed warm-up", "[planner]") {
    FakeTime t;
    // Warm-up 9 s (not timed), then 3: with no budget left, one timed repetition.
    t.durations = {9.0, 3.0, 1.0, 2.0};
    CHECK(planner::time_fastest(
              0.0, [&] { t.run(); }, t.clock()) == 3.0);
    CHECK(t.next == 2);
    // A budget of 5 s: 3, 1, 2 (6 s), the fastest 1.
    t.next = 0;
    CHECK(planner::time_fastest(
              5.0, [&] { t.run(); }, t.clock()) == 1.0);
    CHECK(t.next == 4);
    // A budget of 10 s: repetitions until 10 s of the fake clock have passed.
    FakeTime u;
    u.durations = {1.0};
    CHECK(planner::time_fastest(
              10.0, [&] { u.run(); }, u.clock()) == 1.0);
    CHECK(u.next == 11);  // warm-up + 10
}

TEST_CASE("summarize: the median over rounds and (max - min) / median", "[planner]") {
    const planner::Repeated r = planner::summarize({2.0, 1.0, 4.0});
    CHECK(r.median == 2.0);
    CHECK(r.spread == Approx(1.5));
    CHECK(r.rounds == std::vector<double>{2.0, 1.0, 4.0});
    CHECK(planner::summarize({1.0, 3.0}).median == 2.0);
    CHECK(planner::summarize({5.0}).spread == 0.0);
    CHECK(planner::summarize({0.0, 0.0, 0.0}).spread == 0.0);
    CHECK(planner::summarize({0.0, 0.0, 1e-6}).spread == 1.0);
}

TEST_CASE("interleaved rounds: an outlier round moves the spread, not the median", "[planner]") {
    // Two probes on one fake clock. Within a round each times its kernel after a warm-up and
    // keeps the fastest; a round's kernel durations are fixed per probe and round.
    FakeTime t;
    std::vector<std::string> order;
    const std::map<std::string, std::vector<double>> per_round{
        {"a", {1.0, 1.1, 5.0}},  // round 3 an outlier (another process on the core)
        {"b", {2.0, 2.0, 2.0}}};
    int round = 0;
    planner::FigureRounds rounds;
    for (const std::string name : {"a", "b"}) {
        rounds.add({name + "_s", name + "_rate"}, [&, name] {
            order.push_back(name);
            t.durations = {per_round.at(name)[static_cast<std::size_t>(round)]};
            t.next = 0;
            const double s = planner::time_fastest(
                0.0, [&] { t.run(); }, t.clock());
            return std::vector<double>{s, 1.0 / s};
        });
    }
    const auto figures = rounds.run(3, [&](int r) { round = r; });
    // Interleaved: round 1 times a and b, round 2 again, ...
    CHECK(order == std::vector<std::string>{"a", "b", "a", "b", "a", "b"});
    CHECK(figures.at("a_s").median == Approx(1.1));
    CHECK(figures.at("a_s").spread == Approx((5.0 - 1.0) / 1.1));
    CHECK(figures.at("a_rate").median == Approx(1.0 / 1.1));
    CHECK(figures.at("b_s").median == Approx(2.0));
    CHECK(figures.at("b_s").spread == Approx(0.0).margin(1e-9));
    // A probe that yields the wrong number of figures is an error, not a silent gap.
    planner::FigureRounds bad;
    bad.add({"x", "y"}, [] { return std::vector<double>{1.0}; });
    CHECK_THROWS_WITH(bad.run(3),
                      Catch::StartsWith("calibrate: a probe gave 1 values for 2 figures"));
}

TEST_CASE("spread warning: names the figure, its spread and the load", "[planner]") {
    using planner::spread_warning;
    const std::map<std::string, double> calm{{"memory_gbs", 0.02}, {"spmm_scale", 0.1}};
    CHECK(spread_warning("threads 2", calm, 1.5, 2).empty());
    CHECK(spread_warning("threads 2", calm, -1.0, 2).empty());  // load unknown
    const std::map<std::string, double> moving{
        {"memory_gbs", 0.02}, {"spmm_in_cache_g@8", 0.23}, {"time_scale", 0.12}};
    CHECK(spread_warning("threads 2", moving, 1.5, 2) ==
          "threads 2: figures move between rounds: spmm_in_cache_g@8 spread 23 % (2 figures "
          "above 10 %), load average 1.50 on 2 cores; calibrate again on an idle machine");
    CHECK(spread_warning("threads 1", moving, 3.25, 2) ==
          "threads 1: figures move between rounds: spmm_in_cache_g@8 spread 23 % (2 figures "
          "above 10 %), load average 3.25 on 2 cores (above the cores); calibrate again on an "
          "idle machine");
    CHECK(spread_warning("threads 2", calm, 2.5, 2) ==
          "threads 2: the machine is loaded: load average 2.50 above its 2 cores while timing "
          "(largest spread spmm_scale 10 %); calibrate again on an idle machine");
}

TEST_CASE("cores warning: in-cache work that did not scale with the threads", "[planner]") {
    using planner::cores_warning;
    const auto rates = [](int threads, double spmm, double gemm) {
        planner::ThreadRates r;
        r.threads = threads;
        r.spmm_in_cache = {{64, spmm / 2}, {256, spmm}};
        r.gemm = {{64, gemm / 2}, {256, gemm}};
        return r;
    };
    const planner::ThreadRates one = rates(1, 15.0, 120.0);
    CHECK(cores_warning(one, rates(2, 29.3, 240.0)).empty());
    CHECK(cores_warning(one, rates(2, 19.6, 200.0)).empty());  // 1.31x: above 0.65 x 2
    CHECK(cores_warning(one, one).empty());                    // one thread only
    // The 2-thread in-cache SpMM of one of two back-to-back calibrations on this project's VM.
    CHECK(cores_warning(one, rates(2, 15.1, 235.0)) ==
          "threads 2: in-cache SpMM at width 256 ran 1.01x as fast as one thread's (GEMM 1.96x); "
          "work in cache scales with the cores, so they were shared while timing (another job, "
          "SMT siblings, a VM's busy host) and every 2-thread figure is too slow; calibrate "
          "again when the cores are free");
    CHECK_THAT(cores_warning(one, rates(2, 29.0, 130.0)),
               Catch::StartsWith("threads 2: GEMM at width 256 ran 1.08x as fast as one "
                                 "thread's (in-cache SpMM 1.93x)"));
}

TEST_CASE(
    "machine.json version 4 keeps each figure's spread and whether inter_node was measured and "
    "the paired link: version 3 reads the paired link as inter_node, 1 and 2 as spread 0 and "
    "not measured",
    "[planner]") {
    planner::MachineModel m = planner::default_machine();
    m.by_threads[0].spread = {{"memory_gbs", 0.03}, {"spmm_in_cache_g@16", 0.25}};
    m.network_spread = {{"shared_memory.latency_s", 0.5},
                        {"inter_node.bandwidth_gbs", 0.07},
                        {"inter_node_paired.bandwidth_gbs", 0.14}};
    m.inter_node = {4e-3, 0.024};
    m.inter_node_paired = {80e-6, 0.029};
    m.inter_node_measured = true;
    const std::string text = planner::to_json(m);
    CHECK(text.find("\"version\": 4") != std::string::npos);
    const planner::MachineModel back = planner::machine_from_json(text, "m.json");
    CHECK(back.by_threads[0].spread == m.by_threads[0].spread);
    CHECK(back.network_spread == m.network_spread);
    CHECK(back.inter_node_measured);
    CHECK(back.inter_node_paired.bandwidth_gbs == 0.029);
    CHECK(back.inter_node_paired.latency_s == 80e-6);
    CHECK(back.link(1).bandwidth_gbs == 0.029);  // one partner across a rank
    CHECK(back.link(2).bandwidth_gbs == 0.024);  // more: every pair at once
    planner::MachineModel by_hand;               // the paired link never set: inter_node's
    by_hand.inter_node = {1e-4, 0.5};
    CHECK(by_hand.link(1).bandwidth_gbs == 0.5);
    // A version 3 file (before inter_node_paired): the paired link is inter_node, its spreads
    // included.
    std::string v3 = text;
    v3.replace(v3.find("\"version\": 4"), 12, "\"version\": 3");
    const auto paired_at = v3.find("\"inter_node_paired\": {");
    REQUIRE(paired_at != std::string::npos);
    v3.erase(paired_at, v3.find('}', paired_at) + 2 - paired_at);  // the object and its comma
    const auto spread_at = v3.find("\"inter_node_paired.bandwidth_gbs\"");
    REQUIRE(spread_at != std::string::npos);
    v3.erase(spread_at, v3.find('\n', spread_at) - spread_at);  // the line, its comma included
    const planner::MachineModel three = planner::machine_from_json(v3, "v3.json");
    CHECK(three.inter_node_paired.bandwidth_gbs == 0.024);
    CHECK(three.inter_node_paired.latency_s == 4e-3);
    CHECK(three.network_spread.at("inter_node_paired.bandwidth_gbs") == 0.07);
    CHECK(three.inter_node_measured);
    // A version 2 file (before inter_node_measured): read, not measured.
    std::string v2 = v3;
    v2.replace(v2.find("\"version\": 3"), 12, "\"version\": 2");
    const std::string measured = "\"inter_node_measured\": true";
    const auto key = v2.find(measured);
    REQUIRE(key != std::string::npos);
    const auto before = v2.rfind(',', key);  // the comma before the key
    v2.erase(before, key + measured.size() - before);
    CHECK_FALSE(planner::machine_from_json(v2, "v2.json").inter_node_measured);
    // A version 1 file (before the spreads): read, every spread 0 (absent).
    std::string old = v2;
    old.replace(old.find("\"version\": 2"), 12, "\"version\": 1");
    for (const char* name : {"\"spread\"", "\"network_spread\""}) {
        const auto at = old.find(name);
        REQUIRE(at != std::string::npos);
        const auto end = old.find('}', at);
        old.erase(at, end + 1 - at);
        // drop the comma left before the removed key
        const auto comma = old.rfind(',', at);
        old.erase(comma, 1);
    }
    const planner::MachineModel v1 = planner::machine_from_json(old, "old.json");
    CHECK(v1.by_threads[0].spread.empty());
    CHECK(v1.network_spread.empty());
    CHECK_FALSE(v1.inter_node_measured);
    CHECK(v1.by_threads[0].memory_gbs == m.by_threads[0].memory_gbs);
    std::string future = text;
    future.replace(future.find("\"version\": 4"), 12, "\"version\": 5");
    CHECK_THROWS_WITH(planner::machine_from_json(future, "m.json"),
                      Catch::StartsWith("m.json: machine model version 5 is not supported (this "
                                        "strata reads 1 to 4): run strata calibrate again"));
}

TEST_CASE(
    "network_pairs: one pair inside a node, every rank of a node with every rank of another "
    "across, and the ranks of the two nodes one to one",
    "[planner]") {
    using Pairs = std::vector<std::pair<int, int>>;
    // 2 hosts x 2 slots, by slot: 0-1 share a node; across, all four pairs at once; paired,
    // each rank with the rank in its place on the other node.
    planner::NetworkPairs p = planner::network_pairs({0, 0, 1, 1});
    CHECK(p.inside == Pairs{{0, 1}});
    CHECK(p.across == Pairs{{0, 2}, {0, 3}, {1, 2}, {1, 3}});
    CHECK(p.paired == Pairs{{0, 2}, {1, 3}});
    CHECK(p.split == 2);
    CHECK(p.across_nodes == std::pair{0, 1});
    // Round robin (--map-by node): the same pairs by node, whatever the rank order.
    p = planner::network_pairs({0, 1, 0, 1});
    CHECK(p.inside == Pairs{{0, 2}});
    CHECK(p.across == Pairs{{0, 1}, {0, 3}, {2, 1}, {2, 3}});
    CHECK(p.paired == Pairs{{0, 1}, {2, 3}});
    // One rank per node: nothing inside, one flow across (the other nodes idle), which is
    // already one partner a rank: nothing paired.
    p = planner::network_pairs({0, 1, 2});
    CHECK(p.inside.empty());
    CHECK(p.across == Pairs{{0, 1}});
    CHECK(p.paired.empty());
    CHECK(p.split == 1);
    // Uneven nodes: the larger node's ranks send; inside, the first node with two; paired
    // needs two ranks on each node.
    p = planner::network_pairs({0, 1, 1, 1});
    CHECK(p.inside == Pairs{{1, 2}});
    CHECK(p.across == Pairs{{0, 1}, {0, 2}, {0, 3}});
    CHECK(p.paired.empty());
    CHECK(p.split == 3);
    p = planner::network_pairs({0, 0, 1, 1, 1});
    CHECK(p.paired == Pairs{{0, 2}, {1, 3}});
    // One node: inside only.
    p = planner::network_pairs({0, 0});
    CHECK(p.inside == Pairs{{0, 1}});
    CHECK(p.across.empty());
    CHECK(p.paired.empty());
}

TEST_CASE("merge_network takes only the figures the network run measured", "[planner]") {
    planner::MachineModel kernels = planner::default_machine();
    kernels.inter_node = {7e-6, 0.5};  // given by hand
    kernels.network_spread = {{"shared_memory.latency_s", 0.2}};
    planner::MachineModel inside;  // mpirun on one node
    inside.shared_memory = {1e-6, 9.0};
    inside.mpi_measured = true;
    inside.network_spread = {{"shared_memory.latency_s", 0.01},
                             {"shared_memory.bandwidth_gbs", 0.02}};
    planner::MachineModel m = planner::merge_network(kernels, inside);
    CHECK(m.shared_memory.bandwidth_gbs == 9.0);
    CHECK(m.inter_node.bandwidth_gbs == 0.5);  // kept
    CHECK_FALSE(m.inter_node_measured);
    CHECK(m.network_spread == inside.network_spread);
    CHECK(m.by_threads.size() == kernels.by_threads.size());
    planner::MachineModel across;  // one rank per node: the link only
    across.inter_node = {40e-6, 0.031};
    across.inter_node_paired = {30e-6, 0.033};
    across.inter_node_measured = true;
    across.network_spread = {{"inter_node.bandwidth_gbs", 0.05}, {"inter_node.latency_s", 0.1}};
    m = planner::merge_network(m, across);
    CHECK(m.shared_memory.bandwidth_gbs == 9.0);  // kept from the run inside a node
    CHECK(m.mpi_measured);
    CHECK(m.inter_node.bandwidth_gbs == 0.031);
    CHECK(m.inter_node_paired.bandwidth_gbs == 0.033);
    CHECK(m.inter_node_measured);
    CHECK(m.network_spread.size() == 4);
    CHECK(m.network_spread.at("inter_node.bandwidth_gbs") == 0.05);
    CHECK(m.network_spread.at("shared_memory.bandwidth_gbs") == 0.02);
}

TEST_CASE("with_link_by_hand replaces measured inter-node figures, each only when given",
          "[planner]") {
    planner::MachineModel m = planner::default_machine();
    m.inter_node = {40e-6, 0.031};
    m.inter_node_measured = true;
    m.network_spread = {{"inter_node.bandwidth_gbs", 0.05}, {"inter_node.latency_s", 0.1}};
    const planner::MachineModel same = planner::with_link_by_hand(m, 0, 0);
    CHECK(same.inter_node_measured);
    CHECK(same.network_spread.size() == 2);
    const planner::MachineModel rate = planner::with_link_by_hand(m, 8.0, 0);
    CHECK(rate.inter_node.bandwidth_gbs == 1.0);
    CHECK(rate.inter_node_paired.bandwidth_gbs == 1.0);  // one link by hand, whatever the pattern
    CHECK(rate.inter_node.latency_s == 40e-6);
    CHECK_FALSE(rate.inter_node_measured);
    CHECK(rate.network_spread.count("inter_node.bandwidth_gbs") == 0);
    CHECK(rate.network_spread.count("inter_node.latency_s") == 1);
    const planner::MachineModel both = planner::with_link_by_hand(m, 8.0, 25.0);
    CHECK(both.inter_node.latency_s == Approx(25e-6));
    CHECK(both.network_spread.empty());
}

TEST_CASE("slowed_by_spread: costs up, rates down, each by its own spread", "[planner]") {
    planner::MachineModel m = planner::default_machine();
    planner::ThreadRates& r = m.by_threads[0];
    r.spread = {{"memory_gbs", 0.25}, {"step_s", 0.5}, {"spmm_in_cache_g@16", 1.0}};
    m.network_spread = {{"shared_memory.bandwidth_gbs", 0.25},
                        {"inter_node.latency_s", 0.5},
                        {"inter_node_paired.bandwidth_gbs", 1.0}};
    const planner::MachineModel s = planner::slowed_by_spread(m);
    CHECK(s.inter_node_paired.bandwidth_gbs == Approx(m.inter_node_paired.bandwidth_gbs / 2.0));
    CHECK(s.inter_node_paired.latency_s == m.inter_node_paired.latency_s);
    CHECK(s.by_threads[0].memory_gbs == Approx(r.memory_gbs / 1.25));
    CHECK(s.by_threads[0].step_s == Approx(r.step_s * 1.5));
    CHECK(s.by_threads[0].spmm_in_cache[0].rate == Approx(r.spmm_in_cache[0].rate / 2.0));
    CHECK(s.by_threads[0].spmm_in_cache[1].rate == r.spmm_in_cache[1].rate);  // no spread
    CHECK(s.by_threads[0].gemm[0].rate == r.gemm[0].rate);
    CHECK(s.shared_memory.bandwidth_gbs == Approx(m.shared_memory.bandwidth_gbs / 1.25));
    CHECK(s.shared_memory.latency_s == m.shared_memory.latency_s);
    CHECK(s.inter_node.latency_s == Approx(m.inter_node.latency_s * 1.5));
    CHECK(s.inter_node.bandwidth_gbs == m.inter_node.bandwidth_gbs);
    // Every figure for_each_figure names is one machine.json writes a spread for.
    std::vector<std::string> names;
    planner::for_each_figure(
        r, [&](const std::string& name, double&, bool) { names.push_back(name); });
    CHECK(names.size() == 8 + 4 * 2);  // 8 scalar figures; 2 points each of 4 rate curves
}

TEST_CASE("the plan's error band grows with the spread of the figures", "[planner]") {
    const fs::path dir = fs::temp_directory_path() / ("strata-band-" + std::to_string(::getpid()));
    planner::PlanRequest request = strata::test::small_plan_request(dir);
    request.ranks = {1, 2};
    const auto bands = [&](const std::map<std::string, double>& spread) {
        planner::PlanRequest r = request;
        r.machine.by_threads[0].spread = spread;
        std::vector<double> out;
        for (const planner::Candidate& c : planner::make_plan(r).candidates) {
            out.push_back(c.error_band);
        }
        return out;
    };
    const std::vector<double> none = bands({});
    for (const double b : none) {
        CHECK(b == 0.0);
    }
    // The time scale multiplies all of K = 1's epoch: its spread is the band.
    const std::vector<double> scale = bands({{"time_scale", 0.1}});
    const planner::Plan plan = planner::make_plan(request);
    for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
        if (plan.candidates[i].ranks == 1) {
            CHECK(scale[i] == Approx(0.1));
        } else {
            CHECK(scale[i] > 0.0);
            CHECK(scale[i] <= 0.1 + 1e-12);
        }
    }
    // More spread, more band, on every candidate.
    std::map<std::string, double> small;
    std::map<std::string, double> large;
    planner::ThreadRates rates = request.machine.by_threads[0];
    planner::for_each_figure(rates, [&](const std::string& name, double&, bool) {
        small[name] = 0.05;
        large[name] = 0.2;
    });
    const std::vector<double> a = bands(small);
    const std::vector<double> b = bands(large);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i] > 0.0);
        CHECK(b[i] > a[i]);
    }
    // strata plan prints it.
    planner::PlanRequest shown = request;
    shown.machine.by_threads[0].spread = {{"time_scale", 0.1}};
    const std::string text = planner::format_plan(planner::make_plan(shown));
    CHECK(text.find("band_%") != std::string::npos);
    INFO(text);
    CHECK(text.find("     10 ") != std::string::npos);  // epoch_ms, then the band
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE(
    "the plan prices a grid whose graph group has one partner across with the paired link, "
    "1D with more partners with every pair's",
    "[planner]") {
    const fs::path dir =
        fs::temp_directory_path() / ("strata-paired-" + std::to_string(::getpid()));
    planner::PlanRequest request = strata::test::small_plan_request(dir);
    request.ranks = {4};
    request.ranks_per_node = 2;  // 2 x 2: 1D has 2 partners across, the 2x2 grid's graph group 1
    request.threads = 1;
    request.machine.inter_node = {1e-4, 0.001};  // slow enough for the wire to show
    request.machine.inter_node_paired = request.machine.inter_node;
    const planner::Plan same = planner::make_plan(request);
    request.machine.inter_node_paired = {1e-4, 0.002};
    const planner::Plan paired = planner::make_plan(request);
    REQUIRE(same.candidates.size() == paired.candidates.size());
    int grids = 0;
    for (std::size_t i = 0; i < same.candidates.size(); ++i) {
        const planner::Candidate& a = same.candidates[i];
        const planner::Candidate& b = paired.candidates[i];
        INFO(a.parallel << " F " << a.feature_slices << " " << a.recompute);
        if (a.parallel == "graph" && a.feature_slices == 1) {
            CHECK(b.time.epoch_s == a.time.epoch_s);  // 1D K = 4: two partners across
        } else if (a.parallel == "graph" && a.feature_slices == 2) {
            CHECK(b.time.wait_s < a.time.wait_s);  // the grid's halos ride the paired link
            ++grids;
        }
    }
    CHECK(grids > 0);
    const std::string text = planner::format_plan(paired);
    CHECK(text.find("across nodes with one partner a rank") != std::string::npos);
    CHECK(text.find("2.0 MB/s each way") != std::string::npos);
    CHECK(planner::format_plan(same).find("across nodes with one partner a rank") ==
          std::string::npos);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE(
    "feature_group_network: shared memory inside a node, else the link as the group shares it",
    "[planner]") {
    planner::MachineModel m = planner::default_machine();
    m.shared_memory = {1e-6, 5.0};
    m.inter_node = {1e-4, 0.12};
    m.inter_node_paired = {2e-4, 0.15};
    CHECK(planner::feature_group_network(m, true, 2, 2).bandwidth_gbs == 5.0);
    // F = 4 over 2 nodes of 2: each rank sends 2 of its 3 partners' shares across, 2 ranks of a
    // node at once: the link at 0.12 / (2/3 x 2).
    const planner::Network four = planner::feature_group_network(m, false, 4, 2);
    CHECK(four.bandwidth_gbs == Approx(0.12 * 3.0 / 4.0));
    CHECK(four.latency_s == 1e-4);
    // One rank a node: every partner across, one rank on the link: the link whole (F = 2: one
    // partner across, the paired figure).
    CHECK(planner::feature_group_network(m, false, 4, 1).bandwidth_gbs == 0.12);
    CHECK(planner::feature_group_network(m, false, 2, 1).bandwidth_gbs == 0.15);
    // F = 8 over 4 nodes of 2: 6 of 7 partners across, 2 at once.
    CHECK(planner::feature_group_network(m, false, 8, 2).bandwidth_gbs ==
          Approx(0.12 / (6.0 / 7.0 * 2.0)));
}

TEST_CASE(
    "the pipeline's stage transfers across nodes: one partner a rank, a stage's ranks on a "
    "node sharing its link",
    "[planner]") {
    const fs::path dir =
        fs::temp_directory_path() / ("strata-stage-link-" + std::to_string(::getpid()));
    planner::PlanRequest request = strata::test::small_plan_request(dir);
    request.ranks = {4};
    request.ranks_per_node = 2;
    request.threads = 1;
    request.machine.inter_node = {1e-4, 0.001};
    request.machine.inter_node_paired = {1e-4, 0.001};
    const planner::Plan base = planner::make_plan(request);
    planner::PlanRequest every = request;  // every pair at once faster: only the all-reduce
    every.machine.inter_node.bandwidth_gbs = 0.004;
    const planner::Plan a = planner::make_plan(every);
    planner::PlanRequest paired = request;  // the paired link faster: stage transfers faster
    paired.machine.inter_node_paired.bandwidth_gbs = 0.004;
    const planner::Plan b = planner::make_plan(paired);
    REQUIRE(a.candidates.size() == base.candidates.size());
    REQUIRE(b.candidates.size() == base.candidates.size());
    int pipelines = 0;
    for (std::size_t i = 0; i < base.candidates.size(); ++i) {
        const planner::Candidate& c = base.candidates[i];
        if (c.parallel != "pipeline" || c.ways != 1 || c.stage_bytes == 0) {
            continue;
        }
        INFO(c.stages << "x" << c.ways << "x" << c.chunks << " F " << c.feature_slices);
        CHECK(a.candidates[i].time.terms.exchange_s == Approx(c.time.terms.exchange_s));
        CHECK(a.candidates[i].time.terms.allreduce_s < c.time.terms.allreduce_s);
        CHECK(b.candidates[i].time.terms.exchange_s < c.time.terms.exchange_s);
        CHECK(b.candidates[i].time.wait_s < c.time.wait_s);
        ++pipelines;
    }
    CHECK(pipelines > 0);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE("pipeline_networks: each cut, the ways' mirrors and the switches where the ranks lie",
          "[planner]") {
    planner::MachineModel m = planner::default_machine();
    m.shared_memory = {1e-6, 5.0};
    m.inter_node = {1e-4, 0.12};
    m.inter_node_paired = {2e-4, 0.15};
    const auto layout = [](int stages, int ways, int slices) {
        return planner::PipelineLayout{
            .stages = stages, .ways = ways, .chunks = 8 * ways, .feature_slices = slices};
    };
    // One node: everything in shared memory.
    for (const int per_node : {0, 4}) {
        const planner::PipelineNetworks one =
            planner::pipeline_networks(m, layout(4, 1, 1), per_node);
        REQUIRE(one.cuts.size() == 3);
        for (const planner::Network& cut : one.cuts) {
            CHECK(cut.bandwidth_gbs == 5.0);
        }
    }
    // 4 stages on 2 nodes of 2: only the middle cut crosses, rank 1 to rank 2 alone: the paired
    // link whole.
    const planner::PipelineNetworks four = planner::pipeline_networks(m, layout(4, 1, 1), 2);
    REQUIRE(four.cuts.size() == 3);
    CHECK(four.cuts[0].bandwidth_gbs == 5.0);
    CHECK(four.cuts[1].bandwidth_gbs == 0.15);
    CHECK(four.cuts[1].latency_s == 2e-4);
    CHECK(four.cuts[2].bandwidth_gbs == 5.0);
    // 2 stages x 2 ways, a stage a node: both ways' transfers share the paired link, the
    // mirrors stay inside the node.
    const planner::PipelineNetworks hybrid = planner::pipeline_networks(m, layout(2, 2, 1), 2);
    REQUIRE(hybrid.cuts.size() == 1);
    CHECK(hybrid.cuts[0].bandwidth_gbs == Approx(0.075));
    CHECK(hybrid.mirrors.bandwidth_gbs == 5.0);
    // One rank a node: the mirrors' one partner across, the paired link whole.
    const planner::PipelineNetworks apart = planner::pipeline_networks(m, layout(2, 2, 1), 1);
    CHECK(apart.cuts[0].bandwidth_gbs == 0.15);
    CHECK(apart.mirrors.bandwidth_gbs == 0.15);
    CHECK(apart.mirrors.latency_s == 2e-4);
    // S x W x F = 2 x 2 x 2 on 4 nodes of 2: a node holds one way's two slices, so a rank's one
    // mirror partner is across, two ranks of a node at once; the slices' switches inside.
    const planner::PipelineNetworks grid = planner::pipeline_networks(m, layout(2, 2, 2), 2);
    CHECK(grid.features.bandwidth_gbs == 5.0);
    CHECK(grid.mirrors.bandwidth_gbs == Approx(0.075));
    CHECK(grid.cuts[0].bandwidth_gbs == Approx(0.075));
    // 4 ways 2 apart (F = 2) on nodes of 2: one member a node, 3 partners across, both ranks
    // of a node at once: every pair's link / 2. On nodes of 4: 2 members a node, 2 of 3
    // partners across, 4 ranks at once: 0.12 / (2/3 x 4).
    CHECK(planner::group_link(m, 4, 2, 2).bandwidth_gbs == Approx(0.06));
    CHECK(planner::group_link(m, 4, 2, 4).bandwidth_gbs == Approx(0.12 / (2.0 / 3.0 * 4.0)));
    CHECK(planner::group_link(m, 4, 2, 4).latency_s == 1e-4);
}
