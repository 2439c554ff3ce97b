//===- CostOpInterfaceTest.cpp - CostOpInterface against hand counts ------===//

#include "tgc/Analysis/OpCostSummary.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

class CostTest : public ::testing::Test {
protected:
  CostTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `body` as the body of `func.func @f(args)` and returns the cost
  /// of its first op.
  tg::OpCost costOfFirstOp(StringRef args, StringRef body) {
    std::string source =
        ("func.func @f(" + args + ") {\n" + body + "\n  return\n}\n").str();
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source;
    if (!module)
      return {};
    Operation *first = nullptr;
    module->walk<WalkOrder::PreOrder>([&](tg::CostOpInterface op) {
      if (!first)
        first = op;
    });
    EXPECT_NE(first, nullptr);
    return first ? cast<tg::CostOpInterface>(first).getCost() : tg::OpCost{};
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostTest, MatmulIsTwoMNKPerBatch) {
  // 2 * M * N * K = 2 * 128 * 3072 * 768 per batch of 8, in bf16.
  tg::OpCost cost =
      costOfFirstOp("%x: tensor<8x128x768xbf16>, %w: tensor<768x3072xbf16>",
                    "%0 = tg.matmul %x, %w : (tensor<8x128x768xbf16>, "
                    "tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16>");
  EXPECT_EQ(cost.flops, 2LL * 8 * 128 * 3072 * 768);
  EXPECT_EQ(cost.bytesRead, (8LL * 128 * 768 + 768 * 3072) * 2);
  EXPECT_EQ(cost.bytesWritten, 8LL * 128 * 3072 * 2);
  EXPECT_TRUE(cost.computeType.isBF16());
}

TEST_F(CostTest, TransposedMatmulContractsTheRightDimension) {
  // lhs^T: 64x32 -> M = 32, K = 64; rhs 64x16 -> N = 16.
  tg::OpCost cost =
      costOfFirstOp("%a: tensor<64x32xf32>, %b: tensor<64x16xf32>",
                    "%0 = tg.matmul %a, %b transpose_a : (tensor<64x32xf32>, "
                    "tensor<64x16xf32>) -> tensor<32x16xf32>");
  EXPECT_EQ(cost.flops, 2LL * 32 * 16 * 64);
}

TEST_F(CostTest, ElementwiseCountsEveryElement) {
  tg::OpCost cost = costOfFirstOp("%a: tensor<3x5xf16>, %b: tensor<3x5xf16>",
                                  "%0 = tg.add %a, %b : tensor<3x5xf16>");
  EXPECT_EQ(cost.flops, 15);
  EXPECT_EQ(cost.transcendentals, 0);
  EXPECT_EQ(cost.bytesRead, 2 * 15 * 2);
  EXPECT_EQ(cost.bytesWritten, 15 * 2);

  cost = costOfFirstOp("%a: tensor<10xf32>", "%0 = tg.exp %a : tensor<10xf32>");
  EXPECT_EQ(cost.flops, 10);
  EXPECT_EQ(cost.transcendentals, 10);
}

TEST_F(CostTest, CausalAttentionCountsTheLowerTriangle) {
  // B=2, H=4, S=8, D=16: 36 of 64 pairs are visible per head.
  tg::OpCost cost = costOfFirstOp(
      "%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, "
      "%v: tensor<2x4x8x16xf32>",
      "%o, %l = tg.attention %q, %k, %v causal : (tensor<2x4x8x16xf32>, "
      "tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> "
      "(tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)");
  int64_t pairs = 2 * 4 * 36;
  EXPECT_EQ(cost.flops, 2 * pairs * (16 + 16) + 5 * pairs + 2 * 4 * 8 * 16);
  EXPECT_EQ(cost.transcendentals, pairs);
  EXPECT_EQ(cost.bytesRead, 3 * 2 * 4 * 8 * 16 * 4);
  EXPECT_EQ(cost.bytesWritten, (2 * 4 * 8 * 16 + 2 * 4 * 8) * 4);
}

TEST_F(CostTest, ReshapeIsAViewAndEmbeddingReadsOnlyGatheredRows) {
  tg::OpCost cost =
      costOfFirstOp("%x: tensor<4x6xf32>",
                    "%0 = tg.reshape %x : tensor<4x6xf32> -> tensor<24xf32>");
  EXPECT_EQ(cost.bytesMoved(), 0);

  cost = costOfFirstOp(
      "%t: tensor<50257x768xf32>, %ids: tensor<4x8xi64>",
      "%0 = tg.embedding %t[%ids] : (tensor<50257x768xf32>, tensor<4x8xi64>) "
      "-> tensor<4x8x768xf32>");
  EXPECT_EQ(cost.bytesRead, 4 * 8 * 8 + 4 * 8 * 768 * 4);
  EXPECT_EQ(cost.bytesWritten, 4 * 8 * 768 * 4);
  EXPECT_EQ(cost.flops, 0);
}

TEST_F(CostTest, FusionMovesOnlyItsInputsAndResults) {
  tg::OpCost cost = costOfFirstOp(
      "%a: tensor<16xf32>, %b: tensor<16xf32>",
      "%0 = tg.fusion (%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> "
      "tensor<16xf32> {\n"
      "^bb0(%x: tensor<16xf32>, %y: tensor<16xf32>):\n"
      "  %s = tg.add %x, %y : tensor<16xf32>\n"
      "  %e = tg.exp %s : tensor<16xf32>\n"
      "  tg.yield %e : tensor<16xf32>\n"
      "}");
  EXPECT_EQ(cost.flops, 32);
  EXPECT_EQ(cost.transcendentals, 16);
  EXPECT_EQ(cost.bytesRead, 2 * 16 * 4);
  EXPECT_EQ(cost.bytesWritten, 16 * 4);
}

TEST_F(CostTest, LayerNormAndReduce) {
  // 4 rows of 8: 7 FLOPs per element, 3 + 1 rsqrt per row.
  tg::OpCost cost = costOfFirstOp(
      "%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>",
      "%y, %m, %r = tg.layer_norm %x, %g, %b epsilon = 1.0e-5 : "
      "(tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, "
      "tensor<4xf32>, tensor<4xf32>)");
  EXPECT_EQ(cost.flops, 7 * 32 + 4 * 4);
  EXPECT_EQ(cost.transcendentals, 4);
  EXPECT_EQ(cost.bytesRead, (32 + 8 + 8) * 4);
  EXPECT_EQ(cost.bytesWritten, (32 + 4 + 4) * 4);

  cost = costOfFirstOp(
      "%x: tensor<4x8xf32>",
      "%0 = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>");
  EXPECT_EQ(cost.flops, 32 + 4);
}

TEST_F(CostTest, SummaryGroupsByOpName) {
  costOfFirstOp("%a: tensor<4xf32>", "%0 = tg.exp %a : tensor<4xf32>\n"
                                     "%1 = tg.exp %0 : tensor<4xf32>\n"
                                     "%2 = tg.add %0, %1 : tensor<4xf32>");
  ASSERT_TRUE(module);
  std::vector<FunctionCostSummary> summaries = summarizeModuleCosts(*module);
  ASSERT_EQ(summaries.size(), 1u);
  ASSERT_EQ(summaries[0].kinds.size(), 2u);
  EXPECT_EQ(summaries[0].kinds[0].opName, "tg.exp");
  EXPECT_EQ(summaries[0].kinds[0].count, 2);
  EXPECT_EQ(summaries[0].total.flops, 12);
  EXPECT_EQ(summaries[0].numOps, 3);
}

} // namespace
