//===- SingleBlock.cpp - the one-block precondition of the tg passes -----===//

#include "tgc/Transforms/Passes.h"

using namespace mlir;

LogicalResult tgc::checkSingleBlockFunctions(Operation *root, StringRef pass) {
  WalkResult result = root->walk([&](func::FuncOp function) {
    if (function.isExternal() || function.getBody().hasOneBlock())
      return WalkResult::advance();
    function.emitError() << pass << " works on functions of one block; @"
                         << function.getName() << " has "
                         << function.getBody().getBlocks().size()
                         << " (branches are not supported)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
