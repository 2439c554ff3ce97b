//===- main.cpp - embed tgc's training pipeline in another program --------===//
//
// Parses a module, adds tgc's pipeline to this program's own pass manager,
// runs it and prints the result: what another compiler does to use tgc.
//
//===----------------------------------------------------------------------===//

#include "tgc/InitAll.h"
#include "tgc/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: embed-pipeline FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  tgc::registerAllDialects(registry);
  tgc::registerAllPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  tgc::TrainingPipelineOptions options;
  tgc::buildTrainingPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
