//===- PrintShardingRules.cpp - tg-print-sharding-rules ------------------===//
//
// Prints every op's factor-based sharding rule as a remark and checks it
// against the op's shapes.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tgc {
#define GEN_PASS_DEF_TGPRINTSHARDINGRULES
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {
struct PrintShardingRulesPass
    : public tgc::impl::TGPrintShardingRulesBase<PrintShardingRulesPass> {
  void runOnOperation() override {
    WalkResult walk = getOperation().walk([](tg::ShardingRuleOpInterface op) {
      tg::ShardingRule rule = op.getShardingRule();
      if (failed(rule.verify(op)))
        return WalkResult::interrupt();
      std::string text;
      llvm::raw_string_ostream os(text);
      rule.print(os);
      op.emitRemark("sharding rule: ") << text;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
