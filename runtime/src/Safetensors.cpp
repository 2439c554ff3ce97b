//===- Safetensors.cpp - .safetensors files in pure C++ -------------------===//

#include "tgc/runtime/Safetensors.h"

#include "AtomicFile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <set>

using namespace tgc::rt;

static int64_t getDTypeSize(const std::string &dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64")
    return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32")
    return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16")
    return 2;
  if (dtype == "BOOL" || dtype == "I8" || dtype == "U8" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2")
    return 1;
  return 0;
}

bool safetensors::write(const std::string &path,
                        const std::vector<Entry> &entries,
                        const std::map<std::string, std::string> &metadata,
                        std::string &error) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const Entry &entry : entries) {
    if (!names.insert(entry.name).second) {
      error = "two tensors are named '" + entry.name + "'";
      return false;
    }
    header[entry.name] = {
        {"dtype", entry.dtype},
        {"shape", entry.shape},
        {"data_offsets", {offset, offset + entry.data.size()}}};
    offset += entry.data.size();
  }
  std::string text = header.dump();
  // The data starts 8-byte aligned, as the format recommends.
  text.append((8 - text.size() % 8) % 8, ' ');
  return writeFileAtomically(
      path,
      [&](std::ostream &out) {
        uint64_t length = text.size();
        char bytes[8];
        for (int i = 0; i < 8; ++i)
          bytes[i] = static_cast<char>(length >> (8 * i));
        out.write(bytes, 8);
        out.write(text.data(), text.size());
        for (const Entry &entry : entries)
          out.write(entry.data.data(), entry.data.size());
      },
      error);
}

bool safetensors::read(const std::string &path, std::vector<Entry> &entries,
                       std::map<std::string, std::string> &metadata,
                       std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  auto fail = [&](const std::string &message) {
    error = "'" + path + "' is not a valid safetensors file: " + message;
    return false;
  };
  if (bytes.size() < 8)
    return fail("shorter than its 8-byte header length");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i]))
              << (8 * i);
  if (length > bytes.size() - 8)
    return fail("the header length " + std::to_string(length) +
                " runs past the end of the file (truncated?)");
  nlohmann::json header = nlohmann::json::parse(
      bytes.begin() + 8, bytes.begin() + 8 + length, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    return fail("the header is not a JSON object");
  uint64_t dataSize = bytes.size() - 8 - length;
  const char *data = bytes.data() + 8 + length;
  entries.clear();
  metadata.clear();
  for (auto &[name, value] : header.items()) {
    if (name == "__metadata__") {
      if (value.is_object())
        for (auto &[key, text] : value.items())
          if (text.is_string())
            metadata[key] = text.get<std::string>();
      continue;
    }
    if (!value.is_object() || !value.contains("dtype") ||
        !value["dtype"].is_string() || !value.contains("shape") ||
        !value["shape"].is_array() || !value.contains("data_offsets") ||
        !value["data_offsets"].is_array() || value["data_offsets"].size() != 2)
      return fail("tensor '" + name +
                  "' lacks a dtype, a shape or two data_offsets");
    Entry entry;
    entry.name = name;
    entry.dtype = value["dtype"].get<std::string>();
    int64_t elements = 1;
    for (auto &dim : value["shape"]) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
        return fail("tensor '" + name + "' has a bad shape");
      entry.shape.push_back(dim.get<int64_t>());
      elements *= entry.shape.back();
    }
    auto &offsets = value["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      return fail("tensor '" + name + "' has bad data_offsets");
    uint64_t begin = offsets[0].get<uint64_t>(),
             end = offsets[1].get<uint64_t>();
    if (begin > end || end > dataSize)
      return fail("tensor '" + name + "' lies outside the file's " +
                  std::to_string(dataSize) + " data bytes (truncated?)");
    int64_t size = getDTypeSize(entry.dtype);
    if (size == 0)
      return fail("tensor '" + name + "' has the unknown dtype '" +
                  entry.dtype + "'");
    if (static_cast<uint64_t>(elements * size) != end - begin)
      return fail("tensor '" + name + "' holds " + std::to_string(end - begin) +
                  " bytes; its dtype and shape need " +
                  std::to_string(elements * size));
    entry.data.assign(data + begin, data + end);
    entries.push_back(std::move(entry));
  }
  return true;
}
