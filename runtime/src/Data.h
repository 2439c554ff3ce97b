//===- Data.h - the batches of the generated trainer ------------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_DATA_H
#define TGC_RUNTIME_SRC_DATA_H

#include "MappedFile.h"

#include "tgc/runtime/Dataset.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/TokenFile.h"

#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace tgc::rt {

/// The bytes of (whole) argument `arg`, number `index`, as `tgc run
/// --random-inputs seed` makes it.
std::vector<char> makeArgument(const ArgumentInfo &arg, unsigned index,
                               uint64_t seed);

/// The value an integer input's name says (an attention mask all ones...,
/// getNamedInput), as `tgc train` gives it; empty for any other argument.
std::vector<char> makeNamedInput(const ArgumentInfo &arg);

/// `values` as elements of `dtype` (token ids and labels).
std::vector<char> toElements(const std::vector<int64_t> &values, DType dtype);

/// The examples `rows` of `tensor` as elements of `dtype`, one after
/// another; with `held`, only the rows it flags (the others zero).
std::vector<char> gatherElements(const DatasetTensor &tensor,
                                 const std::vector<int64_t> &rows, DType dtype,
                                 const std::vector<bool> *held = nullptr);

/// What the checks of an example file need of (global) argument `arg`.
DatasetArgument getDatasetArgument(const ArgumentInfo &arg);

/// A token file (TokenFile.h) mapped into memory, not copied: a dataset
/// larger than the host's memory trains, its pages read as windows need
/// them. The checks and messages are `tgc train --data FILE.bin`'s.
class MappedTokenFile {
public:
  /// Maps and checks `path` for rows of `seq` ids below `vocabulary`.
  bool open(const std::string &path, int64_t seq, int64_t vocabulary,
            std::string &error);
  TokenSpan getTokens() const { return tokens; }

private:
  MappedFile file;
  TokenSpan tokens;
};

/// Each step's batch, made by `make(n)` on a host thread one step ahead:
/// while the device runs step n, the thread makes step n + 1's, so a step
/// never waits on the file. Without a thread to be had, a step makes its
/// own.
template <typename Batch> class StepPrefetcher {
public:
  explicit StepPrefetcher(std::function<Batch(unsigned)> make)
      : make(std::move(make)) {}
  /// `make` may point into the object holding the prefetcher: neither
  /// moves.
  StepPrefetcher(const StepPrefetcher &) = delete;
  StepPrefetcher &operator=(const StepPrefetcher &) = delete;

  /// The batch of step `n`; starts making step n + 1's.
  Batch take(unsigned n) {
    std::optional<Batch> batch;
    if (next.valid()) {
      std::pair<unsigned, Batch> made = next.get();
      if (made.first == n)
        batch = std::move(made.second);
    }
    if (!batch)
      batch = make(n);
    try {
      next = std::async(std::launch::async, [this, n] {
        return std::make_pair(n + 1, make(n + 1));
      });
    } catch (const std::system_error &) {
    }
    return std::move(*batch);
  }

private:
  std::function<Batch(unsigned)> make;
  /// std::async's: its destructor waits for the thread.
  std::future<std::pair<unsigned, Batch>> next;
};

/// The token windows of each step (fillTokenWindows, step n seeded with
/// stepSeed(seed, n)), prefetched.
class WindowPrefetcher {
public:
  /// `held`: the rows this process reads (fillTokenWindows), empty for
  /// all.
  WindowPrefetcher(TokenSpan tokens, int64_t rows, int64_t seq, uint64_t seed,
                   bool labelsShifted, std::vector<bool> held = {})
      : tokens(tokens), rows(rows), seq(seq), seed(seed),
        labelsShifted(labelsShifted), held(held) {}

  /// The ids and labels of step `n`; starts making step n + 1's.
  void take(unsigned n, std::vector<int64_t> &ids,
            std::vector<int64_t> &labels);

private:
  using Batch = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
  Batch make(unsigned n) const;

  TokenSpan tokens;
  int64_t rows, seq;
  uint64_t seed;
  bool labelsShifted;
  std::vector<bool> held;
  /// Last: destroyed first, waiting for its thread while the rest lives.
  StepPrefetcher<Batch> batches{[this](unsigned n) { return make(n); }};
};

/// An example file (tgc/runtime/Dataset.h) mapped into memory, not copied,
/// and checked against the step's arguments; the messages are `tgc train
/// --data FILE.safetensors`'s.
class MappedExampleFile {
public:
  bool open(const std::string &path,
            const std::vector<DatasetArgument> &arguments, std::string &error);
  const Dataset &getDataset() const { return dataset; }

private:
  MappedFile file;
  Dataset dataset;
};

/// The values the examples of each step (DatasetOrder) give the arguments
/// they feed, in the arguments' element types, prefetched.
class ExamplePrefetcher {
public:
  /// What each tensor of the file (in the Dataset's order) feeds: the
  /// argument's type, and the rows of the batch this process reads (empty:
  /// all; the others stay zero).
  struct Feed {
    DType dtype;
    std::vector<bool> held;
  };
  ExamplePrefetcher(const Dataset &dataset, uint64_t seed,
                    std::vector<Feed> feeds)
      : dataset(dataset), order(dataset.examples, dataset.batch, seed),
        feeds(std::move(feeds)) {}

  /// The whole value of each tensor's argument at step `n` (the bytes of
  /// B examples); starts making step n + 1's.
  std::vector<std::vector<char>> take(unsigned n) { return batches.take(n); }

private:
  /// Called by one thread at a time (StepPrefetcher waits for the one
  /// before): DatasetOrder keeps the epoch's order.
  std::vector<std::vector<char>> make(unsigned n);

  const Dataset &dataset;
  DatasetOrder order;
  std::vector<Feed> feeds;
  StepPrefetcher<std::vector<std::vector<char>>> batches{
      [this](unsigned n) { return make(n); }};
};

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_DATA_H
