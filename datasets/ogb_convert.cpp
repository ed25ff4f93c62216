// OGB converter: comma-separated gzip files parsed line by line with file:line errors, and a
// two-pass CSR build (count in-degrees, then fill in place) that never holds an edge list.
#include "datasets/ogb_convert.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/gzip_lines.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/memory_limit.hpp"
#include "src/base/release.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

/// A GzipLineReader that also cuts each line at ',' and parses fields with file:line errors.
class CsvReader {
public:
    explicit CsvReader(const fs::path& path) : in_(path.string()) {}

    /// Calls on_line() for each line, fields() holding its fields. If on_line or the parser
    /// throws, the rest of the file is read first, so that gzip damage (which can decode into
    /// garbage lines before the checksum fails) is reported as such instead.
    template <class OnLine>
    void for_each_line(OnLine&& on_line) {
        try {
            while (next()) {
                on_line();
            }
        } catch (const Error&) {
            in_.skip_rest();
            throw;
        }
    }

    /// Next line split into trimmed fields (an empty line gives one empty field).
    bool next() {
        std::string_view line;
        if (!in_.next(line)) {
            return false;
        }
        fields_.clear();
        std::size_t start = 0;
        for (;;) {
            const std::size_t comma = line.find(',', start);
            fields_.push_back(trim(line.substr(start, comma - start)));
            if (comma == std::string_view::npos) {
                break;
            }
            start = comma + 1;
        }
        return true;
    }

    [[nodiscard]] const std::vector<std::string_view>& fields() const { return fields_; }
    [[nodiscard]] std::string where() const { return in_.where(); }
    [[nodiscard]] std::int64_t line_number() const { return in_.line_number(); }
    [[nodiscard]] const std::string& path() const { return in_.path(); }

    void expect_fields(std::size_t expected, const char* layout) const {
        STRATA_CHECK(fields_.size() == expected, where(), ": expected ", expected, " field",
                     expected == 1 ? "" : "s", " (", layout, "), found ", fields_.size());
    }

    [[nodiscard]] std::int64_t integer(std::size_t column, const char* meaning) const {
        const std::string_view field = fields_[column];
        std::int64_t value = 0;
        const char* end = field.data() + field.size();
        auto [ptr, ec] = std::from_chars(field.data(), end, value);
        STRATA_CHECK(ec == std::errc() && ptr == end && !field.empty(), where(), ": field ",
                     column + 1, " (", meaning, ") '", field, "' is not an integer");
        return value;
    }

    template <class T>
    [[nodiscard]] T number(std::size_t column, const char* meaning) const {
        const std::string_view field = fields_[column];
        T value = 0;
        const char* end = field.data() + field.size();
        auto [ptr, ec] = std::from_chars(field.data(), end, value);
        STRATA_CHECK(ec == std::errc() && ptr == end && !field.empty(), where(), ": field ",
                     column + 1, " (", meaning, ") '", field, "' is not a number");
        STRATA_CHECK(std::isfinite(value), where(), ": field ", column + 1, " (", meaning, ") '",
                     field, "' is not finite");
        return value;
    }

    /// A vertex id in [0, n), n being N from num-node-list.
    [[nodiscard]] std::int64_t vertex(std::size_t column, const char* meaning,
                                      std::int64_t n) const {
        const std::int64_t id = integer(column, meaning);
        STRATA_CHECK(id >= 0 && id < n, where(), ": field ", column + 1, " (", meaning,
                     "): vertex id ", id, " out of range [0, ", n,
                     ") (N from raw/num-node-list.csv.gz)");
        return id;
    }

private:
    static std::string_view trim(std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
            s.remove_prefix(1);
        }
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
            s.remove_suffix(1);
        }
        return s;
    }

    GzipLineReader in_;
    std::vector<std::string_view> fields_;
};

fs::path require_file(const fs::path& path, const char* what) {
    STRATA_CHECK(fs::is_regular_file(path), path.string(), ": missing (", what, ")");
    return path;
}

