// Visibility filter: which indexed entries one caller could have seen themselves (plocate's
// rule), decided per directory and cached for one query.
//
// The rule. A non-root caller sees an entry /a/b/name (its name, path, size, times, errors) only
// if `find /` run with their own credentials could print it: read (r) and search (x)
// permission on every directory from / down to and including the parent /a/b (find lists a
// directory only if it can read it, and descends into it only if it can search it). A
// search-only directory (0711) therefore hides every name below it, even in directories the
// caller could open by a known path. A directory's recursive totals are shown only if the
// caller could list that directory itself (r and x on it and every ancestor). Root (uid 0) sees
// everything, as CAP_DAC_OVERRIDE would let it. Each directory's permissions are judged as the
// kernel judges them (daemon/permission_check.hpp). Unknown metadata (stat failed during the
// scan, directory absent, ACL unreadable) denies: every doubt falls on the side of hiding.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "daemon/credentials.hpp"
#include "daemon/permission_check.hpp"

namespace wsindex::daemon {

// One query's visibility decisions for one caller. Decisions are cached per directory, so a
// result set of N entries in D directories costs at most one source lookup per distinct
// ancestor directory. Not thread-safe: make one per query (it is cheap), on the thread that
// filters that query's rows. Paths are absolute and normalized (no trailing '/', no '.',
// '..' or '//'); anything else is not visible.
class VisibilityFilter {
  public:
    VisibilityFilter(Caller caller, DirPermSource source);

    // May the caller see the entry at `path` (name and metadata)? "/" itself: yes.
    bool can_see(std::string_view path);
    // Could `find /` as the caller list directory `dir` (r and x on it and every ancestor)?
    // Governs directory totals and "under DIR" queries.
    bool can_list(std::string_view dir);
    // x on `dir` and every ancestor.
    bool can_search(std::string_view dir);

    [[nodiscard]] const Caller& caller() const { return caller_; }
    // Source lookups so far (tests check the cache with it).
    [[nodiscard]] std::size_t lookups() const { return lookups_; }

  private:
    struct DirDecision {
        bool searchable = false;  // x on this directory and every ancestor
        bool listable = false;    // r and x on this directory and every ancestor
    };
    const DirDecision& decide(const std::string& dir);

    Caller caller_;
    DirPermSource source_;
    std::unordered_map<std::string, DirDecision> cache_;  // by directory path
    std::size_t lookups_ = 0;
};

}  // namespace wsindex::daemon
