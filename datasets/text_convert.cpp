// Text converter: line-oriented parsers that report file:line and the offending field, and a
// counting sort by destination that keeps the first of duplicate edges.
#include "datasets/text_convert.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string_view>
#include <type_traits>

#include "datasets/edge_list.hpp"
#include "datasets/graph_io.hpp"
#include "src/base/error.hpp"
#include "src/base/memory_limit.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

/// Reads a text file line by line, splitting each line into whitespace-separated fields.
class LineReader {
public:
    explicit LineReader(fs::path path) : path_(std::move(path)), in_(path_) {
        STRATA_CHECK(in_.is_open(), path_.string(), ": cannot open for reading");
    }

    /// Next line that is neither blank nor a comment (first field starts with `comment`).
    bool next(std::vector<std::string_view>& fields, char comment = '#') {
        while (std::getline(in_, line_)) {
            ++line_number_;
            split(fields);
            if (!fields.empty() && fields[0][0] != comment) {
                return true;
            }
        }
        STRATA_CHECK(!in_.bad(), path_.string(), ": read error");
        return false;
    }

    /// "dir/edges.txt:17" for messages.
    [[nodiscard]] std::string where() const {
        return path_.string() + ":" + std::to_string(line_number_);
    }
    [[nodiscard]] const std::string& line() const { return line_; }

    template <class T>
    T parse(std::string_view field, int column, const char* meaning) const {
        T value{};
        const char* end = field.data() + field.size();
        auto [ptr, ec] = std::from_chars(field.data(), end, value);
        STRATA_CHECK(ec == std::errc() && ptr == end, where(), ": field ", column, " (", meaning,
                     ") '", field, "' is not ", std::is_integral_v<T> ? "an integer" : "a number");
        if constexpr (std::is_floating_point_v<T>) {
            STRATA_CHECK(std::isfinite(value), where(), ": field ", column, " (", meaning, ") '",
                         field, "' is not finite");
        }
        return value;
    }

private:
    void split(std::vector<std::string_view>& fields) const {
        fields.clear();
        const std::string_view s(line_);
        std::size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) {
                ++i;
            }
            const std::size_t start = i;
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) == 0) {
                ++i;
            }
            if (i > start) {
                fields.push_back(s.substr(start, i - start));
            }
        }
    }

    fs::path path_;
    std::ifstream in_;
    std::string line_;
    std::int64_t line_number_ = 0;
};

void check_fields(const LineReader& in, const std::vector<std::string_view>& fields,
                  std::size_t expected, const char* layout) {
    STRATA_CHECK(fields.size() == expected, in.where(), ": expected ", expected, " field",
                 expected == 1 ? "" : "s", " (", layout, "), found ", fields.size());
}

std::int64_t check_vertex(const LineReader& in, std::int64_t id, int column, std::int64_t n) {
    STRATA_CHECK(id >= 0 && id < n, in.where(), ": field ", column, ": vertex id ", id,
                 " out of range [0, ", n, ") (N = number of lines of labels.txt)");
    return id;
}

std::vector<std::int64_t> read_labels(const fs::path& path) {
    LineReader in(path);
    std::vector<std::string_view> fields;
    std::vector<std::int64_t> labels;
    while (in.next(fields)) {
        check_fields(in, fields, 1, "one class id");
        const auto label = in.parse<std::int64_t>(fields[0], 1, "class id");
        STRATA_CHECK(label >= -1, in.where(), ": field 1: class id ", label,
                     " is negative (only -1 = unlabeled is allowed)");
        // Class ids index the model's output columns (index_t); the count is the largest + 1.
        STRATA_CHECK(label < std::numeric_limits<index_t>::max(), in.where(),
                     ": field 1: class id ", label, " is too large (at most ",
                     std::numeric_limits<index_t>::max() - 1, ")");
        labels.push_back(label);
    }
    return labels;
}

