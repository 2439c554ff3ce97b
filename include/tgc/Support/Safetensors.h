//===- Safetensors.h - reading and writing .safetensors files ---*- C++ -*-===//
//
// The safetensors format (8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw data), used
// for parameters and optimizer state: tgc's files, opened safely
// (InputFile.h, OutputFile.h), in the runtime's format code.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_SAFETENSORS_H
#define TGC_SUPPORT_SAFETENSORS_H

#include "tgc/Support/Npy.h"
#include "tgc/runtime/Safetensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tgc::safetensors {

/// One tensor: its name, dtype ("F32", "F64", "I64", "I32", "BOOL"...),
/// shape and raw little-endian bytes. The format is the runtime's
/// (tgc/runtime/SafetensorsFormat.h): one writer and one checker for tgc's
/// files and the generated trainer's checkpoints.
using Entry = rt::safetensors::Entry;

/// Writes `entries` to `path` (through a temporary file, renamed at the end,
/// so that an error leaves nothing behind). Names must be unique.
llvm::Error write(llvm::StringRef path, llvm::ArrayRef<Entry> entries);
/// Writes the file's bytes to `os` (an error only for duplicate names).
llvm::Error write(llvm::raw_ostream &os, llvm::ArrayRef<Entry> entries);

/// Reads every tensor of `path`. Errors name the file and say what is wrong
/// (truncated, header not JSON, offsets outside the data...).
llvm::Expected<std::vector<Entry>> read(llvm::StringRef path);

/// The safetensors dtype of a .npy dtype ("F32" for F32...), and back
/// (nullopt where tgc has no .npy dtype for it: BF16, I8...). One table.
llvm::StringRef getDType(npy::DType dtype);
std::optional<npy::DType> parseDType(llvm::StringRef dtype);

/// The entry holding `array` under `name`.
Entry toEntry(std::string name, npy::Array array);
/// The array an entry holds, or an error naming the tensor and its dtype.
/// BF16 and the float8 dtypes (F8_E4M3, F8_E5M2, F8_E8M0), which .npy has
/// no type for, come as their F32 values (exact).
llvm::Expected<npy::Array> toArray(Entry entry);

} // namespace tgc::safetensors

#endif // TGC_SUPPORT_SAFETENSORS_H
