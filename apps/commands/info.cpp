// `strata info G.h5 [--json]`: validate a graph dataset and print its summary statistics.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/commands/command.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/graph_stats.hpp"
#include "partition/partition_report.hpp"

namespace strata::app {
namespace {

struct InfoOptions {
    std::string path;
    bool json = false;
};

std::string bin_label(std::size_t k) {
    const std::int64_t low = degree_bin_low(k);
    const std::int64_t high = k == 0 ? 0 : 2 * low - 1;
    return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
}

nlohmann::json to_json(const std::string& path, const std::string& identity, const GraphDataset& g,
                       const GraphStats& s) {
    nlohmann::json histogram = nlohmann::json::array();
    for (std::size_t k = 0; k < s.degree_histogram.size(); ++k) {
        const std::int64_t low = degree_bin_low(k);
        histogram.push_back(
            {{"low", low}, {"high", k == 0 ? 0 : 2 * low - 1}, {"count", s.degree_histogram[k]}});
    }
    nlohmann::json splits = nlohmann::json::array();
    for (const SplitSizes& split : s.split_sizes) {
        splits.push_back({{"train", split.train}, {"val", split.val}, {"test", split.test}});
    }
    return {{"file", path},
            {"identity", identity},
            {"name", g.name},
            {"num_vertices", s.num_vertices},
            {"num_edges", s.num_edges},
            {"num_features", s.num_features},
            {"num_classes", s.num_classes},
            {"weighted", s.weighted},
            {"symmetric", s.symmetric},
            {"self_loops", s.self_loops},
            {"duplicate_edges", s.duplicate_edges},
            {"isolated_vertices", s.isolated_vertices},
            {"degree",
             {{"min", s.degree_min},
              {"median", s.degree_median},
              {"mean", s.degree_mean},
              {"max", s.degree_max},
              {"histogram", histogram}}},
            {"labels", {{"counts", s.label_counts}, {"unlabeled", s.unlabeled}}},
            {"num_splits", s.num_splits},
            {"split", {{"train", s.num_train}, {"val", s.num_val}, {"test", s.num_test}}},
            {"splits", splits}};
}

void print_text(const std::string& path, const std::string& identity, const GraphDataset& g,
                const GraphStats& s) {
    std::printf("file:              %s\n", path.c_str());
    std::printf("identity:          %s%s\n", identity.c_str(),
                identity.rfind("crc32:", 0) == 0
                    ? " (checksum of the file: this format version stores no content id)"
                    : " (stored content id, matches the data)");
    std::printf("name:              %s\n", g.name.c_str());
    std::printf("vertices:          %lld\n", static_cast<long long>(s.num_vertices));
    std::printf("edges:             %lld (directed CSR entries)\n",
                static_cast<long long>(s.num_edges));
    std::printf("features:          %d\n", s.num_features);
    std::printf("classes:           %lld\n", static_cast<long long>(s.num_classes));
    std::printf("edge weights:      %s\n", s.weighted ? "yes" : "no (all 1)");
    std::printf("symmetric:         %s\n", s.symmetric ? "yes" : "no");
    std::printf("self loops:        %lld\n", static_cast<long long>(s.self_loops));
    std::printf("duplicate edges:   %lld\n", static_cast<long long>(s.duplicate_edges));
    std::printf("isolated vertices: %lld\n", static_cast<long long>(s.isolated_vertices));
    std::printf("in-degree:         min %lld, median %g, mean %.2f, max %lld\n",
                static_cast<long long>(s.degree_min), s.degree_median, s.degree_mean,
                static_cast<long long>(s.degree_max));
    std::printf("in-degree histogram (log2 bins):\n");
    for (std::size_t k = 0; k < s.degree_histogram.size(); ++k) {
        std::printf("  %-17s %lld\n", bin_label(k).c_str(),
                    static_cast<long long>(s.degree_histogram[k]));
    }
    std::printf("labels:           ");
    for (std::size_t c = 0; c < s.label_counts.size(); ++c) {
        std::printf(" %zu:%lld", c, static_cast<long long>(s.label_counts[c]));
    }
    std::printf(", unlabeled %lld\n", static_cast<long long>(s.unlabeled));
    std::printf("splits:            %d\n", s.num_splits);
    for (std::size_t i = 0; i < s.split_sizes.size(); ++i) {
        const std::string label = s.num_splits == 1 ? "split:" : "split " + std::to_string(i) + ":";
        std::printf("%-19strain %lld, val %lld, test %lld\n", label.c_str(),
                    static_cast<long long>(s.split_sizes[i].train),
                    static_cast<long long>(s.split_sizes[i].val),
                    static_cast<long long>(s.split_sizes[i].test));
    }
}

int run_info(const InfoOptions& o) {
    const GraphDataset g = read_graph(o.path);  // validates; throws one line on bad input
    const std::string identity = source_identity(o.path);
    const GraphStats s = graph_stats(g);
    if (o.json) {
        std::printf("%s\n", to_json(o.path, identity, g, s).dump().c_str());
    } else {
        print_text(o.path, identity, g, s);
    }
    return 0;
}

}  // namespace

Command add_info_command(CLI::App& root) {
    auto o = std::make_shared<InfoOptions>();
    CLI::App* cmd = root.add_subcommand("info", "Validate a graph dataset and print its summary");
    cmd->add_option("file", o->path, "Graph dataset (.h5)")->required();
    cmd->add_flag("--json", o->json, "Print one JSON object instead of text");
    return {cmd, [o] { return run_info(*o); }};
}

}  // namespace strata::app
