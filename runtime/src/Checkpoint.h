//===- Checkpoint.h - arguments to and from .safetensors --------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_CHECKPOINT_H
#define TGC_RUNTIME_SRC_CHECKPOINT_H

#include "AtomicFile.h"
#include "MappedFile.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/Safetensors.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tgc::rt {

/// The host bytes of every argument, indexed like StepInfo::arguments.
using ArgumentBytes = std::vector<std::vector<char>>;

/// A .safetensors file mapped, not copied, its tensors found by name (their
/// bytes the mapping's: a tensor's pages are read when its bytes are).
struct SafetensorsFile {
  std::vector<safetensors::EntryView> entries;
  std::map<std::string, std::string> metadata;

  /// Maps and checks `path`; else false with `error` set.
  bool read(const std::string &path, std::string &error);
  /// The tensor named `name`, or null.
  const safetensors::EntryView *find(const std::string &name) const {
    auto it = byName.find(name);
    return it == byName.end() ? nullptr : it->second;
  }

private:
  MappedFile file;
  std::map<std::string, const safetensors::EntryView *> byName;
};

/// The blocks of the global values one device of a partitioned step holds:
/// given to the loaders below, they read and convert only those bytes of
/// each value, so that a rank never holds a whole value it keeps a block
/// of.
struct DeviceBlocks {
  /// The step as compiled: each argument's block shape and layout.
  const StepInfo *local = nullptr;
  /// The device's coordinates on local->mesh.
  std::vector<int64_t> coordinates;
};

/// Whether one shape is the other with one dimension split in two adjacent
/// ones ([h, 3h] and [h, 3, h]): the same bytes, row-major. Under tensor
/// parallelism tg-split-fused-projections stores a fused projection's
/// weight (and its optimizer state) so; a checkpoint is accepted in either
/// shape.
bool isSplitView(const std::vector<int64_t> &a, const std::vector<int64_t> &b);

/// Whether the `count` values at `data` (elements `first`... of `arg`) read
/// from `path` are ones a step may start from: a NaN anywhere, or an
/// infinity in a parameter, is a corrupt file (a buffer may hold -inf: an
/// attention mask), reported by name and element rather than as a NaN loss
/// at step 1; false (with `error`) then.
bool checkValues(const std::string &path, const char *data, int64_t count,
                 int64_t first, const ArgumentInfo &arg, std::string &error);

/// Argument i's bytes in its dtype (`info`'s shape), made on demand; false
/// with `why` if they cannot be.
using ArgumentSource =
    std::function<bool(int i, std::vector<char> &bytes, std::string &why)>;

/// Writes the arguments whose role is in `roles` (by tg.name) and the step
/// count reached to `path`, each in getFileDType's type, taken from
/// `source` one at a time as it is written (only one is held at a time;
/// `source` is called for each, in order, even after a failure).
bool saveCheckpoint(
    const std::string &path, const StepInfo &info, const ArgumentSource &source,
    const std::vector<ArgRole> &roles, int64_t steps, std::string &error,
    const std::map<std::string, std::string> &extraMetadata = {});
/// The same from the arguments' bytes.
bool saveCheckpoint(
    const std::string &path, const StepInfo &info,
    const ArgumentBytes &arguments, const std::vector<ArgRole> &roles,
    int64_t steps, std::string &error,
    const std::map<std::string, std::string> &extraMetadata = {});

/// Reads every argument whose role is in `roles` from `path`: each must be
/// there under its tg.name with its shape (or a split view of it) and
/// values its dtype takes (floats of any float type, rounded to it;
/// integers that fit); with `param`, also the model's values among the
/// state (tg.buffer) that `path` has. `steps` receives the step count the file
/// records (0 if none). With `blocks`, `info` is the global step and each
/// argument read receives the device's block of it (its values checked
/// there only). With `startedFresh`, in a step that has frozen parameters
/// (a LoRA step's base weights), a trained parameter `path` lacks (an
/// adapter) keeps its seeded value and its name is appended there; the
/// frozen ones, the model the step keeps, must be in `path`.
bool loadCheckpoint(const std::string &path, const StepInfo &info,
                    ArgumentBytes &arguments, const std::vector<ArgRole> &roles,
                    int64_t &steps, std::string &error,
                    const DeviceBlocks *blocks = nullptr,
                    std::vector<std::string> *startedFresh = nullptr);

/// Reads the model values (parameters, tg.buffer state) `path` has (a
/// model's imported values) over their seeded values in `arguments`; the
/// others keep theirs. Each found must have its argument's shape and values
/// its dtype takes, as for loadCheckpoint (and `blocks` as there).
bool loadImportedParams(const std::string &path, const StepInfo &info,
                        ArgumentBytes &arguments, std::string &error,
                        const DeviceBlocks *blocks = nullptr);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_CHECKPOINT_H
