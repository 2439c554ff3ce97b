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
