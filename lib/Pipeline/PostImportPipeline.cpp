//===- PostImportPipeline.cpp - passes run on every imported graph --------===//

#include "tgc/Pipeline/PostImportPipeline.h"

#include "tgc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

void tgc::buildPostImportPipeline(mlir::OpPassManager &pm,
                                  bool explainAttention) {
  // The literal translation leaves reshape chains, identity broadcasts and
  // duplicated constants; cleaning them first lets tg-raise see each
  // decomposed pattern (layer norm, GELU, attention...) in one form.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  TGRaiseOptions raise;
  raise.explain = explainAttention;
  pm.addPass(createTGRaise(raise));
}
