// WriterLock: an advisory lock file beside the database, so only one process writes an index.
//
// Recovery marks every `running` scan as interrupted; that is only true if no other live
// process is writing, which this lock guarantees. A lock file of its own (not flock on the
// database) because SQLite uses fcntl locks on the database and NFS maps flock onto those.
#pragma once

#include <string>

#include "core/status.hpp"

namespace wsindex::storage {

class WriterLock {
  public:
    WriterLock() = default;
    WriterLock(WriterLock&& other) noexcept;
    WriterLock& operator=(WriterLock&& other) noexcept;
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;
    ~WriterLock();

    // Takes the lock "<db_path>-writer.lock" without waiting; EWOULDBLOCK means another
    // process writes this index. Released when the object dies (or the process does).
    static core::Status acquire(const std::string& db_path, WriterLock* out);

  private:
    int fd_ = -1;
};

}  // namespace wsindex::storage
