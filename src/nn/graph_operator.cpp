// Normalization names.
#include "src/nn/graph_operator.hpp"

namespace strata {

std::string_view to_string(Normalization n) {
    switch (n) {
        case Normalization::symmetric:
            return "symmetric";
        case Normalization::mean:
            return "mean";
        case Normalization::sum:
            return "sum";
    }
    return "unknown";
}

std::optional<Normalization> parse_normalization(std::string_view text) {
    for (Normalization n : {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
        if (text == to_string(n)) {
            return n;
        }
    }
    return std::nullopt;
}

}  // namespace strata
