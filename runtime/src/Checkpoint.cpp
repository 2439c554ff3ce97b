//===- Checkpoint.cpp - arguments to and from .safetensors ----------------===//

#include "Checkpoint.h"
#include "Elements.h"
#include "Ranks.h"

#include "tgc/runtime/SafetensorsFormat.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

using namespace tgc::rt;

static bool hasRole(const std::vector<ArgRole> &roles, ArgRole role) {
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

bool tgc::rt::isSplitView(const std::vector<int64_t> &a,
                          const std::vector<int64_t> &b) {
  const std::vector<int64_t> &shape = a.size() < b.size() ? a : b;
  const std::vector<int64_t> &view = a.size() < b.size() ? b : a;
  if (view.size() != shape.size() + 1)
    return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::equal(shape.begin(), shape.begin() + d, view.begin()) &&
        std::equal(shape.begin() + d + 1, shape.end(), view.begin() + d + 2) &&
        view[d] * view[d + 1] == shape[d])
      return true;
  return false;
}

bool tgc::rt::saveCheckpoint(
    const std::string &path, const StepInfo &info, const ArgumentSource &source,
    const std::vector<ArgRole> &roles, int64_t steps, std::string &error,
    const std::map<std::string, std::string> &extraMetadata) {
  std::vector<safetensors::EntryView> entries;
  std::vector<int> indices;
  for (int i = 0; i < info.numArguments; ++i) {
    const ArgumentInfo &arg = info.arguments[i];
    if (!hasRole(roles, arg.init.role))
      continue;
    safetensors::EntryView entry;
    entry.name = arg.name;
    entry.dtype = getSafetensorsDType(arg.dtype);
    entry.shape.assign(arg.shape, arg.shape + arg.rank);
    entry.size = getNumElements(arg) * getDTypeBytes(getFileDType(arg.dtype));
    entries.push_back(std::move(entry));
    indices.push_back(i);
  }
  std::map<std::string, std::string> metadata = extraMetadata;
  metadata["tgc.steps"] = std::to_string(steps);
  std::vector<char> value;
  bool written = safetensors::writeStreamed(
      path, entries, metadata,
      [&](size_t k, std::vector<char> &bytes, std::string &why) {
        const ArgumentInfo &arg = info.arguments[indices[k]];
        if (!source(indices[k], value, why))
          return false;
        // Exact: the file type holds every value of the argument's.
        bool converted = convertElements(value, arg.dtype,
                                         getFileDType(arg.dtype), bytes, why);
        value = {};
        if (!converted)
          why = "tensor '" + std::string(arg.name) + "' " + why;
        return converted;
      },
      error);
  if (!written)
    error = "cannot save '" + path + "': " + error;
  return written;
}

bool tgc::rt::saveCheckpoint(
    const std::string &path, const StepInfo &info,
    const ArgumentBytes &arguments, const std::vector<ArgRole> &roles,
    int64_t steps, std::string &error,
    const std::map<std::string, std::string> &extraMetadata) {
  return saveCheckpoint(
      path, info,
      [&](int i, std::vector<char> &bytes, std::string &) {
        bytes = arguments[i];
        return true;
      },
      roles, steps, error, extraMetadata);
}

bool tgc::rt::checkValues(const std::string &path, const char *data,
                          int64_t count, int64_t first, const ArgumentInfo &arg,
                          std::string &error) {
  if (!isFloatDType(arg.dtype))
    return true;
  for (int64_t j = 0; j < count; ++j) {
    double value = loadDouble(data, arg.dtype, j);
    if (std::isnan(value) ||
        (std::isinf(value) && arg.init.role == ArgRole::Param)) {
      error = "'" + path + "': tensor '" + arg.name + "' holds " +
              (std::isnan(value) ? "NaN" : "an infinity") + " at element " +
              std::to_string(first + j);
      return false;
    }
  }
  return true;
}

