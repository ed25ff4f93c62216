// strata plan --column-blocks: the grid's column blocks priced (memory smaller, bytes the same),
// carried in the plan file (format version 4) and read back by --plan; older files read as 1.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/layout_plan.hpp"
#include "tests/support/small_plan_request.hpp"

#include <unistd.h>

namespace fs = std::filesystem;
namespace planner = strata::planner;

TEST_CASE("strata plan --column-blocks: the grids' memory shrinks, their bytes do not",
          "[planner]") {
    const fs::path dir =
        fs::temp_directory_path() / ("strata-column-blocks-" + std::to_string(::getpid()));
    planner::PlanRequest request = strata::test::small_plan_request(dir);
    request.ranks = {2};
    request.spec.layers = 3;    // the middle layer aggregates at the hidden width
    request.spec.hidden = 256;  // 128 columns a slice at F = 2: the aggregation's scratch leads
    const planner::Plan whole = planner::make_plan(request);
    request.column_blocks = 2;
    const planner::Plan blocked = planner::make_plan(request);
    REQUIRE(whole.candidates.size() == blocked.candidates.size());
    int grids = 0;
    for (std::size_t i = 0; i < whole.candidates.size(); ++i) {
        const planner::Candidate& a = whole.candidates[i];
        const planner::Candidate& b = blocked.candidates[i];
        INFO(a.parallel << " F=" << a.feature_slices << " " << a.recompute);
        if (a.parallel != "graph" || a.feature_slices == 1) {
            CHECK(b.column_blocks == 1);
            continue;
        }
        ++grids;
        CHECK(a.column_blocks == 1);
        CHECK(b.column_blocks == 2);
        CHECK(b.memory.planned_bytes < a.memory.planned_bytes);
        CHECK(b.time.halo_bytes == a.time.halo_bytes);
        CHECK(b.a2a_bytes == a.a2a_bytes);
    }
    CHECK(grids == 3);  // 1x2 in each recompute mode
    const nlohmann::json json = nlohmann::json::parse(planner::plan_to_json(blocked));
    CHECK(json.at("version") == 4);
    int listed = 0;
    for (const auto& c : json.at("candidates")) {
        listed += c.at("column_blocks") == 2 ? 1 : 0;
    }
    CHECK(listed == grids);
    fs::remove_all(dir);
}

TEST_CASE("a plan file's column blocks are what --plan applies; older versions read as 1",
          "[planner]") {
    const auto plan = [](int version, const std::string& blocks) {
        return R"({"format": "strata-plan", "version": )" + std::to_string(version) +
               R"(, "candidates": [{"parallel": "graph", "ranks": 4, "recompute": "none",
            "feature_slices": 4)" +
               blocks + R"(, "recommended": true}]})";
    };
    CHECK(planner::chosen_layout(plan(4, R"(, "column_blocks": 2)"), "p.json", 4).column_blocks ==
          2);
    CHECK(planner::chosen_layout(plan(3, ""), "p.json", 4).column_blocks == 1);
    CHECK_THROWS_WITH(planner::chosen_layout(plan(4, R"(, "column_blocks": 0)"), "p.json", 4),
                      Catch::Contains("p.json: candidate for 4 ranks: column_blocks 0 is under 1"));
}
