// apply_geom_gcn_splits: list, order by split number, check N, stack split-major.
#include "datasets/geom_gcn_splits.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "datasets/npz_file.hpp"
#include "src/base/error.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

/// The number after the last '_' of "name_<i>.npz", or -1.
long split_number(const std::string& file_name) {
    const std::string stem = file_name.substr(0, file_name.size() - 4);
    const std::size_t underscore = stem.rfind('_');
    const std::string digits = stem.substr(underscore == std::string::npos ? 0 : underscore + 1);
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return -1;
    }
    return std::stol(digits);
}

}  // namespace

void apply_geom_gcn_splits(GraphDataset& graph, const std::string& dir) {
    std::error_code ec;
    STRATA_CHECK(fs::is_directory(dir, ec), dir, ": not a directory (expected the split files)");
    std::map<long, std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || name.size() <= 4 ||
            name.substr(name.size() - 4) != ".npz") {
            continue;
        }
        const long i = split_number(name);
        STRATA_CHECK(i >= 0, entry.path().string(),
                     ": cannot tell the split number (expected a name ending in _<number>.npz)");
        const auto [it, added] = files.emplace(i, entry.path().string());
        STRATA_CHECK(added, entry.path().string(), ": split ", i, " is also ", it->second);
    }
    STRATA_CHECK(!files.empty(), dir, ": no split files (*_<number>.npz)");
    const long s = static_cast<long>(files.size());
    for (long i = 0; i < s; ++i) {
        STRATA_CHECK(files.count(i) == 1, dir, ": split ", i, " is missing (found ", s,
                     " files numbered up to ", files.rbegin()->first,
                     "; the numbers must be 0 .. S-1)");
    }

    const auto n = static_cast<std::size_t>(graph.num_vertices());
    std::vector<std::uint8_t> train;
    std::vector<std::uint8_t> val;
    std::vector<std::uint8_t> test;
    for (const auto& [i, path] : files) {
        const NpzFile file(path);
        for (auto [key, out] : {std::pair{"train_mask", &train}, std::pair{"val_mask", &val},
                                std::pair{"test_mask", &test}}) {
            const NpyArray a = file.read(key);
            a.check_rank(1);
            STRATA_CHECK(static_cast<std::size_t>(a.shape[0]) == n, a.what, ": has ", a.shape[0],
                         " entries, but the graph has N = ", n);
            const std::vector<std::uint8_t> mask = a.to_mask();
            out->insert(out->end(), mask.begin(), mask.end());
        }
    }
    graph.num_splits = static_cast<int>(s);
    graph.train_mask = std::move(train);
    graph.val_mask = std::move(val);
    graph.test_mask = std::move(test);
}

}  // namespace strata
