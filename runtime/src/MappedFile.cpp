//===- MappedFile.cpp - files the trainer reads, mapped -------------------===//

#include "MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tgc::rt;

MappedFile::~MappedFile() {
  if (map)
    ::munmap(map, length);
}

bool MappedFile::open(const std::string &path, std::string &error) {
  // O_NONBLOCK: a FIFO without a writer is refused below, not waited on.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = "'" + path + "' cannot be read: " + std::strerror(errno);
    return false;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    error = "'" + path + "' is not a regular file";
    return false;
  }
  length = static_cast<size_t>(info.st_size);
  if (length > 0) {
    map = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int code = errno;
      map = nullptr;
      length = 0;
      ::close(fd);
      error = "'" + path + "' cannot be mapped: " + std::strerror(code);
      return false;
    }
  }
  ::close(fd);
  return true;
}
