// TempDir: a fresh scratch directory for one test, removed with everything in it on destruction.
// The one definition every test uses (datasets, partition, training, src).
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace strata::test {

class TempDir {
public:
    /// <temp>/strata_test_<tag>_<pid>_<n>: its own per process (pid; so each rank of an MPI
    /// test has its own) and per object (n). An existing directory of that name is emptied.
    explicit TempDir(const std::string& tag = "dir") : path(make_path(tag)) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }

    /// `name` inside the directory, as a string.
    [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
    /// Writes `text` to `name` inside the directory; returns its full path.
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return file(name);
    }
    /// The names of the directory's entries, sorted.
    [[nodiscard]] std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(path)) {
            names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    const std::filesystem::path path;

private:
    static std::filesystem::path make_path(const std::string& tag) {
        static std::atomic<int> counter{0};
        return std::filesystem::temp_directory_path() /
               ("strata_test_" + tag + "_" + std::to_string(getpid()) + "_" +
                std::to_string(counter++));
    }
};

}  // namespace strata::test
