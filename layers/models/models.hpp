// The builders of the model zoo (layers/model_zoo.hpp), one file per model.
#pragma once

#include "layers/model_zoo.hpp"

namespace strata {

[[nodiscard]] BuiltModel build_gcn_model(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_gcnii(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_gcnii_star(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_resgcn_plus(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_appnp(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_sage(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_gin(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_gat(index_t in, index_t classes, const ModelSpec& spec);
[[nodiscard]] BuiltModel build_mlp(index_t in, index_t classes, const ModelSpec& spec);

}  // namespace strata
