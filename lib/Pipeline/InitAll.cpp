//===- InitAll.cpp - register everything tgc provides
//----------------------===//

#include "tgc/InitAll.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void tgc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry
      .insert<tg::TGDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
              mlir::tensor::TensorDialect, mlir::shard::ShardDialect>();
  mlir::func::registerInlinerExtension(registry);
}

void tgc::registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  tgc::registerTGCPasses();
  registerTrainingPipeline();
}
