// Selection of the best epoch.
#include "training/epoch_stats.hpp"

#include "src/base/error.hpp"

namespace strata {

const char* to_string(Selection selection) {
    return selection == Selection::val_acc ? "val_acc" : "val_loss";
}

Selection parse_selection(const std::string& text) {
    if (text == "val_acc") {
        return Selection::val_acc;
    }
    STRATA_CHECK(text == "val_loss", "--select-by: '", text, "' is neither val_acc nor val_loss");
    return Selection::val_loss;
}

bool better(Selection selection, const EpochStats& candidate, const EpochStats& best) {
    return selection == Selection::val_acc ? candidate.val_acc > best.val_acc
                                           : candidate.val_loss < best.val_loss;
}

}  // namespace strata
