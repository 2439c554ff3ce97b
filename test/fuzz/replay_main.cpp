//===- replay_main.cpp - a fuzz target's inputs, without libFuzzer --------===//
//
// The main of a fuzz target built without libFuzzer (the default build):
// runs LLVMFuzzerTestOneInput once on every file given, and on every file
// under every directory given (the corpus and the crash inputs kept in
// test/fuzz/), so that ctest replays them on every build. A crash is the
// failure; it is reported by the process's own death.
//
//   tgc-fuzz-mlir FILE_OR_DIR...
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (argc < 2) {
    llvm::errs() << "usage: " << argv[0] << " FILE_OR_DIR...\n";
    return 1;
  }
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!llvm::sys::fs::is_directory(argv[i])) {
      files.push_back(argv[i]);
      continue;
    }
    std::error_code error;
    for (llvm::sys::fs::recursive_directory_iterator it(argv[i], error), end;
         it != end && !error; it.increment(error))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    if (error) {
      llvm::errs() << argv[0] << ": cannot list '" << argv[i]
                   << "': " << error.message() << "\n";
      return 1;
    }
  }
  // The order of a directory's listing is the file system's; the replay's
  // is the names'.
  std::sort(files.begin(), files.end());
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << argv[0] << ": cannot read '" << file
                   << "': " << buffer.getError().message() << "\n";
      return 1;
    }
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
        (*buffer)->getBufferSize());
  }
  llvm::outs() << argv[0] << ": " << files.size() << " inputs, no crash\n";
  return 0;
}
