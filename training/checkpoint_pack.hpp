// Flat bytes of a checkpoint's parts, for the messages that carry them between ranks: the
// broadcast of a loaded checkpoint (resume, predict) and the gather of every rank's pipeline
// history to the writing rank. Fields in a fixed order, sizes before arrays; the reader checks
// it never reads past the message.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "src/base/error.hpp"
#include "src/nn/pipeline_history.hpp"
#include "training/epoch_stats.hpp"
#include "training/guard_state.hpp"

namespace strata {

class Packer {
public:
    template <class T>
    void put(const T& value) requires std::is_trivially_copyable_v<T> {
        const auto* p = reinterpret_cast<const std::byte*>(&value);
        bytes_.insert(bytes_.end(), p, p + sizeof(T));
    }
    template <class T>
    void put(const std::vector<T>& values) requires std::is_trivially_copyable_v<T> {
        put(values.size());
        const auto raw = std::as_bytes(std::span<const T>(values));
        bytes_.insert(bytes_.end(), raw.begin(), raw.end());
    }
    void put(const std::string& text) { put(std::vector<char>(text.begin(), text.end())); }
    [[nodiscard]] std::vector<std::byte>& bytes() { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

class Unpacker {
public:
    /// `what` names the message in errors ("broadcast checkpoint").
    Unpacker(std::span<const std::byte> bytes, std::string what)
        : bytes_(bytes), what_(std::move(what)) {}
    template <class T>
    void get(T& value) requires std::is_trivially_copyable_v<T> {
        need(sizeof(T));
        std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
    }
    template <class T>
    void get(std::vector<T>& values) requires std::is_trivially_copyable_v<T> {
        std::size_t n = 0;
        get(n);
        need(n <= bytes_.size() / sizeof(T) ? n * sizeof(T) : bytes_.size() + 1);
        values.resize(n);
        if (n > 0) {
            std::memcpy(values.data(), bytes_.data() + pos_, n * sizeof(T));
        }
        pos_ += n * sizeof(T);
    }
    void get(std::string& text) {
        std::vector<char> chars;
        get(chars);
        text.assign(chars.begin(), chars.end());
    }
    [[nodiscard]] bool done() const { return pos_ == bytes_.size(); }

private:
    void need(std::size_t n) const {
        STRATA_CHECK(n <= bytes_.size() - pos_, what_, ": short message (", bytes_.size(),
                     " bytes)");
    }
    std::span<const std::byte> bytes_;
    std::string what_;
    std::size_t pos_ = 0;
};

/// A best-epoch record: the fields a checkpoint keeps of an EpochStats (epoch, loss, the
/// evaluation's accuracies and losses, ROC-AUC).
void put(Packer& p, const EpochStats& best);
void get(Unpacker& u, EpochStats& best);
void put(Packer& p, const PipelineHistory& history);
void get(Unpacker& u, PipelineHistory& history);
void put(Packer& p, const GuardState& guard);
void get(Unpacker& u, GuardState& guard);

}  // namespace strata
