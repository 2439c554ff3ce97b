//===- Data.cpp - token and example files, the batches of each step ------===//

#include "Data.h"

#include "Elements.h"

#include "tgc/runtime/Random.h"

using namespace tgc::rt;

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
    const DatasetTensor &tensor = dataset.tensors[t];
    const Feed &feed = feeds[t];
    std::vector<char> bytes(rows.size() * tensor.exampleElements *
                            getDTypeBytes(feed.dtype));
    auto store = [&](int64_t j, auto value) {
      storeDouble(bytes.data(), feed.dtype, j, static_cast<double>(value));
    };
    gatherExamples(tensor, rows, store, store,
                   feed.held.empty() ? nullptr : &feed.held);
    values.push_back(std::move(bytes));
  }
  return values;
}
