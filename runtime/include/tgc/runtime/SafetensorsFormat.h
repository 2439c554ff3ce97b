//===- SafetensorsFormat.h - the .safetensors format, both sides -*- C++ -*-=//
//
// The bytes of a .safetensors file: an 8-byte little-endian header length,
// a JSON header (each tensor's dtype, shape and [begin, end) in the data;
// optional string `__metadata__`), then the data. The runtime's checkpoints
// and tgc's parameter files are written and checked here, once; the files
// themselves are opened by each (tgc's through tgc/Support/InputFile.h).
// Needs nlohmann/json.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SAFETENSORSFORMAT_H
#define TGC_RUNTIME_SAFETENSORSFORMAT_H

#include "tgc/runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tgc::rt::safetensors {

/// The bytes of one element of `dtype`; 0 for a dtype the format does not
/// define.
inline int64_t getDTypeSize(const std::string &dtype) {
  static const std::map<std::string, int64_t> sizes = {
      {"F64", 8}, {"I64", 8},     {"U64", 8},     {"F32", 4},
      {"I32", 4}, {"U32", 4},     {"F16", 2},     {"BF16", 2},
      {"I16", 2}, {"U16", 2},     {"BOOL", 1},    {"I8", 1},
      {"U8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

/// `name` as an error message quotes it: bytes outside printable ASCII as
/// \xNN, at most 200 of them (a file's names are untrusted).
inline std::string printable(const std::string &name) {
  static const char digits[] = "0123456789abcdef";
  std::string result;
  for (size_t i = 0; i < name.size() && i < 200; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      result += static_cast<char>(c);
    } else {
      result += "\\x";
      result += digits[c >> 4];
      result += digits[c & 15];
    }
  }
  if (name.size() > 200)
    result += "...";
  return result;
}

/// `shape` as messages write it, "[2, 3]"; with `first`, that text in
/// place of the first dimension ("[N, 3]").
inline std::string formatShape(const std::vector<int64_t> &shape,
                               const char *first = nullptr) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") +
            (d == 0 && first ? std::string(first) : std::to_string(shape[d]));
  return text + "]";
}

/// The bytes of an entry's data.
inline uint64_t getDataSize(const Entry &entry) { return entry.data.size(); }
inline uint64_t getDataSize(const EntryView &entry) { return entry.size; }

/// What precedes the data of a file holding the `count` `entries` (Entry or
/// EntryView) in order: the header length and the header (`metadata` as
/// `__metadata__` unless empty), padded with spaces so that the data starts
/// 8-byte aligned. False (and `error`) for two tensors of one name.
template <typename EntryType>
bool makeHeader(const EntryType *entries, size_t count,
                const std::map<std::string, std::string> &metadata,
                std::string &prefix, std::string &error) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    const EntryType &entry = entries[i];
    if (!names.insert(entry.name).second) {
      error = "two tensors are named '" + printable(entry.name) + "'";
      return false;
    }
    header[entry.name] = {
        {"dtype", entry.dtype},
        {"shape", entry.shape},
        {"data_offsets", {offset, offset + getDataSize(entry)}}};
    offset += getDataSize(entry);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  prefix.assign(8, '\0');
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<char>(uint64_t(text.size()) >> (8 * i));
  prefix += text;
  return true;
}

