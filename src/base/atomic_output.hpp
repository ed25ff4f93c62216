// AtomicOutput: write a file or directory under a temporary name, make it durable and rename it
// into place on commit(); if never committed (an error was thrown), the temporary is removed.
// No partial output is ever left at the final path, and the previous output stays there until
// the new one replaces it (docs/durability.md).
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

    /// Makes the temporary durable and puts it in place:
    /// 1. fsync the temporary file (a directory: every regular file in it, recursively, then
    ///    every directory in it and itself);
    /// 2. a file: rename(2) over the target, which is replaced atomically (never removed
    ///    first); a directory replacing a directory: renameat2(RENAME_EXCHANGE) swaps the two,
    ///    then the old one (now at the temporary name) is removed; where the file system
    ///    refuses the exchange (EINVAL, ENOSYS, ENOTSUP) the old directory is renamed aside
    ///    to "<parent>/.<name>.old.<pid>", the new one renamed into place, the old one removed;
    /// 3. fsync the parent directory, so that the rename itself survives a power loss.
    /// Throws strata::Error naming the path and the system's reason on any failure (the
    /// temporary is then removed by the destructor and the previous output is untouched).
    void commit();

private:
    std::filesystem::path final_;
    std::filesystem::path temp_;
    bool overwrite_;
    bool committed_ = false;
};

/// fsync(2) of `path` (a file or a directory, opened read-only); throws strata::Error
/// "<path>: fsync failed: <reason>" (or "cannot open") naming `path`.
void fsync_path(const std::filesystem::path& path);

/// fsync of every regular file and directory under `dir`, then of `dir` itself.
void fsync_tree(const std::filesystem::path& dir);

/// Whether renameat2(RENAME_EXCHANGE) may be used: false when the environment variable
/// STRATA_NO_RENAME_EXCHANGE is set (the tests exercise the fallback with it).
[[nodiscard]] bool rename_exchange_enabled();

}  // namespace strata
