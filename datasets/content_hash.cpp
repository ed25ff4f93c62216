// ContentHash: one 64-bit lane of multiply-rotate rounds over little-endian words, a final
// avalanche; and the graph's content id in write_graph's order.
#include "datasets/content_hash.hpp"

#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <vector>

namespace strata {
namespace {

constexpr std::uint64_t prime1 = 0x9e3779b185ebca87ULL;
constexpr std::uint64_t prime2 = 0xc2b2ae3d27d4eb4fULL;
constexpr std::uint64_t prime3 = 0x165667b19e3779f9ULL;

static_assert(std::endian::native == std::endian::little,
              "the content id is defined on little-endian bytes");

}  // namespace

void ContentHash::step(std::uint64_t word) {
    hash_ = std::rotl(hash_ ^ (word * prime2), 31) * prime1;
}

void ContentHash::add(std::span<const std::byte> bytes) {
    length_ += bytes.size();
    std::size_t i = 0;
    while (pending_bytes_ > 0 && pending_bytes_ < 8 && i < bytes.size()) {
        pending_ |= static_cast<std::uint64_t>(bytes[i]) << (8 * pending_bytes_);
        ++pending_bytes_;
        ++i;
    }
    if (pending_bytes_ == 8) {
        step(pending_);
        pending_ = 0;
        pending_bytes_ = 0;
    }
    for (; i + 8 <= bytes.size(); i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, bytes.data() + i, 8);
        step(word);
    }
    for (; i < bytes.size(); ++i) {
        pending_ |= static_cast<std::uint64_t>(bytes[i]) << (8 * pending_bytes_);
        ++pending_bytes_;
    }
}

void ContentHash::add_section(std::string_view name, std::span<const std::int64_t> shape) {
    add(std::as_bytes(std::span<const char>(name.data(), name.size())));
    add(std::array<std::byte, 1>{std::byte{0}});
    const auto rank = static_cast<std::int64_t>(shape.size());
    add_values(std::span<const std::int64_t>(&rank, 1));
    add_values(shape);
}

std::string ContentHash::id() const {
    std::uint64_t h = hash_;
    if (pending_bytes_ > 0) {
        h = std::rotl(h ^ (pending_ * prime2), 31) * prime1;
    }
    h ^= length_;
    h ^= h >> 33;
    h *= prime2;
    h ^= h >> 29;
    h *= prime3;
    h ^= h >> 32;
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "content64:%016llx",
                  static_cast<unsigned long long>(h));
    return text.data();
}

std::string graph_content_id(const GraphView& g) {
    ContentHash hash;
    const std::int64_t n = g.num_vertices();
    const std::int64_t e = g.num_edges();
    const std::int64_t header[2] = {g.num_classes, g.num_splits};
    const std::int64_t name_length = static_cast<std::int64_t>(g.name.size());
    hash.add_section("/", std::span<const std::int64_t>(&name_length, 1));
    hash.add_values(std::span<const char>(g.name));
    hash.add_values(std::span<const std::int64_t>(header));
    auto array = [&hash]<class T>(std::string_view name, std::vector<std::int64_t> shape,
                                  std::span<const T> values) {
        hash.add_section(name, shape);
        hash.add_values(values);
    };
    array("/graph/indptr", {n + 1}, std::span<const std::int64_t>(g.indptr));
    array("/graph/indices", {e}, std::span<const std::int64_t>(g.indices));
    if (!g.edge_weight.empty()) {
        array("/graph/edge_weight", {e}, std::span<const float>(g.edge_weight));
    }
    array("/node/features", {n, g.features.cols}, std::span<const float>(g.features.values));
    array("/node/labels", {n}, std::span<const std::int64_t>(g.labels));
    const std::int64_t splits = g.num_splits;
    array("/node/train_mask", {splits, n}, std::span<const std::uint8_t>(g.train_mask));
    array("/node/val_mask", {splits, n}, std::span<const std::uint8_t>(g.val_mask));
    array("/node/test_mask", {splits, n}, std::span<const std::uint8_t>(g.test_mask));
    return hash.id();
}

}  // namespace strata
