// GCN (Kipf & Welling 2017) in the zoo: layers/gcn_model.hpp builds it.
#include "layers/gcn_model.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_gcn_model(index_t in, index_t classes, const ModelSpec& spec) {
    validate(spec, "gcn");
    const GcnOptions options = gcn_options(spec);
    return {build_gcn(in, classes, options), gcn_embedding_tensor(options)};
}

}  // namespace strata
