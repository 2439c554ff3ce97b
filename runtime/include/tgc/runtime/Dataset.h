//===- Dataset.h - example files, as both trainers read them ----*- C++ -*-===//
//
// The training data `--data FILE.safetensors` names: one tensor per input
// or label of the step, named as the argument, its first dimension the
// examples (N) and the others the argument's, e.g. `input` [N, 3, 32, 32]
// and `label` [N] for a step taking [B, 3, 32, 32] images and [B] labels.
// Every step takes B examples; each epoch of floor(N / B) steps visits the
// examples in a new random order (drop_last: the N mod B left over wait for
// a later epoch), as a shuffling DataLoader does. `tgc train` and the
// generated trainer check a file with the same rules and messages here,
// map it rather than copy it, and take the same examples each step.
// Needs nlohmann/json (through SafetensorsFormat.h).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_DATASET_H
#define TGC_RUNTIME_DATASET_H

#include "tgc/runtime/Random.h"
#include "tgc/runtime/SafetensorsFormat.h"
#include "tgc/runtime/Storage.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tgc::rt {

/// Whether `--data source` names an example file (by its extension), not a
/// token file or synthetic data.
inline bool isDatasetPath(const std::string &source) {
  static const std::string suffix = ".safetensors";
  return source.size() > suffix.size() &&
         source.compare(source.size() - suffix.size(), suffix.size(), suffix) ==
             0;
}

namespace detail {

/// The element types example files may hold.
enum class FileType {
  I64,
  I32,
  I16,
  I8,
  U32,
  U16,
  U8,
  Bool,
  F64,
  F32,
  BF16,
  F16
};

/// The type of safetensors `dtype`; false for one example files do not
/// hold.
inline bool parseFileType(const std::string &dtype, FileType &type) {
  static const std::pair<const char *, FileType> names[] = {
      {"I64", FileType::I64}, {"I32", FileType::I32},   {"I16", FileType::I16},
      {"I8", FileType::I8},   {"U32", FileType::U32},   {"U16", FileType::U16},
      {"U8", FileType::U8},   {"BOOL", FileType::Bool}, {"F64", FileType::F64},
      {"F32", FileType::F32}, {"BF16", FileType::BF16}, {"F16", FileType::F16}};
  for (const auto &[name, value] : names)
    if (dtype == name) {
      type = value;
      return true;
    }
  return false;
}

inline bool isIntegerType(FileType type) { return type < FileType::F64; }

/// Element i of `type` at `data`: an integer (or BOOL) in `asInt`, a float
/// widened to `asFloat`.
inline void loadFileElement(FileType type, const char *data, int64_t i,
                            int64_t &asInt, double &asFloat) {
  auto at = [&](auto tag) {
    decltype(tag) value;
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return value;
  };
  switch (type) {
  case FileType::I64:
    asInt = at(int64_t());
    return;
  case FileType::I32:
    asInt = at(int32_t());
    return;
  case FileType::I16:
    asInt = at(int16_t());
    return;
  case FileType::I8:
    asInt = at(int8_t());
    return;
  case FileType::U32:
    asInt = at(uint32_t());
    return;
  case FileType::U16:
    asInt = at(uint16_t());
    return;
  case FileType::U8:
  case FileType::Bool:
    asInt = at(uint8_t());
    return;
  case FileType::F64:
    asFloat = at(double());
    return;
  case FileType::F32:
    asFloat = at(float());
    return;
  case FileType::BF16:
    asFloat = ld(at(bf16()));
    return;
  case FileType::F16:
    asFloat = ld(at(f16()));
    return;
  }
}

} // namespace detail

/// What the checks need of a step argument (its global value).
struct DatasetArgument {
  std::string name;
  ArgRole role = ArgRole::Input;
  bool isFloat = true;
  std::vector<int64_t> shape;
  /// An integer's range: its type's, and ids' [0, idBound) (0: none)
  /// outside `ignoredIds` (a loss's ignore_index).
  int64_t minValue = 0, maxValue = 0;
  int64_t idBound = 0;
  std::vector<int64_t> ignoredIds;
  /// The run gives it otherwise (`tgc train --input`).
  bool given = false;
};

/// A tensor of the file and the argument it feeds.
struct DatasetTensor {
  unsigned argument = 0;
  /// Its element type and bytes (the mapped file's).
  detail::FileType type = detail::FileType::F32;
  const char *data = nullptr;
  /// The elements of one example (the product of the argument's other
  /// dimensions).
  int64_t exampleElements = 0;
};

/// A checked example file: N examples, B a step.
struct Dataset {
  int64_t examples = 0, batch = 0;
  std::vector<DatasetTensor> tensors;
};

