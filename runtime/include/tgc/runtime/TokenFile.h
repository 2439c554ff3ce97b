//===- TokenFile.h - token files, as both trainers read them ----*- C++ -*-===//
//
// The training data `--data FILE.bin` names: nanoGPT's `train.bin` (the
// token ids as little-endian uint16, nothing else) or llm.c's (a header of
// 256 int32: the magic 20240520, version 1 and the token count, then the
// ids as nanoGPT's). `tgc train` and the generated trainer check a file
// with the same rules and messages here, map it rather than copy it, and
// take the same windows of it (fillTokenWindows).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_TOKENFILE_H
#define TGC_RUNTIME_TOKENFILE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tgc::rt {

/// The ids of a token file: `count` little-endian uint16 from `bytes`.
struct TokenSpan {
  const unsigned char *bytes = nullptr;
  int64_t count = 0;
  uint16_t operator[](int64_t i) const {
    return static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8);
  }
};

/// llm.c's header: 256 int32, the first its magic (GPT-2's uint16 ids;
/// llama 3's files hold uint32 ids under another magic).
constexpr size_t kLlmcHeaderBytes = 1024;
constexpr int32_t kLlmcMagic = 20240520, kLlmcLlama3Magic = 20240801;

/// Checks the `size` bytes of a token file for rows of `seq` ids below
/// `vocabulary`: `span` gets its ids; else false, and `message` what is
/// wrong (without the file's name). A file is llm.c's when it starts with
/// a header whose magic, version and token count match its size, else
/// nanoGPT's.
inline bool parseTokenFile(const unsigned char *bytes, size_t size, int64_t seq,
                           int64_t vocabulary, TokenSpan &span,
                           std::string &message) {
  auto int32At = [&](size_t i) {
    return static_cast<int32_t>(
        uint32_t(bytes[4 * i]) | uint32_t(bytes[4 * i + 1]) << 8 |
        uint32_t(bytes[4 * i + 2]) << 16 | uint32_t(bytes[4 * i + 3]) << 24);
  };
  size_t offset = 0;
  if (size >= kLlmcHeaderBytes) {
    int32_t magic = int32At(0), version = int32At(1), count = int32At(2);
    size_t after = size - kLlmcHeaderBytes;
    if (magic == kLlmcMagic && version == 1 && count >= 0 &&
        after == 2 * size_t(count))
      offset = kLlmcHeaderBytes;
    if (magic == kLlmcLlama3Magic && count >= 0 && after == 4 * size_t(count)) {
      message = "it is an llm.c file of uint32 token ids (llama 3's); tgc "
                "reads uint16 ids";
      return false;
    }
  }
  if ((size - offset) % 2 != 0) {
    message = "its size (" + std::to_string(size) +
              " bytes) is odd; expected little-endian uint16 token ids";
    return false;
  }
  span.bytes = bytes + offset;
  span.count = static_cast<int64_t>((size - offset) / 2);
  for (int64_t i = 0; i < span.count; ++i)
    if (span[i] >= vocabulary) {
      message = "token " + std::to_string(i) + " is " +
                std::to_string(span[i]) + ", not below the vocabulary size " +
                std::to_string(vocabulary);
      return false;
    }
  if (span.count < seq + 1) {
    message = "it holds " + std::to_string(span.count) +
              " tokens; a window of the sequence length " +
              std::to_string(seq) + " and its next token need " +
              std::to_string(seq + 1);
    return false;
  }
  return true;
}

/// The ids and labels of a step from a token file: each of the `rows` rows
/// a window of `seq` tokens at a random offset (an mt19937_64 of `seed`),
/// the labels the same window one token on (the next token at every
/// position), or with `labelsShifted` (a model that shifts its labels by
/// one position itself, CopyTask::labelsShifted) the window itself. With
/// `held` (a flag per row), only the rows it flags are read, the others
/// left as they are: a data-parallel rank reads the windows of its own
/// block of the batch, and they are the ones the whole batch would have.
inline void fillTokenWindows(TokenSpan tokens, int64_t *ids, int64_t *labels,
                             int64_t rows, int64_t seq, uint64_t seed,
                             bool labelsShifted,
                             const std::vector<bool> *held = nullptr) {
  int64_t labelOffset = labelsShifted ? 0 : 1;
  int64_t starts = tokens.count - seq;
  std::mt19937_64 rng(seed);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t start = static_cast<int64_t>(rng() % uint64_t(starts));
    if (held && !(*held)[row])
      continue;
    for (int64_t t = 0; t < seq; ++t) {
      ids[row * seq + t] = tokens[start + t];
      labels[row * seq + t] = tokens[start + t + labelOffset];
    }
  }
}

/// The batches of `rows` rows of `seq` tokens an evaluation reads from a
/// token file: the file cut into consecutive windows, each with its next
/// token, in order (llm.c's validation loader), `rows` a batch.
inline int64_t countEvaluationBatches(TokenSpan tokens, int64_t rows,
                                      int64_t seq) {
  if (rows <= 0 || seq <= 0 || tokens.count < 1)
    return 0;
  return (tokens.count - 1) / seq / rows;
}

/// The ids and labels of evaluation batch `batch` (below
/// countEvaluationBatches): row r the window at token (batch * rows + r) *
/// seq, the labels as fillTokenWindows makes them. With `held`, only the
/// rows it flags.
inline void fillEvaluationWindows(TokenSpan tokens, int64_t *ids,
                                  int64_t *labels, int64_t rows, int64_t seq,
                                  int64_t batch, bool labelsShifted,
                                  const std::vector<bool> *held = nullptr) {
  int64_t labelOffset = labelsShifted ? 0 : 1;
  for (int64_t row = 0; row < rows; ++row) {
    if (held && !(*held)[row])
      continue;
    int64_t start = (batch * rows + row) * seq;
    for (int64_t t = 0; t < seq; ++t) {
      ids[row * seq + t] = tokens[start + t];
      labels[row * seq + t] = tokens[start + t + labelOffset];
    }
  }
}

/// The copy task's labels for a model that shifts its labels by one
/// position itself: `labels` holds the ids (`rows` rows of `seq` elements of
/// `elementBytes`), and each row moves one position on, so that the label
/// the model reads for position t is the id at t; the first position (which
/// the model drops) keeps its id.
inline void shiftCopyLabels(char *labels, int64_t rows, int64_t seq,
                            size_t elementBytes) {
  if (seq < 2)
    return;
  for (int64_t row = 0; row < rows; ++row) {
    char *begin = labels + row * seq * elementBytes;
    std::memmove(begin + elementBytes, begin, (seq - 1) * elementBytes);
  }
}

/// What `--data source` feeds, as both trainers say it: the token ids
/// `ids` (below `vocabulary`) and the labels `labels`, with random ids
/// (synthetic-copy) or windows of a token file, the labels one token on
/// unless the model shifts them itself (`labelsShifted`).
inline std::string describeDataFeed(const std::string &source,
                                    const std::string &ids,
                                    const std::string &labels,
                                    int64_t vocabulary, bool labelsShifted) {
  bool fromFile = source != "synthetic-copy";
  std::string labelValues =
      fromFile
          ? (labelsShifted ? "the same windows" : "the windows one token on")
          : (labelsShifted ? "the ids one position on" : "the same ids");
  return "--data " + source + " feeds '" + ids + "' (token ids below " +
         std::to_string(vocabulary) + ") with " +
         (fromFile ? "windows of the file" : "random ids") + " and '" + labels +
         "' with " + labelValues +
         (labelsShifted ? " (the model shifts its labels itself)" : "");
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_TOKENFILE_H
