//===- Safetensors.h - .safetensors files in pure C++ -----------*- C++ -*-===//
//
// The safetensors format (8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw data), for
// the generated trainer's parameters and checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SAFETENSORS_H
#define TGC_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tgc::rt::safetensors {

struct Entry {
  std::string name;
  /// "F32", "BF16", "I64"...
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// A tensor of a file in memory: its bytes are the file's, not a copy
/// (valid while the file's memory is).
struct EntryView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const char *data = nullptr;
  size_t size = 0;
};

/// Writes `entries` and the string `metadata` to `path` through a temporary
/// file renamed at the end, so that a failure leaves nothing behind. On
/// error returns false and says why in `error`.
bool write(const std::string &path, const std::vector<Entry> &entries,
           const std::map<std::string, std::string> &metadata,
           std::string &error);

/// Writes `path` as `write` does, the tensors `entries` describe (their
/// `size`; `data` unread) produced one at a time: `produce(i, bytes, why)`
/// gives tensor i's `size` bytes just before they are written, and they are
/// dropped after, so only one tensor is held at a time. `produce` is called
/// for every entry, in order, even after a failure (it may take part in
/// collectives); its false (with `why`) fails the write, and the first
/// such `why` is the error.
bool writeStreamed(const std::string &path,
                   const std::vector<EntryView> &entries,
                   const std::map<std::string, std::string> &metadata,
                   const std::function<bool(size_t, std::vector<char> &,
                                            std::string &)> &produce,
                   std::string &error);

/// Reads every tensor of `path`, checking the header against the file
/// (truncated data, offsets outside it, sizes that do not match the dtype
/// and shape).
bool read(const std::string &path, std::vector<Entry> &entries,
          std::map<std::string, std::string> &metadata, std::string &error);

} // namespace tgc::rt::safetensors

#endif // TGC_RUNTIME_SAFETENSORS_H
