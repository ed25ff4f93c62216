// The op catalogue's rows (op_catalogue.hpp), filled by the static registrations of the ops'
// object files before main runs.
#include "src/nn/op_catalogue.hpp"

#include <algorithm>
#include <cstring>

namespace strata {
namespace {

/// Built on first use, so registrations in any object file's static initialisers find it.
std::vector<OpCatalogueEntry>& rows() {
    static std::vector<OpCatalogueEntry> all;
    return all;
}

}  // namespace

OpRegistration::OpRegistration(const OpCatalogueEntry& entry) {
    std::vector<OpCatalogueEntry>& all = rows();
    const auto before = [](const OpCatalogueEntry& a, const OpCatalogueEntry& b) {
        return std::strcmp(a.name, b.name) < 0;
    };
    all.insert(std::upper_bound(all.begin(), all.end(), entry, before), entry);
}

std::span<const OpCatalogueEntry> op_catalogue() {
    return rows();
}

}  // namespace strata
