//===- CollectiveCostTest.cpp - collective bytes, links and times ---------===//
//
// The ring formulas against hand counts, the NVLink/InfiniBand choice on
// meshes of 8-GPU nodes, and the collective ops of a parsed module.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

DeviceSpec getH100() {
  llvm::Expected<DeviceSpec> device = lookupDevice("H100-SXM");
  EXPECT_TRUE(static_cast<bool>(device));
  return *device;
}

// Per device, for S bytes among n devices: all-reduce 2(n-1)/n S in
// 2(n-1) steps; all-gather, reduce-scatter and all-to-all (n-1)/n S in n-1
// steps; all-slice nothing.
TEST(CollectiveCostTest, RingBytesPerKind) {
  DeviceSpec h100 = getH100();
  const int64_t bytes = 1 << 20;
  struct Expected {
    CollectiveKind kind;
    int64_t steps;
    int64_t bytesPerDevice;
  } expected[] = {{CollectiveKind::AllReduce, 14, 2 * 7 * (bytes / 8)},
                  {CollectiveKind::AllGather, 7, 7 * (bytes / 8)},
                  {CollectiveKind::ReduceScatter, 7, 7 * (bytes / 8)},
                  {CollectiveKind::AllToAll, 7, 7 * (bytes / 8)},
                  {CollectiveKind::AllSlice, 0, 0}};
  for (const Expected &e : expected) {
    CollectiveCost cost =
        estimateCollectiveCost(e.kind, 8, bytes, LinkKind::NVLink, h100);
    EXPECT_EQ(cost.steps, e.steps) << stringifyCollectiveKind(e.kind).str();
    EXPECT_EQ(cost.bytesPerDevice, e.bytesPerDevice)
        << stringifyCollectiveKind(e.kind).str();
    EXPECT_EQ(getCollectiveBytesPerDevice(e.kind, 8, bytes), e.bytesPerDevice);
  }
  // A group of one moves nothing and takes no time.
  CollectiveCost alone = estimateCollectiveCost(CollectiveKind::AllReduce, 1,
                                                bytes, LinkKind::NVLink, h100);
  EXPECT_EQ(alone.bytesPerDevice, 0);
  EXPECT_EQ(alone.time, 0.0);
  // Bytes that n does not divide: 2 * 2 * 10 / 3 = 13 (rounded down).
  EXPECT_EQ(getCollectiveBytesPerDevice(CollectiveKind::AllReduce, 3, 10), 13);
  // The largest figures stay exact: 2^44 bytes among 2^20 devices.
  int64_t n = int64_t(1) << 20, big = int64_t(1) << 44;
  EXPECT_EQ(getCollectiveBytesPerDevice(CollectiveKind::AllReduce, n, big),
            2 * (n - 1) * (big / n));
}

