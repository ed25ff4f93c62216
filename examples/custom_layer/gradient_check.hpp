// `custom_layer --check`: ColumnScaleOp's backward against central differences of its forward,
// in every GradMode and over row chunks (the contract the executor relies on).
#pragma once

namespace example {

/// Prints one line per case; returns whether all passed.
[[nodiscard]] bool check_column_scale();

}  // namespace example
