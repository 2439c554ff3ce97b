//===- Checkpoint.cpp - arguments to and from .safetensors ----------------===//

#include "Checkpoint.h"
#include "Elements.h"

#include "tgc/runtime/Safetensors.h"

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

static std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
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
    const std::string &path, const StepInfo &info,
    const ArgumentBytes &arguments, const std::vector<ArgRole> &roles,
    int64_t steps, std::string &error,
    const std::map<std::string, std::string> &extraMetadata) {
  std::vector<safetensors::Entry> entries;
  for (int i = 0; i < info.numArguments; ++i) {
    const ArgumentInfo &arg = info.arguments[i];
    if (!hasRole(roles, arg.init.role))
      continue;
    safetensors::Entry entry;
    entry.name = arg.name;
    entry.dtype = getSafetensorsDType(arg.dtype);
    entry.shape.assign(arg.shape, arg.shape + arg.rank);
    // Exact: the file type holds every value of the argument's.
    if (!convertElements(arguments[i], arg.dtype, getFileDType(arg.dtype),
                         entry.data, error)) {
      error = "cannot save '" + std::string(arg.name) + "': " + error;
      return false;
    }
    entries.push_back(std::move(entry));
  }
  std::map<std::string, std::string> metadata = extraMetadata;
  metadata["tgc.steps"] = std::to_string(steps);
  if (!safetensors::write(path, entries, metadata, error)) {
    error = "cannot save '" + path + "': " + error;
    return false;
  }
  return true;
}

bool tgc::rt::checkValues(const std::string &path,
                          const std::vector<char> &data,
                          const ArgumentInfo &arg, std::string &error) {
  if (!isFloatDType(arg.dtype))
    return true;
  int64_t count = int64_t(data.size() / getDTypeBytes(arg.dtype));
  for (int64_t j = 0; j < count; ++j) {
    double value = loadDouble(data.data(), arg.dtype, j);
    if (std::isnan(value) ||
        (std::isinf(value) && arg.init.role == ArgRole::Param)) {
      error = "'" + path + "': tensor '" + arg.name + "' holds " +
              (std::isnan(value) ? "NaN" : "an infinity") + " at element " +
              std::to_string(j);
      return false;
    }
  }
  return true;
}

namespace {

/// Takes `entry` as the bytes of `arg` when its shape is the argument's (or
/// a split view of it) and its values fit the argument's type: floats are
/// rounded to it (an F32 file for bf16 parameters, as tgc import writes
/// them), integers must fit.
bool takeEntry(const std::string &path, const safetensors::Entry &entry,
               const ArgumentInfo &arg, std::vector<char> &bytes,
               std::string &error) {
  std::vector<int64_t> shape(arg.shape, arg.shape + arg.rank);
  bool sameShape = entry.shape == shape || isSplitView(entry.shape, shape);
  std::optional<DType> dtype = parseFileDType(entry.dtype);
  if (!dtype || !sameShape || isFloatDType(*dtype) != isFloatDType(arg.dtype)) {
    error = "'" + path + "': tensor '" + arg.name + "' is " + entry.dtype +
            " " + formatShape(entry.shape) + "; the step takes " +
            getSafetensorsDType(arg.dtype) + " " + formatShape(shape);
    return false;
  }
  if (!convertElements(entry.data, *dtype, arg.dtype, bytes, error)) {
    error = "'" + path + "': tensor '" + arg.name + "' " + error;
    return false;
  }
  return checkValues(path, bytes, arg, error);
}

} // namespace

bool tgc::rt::loadImportedParams(const std::string &path, const StepInfo &info,
                                 ArgumentBytes &arguments, std::string &error) {
  SafetensorsFile file;
  if (!file.read(path, error))
    return false;
  for (int i = 0; i < info.numArguments; ++i) {
    const safetensors::Entry *entry = file.find(info.arguments[i].name);
    if (info.arguments[i].isModelValue && entry &&
        !takeEntry(path, *entry, info.arguments[i], arguments[i], error))
      return false;
  }
  return true;
}

bool SafetensorsFile::read(const std::string &path, std::string &error) {
  if (!safetensors::read(path, entries, metadata, error))
    return false;
  byName.clear();
  for (const safetensors::Entry &entry : entries)
    byName[entry.name] = &entry;
  return true;
}

bool tgc::rt::loadCheckpoint(const std::string &path, const StepInfo &info,
                             ArgumentBytes &arguments,
                             const std::vector<ArgRole> &roles, int64_t &steps,
                             std::string &error) {
  SafetensorsFile file;
  if (!file.read(path, error))
    return false;
  for (int i = 0; i < info.numArguments; ++i) {
    const ArgumentInfo &arg = info.arguments[i];
    // With the parameters, the model's other values the file has (running
    // statistics: a file of parameters alone starts them as imported).
    bool required = hasRole(roles, arg.init.role);
    if (!required && !(arg.isModelValue && hasRole(roles, ArgRole::Param)))
      continue;
    const safetensors::Entry *found = file.find(arg.name);
    if (!found && !required)
      continue;
    if (!found) {
      error = "'" + path + "' has no tensor '" + arg.name + "'";
      return false;
    }
    if (!takeEntry(path, *found, arg, arguments[i], error))
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
