// The op catalogue (src/nn/op_catalogue.hpp) is complete and its rows are true: every class that
// derives from Op in the product sources has a row (a scan of the sources, which a new op class
// without STRATA_REGISTER_OP fails), every row names such a class, its samples take their input
// widths, and each runs with only what its row says it needs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/layers/layer_harness.hpp"
#include "tests/layers/op_catalogue_harness.hpp"

using namespace strata;
using strata::test::catalogue_cases;
using strata::test::CatalogueCase;
using strata::test::inputs_for;
using strata::test::OneRankGraph;
using strata::test::random_matrix;
using strata::test::run_op;

namespace fs = std::filesystem;

namespace {

/// `text` without comments, string and character literals (each replaced by a space).
std::string code_only(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 2, "//") == 0) {
            i = std::min(text.find('\n', i), text.size()) - 1;
            out += ' ';
        } else if (text.compare(i, 2, "/*") == 0) {
            i = std::min(text.find("*/", i + 2), text.size() - 2) + 1;
            out += ' ';
        } else if (text[i] == '"' || text[i] == '\'') {
            const char quote = text[i];
            for (++i; i < text.size() && text[i] != quote; ++i) {
                i += text[i] == '\\' ? 1 : 0;
            }
            out += ' ';
        } else {
            out += text[i];
        }
    }
    return out;
}

/// The classes (and structs) in `source` with Op among their direct bases: `class X final :
/// public Op {`, `struct Y : strata::Op, Other {`.
std::vector<std::string> op_subclasses(const std::string& source) {
    static const std::regex head(R"(\b(?:class|struct)\s+(\w+)\s*(?:final\s*)?:([^{;()]*)\{)");
    static const std::regex op_base(
        R"(^\s*(?:(?:public|protected|private|virtual)\s+)*(?:::)?(?:strata\s*::\s*)?Op\s*$)");
    std::vector<std::string> found;
    const std::string code = code_only(source);
    for (auto it = std::sregex_iterator(code.begin(), code.end(), head);
         it != std::sregex_iterator(); ++it) {
        std::string bases = (*it)[2].str();
        std::string base;
        int depth = 0;  // commas inside template arguments do not split bases
        bool derives = false;
        for (const char ch : bases + ",") {
            depth += ch == '<' ? 1 : (ch == '>' ? -1 : 0);
            if (ch == ',' && depth == 0) {
                derives = derives || std::regex_match(base, op_base);
                base.clear();
            } else {
                base += ch;
            }
        }
        if (derives) {
            found.push_back((*it)[1].str());
        }
    }
    return found;
}

/// Every product source file: all folders of the repository but tests/, bench/ and examples/
/// (whose ops are test fixtures or out-of-tree projects), build folders and hidden ones.
std::vector<fs::path> product_sources() {
    const std::set<std::string> not_product{"tests", "bench", "examples"};
    const std::set<std::string> extensions{".hpp", ".cpp", ".h", ".cc", ".cu", ".cuh"};
    std::vector<fs::path> files;
    for (const fs::directory_entry& top : fs::directory_iterator(STRATA_SOURCE_DIR)) {
        const std::string name = top.path().filename().string();
        if (!top.is_directory() || not_product.contains(name) || name.starts_with(".") ||
            name.starts_with("build")) {
            continue;
        }
        for (const fs::directory_entry& f : fs::recursive_directory_iterator(top.path())) {
            if (f.is_regular_file() && extensions.contains(f.path().extension().string())) {
                files.push_back(f.path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("the source scan finds the classes deriving from Op directly", "[layers][catalogue]") {
    const std::string source = R"(
        class A final : public Op {};
        struct B : strata::Op, private Other<int, Op> {};
        class C
            : public ::strata::Op
        {};
        class NotOp : public OpBase {};
        class Indirect : public Other<Op> {};
        // class Commented : public Op {};
        const char* text = "class InString : public Op {";
        template <typename T> class D : protected virtual Op {};
    )";

    CHECK(op_subclasses(source) == std::vector<std::string>{"A", "B", "C", "D"});
}

TEST_CASE("every class deriving from Op in the product sources has a catalogue row",
          "[layers][catalogue]") {
    std::map<std::string, std::string> classes;  // name -> file
    const std::vector<fs::path> files = product_sources();
    for (const fs::path& file : files) {
        for (const std::string& name : op_subclasses(read_text(file))) {
            classes.emplace(name, fs::relative(file, STRATA_SOURCE_DIR).string());
        }
    }
    std::set<std::string> rows;
    for (const OpCatalogueEntry& entry : op_catalogue()) {
        CHECK(rows.insert(entry.name).second);  // one row per class
    }
    REQUIRE(files.size() >
            100);  // the scan read the tree (a wrong STRATA_SOURCE_DIR reads nothing)
    REQUIRE_FALSE(classes.empty());

    for (const auto& [name, file] : classes) {
        INFO(name << " (" << file
                  << ") derives from Op but has no catalogue row: add STRATA_REGISTER_OP(" << name
                  << ", ...) to the .cpp that defines it (src/nn/op_catalogue.hpp)");
        CHECK(rows.contains(name));
    }
    for (const std::string& name : rows) {
        INFO("catalogue row " << name << " names no class deriving from Op in the sources");
        CHECK(classes.contains(name));
    }
}

TEST_CASE("every catalogue sample takes its input widths", "[layers][catalogue]") {
    std::set<std::string> tested;
    for (CatalogueCase& c : catalogue_cases()) {
        INFO(c.label());
        CHECK(c.op().num_inputs() == static_cast<int>(c.sample.input_cols.size()));
        CHECK(c.output_cols() > 0);
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());
    CHECK(tested.size() == op_catalogue().size());  // every row has a sample
}

TEST_CASE("every op runs with only what its catalogue row says it needs", "[layers][catalogue]") {
    // The graph operator and the halo exchange are lent only to rows that need them (the one-rank
    // harness lends no communicator: BatchNormOp then takes its statistics over this rank, as
    // OpNeeds::comm says); a forward and backward in training must run without the others.
    std::set<std::string> tested;
    for (CatalogueCase& c : catalogue_cases()) {
        INFO(c.label());
        const auto g = strata::test::graph_for(c, 12);
        if (!c.entry->needs.graph) {
            g->aggregation.reset();
        }
        if (!c.entry->needs.halo) {
            g->halo.reset();
        }
        const std::vector<HostMatrix> x = inputs_for(c, 12, 70);
        const HostMatrix dy = random_matrix(12, c.output_cols(), 80);

        const auto run =
            run_op(c.op(), *g, x, dy, /*training=*/true, 1, nullptr, 11, c.input_gradients());

        CHECK(run.y[0].rows == 12);
        tested.insert(c.entry->name);
    }
    REQUIRE_FALSE(tested.empty());
    CHECK(tested.size() == op_catalogue().size());
}
