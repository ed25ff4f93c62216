// small_plan_request(dir): a 400-vertex generated graph (degree 6, 16 features, 4 classes) written
// to dir/g.h5 (dir emptied first), and a plan request for it: GCN, its statistics cached in
// dir/cache, the built-in machine model with 2 cores. Callers set the ranks and options.
#pragma once

#include <filesystem>

#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "layers/model_zoo.hpp"
#include "planner/layout_plan.hpp"
#include "planner/machine_model.hpp"

namespace strata::test {

inline planner::PlanRequest small_plan_request(const std::filesystem::path& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    GenerateOptions g;
    g.num_vertices = 400;
    g.avg_degree = 6;
    g.num_features = 16;
    g.num_classes = 4;
    write_graph(generate_graph(g), (dir / "g.h5").string());
    planner::PlanRequest request;
    request.data = (dir / "g.h5").string();
    request.spec = find_model("gcn").recipe.spec;
    request.cache_dir = (dir / "cache").string();
    request.machine = planner::default_machine();
    request.machine.cores = 2;
    return request;
}

}  // namespace strata::test
