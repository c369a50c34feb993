// Writes a synthetic name set in the name index file format (docs/schema.md, "The name index
// file") so that the benchmark opens and searches the product's own storage::NameFile, mapped
// and validated exactly as the daemon does, without building a database first.
#pragma once

#include <memory>
#include <string>

#include "core/status.hpp"
#include "storage/name_file.hpp"
#include "synthetic_names.hpp"

namespace wsindex::bench {

// Writes `names` to `path` (directories of `names_per_dir` names each, ids 1, 2, ...), opens it
// with NameFile::open for the identity {0, 0}, and unlinks the path (the mapping keeps it).
core::Status write_and_open_name_file(const NameSet& names, std::size_t names_per_dir,
                                      const std::string& path,
                                      std::shared_ptr<const storage::NameFile>* out);

}  // namespace wsindex::bench
