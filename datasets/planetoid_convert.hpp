// `strata convert --from planetoid`: runs datasets/planetoid_to_h5.py (Python: the raw files are
// pickles) and validates what it wrote before renaming it into place.
#pragma once

#include <string>

namespace strata {

/// Where planetoid_to_h5.py is: $STRATA_PLANETOID_SCRIPT, else <bin>/../share/strata/, else
/// the source tree this binary was built from. Throws strata::Error listing the places tried.
[[nodiscard]] std::string find_planetoid_script();

/// Converts the Planetoid raw files DIR/ind.<name>.* into a graph dataset at `out`: the script
/// writes a scratch file (removed afterwards), read_graph validates it, write_graph writes `out`
/// in the current format (with its content id). The interpreter is
/// $STRATA_PYTHON, else /usr/bin/python3 (Debian's, with numpy, scipy and h5py).
/// Throws strata::Error with one line when Python or a module is missing, the script fails
/// (its last stderr line is quoted), or its output is invalid.
void convert_planetoid(const std::string& dir, const std::string& name, const std::string& out,
                       bool overwrite = false);

}  // namespace strata
