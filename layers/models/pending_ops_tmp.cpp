#include "layers/models/models.hpp"
#include "src/base/error.hpp"
namespace strata {
BuiltModel build_resgcn_plus(index_t, index_t, const ModelSpec&) { STRATA_FAIL("stub"); }
BuiltModel build_gin(index_t, index_t, const ModelSpec&) { STRATA_FAIL("stub"); }
}
