//===- AtomicFile.h - files written whole or not at all ---------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_ATOMICFILE_H
#define TGC_RUNTIME_SRC_ATOMICFILE_H

#include <functional>
#include <ostream>
#include <string>

namespace tgc::rt {

/// Writes `path` through `write`, into a temporary file beside it that is
/// renamed over `path` at the end: a failure leaves `path` as it was and no
/// temporary behind; false (with `error`) if it cannot.
bool writeFileAtomically(const std::string &path,
                         const std::function<void(std::ostream &)> &write,
                         std::string &error);

/// The same for a file whose whole contents is `text`.
inline bool writeFileAtomically(const std::string &path,
                                const std::string &text, std::string &error) {
  return writeFileAtomically(
      path, [&](std::ostream &out) { out << text; }, error);
}

/// Removes the temporaries of the writeFileAtomically calls in progress:
/// for paths that end the process at once (a failed collective while
/// `write` gathers the values, a kernel error), so that no partial file is
/// left beside `path`. std::exit runs it too, and SIGINT and SIGTERM remove
/// them before doing what they did (from the first writeFileAtomically on).
void removePendingTemporaries();

/// Whether writeFileAtomically could write `path` now: its temporary file
/// can be created beside it (then removed) and `path` is no directory.
/// Checked before a long run whose result goes there, so that a mistyped
/// directory fails at once rather than after the run; false (with `error`
/// naming the path and the system's reason) if not.
bool checkWritable(const std::string &path, std::string &error);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_ATOMICFILE_H
