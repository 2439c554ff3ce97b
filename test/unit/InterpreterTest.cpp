//===- InterpreterTest.cpp - the interpreter's executor -------------------===//

#include "tgc/Interpreter/Interpreter.h"
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

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @f(%x: tensor<2xf32>) -> tensor<2xbf16> {
        %0 = tg.exp %x : tensor<2xf32>
        %1 = tg.convert %0 : tensor<2xf32> -> tensor<2xbf16>
        return %1 : tensor<2xbf16>
      })mlir",
                                         &context);
  }

  FunctionOpInterface function() {
    return cast<FunctionOpInterface>(&module->getBody()->front());
  }

  Tensor input(float a, float b) {
    auto type = RankedTensorType::get({2}, Float32Type::get(&context));
    Tensor tensor(type, Tensor::Storage::Float);
    tensor.floats() = {a, b};
    return tensor;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(InterpreterTest, RunsAndRoundsToTheResultType) {
  Interpreter interpreter;
  FailureOr<SmallVector<Tensor>> results =
      interpreter.run(function(), {input(0.0f, 1.0f)});
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ(results->size(), 1u);
  // exp(1) = 2.71828... is 2.71875 in bf16 (8 significant bits).
  EXPECT_EQ((*results)[0].floats()[0], 1.0f);
  EXPECT_EQ((*results)[0].floats()[1], 2.71875f);
}

TEST_F(InterpreterTest, F64ModeHoldsDoublesWithoutRounding) {
  InterpreterOptions options;
  options.f64 = true;
  Interpreter interpreter(options);
  FailureOr<SmallVector<Tensor>> results =
      interpreter.run(function(), {input(0.0f, 1.0f)});
  ASSERT_TRUE(succeeded(results));
  ASSERT_TRUE((*results)[0].isDoubleStorage());
  EXPECT_DOUBLE_EQ((*results)[0].doubles()[1], std::exp(1.0));
}

TEST_F(InterpreterTest, AMissingKernelIsAnErrorNamingTheOp) {
  KernelRegistry empty;
  Interpreter interpreter({}, empty);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(interpreter.run(function(), {input(0.0f, 1.0f)})));
  EXPECT_EQ(message, "the interpreter has no kernel for 'tg.exp'");
}

TEST_F(InterpreterTest, ArgumentsMustMatchTheSignature) {
  Interpreter interpreter;
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(interpreter.run(function(), {})));
  EXPECT_EQ(message, "expected 1 arguments, got 0");
}

} // namespace
