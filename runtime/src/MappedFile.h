//===- MappedFile.h - files the trainer reads, mapped -----------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_MAPPEDFILE_H
#define TGC_RUNTIME_SRC_MAPPEDFILE_H

#include <cstddef>
#include <string>

namespace tgc::rt {

/// A regular file mapped read-only into memory, not copied: its pages are
/// read as they are touched. A FIFO, a device or a directory is refused
/// without blocking on it or reading it.
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps `path`; false and `error` ("'PATH' cannot be read: why", "'PATH'
  /// is not a regular file") if it cannot.
  bool open(const std::string &path, std::string &error);
  const char *data() const { return static_cast<const char *>(map); }
  size_t size() const { return length; }

private:
  void *map = nullptr;
  size_t length = 0;
};

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_MAPPEDFILE_H
