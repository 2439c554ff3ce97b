//===- RoleTest.cpp - tg.role as an enum: accessors and spellings ---------===//

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

class RoleTest : public ::testing::Test {
protected:
  RoleTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  MLIRContext context;
};

// Every role reads back from its IR spelling, which is the one the textual
// IR has always used.
TEST_F(RoleTest, SpellingsRoundTrip) {
  for (StringRef name : {"param", "state", "input", "label", "hyper", "loss",
                         "grad", "output"}) {
    std::optional<tg::Role> role = tg::symbolizeRole(name);
    ASSERT_TRUE(role) << name.str();
    EXPECT_EQ(tg::stringifyRole(*role), name);
  }
  EXPECT_FALSE(tg::symbolizeRole("weight"));
}

// The accessors read what the parser built and write what it reads.
TEST_F(RoleTest, AccessorsReadAndWriteTgRole) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      R"mlir(
    func.func @f(%w: tensor<4xf32> {tg.role = "param"}, %x: tensor<4xf32>)
        -> (tensor<f32> {tg.role = "loss"}) {
      %s = tg.reduce sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
      return %s : tensor<f32>
    })mlir",
      &context);
  ASSERT_TRUE(module);
  auto function = *module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(tg::getArgumentRole(function, 0), tg::Role::Param);
  EXPECT_EQ(tg::getArgumentRole(function, 1), std::nullopt);
  EXPECT_EQ(tg::getResultRole(function, 0), tg::Role::Loss);

  tg::setArgumentRole(function, 1, tg::Role::Input);
  EXPECT_EQ(tg::getArgumentRole(function, 1), tg::Role::Input);
  EXPECT_EQ(function.getArgAttrOfType<StringAttr>(1, "tg.role").getValue(),
            "input");
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(RoleTest, ArgumentAndResultRolesAreTheVerifiersLists) {
  EXPECT_TRUE(tg::isArgumentRole(tg::Role::Hyper));
  EXPECT_FALSE(tg::isArgumentRole(tg::Role::Loss));
  EXPECT_TRUE(tg::isResultRole(tg::Role::Grad));
  EXPECT_FALSE(tg::isResultRole(tg::Role::Label));
  EXPECT_TRUE(tg::isArgumentRole(tg::Role::State) &&
              tg::isResultRole(tg::Role::State));
}

} // namespace
