//===- Safetensors.cpp - .safetensors files of the trainer ----------------===//
//
// Checkpoints written whole or not at all, and read mapped; the format is
// tgc/runtime/SafetensorsFormat.h's, which tgc's own files share.
//
//===----------------------------------------------------------------------===//

#include "tgc/runtime/SafetensorsFormat.h"

#include "AtomicFile.h"
#include "MappedFile.h"

using namespace tgc::rt;

bool safetensors::write(const std::string &path,
                        const std::vector<Entry> &entries,
                        const std::map<std::string, std::string> &metadata,
                        std::string &error) {
  std::string prefix;
  if (!makeHeader(entries.data(), entries.size(), metadata, prefix, error))
    return false;
  return writeFileAtomically(
      path,
      [&](std::ostream &out) {
        out.write(prefix.data(), prefix.size());
        for (const Entry &entry : entries)
          out.write(entry.data.data(), entry.data.size());
      },
      error);
}

bool safetensors::writeStreamed(
    const std::string &path, const std::vector<EntryView> &entries,
    const std::map<std::string, std::string> &metadata,
    const std::function<bool(size_t, std::vector<char> &, std::string &)>
        &produce,
    std::string &error) {
  std::string prefix;
  bool made =
      makeHeader(entries.data(), entries.size(), metadata, prefix, error);
  // Every entry is produced, written or not.
  size_t produced = 0;
  std::string produceError;
  auto next = [&](std::vector<char> &bytes) {
    bytes.clear();
    std::string why;
    bool ok = produce(produced, bytes, why);
    if (ok && bytes.size() != entries[produced].size) {
      why = "tensor '" + entries[produced].name + "' came as " +
            std::to_string(bytes.size()) + " bytes, not " +
            std::to_string(entries[produced].size);
      ok = false;
    }
    if (!ok && produceError.empty())
      produceError = why;
    ++produced;
    return ok;
  };
  bool written = made && writeFileAtomically(
                             path,
                             [&](std::ostream &out) {
                               out.write(prefix.data(), prefix.size());
                               std::vector<char> bytes;
                               while (produced < entries.size()) {
                                 if (!next(bytes))
                                   out.setstate(std::ios::failbit);
                                 else if (out)
                                   out.write(bytes.data(), bytes.size());
                               }
                             },
                             error);
  std::vector<char> bytes;
  while (produced < entries.size())
    next(bytes);
  if (!produceError.empty()) {
    error = produceError;
    return false;
  }
  return written;
}

bool safetensors::read(const std::string &path, std::vector<Entry> &entries,
                       std::map<std::string, std::string> &metadata,
                       std::string &error) {
  MappedFile file;
  if (!file.open(path, error))
    return false;
  std::string message;
  if (!parse(file.data(), file.size(), entries, metadata, message)) {
    error = "'" + path + "' is not a valid safetensors file: " + message;
    return false;
  }
  return true;
}
