// FrameDecoder: NUL framing with a size cap checked before buffering.
#include "ipc/frame_decoder.hpp"

#include <cstring>

namespace wsindex::ipc {

bool FrameDecoder::feed(std::string_view bytes, std::vector<std::string>& out) {
    if (failed_) return false;
    while (!bytes.empty()) {
        const void* nul = std::memchr(bytes.data(), '\0', bytes.size());
        const std::size_t take =
            nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - bytes.data())
                : bytes.size();
        // Check before appending, so an oversize message is never buffered past the cap.
        if (partial_.size() + take > max_) {
            failed_ = true;
            partial_.clear();
            partial_.shrink_to_fit();
            return false;
        }
        if (!nul) {
            partial_.append(bytes);
            return true;
        }
        if (partial_.empty()) {
            out.emplace_back(bytes.substr(0, take));  // whole message in this read: one copy
        } else {
            partial_.append(bytes.substr(0, take));
            out.push_back(std::move(partial_));
            partial_.clear();
        }
        bytes.remove_prefix(take + 1);
    }
    return true;
}

}  // namespace wsindex::ipc
