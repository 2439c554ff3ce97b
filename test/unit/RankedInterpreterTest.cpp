//===- RankedInterpreterTest.cpp - collectives among simulated ranks ------===//
//
// Each shard collective run by the RankedInterpreter on a 2x2 and a 4x1 mesh
// against hand-computed values; device groups in both axis orders; the
// split and assembly of sharded tensors.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/RankedInterpreter.h"
#include "tgc/InitAll.h"
#include "tgc/Interpreter/Collectives.h"
#include "tgc/Interpreter/ShardedTensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace tgc;

namespace {

using Values = std::vector<std::vector<double>>;

class RankedInterpreterTest : public ::testing::Test {
protected:
  RankedInterpreterTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Runs the one function of `body` (after a grid @mesh of `meshShape`)
  /// with device d's argument filled with `inputs[d]`; the first result of
  /// each device, as doubles. Diagnostics go to `errors`.
  std::optional<Values> run(ArrayRef<int64_t> meshShape,
                            const std::string &body, const Values &inputs,
                            EvalOptions options = {}) {
    std::string shape;
    for (int64_t size : meshShape)
      shape += (shape.empty() ? "" : "x") + std::to_string(size);
    std::string source = "shard.grid @mesh(shape = " + shape + ")\n" + body;
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return std::nullopt;
    auto function = cast<FunctionOpInterface>(
        *module->getBody()->getOps<FunctionOpInterface>().begin());
    SimulatedMesh mesh{"mesh", SmallVector<int64_t>(meshShape)};
    SmallVector<SmallVector<Tensor>> arguments;
    for (const std::vector<double> &values : inputs) {
      auto type = cast<RankedTensorType>(function.getArgumentTypes()[0]);
      bool isInt = !isa<FloatType>(type.getElementType());
      Tensor tensor(type,
                    isInt ? Tensor::Storage::Int : Tensor::Storage::Float);
      EXPECT_EQ(static_cast<int64_t>(values.size()), tensor.getNumElements());
      for (auto [i, value] : llvm::enumerate(values)) {
        if (isInt)
          tensor.ints()[i] = static_cast<int64_t>(value);
        else
          tensor.setAsDouble(i, value);
      }
      arguments.push_back({std::move(tensor)});
    }
    errors.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
      errors += diagnostic.str() + "\n";
      return success();
    });
    RankedInterpreter ranks(options);
    auto results = ranks.run(function, mesh, arguments);
    if (failed(results))
      return std::nullopt;
    Values values;
    for (const SmallVector<Tensor> &device : *results) {
      const Tensor &result = device.front();
      std::vector<double> elements;
      for (int64_t i = 0; i < result.getNumElements(); ++i)
        elements.push_back(result.getAsDouble(i));
      values.push_back(elements);
    }
    return values;
  }

  /// Device d's input: 10 d + 1, 10 d + 2, ... (`count` elements).
  static Values numbered(int64_t devices, int64_t count) {
    Values values(devices);
    for (int64_t d = 0; d < devices; ++d)
      for (int64_t i = 0; i < count; ++i)
        values[d].push_back(10.0 * d + i + 1);
    return values;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string errors;
};

//===----------------------------------------------------------------------===//
// Device groups
//===----------------------------------------------------------------------===//

