//===- EvalTest.cpp - the op kernels without the interpreter --------------===//

#include "tgc/Eval/Kernels.h"
#include "tgc/InitAll.h"
#include "tgc/runtime/TiledGemm.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cblas.h>
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

/// Runs the kernel of the only tg op of `source` (a function of one op) on
/// `operands`.
static SmallVector<Tensor> runSingleOp(MLIRContext &context, StringRef source,
                                       ArrayRef<const Tensor *> operands) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  EXPECT_TRUE(module);
  Operation *target = nullptr;
  module->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "tg")
      target = op;
  });
  EXPECT_NE(target, nullptr);
  EvalOptions options;
  KernelContext kernelContext{options};
  SmallVector<Tensor> results;
  const Kernel *kernel =
      KernelRegistry::getDefault().lookup(target->getName().getStringRef());
  EXPECT_TRUE(succeeded((*kernel)(target, operands, results, kernelContext)));
  return results;
}

static MLIRContext &getTgContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    auto *made = new MLIRContext(registry);
    made->loadAllAvailableDialects();
    return made;
  }();
  return *context;
}

// A matmul is the tiles of tgc/runtime/TiledGemm.h, whichever threads take
// them: equal to the bit to the tiles computed one after another on one
// thread (the host target's GEMMs compute the same tiles), on a shape
// where one OpenBLAS call over the whole product gives other bits.
TEST(MatmulTest, TheTilesDecideTheBits) {
  MLIRContext &context = getTgContext();
  constexpr int64_t m = 30, n = 900, k = 100;
  Tensor a(RankedTensorType::get({m, k}, Float32Type::get(&context)),
           Tensor::Storage::Float);
  Tensor b(RankedTensorType::get({k, n}, Float32Type::get(&context)),
           Tensor::Storage::Float);
  for (size_t i = 0; i < a.floats().size(); ++i)
    a.floats()[i] = std::sin(0.37f * float(i)) * 3;
  for (size_t i = 0; i < b.floats().size(); ++i)
    b.floats()[i] = std::cos(0.11f * float(i)) - 0.25f;
  SmallVector<Tensor> product = runSingleOp(context, R"mlir(
    func.func @f(%a: tensor<30x100xf32>, %b: tensor<100x900xf32>)
        -> tensor<30x900xf32> {
      %0 = tg.matmul %a, %b
          : (tensor<30x100xf32>, tensor<100x900xf32>) -> tensor<30x900xf32>
      return %0 : tensor<30x900xf32>
    })mlir",
                                            {&a, &b});
  ASSERT_EQ(product.size(), 1u);
  std::vector<float> expected(m * n);
  openblas_set_num_threads(1);
  rt::tiledGemm(false, false, m, n, k, a.floats().data(), b.floats().data(),
                expected.data(), 1.0f, 0.0f, [](int64_t tiles, auto &&tile) {
                  for (int64_t t = 0; t < tiles; ++t)
                    tile(t);
                });
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(),
                         product[0].floats().begin()));
}

// Long f32 sums (issue 21, class 10): 2^25 copies of -0.0659535 summed one
// after the other in f32 stall at -2097152 (the f64 sum is -2213030.6). The
// kernels sum through rt::CascadeSum: within 2e-6 relative of the f64 sum.
constexpr double kLongSumTolerance = 2e-6;
constexpr int64_t kLongCount = int64_t(1) << 25;
constexpr float kTerm = -0.0659535f;

TEST(LongSumTest, SequentialF32SumIsFarOff) {
  // What the test guards against: the tolerance is not loose enough to let
  // the plain sum through.
  float sequential = 0;
  for (int64_t i = 0; i < kLongCount; ++i)
    sequential += kTerm;
  double exact = double(kTerm) * double(kLongCount);
  EXPECT_GT(std::abs(sequential - exact) / std::abs(exact), 0.05);
}

TEST(LongSumTest, ReduceSumAndMeanOf2To25Elements) {
  MLIRContext &context = getTgContext();
  Tensor input(RankedTensorType::get({kLongCount}, Float32Type::get(&context)),
               Tensor::Storage::Float);
  std::fill(input.floats().begin(), input.floats().end(), kTerm);
  double exact = double(kTerm) * double(kLongCount);
  SmallVector<Tensor> sum = runSingleOp(context, R"mlir(
    func.func @f(%a: tensor<33554432xf32>) -> tensor<f32> {
      %0 = tg.reduce sum %a dims = [0] : tensor<33554432xf32> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                                        {&input});
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_NEAR(sum[0].floats()[0], exact, std::abs(exact) * kLongSumTolerance);
  SmallVector<Tensor> mean = runSingleOp(context, R"mlir(
    func.func @f(%a: tensor<33554432xf32>) -> tensor<f32> {
      %0 = tg.reduce mean %a dims = [0] : tensor<33554432xf32> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                                         {&input});
  ASSERT_EQ(mean.size(), 1u);
  EXPECT_NEAR(mean[0].floats()[0], kTerm, std::abs(kTerm) * kLongSumTolerance);
}

TEST(LongSumTest, ReduceOverALeadingDimensionOfVaryingTerms) {
  // 2^22 rows of 4 columns, reduced over the rows (strided), with terms
  // that vary: each column against its f64 sum.
  MLIRContext &context = getTgContext();
  constexpr int64_t rows = int64_t(1) << 22, columns = 4;
  Tensor input(
      RankedTensorType::get({rows, columns}, Float32Type::get(&context)),
      Tensor::Storage::Float);
  std::vector<double> exact(columns, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c) {
      float term = 0.1f + float((r * 7 + c) % 13) * 0.37f;
      input.floats()[r * columns + c] = term;
      exact[c] += term;
    }
  SmallVector<Tensor> sum = runSingleOp(context, R"mlir(
    func.func @f(%a: tensor<4194304x4xf32>) -> tensor<4xf32> {
      %0 = tg.reduce sum %a dims = [0] : tensor<4194304x4xf32> -> tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir",
                                        {&input});
  ASSERT_EQ(sum.size(), 1u);
  for (int64_t c = 0; c < columns; ++c)
    EXPECT_NEAR(sum[0].floats()[c], exact[c], exact[c] * kLongSumTolerance)
        << "column " << c;
}

TEST(LongSumTest, CrossEntropyMeanOverManyTokens) {
  // 2^22 tokens of two equal logits: every loss is log 2, so is the mean.
  MLIRContext &context = getTgContext();
  constexpr int64_t tokens = int64_t(1) << 22;
  Tensor logits(RankedTensorType::get({tokens, 2}, Float32Type::get(&context)),
                Tensor::Storage::Float);
  Tensor labels(RankedTensorType::get({tokens}, IntegerType::get(&context, 64)),
                Tensor::Storage::Int);
  std::fill(logits.floats().begin(), logits.floats().end(), 0.25f);
  SmallVector<Tensor> loss = runSingleOp(context, R"mlir(
    func.func @f(%l: tensor<4194304x2xf32>, %y: tensor<4194304xi64>) -> tensor<f32> {
      %loss, %lse = tg.cross_entropy mean %l, %y : (tensor<4194304x2xf32>, tensor<4194304xi64>) -> (tensor<f32>, tensor<4194304xf32>)
      return %loss : tensor<f32>
    })mlir",
                                         {&logits, &labels});
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_NEAR(loss[0].floats()[0], std::log(2.0),
              std::log(2.0) * kLongSumTolerance);
}

} // namespace