namespace {

/// Takes `entry` as the bytes of `arg` when its shape is the argument's (or
/// a split view of it) and its values fit the argument's type: floats are
/// rounded to it (an F32 file for bf16 parameters, as tgc import writes
/// them), integers must fit. With `blocks`, only the block of argument
/// `index` the device holds is read, converted and checked.
bool takeEntry(const std::string &path, const safetensors::EntryView &entry,
               const ArgumentInfo &arg, int index, const DeviceBlocks *blocks,
               std::vector<char> &bytes, std::string &error) {
  std::vector<int64_t> shape(arg.shape, arg.shape + arg.rank);
  bool sameShape = entry.shape == shape || isSplitView(entry.shape, shape);
  std::optional<DType> dtype = parseFileDType(entry.dtype);
  if (!dtype || !sameShape || isFloatDType(*dtype) != isFloatDType(arg.dtype)) {
    error = "'" + path + "': tensor '" + arg.name + "' is " + entry.dtype +
            " " + safetensors::formatShape(entry.shape) + "; the step takes " +
            getSafetensorsDType(arg.dtype) + " " +
            safetensors::formatShape(shape);
    return false;
  }
  int64_t fileElement = int64_t(getDTypeBytes(*dtype)),
          element = int64_t(getDTypeBytes(arg.dtype));
  // Converts and checks `count` elements from element `global` of the
  // file's tensor into element `local` of `bytes`.
  auto take = [&](int64_t local, int64_t global, int64_t count) {
    char *out = bytes.data() + local * element;
    if (!convertElements(entry.data + global * fileElement, count, *dtype,
                         arg.dtype, out, error, global)) {
      error = "'" + path + "': tensor '" + arg.name + "' " + error;
      return false;
    }
    return checkValues(path, out, count, global, arg, error);
  };
  if (!blocks) {
    int64_t count = int64_t(entry.size) / fileElement;
    bytes.assign(count * element, 0);
    return take(0, 0, count);
  }
  const ArgumentInfo &local = blocks->local->arguments[index];
  // ZeRO's padding, past the global shape, stays zero.
  bytes.assign(getNumElements(local) * element, 0);
  for (const ranks::BlockRun &run :
       ranks::getBlockRuns(local, blocks->local->mesh, blocks->coordinates))
    if (!take(run.local, run.global, run.count))
      return false;
  return true;
}

} // namespace

bool tgc::rt::loadImportedParams(const std::string &path, const StepInfo &info,
                                 ArgumentBytes &arguments, std::string &error,
                                 const DeviceBlocks *blocks) {
  SafetensorsFile file;
  if (!file.read(path, error))
    return false;
  for (int i = 0; i < info.numArguments; ++i) {
    const safetensors::EntryView *entry = file.find(info.arguments[i].name);
    if (info.arguments[i].isModelValue && entry &&
        !takeEntry(path, *entry, info.arguments[i], i, blocks, arguments[i],
                   error))
      return false;
  }
  return true;
}

bool SafetensorsFile::read(const std::string &path, std::string &error) {
  byName.clear();
  if (!file.open(path, error))
    return false;
  std::string message;
  if (!safetensors::parseViews(file.data(), file.size(), entries, metadata,
                               message)) {
    error = "'" + path + "' is not a valid safetensors file: " + message;
    return false;
  }
  for (const safetensors::EntryView &entry : entries)
    byName[entry.name] = &entry;
  return true;
}

bool tgc::rt::loadCheckpoint(const std::string &path, const StepInfo &info,
                             ArgumentBytes &arguments,
                             const std::vector<ArgRole> &roles, int64_t &steps,
                             std::string &error, const DeviceBlocks *blocks,
                             std::vector<std::string> *startedFresh) {
  SafetensorsFile file;
  if (!file.read(path, error))
    return false;
  bool anyFrozen = false;
  for (int i = 0; i < info.numArguments; ++i)
    anyFrozen |= info.arguments[i].isFrozen;
  for (int i = 0; i < info.numArguments; ++i) {
    const ArgumentInfo &arg = info.arguments[i];
    // With the parameters, the model's other values the file has (running
    // statistics: a file of parameters alone starts them as imported).
    bool required = hasRole(roles, arg.init.role);
    if (!required && !(arg.isModelValue && hasRole(roles, ArgRole::Param)))
      continue;
    const safetensors::EntryView *found = file.find(arg.name);
    if (!found && !required)
      continue;
    if (!found && startedFresh && anyFrozen && !arg.isFrozen &&
        arg.init.role == ArgRole::Param) {
      startedFresh->push_back(arg.name);
      continue;
    }
    if (!found) {
      error = "'" + path + "' has no tensor '" + arg.name + "'";
      return false;
    }
    if (!takeEntry(path, *found, arg, i, blocks, arguments[i], error))
      return false;
  }
  steps = 0;
  auto recorded = file.metadata.find("tgc.steps");
  if (recorded != file.metadata.end()) {
    const std::string &count = recorded->second;
    char *end = nullptr;
    errno = 0;
    steps = std::strtoll(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || errno == ERANGE || steps < 0) {
      error = "'" + path + "': its tgc.steps metadata '" + count +
              "' is not a count of steps";
      return false;
    }
  }
  return true;
}
