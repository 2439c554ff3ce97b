//===- Evaluation.h - train --val-data: the validation loss -----*- C++ -*-===//
//
// The evaluation tgc compiled beside the step (tgc compile --evaluation,
// evaluate.cu: the forward graph without dropout, a BatchNorm on its running
// statistics, its loss alone), run on an arena of its own with the step's
// current parameters and state, over fixed batches of held-out data: what
// `tgc train --val-data` measures on the interpreter
// (lib/Training/Trainer.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_EVALUATION_H
#define TGC_RUNTIME_SRC_EVALUATION_H

#include "Data.h"
#include "Ranks.h"

#include "tgc/runtime/Runtime.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tgc::rt {

class Evaluation {
public:
  Evaluation() = default;
  Evaluation(const Evaluation &) = delete;
  Evaluation &operator=(const Evaluation &) = delete;
  ~Evaluation();

  /// Sets up `evaluate` (described by `info`) for the step `step`, of one
  /// device or (with `stepRanks`, the step's) of the same mesh as it (a
  /// pipelined step's: its mesh without the pipeline axis, the evaluation
  /// run whole on each stage's ranks):
  /// each parameter or state argument it takes must be the step's of that
  /// name, type and shape (on a mesh, a block cut otherwise is gathered
  /// from the step's blocks at each measurement, as is every one of a
  /// pipelined step, which some stages' ranks hold);
  /// its collectives get groups of their own from the step's world (every
  /// rank calls this, in the same order). `path` is a token file (.bin:
  /// consecutive windows, rt::fillEvaluationWindows) or an example file
  /// (.safetensors: the examples in the file's order), of at least one
  /// whole batch; at most `batches` batches are measured. The other
  /// arguments start as the step's do (`seed`). False, with `error`, when
  /// any of it fails.
  bool open(const StepInfo &info, StepFunction evaluate, const StepInfo &step,
            Communication *stepRanks, const std::string &path, unsigned batches,
            uint64_t seed, std::string &error);

  /// The mean loss over the batches, the step's values read from its arena
  /// `stepArena`. On a mesh, each rank uploads its blocks of each batch.
  double measure(const char *stepArena);
  unsigned getBatches() const { return batches; }

private:
  /// Argument i's part (this rank's block on a mesh) of its whole value.
  void upload(int i, const std::vector<char> &whole);
  /// The whole value of the step's `stepArg`, its blocks gathered from
  /// every rank (a collective of the step's world).
  std::vector<char> gather(const ArgumentInfo &stepArg, const char *stepArena);
  const MeshInfo &stepMesh() const { return stepInfo->mesh; }

  const StepInfo *info = nullptr;
  StepFunction evaluate = nullptr;
  Context context;
  /// On a mesh: this rank's groups for the evaluation's collectives (the
  /// world stays the step's).
  std::unique_ptr<Communication> communication;
  /// Evaluation argument <- the step's argument of its name (arena
  /// offsets and bytes).
  struct Taken {
    int64_t offset, stepOffset, bytes;
  };
  std::vector<Taken> taken;
  /// Evaluation arguments cut otherwise than the step's of their name.
  std::vector<std::pair<int, const ArgumentInfo *>> regathered;
  const StepInfo *stepInfo = nullptr;
  Communication *stepRanks = nullptr;
  int lossIndex = -1;
  unsigned batches = 0;
  bool fromTokens = false;
  MappedTokenFile tokens;
  int64_t rows = 0, seq = 1;
  MappedExampleFile examples;
};

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_EVALUATION_H