TEST(DeviceGroupsTest, GroupsAgreeOnTheOtherAxes) {
  // 2x2: device = 2 * c0 + c1.
  DeviceGroups alongRows = DeviceGroups::get({2, 2}, {0});
  EXPECT_EQ(alongRows.members,
            (SmallVector<SmallVector<int64_t>>{{0, 2}, {1, 3}}));
  DeviceGroups alongColumns = DeviceGroups::get({2, 2}, {1});
  EXPECT_EQ(alongColumns.members,
            (SmallVector<SmallVector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(alongColumns.positionOf, (SmallVector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(alongColumns.groupOf, (SmallVector<int64_t>{0, 0, 1, 1}));
}

TEST(DeviceGroupsTest, TheFirstListedAxisIsMajor) {
  // [1, 0]: position = 2 * c1 + c0, so the group's order is 0, 2, 1, 3.
  DeviceGroups uneven = DeviceGroups::get({2, 2}, {1, 0});
  EXPECT_EQ(uneven.members, (SmallVector<SmallVector<int64_t>>{{0, 2, 1, 3}}));
  EXPECT_EQ(uneven.positionOf, (SmallVector<int64_t>{0, 2, 1, 3}));
  DeviceGroups even = DeviceGroups::get({2, 2}, {0, 1});
  EXPECT_EQ(even.members, (SmallVector<SmallVector<int64_t>>{{0, 1, 2, 3}}));
  // 4x1: a collective over the size-1 axis leaves every device alone.
  DeviceGroups alone = DeviceGroups::get({4, 1}, {1});
  EXPECT_EQ(alone.members,
            (SmallVector<SmallVector<int64_t>>{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(DeviceGroups::get({4, 1}, {0}).members,
            (SmallVector<SmallVector<int64_t>>{{0, 1, 2, 3}}));
}

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

TEST_F(RankedInterpreterTest, AllReduceSumWithinColumns) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = sum
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  // Groups {0, 2} and {1, 3}.
  EXPECT_EQ(*results, (Values{{22, 24}, {42, 44}, {22, 24}, {42, 44}}));
}

TEST_F(RankedInterpreterTest, AllReduceAverageOverTheWholeMesh) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [1, 0] reduction = average
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  // (1 + 11 + 21 + 31) / 4 and (2 + 12 + 22 + 32) / 4.
  EXPECT_EQ(*results, (Values(4, {16, 17})));
}

TEST_F(RankedInterpreterTest, AllReduceMaxWithinRows) {
  Values inputs = {{1, 40}, {11, -3}, {21, 7}, {-31, 8}};
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [1] reduction = max
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                     inputs);
  ASSERT_TRUE(results) << errors;
  EXPECT_EQ(*results, (Values{{11, 40}, {11, 40}, {21, 8}, {21, 8}}));
}

TEST_F(RankedInterpreterTest, AllReduceMinAndProductOnALine) {
  Values inputs = {{1, -2}, {3, 4}, {-5, 6}, {7, 0.5}};
  auto minimum = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = min
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                     inputs);
  ASSERT_TRUE(minimum) << errors;
  EXPECT_EQ(*minimum, (Values(4, {-5, -2})));
  auto product = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = product
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                     inputs);
  ASSERT_TRUE(product) << errors;
  EXPECT_EQ(*product, (Values(4, {-105, -24})));
  // Over the size-1 axis nothing changes.
  auto alone = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [1] reduction = sum
        : tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir",
                   inputs);
  ASSERT_TRUE(alone) << errors;
  EXPECT_EQ(*alone, inputs);
}

TEST_F(RankedInterpreterTest, AllReduceOfBF16AccumulatesInF32) {
  const std::string sum = R"mlir(
    func.func @f(%x: tensor<1xbf16>) -> tensor<1xbf16> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = sum
        : tensor<1xbf16> -> tensor<1xbf16>
      return %r : tensor<1xbf16>
    })mlir";
  // 1 + 2^-8 + 2^-8 is 1 + 2^-7 in f32, a bf16 value; adding in bf16 would
  // round 1 + 2^-8 back to 1 twice.
  double tiny = std::ldexp(1.0, -8);
  auto accumulated = run({4, 1}, sum, {{1}, {tiny}, {tiny}, {0}});
  ASSERT_TRUE(accumulated) << errors;
  EXPECT_EQ(*accumulated, (Values(4, {1 + 2 * tiny})));
  // 1 + 2^-9 is no bf16 value: rounded (to nearest, even) to 1 once.
  auto rounded = run({4, 1}, sum, {{1}, {tiny / 2}, {0}, {0}});
  ASSERT_TRUE(rounded) << errors;
  EXPECT_EQ(*rounded, (Values(4, {1})));
  // A bf16 input reduced into an f32 result keeps the f32 sum.
  auto wide = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<1xbf16>) -> tensor<1xf32> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = sum
        : tensor<1xbf16> -> tensor<1xf32>
      return %r : tensor<1xf32>
    })mlir",
                  {{1}, {tiny / 2}, {0}, {0}});
  ASSERT_TRUE(wide) << errors;
  EXPECT_EQ(*wide, (Values(4, {1 + tiny / 2})));
}

