//===- ShardingRuleTest.cpp - every op has a sharding rule that checks ----===//

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

class ShardingRuleTest : public ::testing::Test {
protected:
  ShardingRuleTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

// A new op must state its sharding rule; only the structure ops, which exist
// after partitioning, have none.
TEST_F(ShardingRuleTest, EveryTrainingOpHasARule) {
  Dialect *dialect = context.getLoadedDialect<tg::TGDialect>();
  ASSERT_NE(dialect, nullptr);
  int count = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (&name.getDialect() != dialect)
      continue;
    bool structure = name.getStringRef() == tg::FusionOp::getOperationName() ||
                     name.getStringRef() == tg::YieldOp::getOperationName();
    EXPECT_EQ(name.hasInterface<tg::ShardingRuleOpInterface>(), !structure)
        << name.getStringRef().str();
    ++count;
  }
  EXPECT_GT(count, 50);
}

// The check the print pass runs: a rule whose factors do not multiply to a
// dimension's size, or a factor no dimension uses, is reported.
TEST_F(ShardingRuleTest, VerifyRejectsInconsistentRules) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = tg.relu %a : tensor<4x8xf32>\n"
      "  return %0 : tensor<4x8xf32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  Operation *relu = nullptr;
  module->walk([&](tg::ReluOp op) { relu = op; });
  ASSERT_NE(relu, nullptr);
  std::string messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    messages += diag.str() + "\n";
    return success();
  });

  tg::ShardingRule rule =
      cast<tg::ShardingRuleOpInterface>(relu).getShardingRule();
  EXPECT_TRUE(succeeded(rule.verify(relu)));

  tg::ShardingRule wrongSize = rule;
  wrongSize.factorSizes[1] = 2;
  EXPECT_TRUE(failed(wrongSize.verify(relu)));
  EXPECT_NE(messages.find("dimension 1 of operand #0 2, its size is 8"),
            std::string::npos)
      << messages;

  tg::ShardingRule unused = rule;
  unused.factorSizes.push_back(3);
  unused.factorKinds.push_back(tg::FactorKind::PassThrough);
  EXPECT_TRUE(failed(unused.verify(relu)));
  EXPECT_NE(messages.find("factor k is in no dimension"), std::string::npos)
      << messages;
}

} // namespace
