//===- AtomicFile.cpp - files written whole or not at all -----------------===//

#include "AtomicFile.h"

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

namespace {
/// The temporaries being written, and their lock. Never destroyed:
/// std::exit's handlers may run after static destructors have.
std::set<std::string> &getPending() {
  static auto *pending = new std::set<std::string>();
  return *pending;
}
std::mutex &getPendingMutex() {
  static auto *mutex = new std::mutex();
  return *mutex;
}

/// The same paths for the handler of SIGINT and SIGTERM (Ctrl-C, or the
/// launcher stopping the ranks), which may neither lock nor free: slots of
/// strings that are never freed.
constexpr int kSignalSlots = 16;
std::atomic<const char *> signalSlots[kSignalSlots];
struct sigaction previousInt, previousTerm;

void onStopSignal(int signal) {
  for (std::atomic<const char *> &slot : signalSlots)
    if (const char *path = slot.load())
      ::unlink(path);
  // What the signal did before (end the process, most often) does it now.
  ::sigaction(signal, signal == SIGINT ? &previousInt : &previousTerm, nullptr);
  ::raise(signal);
}

void installStopHandlers() {
  std::atexit(tgc::rt::removePendingTemporaries);
  for (auto [signal, previous] :
       {std::pair{SIGINT, &previousInt}, std::pair{SIGTERM, &previousTerm}}) {
    if (::sigaction(signal, nullptr, previous) != 0 ||
        previous->sa_handler == SIG_IGN)
      continue;
    struct sigaction handler {};
    handler.sa_handler = onStopSignal;
    sigemptyset(&handler.sa_mask);
    ::sigaction(signal, &handler, nullptr);
  }
}

/// Lists `path` as being written for the object's lifetime.
struct PendingTemporary {
  explicit PendingTemporary(std::string path) : path(std::move(path)) {
    static std::once_flag installed;
    std::call_once(installed, installStopHandlers);
    std::lock_guard<std::mutex> lock(getPendingMutex());
    getPending().insert(this->path);
    const char *copy = strdup(this->path.c_str());
    for (int i = 0; i < kSignalSlots && copy && slot < 0; ++i) {
      const char *empty = nullptr;
      if (signalSlots[i].compare_exchange_strong(empty, copy))
        slot = i;
    }
    if (slot < 0)
      std::free(const_cast<char *>(copy));
  }
  ~PendingTemporary() {
    std::lock_guard<std::mutex> lock(getPendingMutex());
    getPending().erase(path);
    // The copy stays: a handler on another thread may still read it.
    if (slot >= 0)
      signalSlots[slot].store(nullptr);
  }
  std::string path;
  int slot = -1;
};
} // namespace

void tgc::rt::removePendingTemporaries() {
  std::lock_guard<std::mutex> lock(getPendingMutex());
  for (const std::string &path : getPending())
    std::remove(path.c_str());
  getPending().clear();
}

/// Whether `path` exists and is neither a regular file nor a directory
/// (/dev/null, a FIFO): written directly, as there is nothing to replace
/// (a rename would replace the device or the FIFO with a file).
static bool isSpecialFile(const std::string &path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode) &&
         !S_ISDIR(status.st_mode);
}

bool tgc::rt::writeFileAtomically(
    const std::string &path, const std::function<void(std::ostream &)> &write,
    std::string &error) {
  if (isSpecialFile(path)) {
    std::ofstream out(path, std::ios::binary);
    if (out)
      write(out);
    out.close();
    if (!out)
      error = "cannot write '" + path + "'";
    return bool(out);
  }
  std::string temporary = path + ".tmp";
  PendingTemporary pending(temporary);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out)
      write(out);
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      error = "cannot write '" + path + "'";
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

bool tgc::rt::checkWritable(const std::string &path, std::string &error) {
  struct stat status;
  if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  if (isSpecialFile(path))
    return true;
  // The temporary writeFileAtomically writes, created only if absent, so
  // that a probe never touches a file that is there.
  std::string temporary = path + ".tmp";
  std::FILE *file = std::fopen(temporary.c_str(), "wx");
  if (!file && errno == EEXIST)
    return true;
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::fclose(file);
  std::remove(temporary.c_str());
  return true;
}
