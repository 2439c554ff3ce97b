//===- StructureKernels.cpp - the kernel of tg.fusion ---------------------===//
//
// A fusion region computes what its body computes: the caller's block runner
// (the interpreter) runs the body with the block arguments bound to the
// inputs.
//
//===----------------------------------------------------------------------===//

#include "tgc/Eval/Kernels.h"

#include "tgc/Dialect/TG/TGOps.h"

using namespace mlir;
using namespace tgc;

static LogicalResult fusionKernel(Operation *op,
                                  ArrayRef<const Tensor *> operands,
                                  SmallVectorImpl<Tensor> &results,
                                  const KernelContext &context) {
  auto fusion = cast<tg::FusionOp>(op);
  if (!context.runBlock)
    return op->emitError("cannot evaluate a fusion region here");
  FailureOr<SmallVector<Tensor>> values =
      context.runBlock(fusion.getBody().front(), operands);
  if (failed(values))
    return failure();
  results.append(std::make_move_iterator(values->begin()),
                 std::make_move_iterator(values->end()));
  return success();
}

void tgc::registerStructureKernels(KernelRegistry &registry) {
  registry.add(tg::FusionOp::getOperationName(), fusionKernel);
}
