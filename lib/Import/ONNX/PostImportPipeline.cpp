//===- PostImportPipeline.cpp - passes run on every imported graph --------===//

#include "tgc/Import/ONNX/PostImportPipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

void tgc::buildPostImportPipeline(mlir::OpPassManager &pm) {
  // The literal translation leaves reshape chains, identity broadcasts and
  // duplicated constants; pattern raising (tg-raise) joins here.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}
