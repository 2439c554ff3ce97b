//===- Data.cpp - token files and the windows of each step ---------------===//

#include "Data.h"

#include "tgc/runtime/Random.h"

#include <system_error>

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
  batch.step = n;
  batch.ids.resize(rows * seq);
  batch.labels.resize(rows * seq);
  fillTokenWindows(tokens, batch.ids.data(), batch.labels.data(), rows, seq,
                   stepSeed(seed, n), labelsShifted,
                   held.empty() ? nullptr : &held);
  return batch;
}

void WindowPrefetcher::take(unsigned n, std::vector<int64_t> &ids,
                            std::vector<int64_t> &labels) {
  Batch batch = next.valid() ? next.get() : make(n);
  if (batch.step != n)
    batch = make(n);
  try {
    next = std::async(std::launch::async, [this, n] { return make(n + 1); });
  } catch (const std::system_error &) {
    // No thread to be had: the next step makes its rows itself.
  }
  ids = std::move(batch.ids);
  labels = std::move(batch.labels);
}
