//===- EvalTest.cpp - the op kernels without the interpreter --------------===//

#include "tgc/Eval/Kernels.h"
#include "tgc/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

TEST(KernelRegistryTest, DefaultHasAKernelForEveryTgOp) {
  MLIRContext context;
  DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  Dialect *tg = context.getOrLoadDialect("tg");
  ASSERT_NE(tg, nullptr);
  const KernelRegistry &kernels = KernelRegistry::getDefault();
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (&name.getDialect() != tg || name.hasTrait<OpTrait::IsTerminator>())
      continue;
    EXPECT_NE(kernels.lookup(name.getStringRef()), nullptr)
        << "no kernel for " << name.getStringRef().str();
  }
}

// Where no block runner is given (constant folding at import), a fusion
// region is an error on the op, not a crash.
TEST(KernelRegistryTest, FusionWithoutABlockRunnerIsAnError) {
  MLIRContext context;
  DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%x: tensor<4xf32>):
        %r = tg.relu %x : tensor<4xf32>
        tg.yield %r : tensor<4xf32>
      }
      return %0 : tensor<4xf32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(module);
  Operation *fusion = nullptr;
  module->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "tg.fusion")
      fusion = op;
  });
  ASSERT_NE(fusion, nullptr);
  const Kernel *kernel = KernelRegistry::getDefault().lookup("tg.fusion");
  ASSERT_NE(kernel, nullptr);

  EvalOptions options;
  KernelContext kernelContext{options};
  Tensor input(RankedTensorType::get({4}, Float32Type::get(&context)),
               Tensor::Storage::Float);
  SmallVector<const Tensor *> operands = {&input};
  SmallVector<Tensor> results;
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed((*kernel)(fusion, operands, results, kernelContext)));
  EXPECT_EQ(message, "cannot evaluate a fusion region here");
}

} // namespace
