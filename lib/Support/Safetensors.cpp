//===- Safetensors.cpp - reading and writing .safetensors files -----------===//

#include "tgc/Support/Safetensors.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/OutputFile.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace tgc;

llvm::Error safetensors::write(llvm::raw_ostream &os,
                               llvm::ArrayRef<Entry> entries) {
  // The header: each tensor's dtype, shape and [begin, end) in the data.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  llvm::StringSet<> names;
  uint64_t offset = 0;
  for (const Entry &entry : entries) {
    if (!names.insert(entry.name).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "two tensors are named '" + entry.name +
                                         "'");
    header[entry.name] = {
        {"dtype", entry.dtype},
        {"shape", entry.shape},
        {"data_offsets", {offset, offset + entry.data.size()}}};
    offset += entry.data.size();
  }
  std::string text = header.dump();
  // The data starts 8-byte aligned: pad the header with spaces.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t length = text.size();
  char prefix[8];
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  os.write(prefix, 8);
  os << text;
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
  auto error = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + message);
  };
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path);
  if (!file)
    return file.takeError();
  llvm::StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < 8)
    return error("too short for a safetensors file");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i)
    length = (length << 8) | static_cast<unsigned char>(bytes[i]);
  if (length > bytes.size() - 8)
    return error("the header length exceeds the file");
  llvm::StringRef data = bytes.drop_front(8 + length);
  nlohmann::json header =
      nlohmann::json::parse(bytes.substr(8, length).str(), nullptr,
                            /*allow_exceptions=*/false);
  if (!header.is_object())
    return error("the header is not a JSON object");
  static const llvm::StringMap<size_t> elementSizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  std::vector<Entry> entries;
  struct DataRange {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<DataRange> ranges;
  for (auto &[name, info] : header.items()) {
    if (name == "__metadata__")
      continue;
    Entry entry;
    entry.name = name;
    const nlohmann::json &dtype = info.is_object() ? info["dtype"] : info;
    const nlohmann::json &shape = info.is_object() ? info["shape"] : info;
    const nlohmann::json &offsets =
        info.is_object() ? info["data_offsets"] : info;
    if (!dtype.is_string() || !shape.is_array() || !offsets.is_array() ||
        offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      return error("tensor '" + name + "' has a malformed header entry");
    entry.dtype = dtype.get<std::string>();
    auto size = elementSizes.find(entry.dtype);
    if (size == elementSizes.end())
      return error("tensor '" + name + "' has unknown dtype '" + entry.dtype +
                   "'");
    uint64_t count = 1;
    for (const nlohmann::json &dim : shape) {
      if (!dim.is_number_unsigned())
        return error("tensor '" + name + "' has a malformed shape");
      uint64_t d = dim.get<uint64_t>();
      if (d && count > (uint64_t(1) << 40) / d)
        return error("tensor '" + name + "' is too large");
      count *= d;
      entry.shape.push_back(static_cast<int64_t>(d));
    }
    uint64_t begin = offsets[0].get<uint64_t>(),
             end = offsets[1].get<uint64_t>();
    if (begin > end || end > data.size() || end - begin != count * size->second)
      return error("tensor '" + name + "' has data offsets [" +
                   llvm::Twine(begin) + ", " + llvm::Twine(end) +
                   ") that do not match its shape or the file");
    entry.data.assign(data.begin() + begin, data.begin() + end);
    entries.push_back(std::move(entry));
    if (begin != end)
      ranges.push_back({begin, end, name});
  }
  // Two tensors sharing bytes: writing one would change the other.
  llvm::sort(ranges, [](const DataRange &a, const DataRange &b) {
    return a.begin < b.begin;
  });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      return error("tensors '" + printableName(ranges[i - 1].name) + "' and '" +
                   printableName(ranges[i].name) +
                   "' have overlapping data offsets");
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
    {tgc::npy::DType::I64, "I64"}, {tgc::npy::DType::Bool, "BOOL"}};
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

llvm::Expected<tgc::npy::Array> tgc::safetensors::toArray(Entry entry) {
  std::optional<npy::DType> dtype = parseDType(entry.dtype);
  if (!dtype)
    return llvm::createStringError("tensor '" + entry.name + "' has dtype " +
                                   entry.dtype + ", which tgc cannot read");
  return npy::Array{*dtype, std::move(entry.shape), std::move(entry.data)};
}