HostMatrix read_mtx(const fs::path& path, std::int64_t n) {
    LineReader in(path);
    std::vector<std::string_view> fields;
    // Header: %%MatrixMarket matrix coordinate <real|integer|pattern> general
    STRATA_CHECK(in.next(fields, '#') && fields.size() == 5 && fields[0] == "%%MatrixMarket" &&
                     fields[1] == "matrix" && fields[2] == "coordinate",
                 in.where(), ": expected header '%%MatrixMarket matrix coordinate real general'");
    const bool pattern = fields[3] == "pattern";
    STRATA_CHECK(pattern || fields[3] == "real" || fields[3] == "integer", in.where(),
                 ": field 4: value type '", fields[3], "' is not real, integer or pattern");
    STRATA_CHECK(fields[4] == "general", in.where(), ": field 5: symmetry '", fields[4],
                 "' is not supported (only general)");
    STRATA_CHECK(in.next(fields, '%'), in.where(), ": missing size line 'rows cols entries'");
    check_fields(in, fields, 3, "rows cols entries");
    const auto rows = in.parse<std::int64_t>(fields[0], 1, "rows");
    const auto cols = in.parse<std::int64_t>(fields[1], 2, "cols");
    const auto entries = in.parse<std::int64_t>(fields[2], 3, "entries");
    STRATA_CHECK(rows == n, in.where(), ": field 1: ", rows,
                 " rows, but labels.txt defines N = ", n);
    STRATA_CHECK(cols >= 0 && cols <= std::numeric_limits<index_t>::max(), in.where(),
                 ": field 2: column count ", cols, " out of range");
    STRATA_CHECK(entries >= 0 && entries <= rows * cols, in.where(), ": field 3: ", entries,
                 " entries do not fit a ", rows, " x ", cols, " matrix");
    // Dense float features plus one bit per slot for the duplicate check.
    check_allocation(
        saturating_bytes(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols),
                         sizeof(float)) +
            saturating_bytes(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols)) /
                8,
        in.where() + ": " + std::to_string(rows) + " x " + std::to_string(cols) +
            " dense features");
    HostMatrix x(rows, static_cast<index_t>(cols));
    std::vector<bool> seen(x.values.size(), false);
    std::int64_t count = 0;
    while (in.next(fields, '%')) {
        check_fields(in, fields, pattern ? 2 : 3, pattern ? "row col" : "row col value");
        const auto i = in.parse<std::int64_t>(fields[0], 1, "row");
        const auto j = in.parse<std::int64_t>(fields[1], 2, "col");
        STRATA_CHECK(i >= 1 && i <= rows, in.where(), ": field 1: row ", i, " out of range [1, ",
                     rows, "] (MatrixMarket is 1-based)");
        STRATA_CHECK(j >= 1 && j <= cols, in.where(), ": field 2: col ", j, " out of range [1, ",
                     cols, "] (MatrixMarket is 1-based)");
        const auto slot = static_cast<std::size_t>((i - 1) * cols + (j - 1));
        STRATA_CHECK(!seen[slot], in.where(), ": duplicate entry (", i, ", ", j, ")");
        seen[slot] = true;
        x.values[slot] = pattern ? 1.0f : in.parse<float>(fields[2], 3, "value");
        ++count;
    }
    STRATA_CHECK(count == entries, path.string(), ": the size line announces ", entries,
                 " entries, found ", count);
    return x;
}

HostMatrix read_dense(const fs::path& path, std::int64_t n) {
    LineReader in(path);
    std::vector<std::string_view> fields;
    std::vector<float> values;
    std::int64_t rows = 0;
    std::size_t cols = 0;
    while (in.next(fields)) {
        if (rows == 0) {
            cols = fields.size();
        }
        STRATA_CHECK(fields.size() == cols, in.where(), ": expected ", cols,
                     " values (as on the first row), found ", fields.size());
        for (std::size_t c = 0; c < fields.size(); ++c) {
            values.push_back(in.parse<float>(fields[c], static_cast<int>(c) + 1, "feature"));
        }
        ++rows;
    }
    STRATA_CHECK(rows == n, path.string(), ": has ", rows, " rows, but labels.txt defines N = ", n);
    HostMatrix x;
    x.rows = rows;
    x.cols = static_cast<index_t>(cols);
    x.values = std::move(values);
    return x;
}

