//===- Safetensors.h - reading and writing .safetensors files ---*- C++ -*-===//
//
// The safetensors format (8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw data), used
// for parameters and optimizer state.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_SAFETENSORS_H
#define TGC_SUPPORT_SAFETENSORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::safetensors {

/// One tensor: its name, dtype ("F32", "F64", "I64", "I32", "BOOL"...),
/// shape and raw little-endian bytes.
struct Entry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// Writes `entries` to `path` (through a temporary file, renamed at the end,
/// so that an error leaves nothing behind). Names must be unique.
llvm::Error write(llvm::StringRef path, llvm::ArrayRef<Entry> entries);

/// Reads every tensor of `path`. Errors name the file and say what is wrong
/// (truncated, header not JSON, offsets outside the data...).
llvm::Expected<std::vector<Entry>> read(llvm::StringRef path);

} // namespace tgc::safetensors

#endif // TGC_SUPPORT_SAFETENSORS_H
