// AtomicOutput: write a file or directory under a temporary name, rename it into place on
// commit(); if never committed (an error was thrown), the temporary is removed. No partial
// output is ever left at the final path.
#pragma once

#include <filesystem>
#include <string>

namespace strata {

class AtomicOutput {
public:
    /// `final_path` must not exist unless `overwrite`; its parent directory must be writable.
    /// Throws strata::Error naming the path otherwise.
    explicit AtomicOutput(std::filesystem::path final_path, bool overwrite = false);
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;
    ~AtomicOutput();  ///< removes the temporary if commit() was not reached

    /// Where to write: "<parent>/.<name>.tmp.<pid>", on the same file system as the final path.
    [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
    [[nodiscard]] const std::filesystem::path& final_path() const { return final_; }
    /// Renames the temporary into place (replacing an existing target when overwrite was set).
    void commit();

private:
    std::filesystem::path final_;
    std::filesystem::path temp_;
    bool overwrite_;
    bool committed_ = false;
};

}  // namespace strata