std::vector<std::uint8_t> read_split(const fs::path& path, std::int64_t n) {
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n), 0);
    if (!fs::exists(path)) {
        return mask;
    }
    LineReader in(path);
    std::vector<std::string_view> fields;
    while (in.next(fields)) {
        check_fields(in, fields, 1, "one vertex id");
        const auto v = check_vertex(in, in.parse<std::int64_t>(fields[0], 1, "vertex id"), 1, n);
        STRATA_CHECK(mask[static_cast<std::size_t>(v)] == 0, in.where(), ": field 1: duplicate id ",
                     v);
        mask[static_cast<std::size_t>(v)] = 1;
    }
    return mask;
}

EdgeList read_edges(const fs::path& path, std::int64_t n) {
    LineReader in(path);
    std::vector<std::string_view> fields;
    EdgeList edges;
    std::size_t width = 0;
    while (in.next(fields)) {
        if (width == 0) {
            STRATA_CHECK(fields.size() == 2 || fields.size() == 3, in.where(),
                         ": expected 2 fields (u v) or 3 (u v w), found ", fields.size());
            width = fields.size();
        }
        check_fields(
            in, fields, width,
            width == 2 ? "u v, as on the first edge line" : "u v w, as on the first edge line");
        edges.src.push_back(check_vertex(in, in.parse<std::int64_t>(fields[0], 1, "u"), 1, n));
        edges.dst.push_back(check_vertex(in, in.parse<std::int64_t>(fields[1], 2, "v"), 2, n));
        if (width == 3) {
            edges.weight.push_back(in.parse<float>(fields[2], 3, "weight"));
        }
    }
    return edges;
}

}  // namespace

GraphDataset convert_text(const std::string& dir_name, const TextConvertOptions& options) {
    const fs::path dir(dir_name);
    STRATA_CHECK(fs::is_directory(dir), dir_name, ": not a directory");
    GraphDataset g;
    g.name = options.name;

    const fs::path labels_path = dir / "labels.txt";
    STRATA_CHECK(fs::exists(labels_path), labels_path.string(),
                 ": missing (one class id per vertex; it defines N)");
    g.labels = read_labels(labels_path);
    const auto n = static_cast<std::int64_t>(g.labels.size());
    const std::int64_t max_label =
        g.labels.empty() ? -1 : *std::max_element(g.labels.begin(), g.labels.end());
    STRATA_CHECK(max_label >= 0, labels_path.string(), ": no labelled vertex (all ids are -1)");
    g.num_classes = max_label + 1;

    const fs::path mtx = dir / "features.mtx";
    const fs::path dense = dir / "features.txt";
    STRATA_CHECK(!(fs::exists(mtx) && fs::exists(dense)), dir_name,
                 ": both features.mtx and features.txt exist; keep one");
    STRATA_CHECK(fs::exists(mtx) || fs::exists(dense), dir_name,
                 ": missing features.mtx or features.txt");
    g.features = fs::exists(mtx) ? read_mtx(mtx, n) : read_dense(dense, n);

    const fs::path edges_path = dir / "edges.txt";
    STRATA_CHECK(fs::exists(edges_path), edges_path.string(), ": missing");
    EdgeList edges = read_edges(edges_path, n);
    if (options.undirected) {
        const std::size_t m = edges.src.size();
        edges.src.reserve(2 * m);
        edges.dst.reserve(2 * m);
        for (std::size_t k = 0; k < m; ++k) {
            edges.src.push_back(edges.dst[k]);
            edges.dst.push_back(edges.src[k]);
            if (!edges.weight.empty()) {
                edges.weight.push_back(edges.weight[k]);
            }
        }
    }
    (void)edges_to_csr(edges, n, g);

    g.train_mask = read_split(dir / "train.txt", n);
    g.val_mask = read_split(dir / "val.txt", n);
    g.test_mask = read_split(dir / "test.txt", n);
    validate_graph(g, dir_name);
    return g;
}

}  // namespace strata