/// num-node-list / num-edge-list: exactly one line holding one non-negative integer.
std::int64_t read_count(const fs::path& path, const char* meaning) {
    CsvReader in(path);
    STRATA_CHECK(in.next(), path.string(), ": empty, expected one line with the ", meaning);
    in.expect_fields(1, meaning);
    const std::int64_t count = in.integer(0, meaning);
    STRATA_CHECK(count >= 0, in.where(), ": field 1 (", meaning, "): ", count, " is negative");
    STRATA_CHECK(!in.next(), in.where(),
                 ": a second line (a second graph); only single-graph node-property datasets "
                 "are supported");
    return count;
}

bool is_nan_text(std::string_view s) {
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        s.remove_prefix(1);
    }
    return s.size() == 3 && (s[0] == 'n' || s[0] == 'N') && (s[1] == 'a' || s[1] == 'A') &&
           (s[2] == 'n' || s[2] == 'N');
}

/// One label per line: an integer, possibly written as a float ("3.0"); nan or empty = -1.
std::vector<std::int64_t> read_labels(const fs::path& path, std::int64_t n) {
    CsvReader in(path);
    std::vector<std::int64_t> labels;
    labels.reserve(static_cast<std::size_t>(n));
    in.for_each_line([&] {
        in.expect_fields(1, "one class id; multi-label tasks are not supported");
        STRATA_CHECK(in.line_number() <= n, in.where(), ": more than N = ", n,
                     " labels (N from raw/num-node-list.csv.gz)");
        const std::string_view field = in.fields()[0];
        if (field.empty() || is_nan_text(field)) {
            labels.push_back(-1);
            return;
        }
        const auto value = in.number<double>(0, "class id");
        STRATA_CHECK(value == std::floor(value) && value >= -1.0 &&
                         value < static_cast<double>(std::numeric_limits<index_t>::max()),
                     in.where(), ": field 1 (class id) '", field,
                     "' is not a class id (an integer >= 0, or -1/nan/empty = unlabeled)");
        labels.push_back(static_cast<std::int64_t>(value));
    });
    STRATA_CHECK(static_cast<std::int64_t>(labels.size()) == n, path.string(), ": has ",
                 labels.size(), " labels, but raw/num-node-list.csv.gz says N = ", n);
    return labels;
}

/// N rows of F comma-separated floats; F is the width of the first row.
HostMatrix read_features(const fs::path& path, std::int64_t n) {
    CsvReader in(path);
    HostMatrix x;
    std::size_t width = 0;
    std::int64_t rows = 0;
    in.for_each_line([&] {
        const auto& fields = in.fields();
        if (rows == 0) {
            width = fields.size();
            STRATA_CHECK(width <= static_cast<std::size_t>(std::numeric_limits<index_t>::max()),
                         in.where(), ": ", width, " features exceed the supported maximum");
            check_allocation(saturating_bytes(static_cast<std::uint64_t>(n), width, sizeof(float)),
                             in.where() + ": " + std::to_string(n) + " x " + std::to_string(width) +
                                 " dense features");
            x = HostMatrix(n, static_cast<index_t>(width));
        }
        STRATA_CHECK(fields.size() == width, in.where(), ": expected ", width,
                     " values (as on line 1), found ", fields.size());
        STRATA_CHECK(rows < n, in.where(), ": more than N = ", n,
                     " feature rows (N from raw/num-node-list.csv.gz)");
        float* row = x.row(rows);
        for (std::size_t c = 0; c < width; ++c) {
            row[c] = in.number<float>(c, "feature");
        }
        ++rows;
    });
    STRATA_CHECK(rows == n, path.string(), ": has ", rows,
                 " feature rows, but raw/num-node-list.csv.gz says N = ", n);
    return x;
}

std::vector<std::uint8_t> read_split(const fs::path& path, std::int64_t n, std::int64_t& size) {
    CsvReader in(path);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n), 0);
    size = 0;
    in.for_each_line([&] {
        in.expect_fields(1, "one vertex id");
        const auto v = static_cast<std::size_t>(in.vertex(0, "vertex id", n));
        STRATA_CHECK(mask[v] == 0, in.where(), ": field 1 (vertex id): duplicate id ", v);
        mask[v] = 1;
        ++size;
    });
    return mask;
}

