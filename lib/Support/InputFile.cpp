//===- InputFile.cpp - opening the files a user names, safely -------------===//

#include "tgc/Support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tgc;

static llvm::Error makeError(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "' " + message);
}

/// What a file that is not regular is, for the message refusing it.
static llvm::StringRef describeFileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

namespace {
/// A descriptor of a regular file, opened without blocking (a FIFO opened
/// for reading would wait for a writer) and checked with fstat, so that the
/// file checked is the file read.
class RegularFile {
public:
  static llvm::Expected<RegularFile> open(llvm::StringRef path) {
    llvm::SmallString<256> name(path);
    int fd;
    do
      fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
      return makeError(
          path, "cannot be read: " +
                    std::error_code(errno, std::generic_category()).message());
    RegularFile file(fd);
    struct stat status;
    if (::fstat(fd, &status) != 0)
      return makeError(
          path, "cannot be read: " +
                    std::error_code(errno, std::generic_category()).message());
    if (!S_ISREG(status.st_mode))
      return makeError(path, "is " + describeFileKind(status.st_mode) +
                                 ", not a regular file; tgc reads only "
                                 "regular files");
    file.size = static_cast<uint64_t>(status.st_size);
    return std::move(file);
  }

  RegularFile(RegularFile &&other) : fd(other.fd), size(other.size) {
    other.fd = -1;
  }
  RegularFile(const RegularFile &) = delete;
  ~RegularFile() {
    if (fd >= 0)
      ::close(fd);
  }

  int fd;
  uint64_t size = 0;

private:
  explicit RegularFile(int fd) : fd(fd) {}
};
} // namespace

/// Standard input, up to `maxBytes`: it may be a pipe, whose size is known
/// only at its end.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readStdin(uint64_t maxBytes) {
  std::string bytes;
  char chunk[1 << 16];
  while (true) {
    ssize_t got = ::read(STDIN_FILENO, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return makeError(
          "-", "(standard input) cannot be read: " +
                   std::error_code(errno, std::generic_category()).message());
    if (got == 0)
      break;
    if (bytes.size() + uint64_t(got) > maxBytes)
      return makeError("-", "(standard input) holds more than " +
                                llvm::Twine(maxBytes) + " bytes");
    bytes.append(chunk, size_t(got));
  }
  return llvm::MemoryBuffer::getMemBufferCopy(bytes, "<stdin>");
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
tgc::readInputFile(llvm::StringRef path, uint64_t maxBytes, bool allowStdin,
                   bool nullTerminated) {
  if (allowStdin && path == "-")
    return readStdin(maxBytes);
  llvm::Expected<RegularFile> file = RegularFile::open(path);
  if (!file)
    return file.takeError();
  if (file->size > maxBytes)
    return makeError(path, "holds " + llvm::Twine(file->size) +
                               " bytes, more than the " +
                               llvm::Twine(maxBytes) + " an input may hold");
  // A text's buffer ends with a null byte (MLIR's lexer needs one): mapped
  // files get it for free, read ones hold one more byte.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(file->fd, path, file->size,
                                      nullTerminated);
  if (!buffer)
    return makeError(path, "cannot be read: " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<std::string>
tgc::readInputFileRange(llvm::StringRef path, uint64_t offset, uint64_t size) {
  llvm::Expected<RegularFile> file = RegularFile::open(path);
  if (!file)
    return file.takeError();
  if (offset > file->size || file->size - offset < size)
    return makeError(path, "holds " + llvm::Twine(file->size) +
                               " bytes, fewer than offset " +
                               llvm::Twine(offset) + " + " + llvm::Twine(size));
  std::string bytes(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(file->fd, bytes.data() + done, size - done,
                          static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return makeError(
          path, "cannot be read: " +
                    std::error_code(errno, std::generic_category()).message());
    if (got == 0)
      return makeError(path,
                       "ended before offset " + llvm::Twine(offset + size));
    done += uint64_t(got);
  }
  return bytes;
}

llvm::Expected<std::string>
tgc::resolveInsideDirectory(llvm::StringRef directory,
                            llvm::StringRef location) {
  namespace path = llvm::sys::path;
  if (path::is_absolute(location) ||
      llvm::is_contained(
          llvm::make_range(path::begin(location), path::end(location)), ".."))
    return makeError(location, "is outside the model's directory");
  llvm::SmallString<256> realDirectory;
  if (std::error_code ec = llvm::sys::fs::real_path(directory, realDirectory))
    return makeError(directory, "(the model's directory) cannot be resolved: " +
                                    ec.message());
  llvm::SmallString<256> joined(directory);
  path::append(joined, location);
  llvm::SmallString<256> real;
  if (std::error_code ec = llvm::sys::fs::real_path(joined, real))
    return makeError(joined, "cannot be read: " + ec.message());
  // Inside means below the directory, compared component-wise after every
  // symlink is resolved: `sub/` linked to /etc escapes like `../`.
  llvm::SmallString<256> prefix(realDirectory);
  if (!prefix.ends_with(path::get_separator()))
    prefix += path::get_separator();
  if (!llvm::StringRef(real).starts_with(prefix))
    return makeError(location, "leads outside the model's directory "
                               "(through a symbolic link)");
  return std::string(real);
}

llvm::Error tgc::checkBracketNesting(llvm::MemoryBufferRef buffer,
                                     unsigned maxDepth) {
  llvm::StringRef text = buffer.getBuffer();
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      // A string literal: to its closing quote (a backslash escapes).
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < e && text[i] == '\n')
        --i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > maxDepth)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            buffer.getBufferIdentifier() + ":" + llvm::Twine(line) + ":" +
                llvm::Twine(i - lineStart + 1) +
                ": error: brackets nest deeper than " + llvm::Twine(maxDepth) +
                " levels; tgc refuses such input before parsing (the "
                "parser would overflow its stack)");
      break;
    case ')':
    case ']':
    case '}':
      depth -= depth > 0;
      break;
    case '>':
      // `->` is an arrow, `>=` a comparison (affine sets), not a bracket.
      if ((i == 0 || text[i - 1] != '-') && (i + 1 >= e || text[i + 1] != '='))
        depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}
