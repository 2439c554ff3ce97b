//===- Data.cpp - token files and the windows of each step ---------------===//

#include "Data.h"

#include "tgc/runtime/Random.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace tgc::rt;

MappedTokenFile::~MappedTokenFile() {
  if (map)
    ::munmap(map, size);
}

bool MappedTokenFile::open(const std::string &path, int64_t seq,
                           int64_t vocabulary, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = "token file '" + path + "'" + message;
    return false;
  };
  // Not blocking on a FIFO's writer: the type is checked before reading.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return fail(std::string(" cannot be read: ") + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return fail(" is not a regular file");
  }
  size = static_cast<size_t>(info.st_size);
  if (size > 0) {
    map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      map = nullptr;
      int code = errno;
      ::close(fd);
      return fail(std::string(" cannot be mapped: ") + std::strerror(code));
    }
  }
  ::close(fd);
  std::string message;
  if (!parseTokenFile(static_cast<const unsigned char *>(map), size, seq,
                      vocabulary, tokens, message))
    return fail(": " + message);
  return true;
}

WindowPrefetcher::~WindowPrefetcher() {
  if (next.valid())
    next.wait();
}

WindowPrefetcher::Batch WindowPrefetcher::make(unsigned n) const {
  Batch batch;
  batch.step = n;
  batch.ids.resize(rows * seq);
  batch.labels.resize(rows * seq);
  fillTokenWindows(tokens, batch.ids.data(), batch.labels.data(), rows, seq,
                   stepSeed(seed, n));
  return batch;
}

void WindowPrefetcher::take(unsigned n, std::vector<int64_t> &ids,
                            std::vector<int64_t> &labels) {
  Batch batch = next.valid() ? next.get() : make(n);
  if (batch.step != n)
    batch = make(n);
  try {
    next = std::async(std::launch::async, [this, n] { return make(n + 1); });
  } catch (const std::system_error &) {
    // No thread to be had: the next step makes its rows itself.
  }
  ids = std::move(batch.ids);
  labels = std::move(batch.labels);
}