/// split/<name>, or the only directory under split/.
fs::path find_split(const fs::path& dir, const std::string& name) {
    const fs::path root = dir / "split";
    if (!name.empty()) {
        STRATA_CHECK(fs::is_directory(root / name), (root / name).string(),
                     ": no such split directory");
        return root / name;
    }
    STRATA_CHECK(fs::is_directory(root), root.string(), ": missing (the OGB split directory)");
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root)) {
        if (entry.is_directory()) {
            names.push_back(entry.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    STRATA_CHECK(!names.empty(), root.string(), ": holds no split directory");
    std::string list;
    for (const auto& s : names) {
        list += (list.empty() ? "" : ", ") + s;
    }
    STRATA_CHECK(names.size() == 1, root.string(), ": holds several splits (", list,
                 "); choose one with --split");
    return root / names[0];
}

/// One pass over edge.csv.gz. Counting pass (`indices` null): adds each row's length to
/// count[v + 1]. Filling pass: writes sources at cursor[v]++ (cursor starts at indptr[v]).
/// Returns the number of lines; counts self loops.
std::int64_t edge_pass(const fs::path& path, std::int64_t n, std::int64_t expected, bool undirected,
                       std::vector<std::int64_t>& slots, std::int64_t* indices,
                       const std::vector<std::int64_t>& indptr, std::int64_t& self_loops,
                       Progress& progress) {
    CsvReader in(path);
    std::int64_t lines = 0;
    self_loops = 0;
    const auto place = [&](std::int64_t row, std::int64_t source) {
        auto& cursor = slots[static_cast<std::size_t>(row)];
        STRATA_CHECK(cursor < indptr[static_cast<std::size_t>(row) + 1], in.where(),
                     ": the file changed since the counting pass");
        indices[cursor++] = source;
    };
    in.for_each_line([&] {
        STRATA_CHECK(lines < expected, in.where(), ": more edge lines than the ", expected,
                     " that raw/num-edge-list.csv.gz says");
        in.expect_fields(2, "src,dst");
        const std::int64_t u = in.vertex(0, "src", n);
        const std::int64_t v = in.vertex(1, "dst", n);
        ++lines;
        self_loops += u == v ? 1 : 0;
        if (indices == nullptr) {
            ++slots[static_cast<std::size_t>(v) + 1];
            if (undirected && u != v) {
                ++slots[static_cast<std::size_t>(u) + 1];
            }
        } else {
            place(v, u);
            if (undirected && u != v) {
                place(u, v);
            }
        }
        if ((lines & 0xFFFFF) == 0) {
            progress.update(lines);
        }
    });
    progress.finish();
    STRATA_CHECK(lines == expected, path.string(), ": has ", lines,
                 " edge lines, but raw/num-edge-list.csv.gz says ", expected);
    return lines;
}

/// Sorts each row and removes repeated sources, compacting rows leftwards in place.
/// Returns the number of entries removed.
std::int64_t sort_and_dedup(std::vector<std::int64_t>& indptr, std::vector<std::int64_t>& indices) {
    const std::int64_t before = indptr.back();
    sort_unique_rows(indptr, indices);
    return before - indptr.back();
}

std::string default_name(const fs::path& dir) {
    fs::path p = fs::absolute(dir).lexically_normal();
    if (p.filename().empty()) {
        p = p.parent_path();  // "dir/" normalizes to a trailing empty component
    }
    return p.filename().string();
}

}  // namespace

OgbConversion convert_ogb(const std::string& dir_name, const OgbConvertOptions& options) {
    const fs::path dir(dir_name);
    STRATA_CHECK(fs::is_directory(dir), dir_name, ": not a directory");
    STRATA_CHECK(fs::is_directory(dir / "raw"), (dir / "raw").string(),
                 ": missing (expected the OGB layout: raw/edge.csv.gz, raw/node-feat.csv.gz, ...)");
    const fs::path raw = dir / "raw";
    // Check that every file exists before the long passes start.
    const fs::path nodes_path = require_file(raw / "num-node-list.csv.gz", "the vertex count");
    const fs::path edges_count_path = require_file(raw / "num-edge-list.csv.gz", "the edge count");
    const fs::path edges_path = require_file(raw / "edge.csv.gz", "one 'src,dst' per line");
    const fs::path features_path = require_file(raw / "node-feat.csv.gz", "one row per vertex");
    const fs::path labels_path = require_file(raw / "node-label.csv.gz", "one label per vertex");
    const fs::path split_dir = find_split(dir, options.split);
    const fs::path train_path = require_file(split_dir / "train.csv.gz", "train vertex ids");
    const fs::path valid_path = require_file(split_dir / "valid.csv.gz", "validation vertex ids");
    const fs::path test_path = require_file(split_dir / "test.csv.gz", "test vertex ids");

    OgbConversion result;
    GraphDataset& g = result.graph;
    OgbConvertSummary& s = result.summary;
    g.name = options.name.empty() ? default_name(dir) : options.name;
    s.split = split_dir.filename().string();

    const std::int64_t n = read_count(nodes_path, "number of vertices");
    STRATA_CHECK(n >= 1, nodes_path.string(), ":1: field 1 (number of vertices): ", n,
                 " is out of range [1, ", std::numeric_limits<std::int64_t>::max(), "]");
    // Labels (int64), row pointers (int64) and three masks per vertex.
    check_allocation(saturating_bytes(static_cast<std::uint64_t>(n), 19),
                     nodes_path.string() + ": N = " + std::to_string(n) + " vertices");
    const std::int64_t m = read_count(edges_count_path, "number of edges");
    s.num_vertices = n;

    g.labels = read_labels(labels_path, n);
    const std::int64_t max_label = *std::max_element(g.labels.begin(), g.labels.end());
    STRATA_CHECK(max_label >= 0, labels_path.string(), ": no labelled vertex (all are nan/-1)");
    g.num_classes = max_label + 1;
    s.num_classes = g.num_classes;
    s.labeled_vertices = static_cast<std::int64_t>(
        std::count_if(g.labels.begin(), g.labels.end(), [](std::int64_t l) { return l >= 0; }));

    g.train_mask = read_split(train_path, n, s.train);
    g.val_mask = read_split(valid_path, n, s.valid);
    g.test_mask = read_split(test_path, n, s.test);

    g.features = read_features(features_path, n);
    s.num_features = g.features.cols;

    // Pass 1: row lengths (in-degrees, plus out-degrees with --undirected).
    std::vector<std::int64_t> slots(static_cast<std::size_t>(n) + 1, 0);
    {
        Progress progress("edges (count)", m, options.progress);
        s.edges_read = edge_pass(edges_path, n, m, options.undirected, slots, nullptr, g.indptr,
                                 s.self_loops_read, progress);
    }
    for (std::size_t i = 1; i < slots.size(); ++i) {
        slots[i] += slots[i - 1];
    }
    g.indptr = slots;
    g.indices.resize(static_cast<std::size_t>(g.indptr.back()));
    s.reverse_edges_added = options.undirected ? s.edges_read - s.self_loops_read : 0;
    // Pass 2: fill each row at its cursor.
    slots.pop_back();
    {
        Progress progress("edges (fill)", m, options.progress);
        std::int64_t self_loops = 0;
        edge_pass(edges_path, n, m, options.undirected, slots, g.indices.data(), g.indptr,
                  self_loops, progress);
    }
    for (std::size_t v = 0; v < slots.size(); ++v) {
        STRATA_CHECK(slots[v] == g.indptr[v + 1], edges_path.string(),
                     ": the file changed since the counting pass");
    }
    release(slots);
    s.duplicates_dropped = sort_and_dedup(g.indptr, g.indices);
    s.num_edges = g.num_edges();

    validate_graph(g, dir_name);
    return result;
}

}  // namespace strata