TEST_F(RankedInterpreterTest, AllReduceOfIntegers) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0, 1] reduction = sum
        : tensor<2xi64> -> tensor<2xi64>
      return %r : tensor<2xi64>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  EXPECT_EQ(*results, (Values(4, {64, 68})));
}

//===----------------------------------------------------------------------===//
// all_gather, all_slice, reduce_scatter, all_to_all
//===----------------------------------------------------------------------===//

TEST_F(RankedInterpreterTest, AllGatherWithinRows) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<1x2xf32>) -> tensor<2x2xf32> {
      %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0
        : tensor<1x2xf32> -> tensor<2x2xf32>
      return %g : tensor<2x2xf32>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  EXPECT_EQ(
      *results,
      (Values{
          {1, 2, 11, 12}, {1, 2, 11, 12}, {21, 22, 31, 32}, {21, 22, 31, 32}}));
}

TEST_F(RankedInterpreterTest, AllGatherInListedAxisOrder) {
  // Over [1, 0] the group order is devices 0, 2, 1, 3; gathered along the
  // inner dimension.
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2x1xf32>) -> tensor<2x4xf32> {
      %g = shard.all_gather %x on @mesh grid_axes = [1, 0] gather_axis = 1
        : tensor<2x1xf32> -> tensor<2x4xf32>
      return %g : tensor<2x4xf32>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  EXPECT_EQ(*results, (Values(4, {1, 21, 11, 31, 2, 22, 12, 32})));
}

TEST_F(RankedInterpreterTest, AllSliceKeepsTheGroupPositionsPiece) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<2xf32> {
      %s = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 0
        : tensor<4xf32> -> tensor<2xf32>
      return %s : tensor<2xf32>
    })mlir",
                     numbered(4, 4));
  ASSERT_TRUE(results) << errors;
  // Devices 0 and 1 are position 0 of their groups, 2 and 3 position 1.
  EXPECT_EQ(*results, (Values{{1, 2}, {11, 12}, {23, 24}, {33, 34}}));
}

TEST_F(RankedInterpreterTest, ReduceScatterOnALine) {
  auto results = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<4x2xf32>) -> tensor<1x2xf32> {
      %s = shard.reduce_scatter %x on @mesh grid_axes = [0] reduction = sum
        scatter_axis = 0 : tensor<4x2xf32> -> tensor<1x2xf32>
      return %s : tensor<1x2xf32>
    })mlir",
                     numbered(4, 8));
  ASSERT_TRUE(results) << errors;
  // Element i sums to 4 (i + 1) + 60.
  EXPECT_EQ(*results, (Values{{64, 68}, {72, 76}, {80, 84}, {88, 92}}));
}

TEST_F(RankedInterpreterTest, ReduceScatterMaxInListedAxisOrder) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<1xf32> {
      %s = shard.reduce_scatter %x on @mesh grid_axes = [1, 0] reduction = max
        scatter_axis = 0 : tensor<4xf32> -> tensor<1xf32>
      return %s : tensor<1xf32>
    })mlir",
                     {{1, 9, 0, 0}, {0, 0, 5, 0}, {0, 0, 0, 7}, {2, 0, 0, 0}});
  ASSERT_TRUE(results) << errors;
  // The max is [2, 9, 5, 7]; device 1 is position 2, device 2 position 1.
  EXPECT_EQ(*results, (Values{{2}, {5}, {9}, {7}}));
}

