//===- Data.h - the batches of the generated trainer ------------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_DATA_H
#define TGC_RUNTIME_SRC_DATA_H

#include "MappedFile.h"

#include "tgc/runtime/TokenFile.h"

#include <cstdint>
#include <future>
#include <string>
#include <vector>

namespace tgc::rt {

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

/// The token windows of each step (fillTokenWindows, step n seeded with
/// stepSeed(seed, n)), made on a host thread one step ahead: while the
/// device runs step n, the thread gathers step n + 1's rows, so a step
/// never waits on the file.
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
  struct Batch {
    unsigned step = 0;
    std::vector<int64_t> ids, labels;
  };
  Batch make(unsigned n) const;

  TokenSpan tokens;
  int64_t rows, seq;
  uint64_t seed;
  bool labelsShifted;
  std::vector<bool> held;
  /// std::async's: its destructor waits for the thread.
  std::future<Batch> next;
};

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_DATA_H
