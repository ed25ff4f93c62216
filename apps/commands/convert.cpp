// `strata convert --from text|planetoid|ogb DIR --name NAME --out G.h5`: raw data -> graph
// dataset.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "apps/commands/command.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/ogb_convert.hpp"
#include "datasets/planetoid_convert.hpp"
#include "datasets/text_convert.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"

namespace strata::app {
namespace {

struct ConvertOptions {
    std::string from;
    std::string dir;
    std::string name;
    std::string out;
    std::string split;
    bool undirected = false;
    bool force = false;
};

/// --from ogb: prints what was read, added and dropped (the file is not read back: at
/// ogbn-products' size that would take as long as the conversion).
int run_convert_ogb(const ConvertOptions& o) {
    // write_graph checks this too, but only after minutes of reading a large dataset.
    STRATA_CHECK(o.force || !std::filesystem::exists(o.out), o.out,
                 ": output already exists (use --force to replace it)");
    const Stopwatch watch;
    const OgbConversion c = convert_ogb(
        o.dir, {.name = o.name, .split = o.split, .undirected = o.undirected, .progress = true});
    const double read_s = watch.seconds();
    write_graph(c.graph, o.out, o.force);
    const OgbConvertSummary& s = c.summary;
    const auto ll = [](std::int64_t v) { return static_cast<long long>(v); };
    std::printf(
        "read %s: %lld vertices, %lld edges read (%lld self loops, kept), %lld reverse edges "
        "added, %lld duplicates dropped\n",
        o.dir.c_str(), ll(s.num_vertices), ll(s.edges_read), ll(s.self_loops_read),
        ll(s.reverse_edges_added), ll(s.duplicates_dropped));
    std::printf(
        "labels: %lld of %lld vertices labeled, %lld classes; split '%s': train %lld, "
        "valid %lld, test %lld\n",
        ll(s.labeled_vertices), ll(s.num_vertices), ll(s.num_classes), s.split.c_str(), ll(s.train),
        ll(s.valid), ll(s.test));
    std::printf(
        "wrote %s: %lld vertices, %lld edges, %d features, %lld classes (read %.1f s, "
        "write %.1f s, peak RSS %.0f MiB)\n",
        o.out.c_str(), ll(s.num_vertices), ll(s.num_edges), s.num_features, ll(s.num_classes),
        read_s, watch.seconds() - read_s, static_cast<double>(peak_rss_bytes()) / (1 << 20));
    return 0;
}

int run_convert(const ConvertOptions& o) {
    if (o.from == "ogb") {
        return run_convert_ogb(o);
    }
    STRATA_CHECK(!o.name.empty(), "convert --from ", o.from, ": --name is required");
    STRATA_CHECK(o.split.empty(), "convert --from ", o.from,
                 ": --split applies to --from ogb only");
    const Stopwatch watch;
    if (o.from == "text") {
        const GraphDataset g =
            convert_text(o.dir, TextConvertOptions{.name = o.name, .undirected = o.undirected});
        write_graph(g, o.out, o.force);
    } else {
        convert_planetoid(o.dir, o.name, o.out, o.force);
    }
    const GraphDataset g = read_graph(o.out);
    std::printf("wrote %s: %lld vertices, %lld edges, %d features, %lld classes (%.1f s)\n",
                o.out.c_str(), static_cast<long long>(g.num_vertices()),
                static_cast<long long>(g.num_edges()), g.num_features(),
                static_cast<long long>(g.num_classes), watch.seconds());
    return 0;
}

}  // namespace

Command add_convert_command(CLI::App& root) {
    auto o = std::make_shared<ConvertOptions>();
    CLI::App* cmd = root.add_subcommand(
        "convert", "Convert raw data into a graph dataset (.h5); layouts in docs/datasets.md");
    cmd->add_option("--from", o->from,
                    "Input layout: text (edges.txt, features.mtx, ...), "
                    "planetoid (ind.<name>.* pickles) or ogb (raw/*.csv.gz, split/<name>/)")
        ->required()
        ->check(CLI::IsMember({"text", "planetoid", "ogb"}));
    cmd->add_option("dir", o->dir, "Input directory")->required()->check(CLI::ExistingDirectory);
    cmd->add_option("--name", o->name,
                    "Dataset name (planetoid: cora, citeseer or pubmed; required except for ogb, "
                    "where it defaults to the directory's name)");
    cmd->add_option("--out", o->out, "Output graph dataset (.h5)")->required();
    cmd->add_flag("--undirected", o->undirected, "text, ogb: add v -> u for every edge u -> v");
    cmd->add_option("--split", o->split,
                    "ogb: the split directory split/<name>/ (default: the only one there)");
    cmd->add_flag("--force", o->force, "Replace --out if it exists");
    return {cmd, [o] { return run_convert(*o); }};
}

}  // namespace strata::app
