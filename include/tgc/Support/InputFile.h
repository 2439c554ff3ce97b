//===- InputFile.h - opening the files a user names, safely -----*- C++ -*-===//
//
// Every file tgc reads (models, .mlir, .npy, .pb, safetensors, token data,
// device files, ONNX external data) is opened here, so that one place
// decides what may be read:
//
//  - only regular files: a FIFO, a device (/dev/zero), a socket or a
//    directory is refused by name, without blocking on it or reading it;
//  - at most a known number of bytes: a file larger than its limit is
//    refused before it is read;
//  - a file a model refers to (ONNX external data) must resolve, symlinks
//    followed, to a file inside the model's folder.
//
// Errors name the file and say what is wrong; they never quote its bytes.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_INPUTFILE_H
#define TGC_SUPPORT_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tgc {

/// The largest input file read whole by default: 64 GiB, above any model
/// tgc handles and below what a runaway read of an endless file would fill.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t(1) << 36;

/// The contents of the regular file `path` ("-" is standard input, read up
/// to `maxBytes` when `allowStdin`). Refuses a file that is not regular and
/// one larger than `maxBytes`. The error message names `path`. Without
/// `nullTerminated` (a binary file read in place) a large file is always
/// mapped, never copied; else only where a null byte fits after it.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t maxBytes = kMaxInputFileBytes,
              bool allowStdin = false, bool nullTerminated = true);

/// `size` bytes at `offset` of the regular file `path`: refuses a file that
/// is not regular or holds fewer bytes; reads only those bytes.
/// The deepest bracket nesting an MLIR input may have (see
/// checkBracketNesting).
inline constexpr unsigned kMaxBracketNesting = 256;

/// Refuses MLIR text whose brackets ((, [, {, <) nest deeper than
/// `maxDepth`, outside string literals and comments: MLIR's parser recurses
/// once or more per level, so 10,000 nested `[` overflow its stack. Scanned
/// before parsing; the error names the file, line and column.
llvm::Error checkBracketNesting(llvm::MemoryBufferRef buffer,
                                unsigned maxDepth = kMaxBracketNesting);

llvm::Expected<std::string> readInputFileRange(llvm::StringRef path,
                                               uint64_t offset, uint64_t size);

/// The real path of `location`, a path relative to `directory`, when it
/// names a regular file inside `directory` once every symlink is resolved.
/// Refuses absolute paths, `..`, symlinks (of the file or of a folder on the
/// way) that lead outside `directory`, and files that are not regular.
llvm::Expected<std::string> resolveInsideDirectory(llvm::StringRef directory,
                                                   llvm::StringRef location);

} // namespace tgc

#endif // TGC_SUPPORT_INPUTFILE_H