/// Checks the `size` bytes of an example file against the step's
/// arguments: `dataset` gets its tensors (views of `bytes`); else false,
/// and `message` what is wrong (without the file's name). Each tensor
/// must name an `input` or `label` argument of rank 1 or more and have its
/// shape but for the first dimension, all of them the same N >= B (B the
/// arguments' first dimension, the same for all); a float argument takes
/// F64/F32/BF16/F16 (rounded to its type), an integer one an integer dtype
/// or BOOL, each value in its type's range and, for ids, in [0, idBound)
/// or ignored; floats must be finite. Every label, and every input that
/// is neither given nor one a training run fills by its name (an
/// attention mask...), must be in the file.
inline bool openDataset(const char *bytes, size_t size,
                        const std::vector<DatasetArgument> &arguments,
                        Dataset &dataset, std::string &message) {
  auto fail = [&](const std::string &text) {
    message = text;
    return false;
  };
  std::vector<safetensors::EntryView> entries;
  std::map<std::string, std::string> metadata;
  std::string error;
  if (!safetensors::parseViews(bytes, size, entries, metadata, error))
    return fail("not a safetensors file: " + error);
  if (entries.empty())
    return fail("it holds no tensors");
  auto listFed = [&]() {
    std::string names;
    for (const DatasetArgument &arg : arguments)
      if (arg.role == ArgRole::Input || arg.role == ArgRole::Label)
        names += (names.empty() ? "'" : ", '") + arg.name + "'";
    return names.empty() ? std::string("none") : names;
  };
  dataset = Dataset();
  std::vector<bool> fed(arguments.size(), false);
  std::string first;
  for (const safetensors::EntryView &entry : entries) {
    std::string quoted = "'" + safetensors::printable(entry.name) + "'";
    unsigned index = 0;
    while (index < arguments.size() && arguments[index].name != entry.name)
      ++index;
    if (index == arguments.size())
      return fail("tensor " + quoted +
                  " names no argument of the step; it feeds inputs and "
                  "labels by name: " +
                  listFed());
    const DatasetArgument &arg = arguments[index];
    if (arg.role != ArgRole::Input && arg.role != ArgRole::Label)
      return fail("tensor " + quoted +
                  " names a parameter, state or hyper-parameter of the step; "
                  "the data feeds inputs and labels: " +
                  listFed());
    if (arg.given)
      return fail("tensor " + quoted +
                  " feeds an input that --input gives too");
    if (arg.shape.empty() || arg.shape[0] == 0)
      return fail(
          "tensor " + quoted + " feeds " +
          (arg.shape.empty() ? "a scalar argument" : "an argument of no rows") +
          "; the data feeds arguments whose first dimension is the "
          "batch");
    std::vector<int64_t> expected = arg.shape;
    expected[0] = entry.shape.empty() ? 0 : entry.shape[0];
    if (entry.shape != expected)
      return fail("tensor " + quoted + " has shape " +
                  safetensors::formatShape(entry.shape) + "; the argument is " +
                  safetensors::formatShape(arg.shape) +
                  ", so its examples need " +
                  safetensors::formatShape(arg.shape, "N"));
    detail::FileType type;
    if (!detail::parseFileType(entry.dtype, type))
      return fail("tensor " + quoted + " is " +
                  safetensors::printable(entry.dtype) +
                  "; example files hold F64, F32, BF16, F16, I64, I32, I16, "
                  "I8, U32, U16, U8 or BOOL");
    if (detail::isIntegerType(type) == arg.isFloat)
      return fail("tensor " + quoted + " is " + entry.dtype +
                  " and its argument is " +
                  (arg.isFloat ? "a float; convert the examples to floats "
                                 "(and scale them as the model expects)"
                               : "an integer; integers do not come from "
                                 "floats"));
    if (dataset.tensors.empty()) {
      dataset.examples = entry.shape[0];
      dataset.batch = arg.shape[0];
      first = quoted;
    } else if (entry.shape[0] != dataset.examples) {
      return fail("tensor " + quoted + " holds " +
                  std::to_string(entry.shape[0]) + " examples and " + first +
                  " " + std::to_string(dataset.examples));
    } else if (arg.shape[0] != dataset.batch) {
      return fail("tensor " + quoted + " feeds an argument of " +
                  std::to_string(arg.shape[0]) + " examples a step and " +
                  first + " one of " + std::to_string(dataset.batch) +
                  "; the examples are the first dimension of all");
    }
    DatasetTensor tensor;
    tensor.argument = index;
    tensor.type = type;
    tensor.data = entry.data;
    tensor.exampleElements = 1;
    for (size_t d = 1; d < arg.shape.size(); ++d)
      tensor.exampleElements *= arg.shape[d];
    dataset.tensors.push_back(tensor);
    fed[index] = true;
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const DatasetArgument &arg = arguments[i];
    bool named = !arg.isFloat && getNamedInput(arg.name) != NamedInput::None;
    if (fed[i] || arg.given ||
        !(arg.role == ArgRole::Label || (arg.role == ArgRole::Input && !named)))
      continue;
    std::string held;
    for (const safetensors::EntryView &entry : entries)
      held += (held.empty() ? "'" : ", '") +
              safetensors::printable(entry.name) + "'";
    return fail("it has no tensor '" + arg.name + "' for the step's " +
                (arg.role == ArgRole::Label ? "label" : "input") +
                " of that name (it holds " + held + ")");
  }
  if (dataset.examples < dataset.batch)
    return fail("it holds " + std::to_string(dataset.examples) +
                " examples; a step takes " + std::to_string(dataset.batch));
  // Every value, once: a bad one is named before the first step.
  for (const DatasetTensor &tensor : dataset.tensors) {
    const DatasetArgument &arg = arguments[tensor.argument];
    int64_t count = dataset.examples * tensor.exampleElements;
    for (int64_t i = 0; i < count; ++i) {
      int64_t asInt = 0;
      double asFloat = 0;
      detail::loadFileElement(tensor.type, tensor.data, i, asInt, asFloat);
      auto where = [&]() {
        return "tensor '" + arg.name + "', example " +
               std::to_string(i / tensor.exampleElements) + ", element " +
               std::to_string(i % tensor.exampleElements);
      };
      if (!detail::isIntegerType(tensor.type)) {
        if (!std::isfinite(asFloat))
          return fail(where() + " is " + std::to_string(asFloat));
        continue;
      }
      if (asInt < arg.minValue || asInt > arg.maxValue)
        return fail(where() + " is " + std::to_string(asInt) +
                    ", outside the argument's type");
      if (!arg.idBound || (asInt >= 0 && asInt < arg.idBound))
        continue;
      bool ignored = false;
      for (int64_t id : arg.ignoredIds)
        ignored = ignored || id == asInt;
      if (ignored)
        continue;
      std::string text = where() + " is " + std::to_string(asInt) +
                         ", not in [0, " + std::to_string(arg.idBound) + ")";
      for (int64_t id : arg.ignoredIds)
        text += " nor the ignored " + std::to_string(id);
      return fail(text + " (the rows or classes of what reads it)");
    }
  }
  return true;
}

