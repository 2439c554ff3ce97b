//===- OutputFile.h - writing outputs without losing files ------*- C++ -*-===//
//
// Every file tgc writes goes through an OutputFile: the bytes go to a
// temporary file beside the destination, renamed over it only once all of
// them are written and flushed without error. Until then (and for good when
// anything fails: a parse error, a pass failure, a full disk) whatever the
// destination held stays as it was, and no half-written file is left.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_OUTPUTFILE_H
#define TGC_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace tgc {

class OutputFile {
public:
  /// Opens a temporary file beside `path`. "-" writes to stdout; a path
  /// that exists and is not a regular file (/dev/null, a FIFO) is written
  /// directly, as there is nothing to replace.
  static llvm::Expected<std::unique_ptr<OutputFile>> open(llvm::StringRef path);

  OutputFile(const OutputFile &) = delete;
  /// Removes the temporary file unless committed.
  ~OutputFile();

  llvm::raw_ostream &os();
  /// Flushes, checks that every write succeeded, and renames the temporary
  /// over the destination. An error names the destination.
  llvm::Error commit();
  llvm::StringRef getPath() const { return path; }

private:
  OutputFile() = default;

  std::string path;
  std::string temporary;
  std::unique_ptr<llvm::raw_fd_ostream> stream;
  bool toStdout = false;
  bool committed = false;
};

/// Writes `path` with `write` through an OutputFile.
llvm::Error writeOutput(llvm::StringRef path,
                        llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Commits `files` in order, after every one was written: the first error
/// stops there (the later files keep their old contents).
llvm::Error commitAll(llvm::ArrayRef<std::unique_ptr<OutputFile>> files);

/// An error when the output `output` (what `option` names) is the same
/// file as one of `inputs`, compared by device and inode so that another
/// spelling or a link counts: writing it would replace an input.
llvm::Error checkOutputIsNoInput(llvm::StringRef output,
                                 llvm::ArrayRef<std::string> inputs,
                                 llvm::StringRef option);

/// An error when `path` could not be written now (its directory missing or
/// read-only, `path` a directory): checked before a long run whose result
/// goes there, so that it fails at once rather than after the run. Creates
/// and removes the temporary an OutputFile would write; a special file
/// (/dev/null, a FIFO) is not opened.
llvm::Error checkWritable(llvm::StringRef path);

/// Makes a write past the file size limit (`ulimit -f`) fail with EFBIG,
/// reported like a full disk, instead of killing the process with SIGXFSZ
/// and leaving its temporary file behind. Tools call it first.
void reportFileSizeLimitAsError();

} // namespace tgc

#endif // TGC_SUPPORT_OUTPUTFILE_H
