//===- Raise.h - patterns raising decomposed high-level ops -----*- C++ -*-===//
//
// The patterns behind tg-raise, usable without the pass: each recognizes one
// decomposition ending at an op and replaces it with the tg op.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRANSFORMS_RAISE_H
#define TGC_TRANSFORMS_RAISE_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace tgc {
namespace tg {
class MatmulOp;
} // namespace tg

/// The families of decompositions tg-raise recognizes.
enum class RaiseKind {
  LayerNorm,
  RmsNorm,
  Gelu,
  Silu,
  Attention,
  CrossEntropy,
  /// Matrices gathered per token from a table of experts' (transformers'
  /// batched_mm experts): one dense product of every expert.
  Experts,
};

/// The option name of a kind (`layer_norm`, `rms_norm`, ...).
llvm::StringRef getRaiseKindName(RaiseKind kind);
/// All kinds, bigger forms first: the order of their patterns' benefits.
llvm::ArrayRef<RaiseKind> getAllRaiseKinds();

struct RaiseOptions {
  /// Attention mask values at or below this hide a key (-inf always does).
  double maskThreshold = -1.0e4;
};

/// Adds to `patterns` the patterns that raise the decompositions of `kinds`,
/// one per form, the bigger forms with the higher benefits. Each replaces the
/// root of its decomposition and leaves the decomposition's other ops dead
/// for the driver to erase.
void populateTGRaisePatterns(mlir::RewritePatternSet &patterns,
                             llvm::ArrayRef<RaiseKind> kinds,
                             const RaiseOptions &options = {});
/// The same for every kind.
void populateTGRaisePatterns(mlir::RewritePatternSet &patterns,
                             const RaiseOptions &options = {});

/// Why the decomposed attention that `root` ends (its product of a softmax
/// over the keys of rank-4 scores with the values) is not raised to
/// tg.attention: a mask or op tg.attention does not take (its own dropout
/// excepted), an intermediate used elsewhere, shapes. nullopt when
/// `root` ends no such softmax, or when the attention pattern would raise it.
std::optional<std::string>
explainUnraisedAttention(tg::MatmulOp root, const RaiseOptions &options);

} // namespace tgc

#endif // TGC_TRANSFORMS_RAISE_H
