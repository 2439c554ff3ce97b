//===- Data.cpp - token and example files, the batches of each step ------===//

#include "Data.h"

#include "Elements.h"

#include "tgc/runtime/Random.h"

#include <limits>

using namespace tgc::rt;

std::vector<char> tgc::rt::makeArgument(const ArgumentInfo &arg, unsigned index,
                                        uint64_t seed) {
  int64_t count = getNumElements(arg);
  std::vector<char> bytes(count * getDTypeBytes(arg.dtype));
  auto store = [&](int64_t i, auto value) {
    storeDouble(bytes.data(), arg.dtype, i, static_cast<double>(value));
  };
  if (arg.init.isFloat)
    generateFloats(arg.init, count, seed, index, store);
  else
    generateInts(arg.init, count, seed, index, store);
  return bytes;
}

std::vector<char> tgc::rt::makeNamedInput(const ArgumentInfo &arg) {
  NamedInput kind = getNamedInput(arg.name);
  if (arg.init.role != ArgRole::Input || arg.init.isFloat ||
      kind == NamedInput::None)
    return {};
  int64_t count = getNumElements(arg);
  std::vector<char> whole(count * getDTypeBytes(arg.dtype));
  generateNamedInput(kind, count, arg.rank ? arg.shape[arg.rank - 1] : 1,
                     [&](int64_t j, int64_t value) {
                       storeDouble(whole.data(), arg.dtype, j, double(value));
                     });
  return whole;
}

DatasetArgument tgc::rt::getDatasetArgument(const ArgumentInfo &arg) {
  DatasetArgument result;
  result.name = arg.name;
  result.role = arg.init.role;
  result.isFloat = arg.init.isFloat;
  result.shape.assign(arg.shape, arg.shape + arg.rank);
  // The range of an integer type (i1: 0 and 1).
  auto range = [&](int64_t low, int64_t high) {
    result.minValue = low;
    result.maxValue = high;
  };
  switch (arg.dtype) {
  case DType::I64:
    range(std::numeric_limits<int64_t>::min(),
          std::numeric_limits<int64_t>::max());
    break;
  case DType::I32:
    range(INT32_MIN, INT32_MAX);
    break;
  case DType::I16:
    range(INT16_MIN, INT16_MAX);
    break;
  case DType::I8:
    range(INT8_MIN, INT8_MAX);
    break;
  case DType::U32:
    range(0, UINT32_MAX);
    break;
  case DType::U16:
    range(0, UINT16_MAX);
    break;
  case DType::U8:
    range(0, UINT8_MAX);
    break;
  case DType::I1:
    range(0, 1);
    break;
  case DType::I4:
    range(-8, 7);
    break;
  case DType::U4:
    range(0, 15);
    break;
  case DType::I2:
    range(-2, 1);
    break;
  case DType::U2:
    range(0, 3);
    break;
  default:
    break;
  }
  result.idBound = arg.init.idBound;
  result.ignoredIds.assign(arg.init.ignoredIds,
                           arg.init.ignoredIds + arg.init.numIgnoredIds);
  return result;
}

std::vector<char> tgc::rt::toElements(const std::vector<int64_t> &values,
                                      DType dtype) {
  std::vector<char> bytes(values.size() * getDTypeBytes(dtype));
  for (size_t j = 0; j < values.size(); ++j)
    storeDouble(bytes.data(), dtype, int64_t(j), double(values[j]));
  return bytes;
}

std::vector<char> tgc::rt::gatherElements(const DatasetTensor &tensor,
                                          const std::vector<int64_t> &rows,
                                          DType dtype,
                                          const std::vector<bool> *held) {
  std::vector<char> bytes(rows.size() * tensor.exampleElements *
                          getDTypeBytes(dtype));
  auto store = [&](int64_t j, auto value) {
    storeDouble(bytes.data(), dtype, j, static_cast<double>(value));
  };
  gatherExamples(tensor, rows, store, store, held);
  return bytes;
}

bool MappedTokenFile::open(const std::string &path, int64_t seq,
                           int64_t vocabulary, std::string &error) {
  if (!file.open(path, error)) {
    error = "token file " + error;
    return false;
  }
  std::string message;
  if (!parseTokenFile(reinterpret_cast<const unsigned char *>(file.data()),
                      file.size(), seq, vocabulary, tokens, message)) {
    error = "token file '" + path + "': " + message;
    return false;
  }
  return true;
}

WindowPrefetcher::Batch WindowPrefetcher::make(unsigned n) const {
  Batch batch;
  batch.first.resize(rows * seq);
  batch.second.resize(rows * seq);
  fillTokenWindows(tokens, batch.first.data(), batch.second.data(), rows, seq,
                   stepSeed(seed, n), labelsShifted,
                   held.empty() ? nullptr : &held);
  return batch;
}

void WindowPrefetcher::take(unsigned n, std::vector<int64_t> &ids,
                            std::vector<int64_t> &labels) {
  Batch batch = batches.take(n);
  ids = std::move(batch.first);
  labels = std::move(batch.second);
}

bool MappedExampleFile::open(const std::string &path,
                             const std::vector<DatasetArgument> &arguments,
                             std::string &error) {
  if (!file.open(path, error)) {
    error = "example file " + error;
    return false;
  }
  std::string message;
  if (!openDataset(file.data(), file.size(), arguments, dataset, message)) {
    error = "example file '" + path + "': " + message;
    return false;
  }
  return true;
}

std::vector<std::vector<char>> ExamplePrefetcher::make(unsigned n) {
  std::vector<std::vector<char>> values;
  std::vector<int64_t> rows = order.examplesOf(n);
  for (size_t t = 0; t < dataset.tensors.size(); ++t) {
    const Feed &feed = feeds[t];
    values.push_back(gatherElements(dataset.tensors[t], rows, feed.dtype,
                                    feed.held.empty() ? nullptr : &feed.held));
  }
  return values;
}