/// What `--data source` feeds, as both trainers say it.
inline std::string describeDataset(const std::string &source,
                                   const Dataset &dataset,
                                   const std::vector<DatasetArgument> &args) {
  std::string names;
  for (size_t t = 0; t < dataset.tensors.size(); ++t)
    names += std::string(t == 0                            ? "'"
                         : t + 1 == dataset.tensors.size() ? " and '"
                                                           : ", '") +
             args[dataset.tensors[t].argument].name + "'";
  int64_t steps = dataset.examples / dataset.batch;
  int64_t left = dataset.examples % dataset.batch;
  return "--data " + source + " feeds " + names + " from " +
         std::to_string(dataset.examples) + " examples, " +
         std::to_string(dataset.batch) +
         " a step, in a new random order each epoch of " +
         std::to_string(steps) + " step" + (steps == 1 ? "" : "s") +
         (left ? " (" + std::to_string(left) + " left out of each)"
               : std::string());
}

/// The examples each step takes: step n (from 0) is batch n mod E of epoch
/// n / E (E = floor(N / B)), the epoch a permutation of the N examples by
/// Fisher-Yates from an mt19937_64 of the seed and the epoch (the
/// generator's own numbers, no library distribution: the same on every
/// platform).
class DatasetOrder {
public:
  DatasetOrder(int64_t examples, int64_t batch, uint64_t seed)
      : examples(examples), batch(batch), seed(seed) {}

  /// The B examples of step `n`, in the order of the batch's rows.
  std::vector<int64_t> examplesOf(unsigned n) {
    int64_t perEpoch = examples / batch;
    int64_t epoch = int64_t(n) / perEpoch, j = int64_t(n) % perEpoch;
    if (epoch != cachedEpoch) {
      order.resize(examples);
      for (int64_t i = 0; i < examples; ++i)
        order[i] = i;
      std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ull +
                                uint64_t(epoch + 1) * 0x94D049BB133111EBull);
      for (int64_t i = examples - 1; i > 0; --i)
        std::swap(order[i], order[generator() % uint64_t(i + 1)]);
      cachedEpoch = epoch;
    }
    return std::vector<int64_t>(order.begin() + j * batch,
                                order.begin() + (j + 1) * batch);
  }

private:
  int64_t examples, batch;
  uint64_t seed;
  int64_t cachedEpoch = -1;
  std::vector<int64_t> order;
};

/// The values of `tensor` for a batch of `rows` examples, row r from
/// example rows[r]: `store(j, value)` takes element j of the argument
/// (`value` an int64_t for an integer tensor, a double for a float one).
/// With `held` (a flag per row), only the rows it flags are read: a
/// data-parallel rank reads the examples of its own block of the batch.
template <typename StoreInt, typename StoreFloat>
void gatherExamples(const DatasetTensor &tensor,
                    const std::vector<int64_t> &rows, StoreInt storeInt,
                    StoreFloat storeFloat,
                    const std::vector<bool> *held = nullptr) {
  int64_t elements = tensor.exampleElements;
  bool isInt = detail::isIntegerType(tensor.type);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (held && r < held->size() && !(*held)[r])
      continue;
    for (int64_t e = 0; e < elements; ++e) {
      int64_t asInt = 0;
      double asFloat = 0;
      detail::loadFileElement(tensor.type, tensor.data, rows[r] * elements + e,
                              asInt, asFloat);
      int64_t j = int64_t(r) * elements + e;
      if (isInt)
        storeInt(j, asInt);
      else
        storeFloat(j, asFloat);
    }
  }
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_DATASET_H