// time = steps * latency + bytes / bandwidth of the link: H100 NVLink 4 is
// 450 GB/s and 2 us, NDR InfiniBand 50 GB/s and 5 us.
TEST(CollectiveCostTest, AlphaBetaTimePerLink) {
  DeviceSpec h100 = getH100();
  EXPECT_DOUBLE_EQ(h100.nvlink.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(h100.infiniband.bandwidth, 50e9);
  EXPECT_EQ(h100.gpusPerNode, 8);
  const int64_t gib = int64_t(1) << 30;
  CollectiveCost nvlink = estimateCollectiveCost(CollectiveKind::AllReduce, 8,
                                                 gib, LinkKind::NVLink, h100);
  EXPECT_DOUBLE_EQ(nvlink.time, 14 * 2e-6 + (2.0 * 7 / 8 * gib) / 450e9);
  CollectiveCost ib = estimateCollectiveCost(CollectiveKind::AllGather, 16, gib,
                                             LinkKind::InfiniBand, h100);
  EXPECT_EQ(ib.link, LinkKind::InfiniBand);
  EXPECT_DOUBLE_EQ(ib.time, 15 * 5e-6 + (15.0 / 16 * gib) / 50e9);
}

// Devices are numbered row-major, 8 consecutive ranks per node.
TEST(CollectiveCostTest, GroupWithinNode) {
  // dp=2, tp=8: a tp group is one node's 8 GPUs; a dp group pairs rank r
  // with r + 8, in the next node; both axes together span two nodes.
  EXPECT_TRUE(isGroupWithinNode({2, 8}, {1}, 8));
  EXPECT_FALSE(isGroupWithinNode({2, 8}, {0}, 8));
  EXPECT_FALSE(isGroupWithinNode({2, 8}, {0, 1}, 8));
  // tp=16 does not fit an 8-GPU node.
  EXPECT_FALSE(isGroupWithinNode({16}, {0}, 8));
  EXPECT_TRUE(isGroupWithinNode({16}, {0}, 16));
  // dp=2, tp=4 on 8-GPU nodes: the whole mesh is one node.
  EXPECT_TRUE(isGroupWithinNode({2, 4}, {0}, 8));
  EXPECT_TRUE(isGroupWithinNode({2, 4}, {0, 1}, 8));
  // ... on 4-GPU nodes, the tp groups still are, the dp groups are not.
  EXPECT_TRUE(isGroupWithinNode({2, 4}, {1}, 4));
  EXPECT_FALSE(isGroupWithinNode({2, 4}, {0}, 4));
  // A middle axis: pp=2, dp=2, tp=2 on 4-GPU nodes: dp groups pair r and
  // r + 2 in one node, pp groups r and r + 4 across nodes.
  EXPECT_TRUE(isGroupWithinNode({2, 2, 2}, {1}, 4));
  EXPECT_TRUE(isGroupWithinNode({2, 2, 2}, {1, 2}, 4));
  EXPECT_FALSE(isGroupWithinNode({2, 2, 2}, {0}, 4));
  // tp=3 on 8-GPU nodes: the group of ranks 6, 7, 8 straddles two nodes.
  EXPECT_FALSE(isGroupWithinNode({4, 3}, {1}, 8));
  EXPECT_TRUE(isGroupWithinNode({4, 2}, {1}, 8));
  // No axes: every device is its own group.
  EXPECT_TRUE(isGroupWithinNode({64}, {}, 8));
}

class CollectiveOpTest : public ::testing::Test {
protected:
  CollectiveOpTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The ops of the first function of `source`, terminator excluded.
  SmallVector<Operation *> parseOps(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source.str();
    SmallVector<Operation *> ops;
    if (!module)
      return ops;
    auto function = *module->getOps<func::FuncOp>().begin();
    for (Operation &op : function.getBody().front().without_terminator())
      ops.push_back(&op);
    return ops;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// On a dp=2 x tp=8 mesh of H100s, a tp all-reduce runs over NVLink and a dp
// one over InfiniBand; on tp=16 every group spans two nodes.
TEST_F(CollectiveOpTest, LinkFromTheGrid) {
  SmallVector<Operation *> ops = parseOps(R"mlir(
    shard.grid @mesh(shape = 2x8)
    shard.grid @wide(shape = 16)
    func.func @f(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
      %0 = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<1024x256xf32> -> tensor<1024x256xf32>
      %1 = shard.all_reduce %0 on @mesh grid_axes = [0] : tensor<1024x256xf32> -> tensor<1024x256xf32>
      %2 = shard.all_reduce %1 on @wide grid_axes = [0] : tensor<1024x256xf32> -> tensor<1024x256xf32>
      %3 = shard.reduce_scatter %2 on @mesh grid_axes = [0, 1] scatter_axis = 0 : tensor<1024x256xf32> -> tensor<64x256xf32>
      %4 = shard.all_gather %3 on @mesh grid_axes = [1] gather_axis = 0 : tensor<64x256xf32> -> tensor<512x256xf32>
      %5 = shard.all_slice %4 on @mesh grid_axes = [1] slice_axis = 0 : tensor<512x256xf32> -> tensor<64x256xf32>
      %6 = shard.all_gather %5 on @mesh grid_axes = [0, 1] gather_axis = 0 : tensor<64x256xf32> -> tensor<1024x256xf32>
      return %6 : tensor<1024x256xf32>
    }
  )mlir");
  ASSERT_EQ(ops.size(), 7u);
  DeviceSpec h100 = getH100();
  const int64_t full = 1024 * 256 * 4; // 1 MiB
  struct Expected {
    CollectiveKind kind;
    int64_t groupSize;
    LinkKind link;
    int64_t bytesPerDevice;
  } expected[] = {
      {CollectiveKind::AllReduce, 8, LinkKind::NVLink, 2 * 7 * full / 8},
      {CollectiveKind::AllReduce, 2, LinkKind::InfiniBand, full},
      {CollectiveKind::AllReduce, 16, LinkKind::InfiniBand, 2 * 15 * full / 16},
      {CollectiveKind::ReduceScatter, 16, LinkKind::InfiniBand, 15 * full / 16},
      // The all-gather's full tensor is its result: 512 rows.
      {CollectiveKind::AllGather, 8, LinkKind::NVLink, 7 * (full / 2) / 8},
      {CollectiveKind::AllSlice, 8, LinkKind::NVLink, 0},
      {CollectiveKind::AllGather, 16, LinkKind::InfiniBand, 15 * full / 16},
  };
  for (auto [op, e] : llvm::zip(ops, expected)) {
    FailureOr<CollectiveCost> cost = estimateCollectiveCost(op, h100);
    ASSERT_TRUE(succeeded(cost));
    EXPECT_EQ(cost->kind, e.kind);
    EXPECT_EQ(cost->groupSize, e.groupSize);
    EXPECT_EQ(cost->link, e.link) << stringifyCollectiveKind(e.kind).str();
    EXPECT_EQ(cost->bytesPerDevice, e.bytesPerDevice)
        << stringifyCollectiveKind(e.kind).str();
    // The cost model's per-op time is the collective's.
    EXPECT_DOUBLE_EQ(estimateOpTime(op, h100).time, cost->time);
  }
  // A device with 16 GPUs per node puts the whole 2 x 8 mesh in one.
  DeviceSpec big = h100;
  big.gpusPerNode = 16;
  EXPECT_EQ(estimateCollectiveCost(ops[1], big)->link, LinkKind::NVLink);
  EXPECT_EQ(estimateCollectiveCost(ops[2], big)->link, LinkKind::NVLink);
}

// A dynamic grid has no known nodes: no figure, and the report's check says
// why at the op.
TEST_F(CollectiveOpTest, DynamicGridIsRefused) {
  SmallVector<Operation *> ops = parseOps(R"mlir(
    shard.grid @mesh(shape = 2x?)
    func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
      %0 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
      return %0 : tensor<8xf32>
    }
  )mlir");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(failed(estimateCollectiveCost(ops[0], getH100())));
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  EXPECT_TRUE(failed(verifyCollectivesModelled(ops[0]->getParentOp())));
  EXPECT_NE(message.find("has a dynamic size"), std::string::npos) << message;
}

// The device file's interconnect fields: read, range-checked, round-tripped.
TEST(CollectiveCostTest, DeviceFileInterconnect) {
  llvm::Expected<DeviceSpec> device = DeviceSpec::fromJson(nlohmann::json{
      {"base", "H100-SXM"}, {"gpus_per_node", 4}, {"nvlink_bandwidth", 1e11}});
  ASSERT_TRUE(static_cast<bool>(device));
  EXPECT_EQ(device->gpusPerNode, 4);
  EXPECT_DOUBLE_EQ(device->nvlink.bandwidth, 1e11);
  llvm::Expected<DeviceSpec> again = DeviceSpec::fromJson(device->toJson());
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ(again->gpusPerNode, 4);
  for (nlohmann::json bad :
       {nlohmann::json{{"base", "H100-SXM"}, {"gpus_per_node", 0}},
        nlohmann::json{{"base", "H100-SXM"}, {"gpus_per_node", 2.5}},
        nlohmann::json{{"base", "H100-SXM"}, {"gpus_per_node", 1000000}},
        nlohmann::json{{"base", "H100-SXM"}, {"infiniband_bandwidth", 0}},
        nlohmann::json{{"base", "H100-SXM"}, {"nvlink_latency", -1}}}) {
    llvm::Expected<DeviceSpec> refused = DeviceSpec::fromJson(bad);
    EXPECT_FALSE(static_cast<bool>(refused)) << bad.dump();
    if (!refused)
      llvm::consumeError(refused.takeError());
  }
}

} // namespace
