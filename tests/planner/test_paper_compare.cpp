// strata plan --compare cagnet on a generated graph: CAGNET's 1.5D and 2D are priced in the same
// bytes as the plan's own 1D (their ratios to it are the design note's factors over h(P)), the
// verdict is the fewest, and the text and JSON show them.
#include <algorithm>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "layers/model_zoo.hpp"
#include "planner/layout_plan.hpp"
#include "planner/machine_model.hpp"
#include "tests/support/small_plan_request.hpp"

#include <unistd.h>

namespace fs = std::filesystem;
namespace planner = strata::planner;

TEST_CASE("strata plan --compare cagnet: 1.5D and 2D in the plan's own bytes", "[planner]") {
    const fs::path dir =
        fs::temp_directory_path() / ("strata-cagnet-" + std::to_string(::getpid()));
    planner::PlanRequest request = strata::test::small_plan_request(dir);
    request.ranks = {4};
    request.compare_cagnet = true;
    const planner::Plan plan = planner::make_plan(request);
    REQUIRE(plan.paper.size() == 1);
    const planner::PaperComparison& r = plan.paper[0];
    CHECK(r.plexus_grid.empty());  // not asked
    REQUIRE(r.h > 0.0);
    REQUIRE(r.replication == 2);  // the only c at P = 4
    CHECK(r.two_d == "2x2");
    // 1D moves h(4) N u / 4, 1.5D (h(2) + 2) N u / 4, 2D (2 + 2 - 2) N u / 4.
    CHECK(r.one_and_half_d_bytes / r.oned_bytes == Approx((r.team_h + 2.0) / r.h));
    CHECK(r.two_d_bytes / r.oned_bytes == Approx(2.0 / r.h));
    CHECK(r.one_and_half_d_memory_bytes > 0.0);
    CHECK(r.two_d_memory_bytes > 0.0);
    const double least = std::min({r.oned_bytes, r.grid.empty() ? r.oned_bytes : r.grid_bytes,
                                   r.one_and_half_d_bytes, r.two_d_bytes});
    const double chosen = r.fewest == "1D"                 ? r.oned_bytes
                          : r.fewest.rfind("grid", 0) == 0 ? r.grid_bytes
                          : r.fewest.rfind("1.5D", 0) == 0 ? r.one_and_half_d_bytes
                                                           : r.two_d_bytes;
    CHECK(chosen == least);
    const std::string text = planner::format_plan(plan);
    INFO(text);
    CHECK(text.find("CAGNET's 1.5D") != std::string::npos);
    CHECK(text.find("verdict 4 ranks: " + r.fewest) != std::string::npos);
    CHECK(text.find("Plexus's published") == std::string::npos);
    const std::string json = planner::plan_to_json(plan);
    CHECK(json.find("\"on_paper_cagnet\"") != std::string::npos);
    CHECK(json.find("\"on_paper_plexus\"") == std::string::npos);
    std::error_code ec;
    fs::remove_all(dir, ec);
}