/// The tensors (views of their bytes in `bytes`) and metadata of the `size`
/// bytes of a file. False and `error` (what is wrong, without the file's name)
/// for a file that is not one: a header that is no JSON object, an entry
/// without a dtype of the format, a shape or two data offsets, more than 2^40
/// elements, data that does not match its dtype and shape or lies past
/// the end (a truncated file), or two tensors sharing bytes (writing one
/// would change the other).
/// Messages quote a tensor's name through `quote`.
inline bool parseViews(const char *bytes, size_t size,
                       std::vector<EntryView> &entries,
                       std::map<std::string, std::string> &metadata,
                       std::string &error,
                       std::string (*quote)(const std::string &) = printable) {
  auto fail = [&](const std::string &message) {
    error = message;
    return false;
  };
  if (size < 8)
    return fail("too short for a safetensors file (" + std::to_string(size) +
                " bytes)");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i)
    length = (length << 8) | static_cast<unsigned char>(bytes[i]);
  if (length > size - 8)
    return fail("the header length exceeds the file (" +
                std::to_string(length) + " bytes of " +
                std::to_string(size - 8) + "; truncated?)");
  nlohmann::json header = nlohmann::json::parse(
      bytes + 8, bytes + 8 + length, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return fail("the header is not a JSON object");
  uint64_t dataSize = size - 8 - length;
  const char *data = bytes + 8 + length;
  entries.clear();
  metadata.clear();
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto &[name, info] : header.items()) {
    if (name == "__metadata__") {
      if (info.is_object())
        for (auto &[key, text] : info.items())
          if (text.is_string())
            metadata[key] = text.get<std::string>();
      continue;
    }
    if (!info.is_object() || !info.contains("dtype") ||
        !info["dtype"].is_string() || !info.contains("shape") ||
        !info["shape"].is_array() || !info.contains("data_offsets") ||
        !info["data_offsets"].is_array() || info["data_offsets"].size() != 2 ||
        !info["data_offsets"][0].is_number_unsigned() ||
        !info["data_offsets"][1].is_number_unsigned())
      return fail("tensor '" + quote(name) + "' has a malformed header entry");
    EntryView entry;
    entry.name = name;
    entry.dtype = info["dtype"].get<std::string>();
    int64_t elementSize = getDTypeSize(entry.dtype);
    if (!elementSize)
      return fail("tensor '" + quote(name) + "' has unknown dtype '" +
                  quote(entry.dtype) + "'");
    uint64_t count = 1;
    for (const nlohmann::json &dim : info["shape"]) {
      if (!dim.is_number_unsigned())
        return fail("tensor '" + quote(name) + "' has a malformed shape");
      uint64_t d = dim.get<uint64_t>();
      if (d && count > (uint64_t(1) << 40) / d)
        return fail("tensor '" + quote(name) + "' is too large");
      count *= d;
      entry.shape.push_back(static_cast<int64_t>(d));
    }
    uint64_t begin = info["data_offsets"][0].get<uint64_t>(),
             end = info["data_offsets"][1].get<uint64_t>();
    if (begin > end || end > dataSize)
      return fail("tensor '" + quote(name) + "' has data offsets [" +
                  std::to_string(begin) + ", " + std::to_string(end) +
                  ") outside the file's " + std::to_string(dataSize) +
                  " data bytes (truncated?)");
    if (end - begin != count * uint64_t(elementSize))
      return fail("tensor '" + quote(name) + "' holds " +
                  std::to_string(end - begin) +
                  " bytes; its dtype and shape need " +
                  std::to_string(count * uint64_t(elementSize)));
    entry.data = data + begin;
    entry.size = end - begin;
    entries.push_back(std::move(entry));
    if (begin != end)
      ranges.push_back({begin, end, name});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      return fail("tensors '" + quote(ranges[i - 1].name) + "' and '" +
                  quote(ranges[i].name) + "' have overlapping data offsets");
  return true;
}

/// parseViews, each tensor's bytes copied.
inline bool parse(const char *bytes, size_t size, std::vector<Entry> &entries,
                  std::map<std::string, std::string> &metadata,
                  std::string &error,
                  std::string (*quote)(const std::string &) = printable) {
  std::vector<EntryView> views;
  entries.clear();
  if (!parseViews(bytes, size, views, metadata, error, quote))
    return false;
  for (EntryView &view : views)
    entries.push_back({std::move(view.name), std::move(view.dtype),
                       std::move(view.shape),
                       std::vector<char>(view.data, view.data + view.size)});
  return true;
}

} // namespace tgc::rt::safetensors

#endif // TGC_RUNTIME_SAFETENSORSFORMAT_H
