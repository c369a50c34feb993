// Reading an index's tables once, front to back, so that the page cache holds them before the
// first query needs them, and stopping as soon as something more useful is waiting.
#pragma once

#include <functional>

#include "storage/database.hpp"

namespace wsindex::storage {

// Reads every page of `entries` and `dirs` (a count over each). `give_way` is asked every
// few microseconds of work (SQLite's progress handler, every 10,000 virtual machine steps);
// once it answers true the reading stops. Returns whether it read to the end. The handler is
// removed before returning, so later statements on `db` run as usual.
bool warm_pages(Database& db, const std::function<bool()>& give_way);

}  // namespace wsindex::storage
