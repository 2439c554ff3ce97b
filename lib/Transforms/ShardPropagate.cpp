//===- ShardPropagate.cpp - tg-shard-propagate
//-----------------------------===//
//
// Gives every value of an annotated step a sharding (ShardingPropagation)
// and, with `explain`, says which annotation won each conflict and how
// every argument ends up stored.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/ShardingPropagation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tgc {
#define GEN_PASS_DEF_TGSHARDPROPAGATE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

#define DEBUG_TYPE "tg-shard-propagate"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {
struct ShardPropagatePass
    : public tgc::impl::TGShardPropagateBase<ShardPropagatePass> {
  using TGShardPropagateBase::TGShardPropagateBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    FailureOr<std::optional<Mesh>> found = lookupFunctionMesh(function);
    if (failed(found))
      return signalPassFailure();
    if (!*found)
      return;
    const Mesh *mesh = &**found;
    ShardingPropagation propagation(function, *mesh);
    if (failed(propagation.seed()))
      return signalPassFailure();
    propagation.run();
    propagation.writeShardings();
    if (!explain)
      return;
    for (const ShardingConflict &conflict : propagation.getConflicts())
      conflict.op->emitRemark("sharding conflict: ") << conflict.message;
    InFlightDiagnostic table = function.emitRemark("shardings of the ")
                               << function.getNumArguments()
                               << " arguments on mesh " << mesh->str() << ":";
    for (BlockArgument arg : function.getArguments()) {
      auto name = function.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), TGDialect::kNameAttrName);
      table << "\n  "
            << (name ? name.getValue().str()
                     : "#" + std::to_string(arg.getArgNumber()))
            << " " << arg.getType() << " "
            << describeLayout(propagation.getLayout(arg), *mesh);
    }
  }
};
} // namespace
