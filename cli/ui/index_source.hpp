// What the browser asks the daemon, through the same client library and socket as the rest of
// wsctl (so with the caller's own credentials): a directory's entries (wsindex.Du with
// children), a search (wsindex.Find), the daemon's state (wsindex.Status), a rescan
// (wsindex.Scan) and the index's errors (wsindex.Errors). One connection, kept open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/ui/model.hpp"
#include "ipc/methods.hpp"
#include "ipc/result.hpp"

namespace wsindex::cli::ui {

// What Status says about the index, boiled down to what the browser shows or compares.
struct IndexState {
    // Changes whenever a scan ends or starts, a live update is applied, or a root's totals
    // move: when it differs from the last one, the listing is read again.
    std::string change_token;
    std::optional<ipc::ScanInfo> running;
    std::size_t queued = 0;
};

class IndexSource {
  public:
    explicit IndexSource(const Context& ctx) : ctx_(ctx) {}

    // `path`'s own totals and its entries (DuParams::children).
    ipc::Result<ipc::DuReply> list(const std::string& path);
    // The top-level totals of every root the caller may see (Du without a path).
    ipc::Result<ipc::DuReply> roots();
    // Entries below `under` whose name holds `pattern`, at most `limit` of them.
    ipc::Result<ipc::FindReply> find(const std::string& pattern, const std::string& under,
                                     std::uint64_t limit);
    ipc::Result<IndexState> state();
    // Queues a scan of `path` (without waiting for it).
    std::optional<ipc::Error> rescan(const std::string& path);
    // The current index's errors at `path` or below it, at most `limit`.
    ipc::Result<std::vector<ipc::ErrorEntry>> errors_below(const std::string& path,
                                                           std::size_t limit);

  private:
    ipc::Result<nlohmann::json> call(std::string_view method, const nlohmann::json& params);
    std::optional<ipc::Error> call_more(std::string_view method, const nlohmann::json& params,
                                        const ipc::Client::ReplyCallback& on_reply);

    const Context& ctx_;
    std::optional<ipc::Client> client_;
};

}  // namespace wsindex::cli::ui
