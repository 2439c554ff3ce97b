//===- Safetensors.cpp - writing .safetensors files -----------------------===//

#include "tgc/Support/Safetensors.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace tgc;

llvm::Error safetensors::write(llvm::StringRef path,
                               llvm::ArrayRef<Entry> entries) {
  auto error = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + message);
  };
  // The header: each tensor's dtype, shape and [begin, end) in the data.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  llvm::StringSet<> names;
  uint64_t offset = 0;
  for (const Entry &entry : entries) {
    if (!names.insert(entry.name).second)
      return error("two tensors are named '" + entry.name + "'");
    header[entry.name] = {
        {"dtype", entry.dtype},
        {"shape", entry.shape},
        {"data_offsets", {offset, offset + entry.data.size()}}};
    offset += entry.data.size();
  }
  std::string text = header.dump();
  // The data starts 8-byte aligned: pad the header with spaces.
  text.append((8 - text.size() % 8) % 8, ' ');

  llvm::SmallString<128> temporary;
  int fd;
  llvm::SmallString<128> model(path);
  model += ".tmp%%%%%%";
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, temporary))
    return error("cannot create a file next to it: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint64_t length = text.size();
    char prefix[8];
    for (int i = 0; i < 8; ++i)
      prefix[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    os.write(prefix, 8);
    os << text;
    for (const Entry &entry : entries)
      os.write(entry.data.data(), entry.data.size());
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return error("cannot write: " + message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return error("cannot write: " + ec.message());
  }
  return llvm::Error::success();
}