TEST_F(RankedInterpreterTest, AllToAllWithinRows) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2x2xf32>) -> tensor<1x4xf32> {
      %a = shard.all_to_all %x on @mesh grid_axes = [1] split_axis = 0
        concat_axis = 1 : tensor<2x2xf32> -> tensor<1x4xf32>
      return %a : tensor<1x4xf32>
    })mlir",
                     numbered(4, 4));
  ASSERT_TRUE(results) << errors;
  // Member j receives row j of every member, side by side.
  EXPECT_EQ(
      *results,
      (Values{
          {1, 2, 11, 12}, {3, 4, 13, 14}, {21, 22, 31, 32}, {23, 24, 33, 34}}));
}

TEST_F(RankedInterpreterTest, AllToAllOnALine) {
  auto results = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<4xi64>) -> tensor<4xi64> {
      %a = shard.all_to_all %x on @mesh grid_axes = [0] split_axis = 0
        concat_axis = 0 : tensor<4xi64> -> tensor<4xi64>
      return %a : tensor<4xi64>
    })mlir",
                     numbered(4, 4));
  ASSERT_TRUE(results) << errors;
  // A transpose of the devices' elements.
  EXPECT_EQ(
      *results,
      (Values{
          {1, 11, 21, 31}, {2, 12, 22, 32}, {3, 13, 23, 33}, {4, 14, 24, 34}}));
}

TEST_F(RankedInterpreterTest, TgOpsRunOnEveryDevice) {
  auto results = run({2, 2}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = tg.add %x, %x : tensor<2xf32>
      %r = shard.all_reduce %y on @mesh grid_axes = [0] reduction = sum
        : tensor<2xf32> -> tensor<2xf32>
      %z = tg.neg %r : tensor<2xf32>
      return %z : tensor<2xf32>
    })mlir",
                     numbered(4, 2));
  ASSERT_TRUE(results) << errors;
  EXPECT_EQ(*results, (Values{{-44, -48}, {-84, -88}, {-44, -48}, {-84, -88}}));
}

//===----------------------------------------------------------------------===//
// Refused programs
//===----------------------------------------------------------------------===//

TEST_F(RankedInterpreterTest, RefusesOtherShardOps) {
  auto results = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %b = shard.broadcast %x on @mesh grid_axes = [0] root = [0]
        : (tensor<2xf32>) -> tensor<2xf32>
      return %b : tensor<2xf32>
    })mlir",
                     numbered(4, 2));
  EXPECT_FALSE(results);
  EXPECT_NE(errors.find("the simulated ranks do not run 'shard.broadcast'"),
            std::string::npos)
      << errors;
}

TEST_F(RankedInterpreterTest, RefusesCollectivesInsideFusions) {
  auto results = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = tg.fusion (%x) : (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        %r = shard.all_reduce %a on @mesh grid_axes = [0] reduction = sum
          : tensor<2xf32> -> tensor<2xf32>
        tg.yield %r : tensor<2xf32>
      }
      return %0 : tensor<2xf32>
    })mlir",
                     numbered(4, 2));
  EXPECT_FALSE(results);
  EXPECT_NE(errors.find("not inside 'tg.fusion'"), std::string::npos) << errors;
}

TEST_F(RankedInterpreterTest, RefusesAnAverageOfIntegers) {
  auto results = run({4, 1}, R"mlir(
    func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
      %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = average
        : tensor<2xi64> -> tensor<2xi64>
      return %r : tensor<2xi64>
    })mlir",
                     numbered(4, 2));
  EXPECT_FALSE(results);
  EXPECT_NE(errors.find("do not reduce 'i64' with 'average'"),
            std::string::npos)
      << errors;
}

//===----------------------------------------------------------------------===//
// Sharded tensors
//===----------------------------------------------------------------------===//

class ShardedTensorsTest : public RankedInterpreterTest {
protected:
  Tensor make(ArrayRef<int64_t> shape, ArrayRef<float> values) {
    Tensor tensor(RankedTensorType::get(shape, Float32Type::get(&context)),
                  Tensor::Storage::Float);
    tensor.floats().assign(values.begin(), values.end());
    return tensor;
  }
};

