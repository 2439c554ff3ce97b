//===- Raise.cpp - tg-raise: decomposed ops back to tg ops ----------------===//
//
// The pass driver: checks the options, then offers every op, consumers
// first, to the raisers of RaisePatterns.cpp.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Raise.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "tg-raise"

namespace tgc {
#define GEN_PASS_DEF_TGRAISE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

struct TGRaisePass : tgc::impl::TGRaiseBase<TGRaisePass> {
  using TGRaiseBase::TGRaiseBase;

  void runOnOperation() override {
    FailureOr<SmallVector<RaiseKind>> kinds = selectKinds();
    if (failed(kinds))
      return signalPassFailure();
    if (!(maskThreshold <= -1.0e4)) {
      getOperation().emitError("tg-raise: mask-threshold must be at most "
                               "-1e4, so that a hidden key's probability "
                               "underflows to 0; got ")
          << maskThreshold;
      return signalPassFailure();
    }
    RaiseOptions options;
    options.maskThreshold = maskThreshold;

    // Consumers before producers, so that the largest form of a pattern
    // (a layer norm with its bias) is raised whole, before a part of it.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) { ops.push_back(op); });
    llvm::SmallPtrSet<Operation *, 32> erased;
    for (Operation *op : llvm::reverse(ops)) {
      if (erased.contains(op))
        continue;
      for (RaiseKind kind : *kinds)
        if (succeeded(raiseDecomposition(kind, op, options, erased)))
          break;
    }
  }

  /// The kinds named by `patterns`, in the order of getAllRaiseKinds.
  FailureOr<SmallVector<RaiseKind>> selectKinds() {
    ArrayRef<RaiseKind> all = getAllRaiseKinds();
    if (patterns.empty())
      return SmallVector<RaiseKind>(all);
    for (const std::string &name : patterns)
      if (llvm::none_of(all, [&](RaiseKind kind) {
            return getRaiseKindName(kind) == name;
          })) {
        auto names = llvm::map_range(all, getRaiseKindName);
        getOperation().emitError("tg-raise: unknown pattern '")
            << name << "'; expected one of " << llvm::join(names, ", ");
        return failure();
      }
    SmallVector<RaiseKind> kinds;
    for (RaiseKind kind : all)
      if (llvm::is_contained(patterns, getRaiseKindName(kind).str()))
        kinds.push_back(kind);
    return kinds;
  }
};

} // namespace
