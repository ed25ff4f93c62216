// docs/models.md against the zoo: every model's parameter table names each parameter the model
// builds, with its shape, and nothing it does not build; its "embeddings" row names the
// embedding tensor (and "none with 1 layer" holds). The tables write layer indices as {l},
// {L-1}, ... (any index) and shapes as products of F, C, H, A, O (features, classes, hidden,
// heads, output heads) joined by "×" and "·".
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "layers/model_zoo.hpp"

namespace {

using strata::BuiltModel;
using strata::ModelInfo;
using strata::ModelSpec;

// The sizes the models are built with: distinct, so a swapped symbol changes a shape.
const std::map<std::string, long> sizes{{"F", 7}, {"C", 4}, {"H", 5}, {"A", 2}, {"O", 3}};

struct Section {
    std::vector<std::pair<std::vector<std::string>, std::string>> rows;  // names, shape
    std::string embeddings;                                              // the row's text
};

/// The texts between backticks in `line`.
std::vector<std::string> quoted(const std::string& line) {
    std::vector<std::string> out;
    for (std::size_t at = line.find('`'); at != std::string::npos;) {
        const std::size_t end = line.find('`', at + 1);
        if (end == std::string::npos) {
            break;
        }
        out.push_back(line.substr(at + 1, end - at - 1));
        at = line.find('`', end + 1);
    }
    return out;
}

/// The cells of a table row "| a | b | c |".
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line.substr(1));
    std::string cell;
    while (std::getline(in, cell, '|')) {
        out.push_back(cell);
    }
    return out;
}

/// The sections "### `name`" of docs/models.md.
std::map<std::string, Section> read_sections() {
    std::ifstream in(STRATA_SOURCE_DIR "/docs/models.md");
    REQUIRE(in.good());
    std::map<std::string, Section> sections;
    Section* current = nullptr;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("### `", 0) == 0) {
            current = &sections[quoted(line).at(0)];
        } else if (line.rfind("## ", 0) == 0) {
            current = nullptr;
        } else if (current != nullptr && line.rfind("| embeddings |", 0) == 0) {
            current->embeddings = cells(line).at(1);
        } else if (current != nullptr && line.rfind("| `", 0) == 0) {
            const std::vector<std::string> row = cells(line);
            REQUIRE(row.size() >= 2);
            current->rows.emplace_back(quoted(row[0]), quoted(row[1]).at(0));
        }
    }
    return sections;
}

/// "A·H × O·C" -> {rows, cols} with the sizes above.
std::pair<long, long> evaluate(const std::string& shape) {
    std::vector<long> dims;
    std::size_t start = 0;
    const std::string times = "×";
    const std::string dot = "·";
    while (true) {
        const std::size_t end = shape.find(times, start);
        std::string dim = shape.substr(start, end == std::string::npos ? end : end - start);
        long value = 1;
        std::size_t f = 0;
        while (f <= dim.size()) {
            const std::size_t next = dim.find(dot, f);
            std::string factor = dim.substr(f, next == std::string::npos ? next : next - f);
            factor.erase(0, factor.find_first_not_of(' '));
            factor.erase(factor.find_last_not_of(' ') + 1);
            const auto known = sizes.find(factor);
            value *= known != sizes.end() ? known->second : std::stol(factor);
            if (next == std::string::npos) {
                break;
            }
            f = next + dot.size();
        }
        dims.push_back(value);
        if (end == std::string::npos) {
            break;
        }
        start = end + times.size();
    }
    REQUIRE(dims.size() == 2);
    return {dims[0], dims[1]};
}

/// `gcn{l}.linear.weight` as a regex: any {...} is an index.
std::regex pattern(const std::string& name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '{') {
            i = name.find('}', i);
            out += "[0-9]+";
        } else if (name[i] == '.' || name[i] == '*' || name[i] == '+') {
            out += std::string("\\") + name[i];
        } else {
            out += name[i];
        }
    }
    return std::regex(out);
}

BuiltModel build(const ModelInfo& info, int layers) {
    ModelSpec spec = info.recipe.spec;
    spec.layers = layers;
    spec.hidden = static_cast<strata::index_t>(sizes.at("H"));
    spec.heads = static_cast<int>(sizes.at("A"));
    spec.output_heads = static_cast<int>(sizes.at("O"));
    spec.hops = 2;
    return strata::build_model(spec, static_cast<strata::index_t>(sizes.at("F")),
                               static_cast<strata::index_t>(sizes.at("C")));
}

}  // namespace

TEST_CASE("docs/models.md lists every model's parameters, shapes and embeddings",
          "[models][docs]") {
    const std::map<std::string, Section> sections = read_sections();
    for (const ModelInfo& info : strata::model_zoo()) {
        INFO("model " << info.name);
        REQUIRE(sections.count(info.name) == 1);
        const Section& doc = sections.at(info.name);
        REQUIRE(!doc.rows.empty());
        const BuiltModel model = build(info, 3);
        std::vector<int> row_used(doc.rows.size(), 0);
        for (int n = 0; n < model.graph.num_nodes(); ++n) {
            const auto& node = model.graph.node(n);
            for (const auto& p : node.op->parameter_specs(model.graph.input_cols(n))) {
                const std::string name = node.name + "." + p.name;
                INFO("parameter " << name << " " << p.rows << " x " << p.cols);
                bool named = false;
                bool shaped = false;
                for (std::size_t r = 0; r < doc.rows.size(); ++r) {
                    for (const std::string& documented : doc.rows[r].first) {
                        if (std::regex_match(name, pattern(documented))) {
                            named = true;
                            row_used[r] = 1;
                            shaped = shaped || evaluate(doc.rows[r].second) ==
                                                   std::pair<long, long>(p.rows, p.cols);
                        }
                    }
                }
                CHECK(named);
                CHECK(shaped);
            }
        }
        for (std::size_t r = 0; r < doc.rows.size(); ++r) {
            INFO("documented row " << doc.rows[r].first.at(0));
            CHECK(row_used[r] == 1);  // a row naming no parameter the model has
        }
        INFO("embeddings row: " << doc.embeddings << "; built: " << model.embedding_tensor);
        const std::vector<std::string> tensor = quoted(doc.embeddings);
        REQUIRE(!tensor.empty());
        CHECK(std::regex_match(model.embedding_tensor, pattern(tensor[0])));
        if (doc.embeddings.find("none with 1 layer") != std::string::npos) {
            CHECK(build(info, 1).embedding_tensor.empty());
        } else if (info.name != "appnp") {  // appnp does not read layers
            CHECK(!build(info, 1).embedding_tensor.empty());
        }
    }
}