TEST_F(ShardedTensorsTest, SplitsBlocksInListedAxisOrder) {
  Tensor global = make({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ShardedLayout layout;
  layout.dimAxes = {{1, 0}, {}};
  ASSERT_EQ(layout.verify(global.getShape(), {2, 2}), "");
  SmallVector<Tensor> locals = splitTensor(global, layout, {2, 2});
  ASSERT_EQ(locals.size(), 4u);
  // Device (c0, c1) holds row 2 c1 + c0.
  EXPECT_EQ(locals[0].floats(), (std::vector<float>{0, 1}));
  EXPECT_EQ(locals[1].floats(), (std::vector<float>{4, 5}));
  EXPECT_EQ(locals[2].floats(), (std::vector<float>{2, 3}));
  EXPECT_EQ(locals[3].floats(), (std::vector<float>{6, 7}));
  auto assembled = assembleTensor(locals, layout, {2, 2}, {});
  ASSERT_TRUE(static_cast<bool>(assembled));
  EXPECT_EQ(assembled->getType(), global.getType());
  EXPECT_EQ(assembled->floats(), global.floats());
}

TEST_F(ShardedTensorsTest, SplitsTwoDimensionsAndReplicates) {
  Tensor global = make({2, 2}, {1, 2, 3, 4});
  ShardedLayout layout;
  layout.dimAxes = {{}, {0}};
  SmallVector<Tensor> locals = splitTensor(global, layout, {2, 2});
  // Devices 0 and 1 (c0 = 0) hold column 0, devices 2 and 3 column 1.
  EXPECT_EQ(locals[1].floats(), (std::vector<float>{1, 3}));
  EXPECT_EQ(locals[2].floats(), (std::vector<float>{2, 4}));
  auto assembled = assembleTensor(locals, layout, {2, 2}, {});
  ASSERT_TRUE(static_cast<bool>(assembled));
  EXPECT_EQ(assembled->floats(), global.floats());
}

TEST_F(ShardedTensorsTest, SumsUnreducedPartials) {
  // Rows split over axis 0, partial sums over axis 1.
  ShardedLayout layout;
  layout.dimAxes = {{0}};
  layout.unreducedAxes = {1};
  SmallVector<Tensor> locals = {make({1}, {1}), make({1}, {2}), make({1}, {10}),
                                make({1}, {20})};
  auto assembled = assembleTensor(locals, layout, {2, 2}, {});
  ASSERT_TRUE(static_cast<bool>(assembled));
  EXPECT_EQ(assembled->floats(), (std::vector<float>{3, 30}));
}

TEST_F(ShardedTensorsTest, ReplicasMustAgreeBitForBit) {
  ShardedLayout layout = ShardedLayout::getReplicated(1);
  // -0 equals 0 as a number, not as bits.
  SmallVector<Tensor> locals = {make({1}, {0.0f}), make({1}, {0.0f}),
                                make({1}, {0.0f}), make({1}, {-0.0f})};
  auto zeros = assembleTensor(locals, layout, {4, 1}, {});
  ASSERT_FALSE(static_cast<bool>(zeros));
  EXPECT_EQ(llvm::toString(zeros.takeError()),
            "device 3 and device 0 should hold the same replica, but their "
            "values differ");
}

TEST_F(ShardedTensorsTest, VerifiesTheLayout) {
  ShardedLayout layout;
  layout.dimAxes = {{0}, {0}};
  EXPECT_EQ(layout.verify({4, 4}, {2, 2}), "mesh axis 0 is used twice");
  layout.dimAxes = {{0, 1}, {}};
  EXPECT_EQ(layout.verify({6, 4}, {2, 2}),
            "dimension 0 of size 6 does not split into 4 equal blocks");
  EXPECT_EQ(layout.verify({4}, {2, 2}),
            "the sharding has 2 dimensions, the tensor 1");
}

} // namespace
