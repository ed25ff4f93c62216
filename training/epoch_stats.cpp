// Selection of the best epoch.
#include "training/epoch_stats.hpp"

#include <cmath>

#include "src/base/error.hpp"

namespace strata {

const char* to_string(Selection selection) {
    switch (selection) {
        case Selection::val_acc:
            return "val_acc";
        case Selection::val_loss:
            return "val_loss";
        case Selection::val_auc:
            return "val_auc";
    }
    return "?";
}

Selection parse_selection(const std::string& text) {
    for (const Selection s : {Selection::val_acc, Selection::val_loss, Selection::val_auc}) {
        if (text == to_string(s)) {
            return s;
        }
    }
    STRATA_CHECK_OPTION(false, "select_by", "'" + text + "'",
                        "expected val_acc, val_loss or val_auc");
    return Selection::val_acc;
}

double selection_figure(Selection selection, const EpochStats& stats) {
    switch (selection) {
        case Selection::val_acc:
            return stats.val_acc;
        case Selection::val_loss:
            return stats.val_loss;
        case Selection::val_auc:
            return stats.val_auc;
    }
    return stats.val_acc;
}

bool higher_is_better(Selection selection) {
    return selection != Selection::val_loss;
}

bool better(Selection selection, const EpochStats& candidate, const EpochStats& best) {
    const double c = selection_figure(selection, candidate);
    const double b = selection_figure(selection, best);
    if (std::isnan(c)) {
        return false;
    }
    if (std::isnan(b)) {
        return true;
    }
    return higher_is_better(selection) ? c > b : c < b;
}

}  // namespace strata
