//===- CudaEmitterTest.cpp - every tg op has a CUDA lowering -------------===//
//
// Lists the ops the tg dialect registers: each must be lowered by the CUDA
// emitter, so that a new op cannot reach code generation unnoticed. And a
// step the emitter cannot lower gets a located error, nothing else.
//
//===----------------------------------------------------------------------===//

#include "tgc/Target/CUDA/CudaEmitter.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

TEST(CudaEmitterTest, EveryTgOpIsLowered) {
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect>();
  unsigned ops = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "tg")
      continue;
    ++ops;
    StringRef op = name.getStringRef();
    EXPECT_TRUE(tgc::hasCudaLowering(op))
        << op.str() << " has no CUDA lowering";
  }
  EXPECT_GT(ops, 50u);
}

TEST(CudaEmitterTest, UncompiledStepIsALocatedError) {
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = tg.exp %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  auto function = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(failed(tgc::emitCudaProject(function)));
  EXPECT_NE(message.find("is not a compiled step"), std::string::npos)
      << message;
}

TEST(CudaEmitterTest, UnloweredOpIsALocatedError) {
  // An op of another dialect in a compiled step (a user's hand-written
  // .mlir): a located error naming it.
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func private @g(tensor<4xf32>) -> tensor<4xf32>\n"
      "func.func @f(%p: tensor<4xf32> {tg.offset = 0 : i64}) -> "
      "tensor<4xf32> attributes {tg.arena_size = 2048 : i64} {\n"
      "  %0 = func.call @g(%p) {tg.offsets = array<i64: 256>} : "
      "(tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  func::FuncOp function;
  for (auto candidate : module->getOps<func::FuncOp>())
    if (!candidate.isExternal())
      function = candidate;
  EXPECT_TRUE(failed(tgc::emitCudaProject(function)));
  EXPECT_NE(message.find("no lowering for func.call"), std::string::npos)
      << message;
}

/// A partitioned step of one all-reduce `kind` over a 2-device mesh.
std::string getPartitionedStep(llvm::StringRef kind) {
  return "shard.grid @mesh(shape = 2) {tg.mesh_axes = [\"dp\"]}\n"
         "func.func @f(%a: tensor<4xf32> {tg.offset = 0 : i64, tg.sharding = "
         "#tg.sharding<@mesh, [{\"dp\"}]>}) -> tensor<4xf32> attributes "
         "{tg.arena_size = 512 : i64} {\n"
         "  %0 = shard.all_reduce %a on @mesh grid_axes = [0] reduction = " +
         kind.str() +
         " {tg.offsets = array<i64: 256>} : tensor<4xf32> -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}\n";
}

// A collective becomes a runtime call on the group of its grid axes, and
// the step describes its mesh and each argument's block.
TEST(CudaEmitterTest, CollectiveIsARuntimeCall) {
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect, func::FuncDialect,
                      shard::ShardDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(getPartitionedStep("sum"), &context);
  ASSERT_TRUE(module);
  auto function = *module->getOps<func::FuncOp>().begin();
  FailureOr<tgc::CudaProject> project = tgc::emitCudaProject(function);
  ASSERT_TRUE(succeeded(project));
  const std::string &source = project->stepSource;
  EXPECT_NE(
      source.find("collective(context, CollectiveDesc{CollectiveKind::"
                  "AllReduce, ReduceOp::Sum, DType::F32, 0, 0, 1, {4}, 0}, "
                  "arena + 0, arena + 256"),
      std::string::npos)
      << source;
  // No pipeline axis, no pipeline group.
  EXPECT_NE(source.find("const MeshInfo kMesh = {1, {\"dp\"}, {2}, kGroups, "
                        "1, -1, -1};"),
            std::string::npos)
      << source;
  // The argument's global shape is twice its block, split over axis 0.
  EXPECT_NE(source.find("{8}, {{0, -1, -1, -1}}"), std::string::npos) << source;
}

// A reduction the runtime's engines do not have is a located error.
TEST(CudaEmitterTest, UnsupportedReductionIsALocatedError) {
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect, func::FuncDialect,
                      shard::ShardDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(getPartitionedStep("product"), &context);
  ASSERT_TRUE(module);
  std::string message;
  unsigned line = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    if (auto loc = dyn_cast<FileLineColLoc>(diagnostic.getLocation()))
      line = loc.getLine();
    return success();
  });
  auto function = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(failed(tgc::emitCudaProject(function)));
  EXPECT_NE(message.find("reduce by sum, max, min or average, not product"),
            std::string::npos)
      << message;
  EXPECT_EQ(line, 3u);
}

/// The error the CUDA emitter gives `source`'s function, or "" when it
/// emits it.
static std::string getEmitError(llvm::StringRef source) {
  MLIRContext context;
  context.loadDialect<tgc::tg::TGDialect, func::FuncDialect,
                      shard::ShardDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return "unparsed";
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  auto function = *module->getOps<func::FuncOp>().begin();
  return failed(tgc::emitCudaProject(function)) ? message : "";
}

/// A compiled step with `tg.pipeline_stages` of `stages` pipeline devices,
/// with the module's grid when `grid`.
static std::string getPipelinedStep(int stages, bool grid) {
  std::string text, sharding;
  if (grid) {
    text += "shard.grid @mesh(shape = " + std::to_string(stages) +
            ") {tg.mesh_axes = [\"pp\"]}\n";
    sharding = ", tg.sharding = #tg.sharding<@mesh, [{}]>";
  }
  return text + "func.func @f(%a: tensor<4xf32> {tg.offset = 0 : i64" +
         sharding +
         "}) -> tensor<4xf32> attributes {tg.arena_size = 512 : i64, "
         "tg.pipeline_stages = {axis = \"pp\", micro_batches = 1 : i64, "
         "schedule = \"1f1b\", stages = " +
         std::to_string(stages) +
         " : i64, virtual_stages = 1 : i64}} {\n"
         "  %0 = tg.exp %a {tg.offsets = array<i64: 256>, tg.stage = 0 : i64} "
         ": tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
}

// A pipelined step needs its mesh, and a generated trainer's holders are a
// 64-bit mask of pipeline devices.
TEST(CudaEmitterTest, PipelineLimitsAreLocatedErrors) {
  EXPECT_NE(getEmitError(getPipelinedStep(2, false))
                .find("is pipelined but has no mesh"),
            std::string::npos);
  EXPECT_NE(getEmitError(getPipelinedStep(65, true))
                .find("has 65 pipeline devices; a generated trainer takes up "
                      "to 64"),
            std::string::npos);
  // Two devices on a grid: emitted, under the test of stage 0's device.
  EXPECT_EQ(getEmitError(getPipelinedStep(2, true)), "");
}
