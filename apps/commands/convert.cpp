// `strata convert --from text|planetoid|ogb DIR --name NAME --out G.h5`, `--from npz --input
// X.npz`, `--from geom-gcn-splits --data G.h5 --splits DIR`: raw data -> graph dataset.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "apps/commands/command.hpp"
#include "datasets/geom_gcn_splits.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/npz_convert.hpp"
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
    std::string input;   ///< npz: the .npz file
    std::string data;    ///< geom-gcn-splits: the graph the splits are applied to
    std::string splits;  ///< geom-gcn-splits: the directory of split files
    bool undirected = false;
    bool force = false;
};

/// Options that belong to other layouts are refused rather than ignored.
void check_options(const ConvertOptions& o) {
    const bool dir_layout = o.from == "text" || o.from == "planetoid" || o.from == "ogb";
    STRATA_CHECK(dir_layout == !o.dir.empty(), "convert --from ", o.from,
                 dir_layout ? ": the input directory is required"
                            : ": takes no input directory (use --input or --data)");
    if (dir_layout) {
        std::error_code ec;
        STRATA_CHECK(std::filesystem::is_directory(o.dir, ec), o.dir, ": not a directory");
    }
    STRATA_CHECK((o.from == "npz") == !o.input.empty(), "convert --from ", o.from,
                 o.from == "npz" ? ": --input X.npz is required" : ": --input is for --from npz");
    const bool splits = o.from == "geom-gcn-splits";
    STRATA_CHECK(splits == !o.data.empty() && splits == !o.splits.empty(), "convert --from ",
                 o.from,
                 splits ? ": --data G.h5 and --splits DIR are required"
                        : ": --data and --splits are for --from geom-gcn-splits");
    STRATA_CHECK(!splits || (o.name.empty() && !o.undirected), "convert --from ", o.from,
                 ": --name and --undirected do not apply (the graph of --data is kept as it is)");
    STRATA_CHECK(o.split.empty() || o.from == "ogb", "convert --from ", o.from,
                 ": --split applies to --from ogb only");
}

void print_written(const std::string& out, const GraphDataset& g, double seconds) {
    std::printf(
        "wrote %s: %lld vertices, %lld edges, %d features, %lld classes, %d split%s "
        "(%.1f s)\n",
        out.c_str(), static_cast<long long>(g.num_vertices()),
        static_cast<long long>(g.num_edges()), g.num_features(),
        static_cast<long long>(g.num_classes), g.num_splits, g.num_splits == 1 ? "" : "s", seconds);
}

/// --from npz: prints the layout found and what was read, added and dropped.
int run_convert_npz(const ConvertOptions& o) {
    const Stopwatch watch;
    const NpzConversion c =
        convert_npz(o.input, NpzConvertOptions{.name = o.name, .undirected = o.undirected});
    write_graph(c.graph, o.out, o.force);
    std::printf(
        "read %s (%s layout): %lld edges read (%lld self loops, kept), %lld reverse edges added, "
        "%lld duplicates dropped\n",
        o.input.c_str(), c.layout.c_str(), static_cast<long long>(c.edges_read),
        static_cast<long long>(c.self_loops), static_cast<long long>(c.reverse_edges_added),
        static_cast<long long>(c.duplicates_dropped));
    if (c.layout == "gnn-benchmark") {
        std::printf(
            "note: this layout has no split: the file's one split has empty train/val/test masks "
            "(apply one with --from geom-gcn-splits)\n");
    }
    print_written(o.out, c.graph, watch.seconds());
    return 0;
}

/// --from geom-gcn-splits: --data's graph with its splits replaced by the split files.
int run_convert_splits(const ConvertOptions& o) {
    const Stopwatch watch;
    STRATA_CHECK(o.force || !std::filesystem::exists(o.out), o.out,
                 ": output already exists (use --force to replace it)");
    GraphDataset g = read_graph(o.data);
    apply_geom_gcn_splits(g, o.splits);
    write_graph(g, o.out, o.force);
    print_written(o.out, g, watch.seconds());
    return 0;
}

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
    check_options(o);
    if (o.from == "ogb") {
        return run_convert_ogb(o);
    }
    if (o.from == "npz") {
        return run_convert_npz(o);
    }
    if (o.from == "geom-gcn-splits") {
        return run_convert_splits(o);
    }
    STRATA_CHECK(!o.name.empty(), "convert --from ", o.from, ": --name is required");
    const Stopwatch watch;
    if (o.from == "text") {
        const GraphDataset g =
            convert_text(o.dir, TextConvertOptions{.name = o.name, .undirected = o.undirected});
        write_graph(g, o.out, o.force);
    } else {
        convert_planetoid(o.dir, o.name, o.out, o.force);
    }
    print_written(o.out, read_graph(o.out), watch.seconds());
    return 0;
}

}  // namespace

Command add_convert_command(CLI::App& root) {
    auto o = std::make_shared<ConvertOptions>();
    CLI::App* cmd = root.add_subcommand(
        "convert", "Convert raw data into a graph dataset (.h5); layouts in docs/datasets.md");
    cmd->add_option("--from", o->from,
                    "Input layout: text (edges.txt, features.mtx, ...), "
                    "planetoid (ind.<name>.* pickles), ogb (raw/*.csv.gz, split/<name>/), "
                    "npz (heterophilous-graphs or gnn-benchmark .npz), geom-gcn-splits "
                    "(one .npz of masks per split, applied to --data)")
        ->required()
        ->check(CLI::IsMember({"text", "planetoid", "ogb", "npz", "geom-gcn-splits"}));
    cmd->add_option("dir", o->dir, "Input directory (text, planetoid, ogb)");
    cmd->add_option("--input", o->input, "npz: the .npz file");
    cmd->add_option("--data", o->data, "geom-gcn-splits: the graph dataset (.h5) to add splits to");
    cmd->add_option("--splits", o->splits,
                    "geom-gcn-splits: directory of <name>_<i>.npz split files, i = 0 .. S-1");
    cmd->add_option("--name", o->name,
                    "Dataset name (planetoid: cora, citeseer or pubmed; required for text and "
                    "planetoid; ogb and npz default to the directory's or file's name)");
    cmd->add_option("--out", o->out, "Output graph dataset (.h5)")->required();
    cmd->add_flag("--undirected", o->undirected,
                  "text, ogb, npz: add v -> u for every edge u -> v");
    cmd->add_option("--split", o->split,
                    "ogb: the split directory split/<name>/ (default: the only one there)");
    cmd->add_flag("--force", o->force, "Replace --out if it exists");
    return {cmd, [o] { return run_convert(*o); }};
}

}  // namespace strata::app
