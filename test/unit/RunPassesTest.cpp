//===- RunPassesTest.cpp - a pass that breaks the IR is named as the bug --===//

#include "tgc/Pipeline/RunPasses.h"
#include "tgc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <atomic>

using namespace mlir;

namespace {

/// Gives argument #0 of every function a role that does not exist: IR that
/// does not verify, left by a pass that reports nothing.
struct BreakPass : PassWrapper<BreakPass, OperationPass<func::FuncOp>> {
  StringRef getArgument() const override { return "test-break"; }
  void runOnOperation() override {
    getOperation().setArgAttr(0, "tg.role",
                              StringAttr::get(&getContext(), "weight"));
  }
};

/// The same, and then a failure with its own message (a user's error).
struct FailPass : PassWrapper<FailPass, OperationPass<func::FuncOp>> {
  StringRef getArgument() const override { return "test-fail"; }
  void runOnOperation() override {
    getOperation().setArgAttr(0, "tg.role",
                              StringAttr::get(&getContext(), "weight"));
    getOperation().emitError("the model is wrong");
    signalPassFailure();
  }
};

/// Counts the functions it runs on.
struct CountPass : PassWrapper<CountPass, OperationPass<func::FuncOp>> {
  explicit CountPass(std::atomic<int> &runs) : runs(runs) {}
  StringRef getArgument() const override { return "test-count"; }
  void runOnOperation() override { ++runs; }
  std::atomic<int> &runs;
};

class RunPassesTest : public ::testing::Test {
protected:
  RunPassesTest() {
    DialectRegistry registry;
    tgc::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
        return %x : tensor<4xf32>
      }
      func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
        return %x : tensor<4xf32>
      })mlir",
                                         &context);
  }

  /// Runs `pm` through tgc::runPasses; the errors, each with its notes.
  std::vector<std::string> run(PassManager &pm, LogicalResult &result) {
    std::vector<std::string> errors;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
      std::string text = diagnostic.str();
      for (Diagnostic &note : diagnostic.getNotes())
        text += "\n  note: " + note.str();
      errors.push_back(text);
      return success();
    });
    result = tgc::runPasses(pm, *module);
    return errors;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// The broken IR is the pass's bug, named as such, with the verifier's
// message as a note; the passes after it do not run.
TEST_F(RunPassesTest, InvalidIRAfterAPassIsAnInternalError) {
  ASSERT_TRUE(module);
  std::atomic<int> runs = 0;
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<BreakPass>());
  pm.addNestedPass<func::FuncOp>(std::make_unique<CountPass>(runs));
  LogicalResult result = success();
  std::vector<std::string> errors = run(pm, result);
  EXPECT_TRUE(failed(result));
  ASSERT_FALSE(errors.empty());
  for (const std::string &error : errors) {
    EXPECT_NE(error.find("internal error: pass 'test-break' left IR that does "
                         "not verify; this is a bug in tgc, not in the model"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("note: the verifier: argument #0 of '"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("unknown role 'weight'"), std::string::npos) << error;
  }
  EXPECT_EQ(runs, 0);
}

// A pass that fails with its own message is reported as it is, whatever it
// left.
TEST_F(RunPassesTest, APassesOwnErrorStaysAsItIs) {
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<FailPass>());
  LogicalResult result = success();
  std::vector<std::string> errors = run(pm, result);
  EXPECT_TRUE(failed(result));
  ASSERT_FALSE(errors.empty());
  for (const std::string &error : errors) {
    EXPECT_EQ(error.rfind("the model is wrong", 0), 0u) << error;
    EXPECT_EQ(error.find("internal error"), std::string::npos) << error;
  }
}

// Passes that keep the IR valid all run.
TEST_F(RunPassesTest, ValidIRRunsEveryPass) {
  ASSERT_TRUE(module);
  std::atomic<int> runs = 0;
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<CountPass>(runs));
  pm.addNestedPass<func::FuncOp>(std::make_unique<CountPass>(runs));
  LogicalResult result = failure();
  std::vector<std::string> errors = run(pm, result);
  EXPECT_TRUE(succeeded(result));
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(runs, 4);
}
} // namespace
