//===- Inputs.h - the interpreter's arguments: names, random ----*- C++ -*-===//
//
// The interpreter's arguments: their names, and random values with a
// documented distribution per role (.npy files go through
// tgc/Eval/TensorNpy.h).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_INPUTS_H
#define TGC_INTERPRETER_INPUTS_H

#include "tgc/Eval/Tensor.h"

#include "tgc/runtime/Random.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tgc {

/// The name of argument `index`: its `tg.name`, else `arg<index>`.
std::string getArgumentName(mlir::FunctionOpInterface function, unsigned index);
/// The name of result `index`: its `tg.name`, else its index.
std::string getResultName(mlir::FunctionOpInterface function, unsigned index);

/// The exclusive upper bound of the integer ids `value` may hold: the rows of
/// the embedding tables and the classes of the cross-entropies that read it,
/// through shape ops and fusion regions. None if nothing bounds it.
std::optional<int64_t> findIdBound(mlir::Value value);

/// Whether the ids `value` holds are a loss's labels (through what
/// findIdBound follows): none if they are not; true if the step shifts them
/// by one position first (`labels[..., 1:]`: a causal language model given
/// its input ids as labels compares the prediction at position t with
/// labels[t + 1]), false if they are the labels of their own positions.
std::optional<bool> findLabelShift(mlir::Value value);

/// Whether `value` reaches, through any ops (into and out of fusion
/// regions), the ids of an embedding or the labels of a loss: token ids (an
/// importer may normalize them first, as ONNX Gather's negative indices),
/// or labels, which a trainer's data feeds.
bool feedsIdsOrLabels(mlir::Value value);

/// The ids `value` may hold outside findIdBound's range: the ignore_index of
/// the losses that read it (and of a vocabulary-parallel loss, which
/// compares its labels with it).
llvm::SmallVector<int64_t> findIgnoredIds(mlir::Value value);

/// Checks that the integer values `tensor` gives argument `index` are ids
/// in findIdBound's range or ignored ones; a located error otherwise. A
/// partitioned step needs it where its values come in: a vocabulary-parallel
/// lookup or loss shifts the ids into each device's block and masks the
/// others, so an id no device holds would read zeros, not fail.
mlir::LogicalResult checkIdsInRange(mlir::FunctionOpInterface function,
                                    unsigned index, const Tensor &tensor);

/// How argument `index` starts (role, tg.init, tg.default, id bound): what
/// makeRandomArgument draws from, and what a generated trainer is told.
rt::RandomSpec getRandomSpec(mlir::FunctionOpInterface function,
                             unsigned index);

/// A value for argument `index` of `function`: its `tg.default` if it has
/// one, else a random value from `seed`:
///  - `param`: normal, mean 0, standard deviation 0.02, or its `tg.init`
///    ("zeros", "ones");
///  - `state`: zeros;
///  - `label` (integer): uniform class ids in [0, C), C being the class
///    dimension of the cross-entropy that reads it (else [0, 2));
///  - `hyper`: integers uniform in [0, 2^31) (seeds), floats 1e-3;
///  - `input` and no role: floats normal(0, 1); integers uniform in [0, V)
///    for embedding ids (V rows), else in [0, 16).
/// Each argument draws from its own generator, seeded by (seed, index), so a
/// value does not change when other arguments are added or given as files.
/// `type` is the value's type when it is not the argument's: the global type
/// of a partitioned function's argument (GlobalStep.h).
Tensor makeRandomArgument(mlir::FunctionOpInterface function, unsigned index,
                          uint64_t seed, mlir::RankedTensorType type = {});

} // namespace tgc

#endif // TGC_INTERPRETER_INPUTS_H
