//===- Safetensors.cpp - reading and writing .safetensors files -----------===//

#include "tgc/Support/Safetensors.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/OutputFile.h"
#include "tgc/runtime/SafetensorsFormat.h"
#include "tgc/runtime/Storage.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace tgc;

llvm::Error safetensors::write(llvm::raw_ostream &os,
                               llvm::ArrayRef<Entry> entries) {
  std::string prefix, error;
  if (!rt::safetensors::makeHeader(entries.data(), entries.size(), {}, prefix,
                                   error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  os << prefix;
  for (const Entry &entry : entries)
    os.write(entry.data.data(), entry.data.size());
  return llvm::Error::success();
}

llvm::Error safetensors::write(llvm::StringRef path,
                               llvm::ArrayRef<Entry> entries) {
  llvm::Expected<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file)
    return file.takeError();
  if (llvm::Error error = write((*file)->os(), entries))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + path + "': " + llvm::toString(std::move(error)));
  return (*file)->commit();
}

llvm::Expected<std::vector<safetensors::Entry>>
safetensors::read(llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path, kMaxInputFileBytes, /*allowStdin=*/false,
                    /*nullTerminated=*/false);
  if (!file)
    return file.takeError();
  llvm::StringRef bytes = (*file)->getBuffer();
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  std::string error;
  if (!rt::safetensors::parse(
          bytes.data(), bytes.size(), entries, metadata, error,
          [](const std::string &name) { return printableName(name); }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + error);
  return entries;
}

namespace {
struct DTypeName {
  tgc::npy::DType dtype;
  llvm::StringLiteral name;
};
constexpr DTypeName kDTypeNames[] = {
    {tgc::npy::DType::F16, "F16"}, {tgc::npy::DType::F32, "F32"},
    {tgc::npy::DType::F64, "F64"}, {tgc::npy::DType::I32, "I32"},
    {tgc::npy::DType::I64, "I64"}, {tgc::npy::DType::I8, "I8"},
    {tgc::npy::DType::I16, "I16"}, {tgc::npy::DType::U8, "U8"},
    {tgc::npy::DType::U16, "U16"}, {tgc::npy::DType::U32, "U32"},
    {tgc::npy::DType::U64, "U64"}, {tgc::npy::DType::Bool, "BOOL"}};
} // namespace

llvm::StringRef tgc::safetensors::getDType(npy::DType dtype) {
  for (const DTypeName &entry : kDTypeNames)
    if (entry.dtype == dtype)
      return entry.name;
  llvm_unreachable("every .npy dtype has a safetensors name");
}

std::optional<tgc::npy::DType>
tgc::safetensors::parseDType(llvm::StringRef dtype) {
  for (const DTypeName &entry : kDTypeNames)
    if (entry.name == dtype)
      return entry.dtype;
  return std::nullopt;
}

tgc::safetensors::Entry tgc::safetensors::toEntry(std::string name,
                                                  npy::Array array) {
  return {std::move(name), getDType(array.dtype).str(), std::move(array.shape),
          std::move(array.data)};
}

namespace {
/// The elements of `data`, stored as `S` (one of the runtime's storage
/// types), as F32 bytes: exact, as every value of these formats is an f32.
template <typename S>
std::vector<char> widenToF32(const std::vector<char> &data) {
  size_t count = data.size() / sizeof(S);
  std::vector<char> wide(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    S element;
    std::memcpy(&element, data.data() + i * sizeof(S), sizeof(S));
    float value = tgc::rt::ld(element);
    std::memcpy(wide.data() + i * sizeof(float), &value, sizeof(float));
  }
  return wide;
}
} // namespace

llvm::Expected<tgc::npy::Array> tgc::safetensors::toArray(Entry entry) {
  // The float formats .npy has no type for (a bf16 parameter's checkpoint
  // from a generated trainer, an fp8 one) are read as their F32 values.
  std::vector<char> (*widen)(const std::vector<char> &) = nullptr;
  if (entry.dtype == "BF16")
    widen = widenToF32<rt::bf16>;
  else if (entry.dtype == "F8_E4M3")
    widen = widenToF32<rt::f8e4m3fn>;
  else if (entry.dtype == "F8_E5M2")
    widen = widenToF32<rt::f8e5m2>;
  else if (entry.dtype == "F8_E8M0")
    widen = widenToF32<rt::f8e8m0fnu>;
  if (widen)
    return npy::Array{npy::DType::F32, std::move(entry.shape),
                      widen(entry.data)};
  std::optional<npy::DType> dtype = parseDType(entry.dtype);
  if (!dtype)
    return llvm::createStringError("tensor '" + entry.name + "' has dtype " +
                                   entry.dtype + ", which tgc cannot read");
  return npy::Array{*dtype, std::move(entry.shape), std::move(entry.data)};
}
