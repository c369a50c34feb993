// FrameDecoder: splits a byte stream into NUL-terminated messages, incrementally, with a cap.
//
// Feed it whatever read() returned; it hands back every complete message (without its NUL).
// A message longer than the cap is an error as soon as the cap is passed, without waiting for
// its NUL: the decoder never holds more than `max_message_bytes` of an unfinished message, so a
// peer that never sends a NUL cannot make it grow. After an error the stream cannot be
// resynchronised (the rest of the oversize message is indistinguishable from new ones), so the
// decoder stays failed. Pure logic, no I/O; one owner thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wsindex::ipc {

class FrameDecoder {
  public:
    explicit FrameDecoder(std::size_t max_message_bytes) : max_(max_message_bytes) {}

    // Appends each complete message in `bytes` to `out` (in order). Returns false — now and on
    // every later call — once a message exceeds the cap; messages completed before the
    // oversize one in the same `bytes` are still appended.
    bool feed(std::string_view bytes, std::vector<std::string>& out);

    // Bytes of an unfinished message held now (always <= max_message_bytes()).
    [[nodiscard]] std::size_t buffered() const { return partial_.size(); }
    [[nodiscard]] bool failed() const { return failed_; }
    [[nodiscard]] std::size_t max_message_bytes() const { return max_; }

  private:
    std::size_t max_;      // bytes, not counting the NUL
    std::string partial_;  // the unfinished message so far
    bool failed_ = false;
};

}  // namespace wsindex::ipc
