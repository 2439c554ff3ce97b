//===- Raise.cpp - tg-raise: decomposed ops back to tg ops ----------------===//
//
// The pass driver: checks the options, then applies the patterns of
// RaisePatterns.cpp with the greedy driver; with `explain`, says why each
// attention left decomposed is.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Raise.h"
#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
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

    RewritePatternSet raisePatterns(&getContext());
    populateTGRaisePatterns(raisePatterns, *kinds, options);
    // Raising replaces decompositions and nothing else: no folding, no
    // merging of constants, no region simplification. The driver visits
    // consumers before producers, so a form is raised whole before a part of
    // it can be, and it erases the ops each raise leaves dead. Each raise
    // leaves fewer decomposed ops, so it converges; were the iteration limit
    // ever hit, the module would still be correct, only less raised.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(getOperation(), std::move(raisePatterns),
                                config);
    if (explain && llvm::is_contained(*kinds, RaiseKind::Attention))
      explainUnraised(options);
  }

  /// A remark for each reason an attention is left decomposed, at the
  /// first attention it keeps so, with how many others share it: a
  /// decomposed attention keeps its [B, H, Sq, Sk] probabilities (and
  /// scores) for the backward, which tg.attention never stores.
  void explainUnraised(const RaiseOptions &options) {
    // In the order they first appear.
    std::vector<std::pair<std::string, SmallVector<tg::MatmulOp>>> reasons;
    getOperation().walk([&](tg::MatmulOp root) {
      std::optional<std::string> why = explainUnraisedAttention(root, options);
      if (!why)
        return;
      auto it = llvm::find_if(
          reasons, [&](const auto &entry) { return entry.first == *why; });
      if (it == reasons.end())
        reasons.push_back({*why, {root}});
      else
        it->second.push_back(root);
    });
    for (auto &[why, roots] : reasons) {
      InFlightDiagnostic remark = roots.front().emitRemark()
                                  << "attention left decomposed (it keeps "
                                     "its [B, H, Sq, Sk] probabilities for "
                                     "the backward): "
                                  << why;
      if (roots.size() > 1)
        remark << " (and " << roots.size() - 1 << " more attention"
               << (roots.size() > 2 ? "s" : "") << " alike)";
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
