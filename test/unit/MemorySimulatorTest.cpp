//===- MemorySimulatorTest.cpp - simulator and planner against hand counts ===//
//
// Each graph is small enough that its peak is counted by hand in the
// comment above the expectation.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemoryPlanner.h"
#include "tgc/Analysis/TrainingMemory.h"
#include "tgc/InitAll.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Zoo/ModelZoo.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

class MemorySimulatorTest : public ::testing::Test {
protected:
  MemorySimulatorTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  func::FuncOp parse(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source.str();
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  int64_t kindAtPeak(const MemorySimulation &simulation, MemoryKind kind) {
    return simulation.peakBreakdown[static_cast<unsigned>(kind)];
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// A chain x -> exp -> tanh -> exp: each intermediate dies at its last use,
// so at most the argument and two 4 KiB buffers are live at once.
TEST_F(MemorySimulatorTest, ChainFreesAtLastUse) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<1024xf32> {tg.role = "input"}) -> tensor<1024xf32> {
      %0 = tg.exp %x : tensor<1024xf32>
      %1 = tg.tanh %0 : tensor<1024xf32>
      %2 = tg.exp %1 : tensor<1024xf32>
      return %2 : tensor<1024xf32>
    })mlir");
  ASSERT_TRUE(f);
  MemorySimulation simulation = MemorySimulation::run(f);
  ASSERT_EQ(simulation.timeline.size(), 3u);
  // x (4096) + %0 during the first exp; x + %0 + %1 during tanh; x + %1 +
  // %2 during the last exp.
  EXPECT_EQ(simulation.peakBytes, 3 * 4096);
  EXPECT_EQ(simulation.peakIndex, 1);
  EXPECT_EQ(getTotal(simulation.timeline[0]), 2 * 4096);
  EXPECT_EQ(getTotal(simulation.timeline[1]), 3 * 4096);
  EXPECT_EQ(getTotal(simulation.timeline[2]), 3 * 4096);
  EXPECT_EQ(kindAtPeak(simulation, MemoryKind::Inputs), 4096);
  EXPECT_EQ(simulation.persistentBytes, 4096);
}

// Values computed early stay live until their use; the order that consumes
// them first has a lower peak, which peakOf sees without a rewrite.
TEST_F(MemorySimulatorTest, PeakDependsOnOrder) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<256xf32> {tg.role = "input"}) -> tensor<256xf32> {
      %a = tg.exp %x : tensor<256xf32>
      %b = tg.tanh %x : tensor<256xf32>
      %c = tg.sigmoid %x : tensor<256xf32>
      %d = tg.add %a, %b : tensor<256xf32>
      %e = tg.add %d, %c : tensor<256xf32>
      return %e : tensor<256xf32>
    })mlir");
  ASSERT_TRUE(f);
  MemorySimulation simulation = MemorySimulation::run(f);
  // During %d: x, a, b, c, d.
  EXPECT_EQ(simulation.peakBytes, 5 * 1024);
  EXPECT_EQ(simulation.peakIndex, 3);
  const std::vector<Operation *> &ops = simulation.ops;
  EXPECT_EQ(MemorySimulation::peakOf(f, ops), simulation.peakBytes);
  // a, b, d, c, e: x, a, b, d during %d, then x, d, c, e during %e.
  std::vector<Operation *> reordered = {ops[0], ops[1], ops[3], ops[2], ops[4]};
  EXPECT_EQ(MemorySimulation::peakOf(f, reordered), 4 * 1024);
}

// An optimizer update whose result aliases the parameter argument is written
// in place: it needs no buffer of its own. A value read after the update
// prevents the in-place write and costs a second buffer.
TEST_F(MemorySimulatorTest, InPlaceUpdateThroughAliases) {
  const char *source = R"mlir(
    func.func @f(%w: tensor<1024xf32> {tg.role = "param", tg.name = "w"},
                 %g: tensor<1024xf32> {tg.role = "input"},
                 %lr: tensor<f32> {tg.role = "hyper"})
        -> (tensor<1024xf32> {tg.role = "param", tg.name = "w", tg.aliases = 0 : i64}) {
      %0 = tg.sgd %w, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<1024xf32>, tensor<f32>
      return %0 : tensor<1024xf32>
    })mlir";
  func::FuncOp f = parse(source);
  ASSERT_TRUE(f);
  MemorySimulation simulation = MemorySimulation::run(f);
  // w + g + lr and nothing else.
  EXPECT_EQ(simulation.peakBytes, 4096 + 4096 + 4);
  EXPECT_EQ(kindAtPeak(simulation, MemoryKind::Params), 4096);
  EXPECT_EQ(kindAtPeak(simulation, MemoryKind::OptimizerState), 4);
  Value updated = f.getBody().front().getTerminator()->getOperand(0);
  EXPECT_EQ(simulation.bufferOf.lookup(updated),
            simulation.bufferOf.lookup(f.getArgument(0)));

  func::FuncOp g = parse(R"mlir(
    func.func @f(%w: tensor<1024xf32> {tg.role = "param", tg.name = "w"},
                 %g: tensor<1024xf32> {tg.role = "input"},
                 %lr: tensor<f32> {tg.role = "hyper"})
        -> (tensor<1024xf32> {tg.role = "param", tg.name = "w", tg.aliases = 0 : i64},
            tensor<1024xf32>) {
      %0 = tg.sgd %w, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<1024xf32>, tensor<f32>
      %1 = tg.exp %w : tensor<1024xf32>
      return %0, %1 : tensor<1024xf32>, tensor<1024xf32>
    })mlir");
  ASSERT_TRUE(g);
  MemorySimulation copied = MemorySimulation::run(g);
  // w, g, lr, the new w (w is still read), and exp's result.
  EXPECT_EQ(copied.peakBytes, 4 * 4096 + 4);
  Value newW = g.getBody().front().getTerminator()->getOperand(0);
  EXPECT_NE(copied.bufferOf.lookup(newW),
            copied.bufferOf.lookup(g.getArgument(0)));
}

// A multi-result op allocates all its results at once; each dies at its own
// last use. A reshape is a view of its operand.
TEST_F(MemorySimulatorTest, MultiResultOpAndViews) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<64x256xf32> {tg.role = "input"},
                 %s: tensor<256xf32> {tg.role = "param", tg.name = "s"})
        -> tensor<64x256xf32> {
      %y, %rstd = tg.rms_norm %x, %s epsilon = 1.0e-6 : (tensor<64x256xf32>, tensor<256xf32>) -> (tensor<64x256xf32>, tensor<64xf32>)
      %r = tg.reshape %y : tensor<64x256xf32> -> tensor<16384xf32>
      %e = tg.exp %r : tensor<16384xf32>
      %b = tg.reshape %e : tensor<16384xf32> -> tensor<64x256xf32>
      return %b : tensor<64x256xf32>
    })mlir");
  ASSERT_TRUE(f);
  MemorySimulation simulation = MemorySimulation::run(f);
  const int64_t act = 64 * 256 * 4;
  // Arguments: x (64 KiB) + s (1 KiB). rms_norm writes y and rstd (256 B);
  // rstd is unused, so it dies with its op.
  EXPECT_EQ(getTotal(simulation.timeline[0]), 2 * act + 1024 + 256);
  // The reshape moves nothing: y's buffer holds %r too.
  Value y = simulation.ops[0]->getResult(0);
  Value r = simulation.ops[1]->getResult(0);
  EXPECT_EQ(simulation.bufferOf.lookup(y), simulation.bufferOf.lookup(r));
  EXPECT_EQ(getTotal(simulation.timeline[1]), 2 * act + 1024);
  // exp reads y (through %r) and writes e: the peak.
  EXPECT_EQ(simulation.peakBytes, 3 * act + 1024);
  EXPECT_EQ(simulation.peakIndex, 2);
  // The returned view shares e's buffer, which lives to the end.
  Value e = simulation.ops[2]->getResult(0);
  Value b = simulation.ops[3]->getResult(0);
  EXPECT_EQ(simulation.bufferOf.lookup(e), simulation.bufferOf.lookup(b));
  EXPECT_EQ(getTotal(simulation.timeline[3]), 2 * act + 1024);
}

// The GEMM library's workspace counts once, for the whole step, when the
// step has a matmul.
// A partitioned update (ZeRO-1: the gradient all-reduced, each of the 2
// devices updating its half, the halves gathered back into the parameter):
// every collective's result is a buffer from its op to its last use, an
// all-slice's too (2 KiB of its own, not a view of the 4 KiB operand).
// Live bytes, arguments (8196) aside: op 0 the all-reduced gradient r
// (4096); op 1 r and its slice s (6144); op 2 r, s and the parameter's
// slice (8192): a collective reads its operand until the first kernel
// that consumes its result (the update), so r outlives the all-slice; op 3
// those and the update's result (10240); op 4 the result (the gathered
// parameter goes into p's buffer). The peak is op 3, where r and s are
// gradient memory: what the update reads and the all-reduce it is sliced
// from. The persistent gradient is the full all-reduced one.
TEST_F(MemorySimulatorTest, CollectiveResultsAreBuffers) {
  func::FuncOp f = parse(R"mlir(
    shard.grid @mesh(shape = 2)
    func.func @f(%p: tensor<1024xf32> {tg.role = "param"},
                 %g: tensor<1024xf32> {tg.role = "input"},
                 %lr: tensor<f32> {tg.role = "hyper"})
        -> (tensor<1024xf32> {tg.aliases = 0 : i64}) {
      %r = shard.all_reduce %g on @mesh grid_axes = [0] : tensor<1024xf32> -> tensor<1024xf32>
      %s = shard.all_slice %r on @mesh grid_axes = [0] slice_axis = 0 : tensor<1024xf32> -> tensor<512xf32>
      %ps = shard.all_slice %p on @mesh grid_axes = [0] slice_axis = 0 : tensor<1024xf32> -> tensor<512xf32>
      %n = tg.sgd %ps, %s, %lr momentum = 0.0 weight_decay = 0.0 : tensor<512xf32>, tensor<f32>
      %full = shard.all_gather %n on @mesh grid_axes = [0] gather_axis = 0 : tensor<512xf32> -> tensor<1024xf32>
      return %full : tensor<1024xf32>
    }
  )mlir");
  ASSERT_TRUE(f);
  MemorySimulation simulation = MemorySimulation::run(f);
  std::vector<int64_t> live;
  for (const MemoryBreakdown &step : simulation.timeline)
    live.push_back(getTotal(step));
  EXPECT_EQ(live, (std::vector<int64_t>{12292, 14340, 16388, 18436, 10244}));
  EXPECT_EQ(simulation.peakIndex, 3);
  EXPECT_EQ(kindAtPeak(simulation, MemoryKind::Gradients), 6144);
  EXPECT_EQ(kindAtPeak(simulation, MemoryKind::Params), 4096);
  TrainingMemory training = TrainingMemory::compute(f);
  EXPECT_EQ(training.gradients.tensors, 1);
  EXPECT_EQ(training.gradients.bytes, 4096);
  EXPECT_EQ(training.trainable.elements, 1024);
}

TEST_F(MemorySimulatorTest, GemmWorkspace) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<16x16xf32> {tg.role = "input"},
                 %b: tensor<16x16xf32> {tg.role = "input"}) -> tensor<16x16xf32> {
      %0 = tg.matmul %a, %b : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
      return %0 : tensor<16x16xf32>
    })mlir");
  ASSERT_TRUE(f);
  llvm::Expected<DeviceSpec> h100 = lookupDevice("H100-SXM");
  ASSERT_TRUE(static_cast<bool>(h100));
  MemorySimulation without = MemorySimulation::run(f);
  MemorySimulation with = MemorySimulation::run(f, &*h100);
  EXPECT_EQ(without.peakBytes, 3 * 1024);
  EXPECT_EQ(with.peakBytes, 3 * 1024 + h100->gemmWorkspaceBytes);
  EXPECT_EQ(kindAtPeak(with, MemoryKind::Workspace), h100->gemmWorkspaceBytes);
}

// The planner's arena is never below the live peak, never overlaps two live
// buffers, and reaches the bound on an interval graph where best fit can.
TEST(MemoryPlannerTest, ValidPlansAtOrAboveTheBound) {
  std::vector<LiveRange> ranges = {
      {1000, 0, 1}, {3000, 1, 2}, {500, 2, 3}, {3000, 3, 4}, {1000, 0, 4}};
  ArenaPlan plan = planArena(ranges, 256);
  EXPECT_TRUE(verifyArenaPlan(ranges, plan, 256));
  // Aligned sizes: 1024, 3072, 512, 3072, 1024; live at op 1: 1024 + 3072
  // + 1024; at op 3: 512 + 3072 + 1024.
  EXPECT_EQ(plan.lowerBound, 5120);
  EXPECT_GE(plan.arenaBytes, plan.lowerBound);
  EXPECT_EQ(plan.arenaBytes, 5120);

  // A plan with two live buffers at the same offset is rejected.
  ArenaPlan broken = plan;
  broken.offsets[1] = broken.offsets[4];
  EXPECT_FALSE(verifyArenaPlan(ranges, broken, 256));
  ArenaPlan misaligned = plan;
  misaligned.offsets[2] += 8;
  EXPECT_FALSE(verifyArenaPlan(ranges, misaligned, 256));

  // Pseudo-random lifetimes: always valid, never below the bound.
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<LiveRange> random;
    for (int i = 0; i < 60; ++i) {
      int64_t start = next() % 100;
      random.push_back({static_cast<int64_t>(1 + next() % 100000), start,
                        start + static_cast<int64_t>(next() % 30)});
    }
    ArenaPlan randomPlan = planArena(random, 256);
    EXPECT_TRUE(verifyArenaPlan(random, randomPlan, 256));
    EXPECT_GE(randomPlan.arenaBytes, randomPlan.lowerBound);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// GPT activations per layer against Korthikanti et al. 2022
//===----------------------------------------------------------------------===//

namespace {

/// Activation bytes the simulator counts for the AdamW training step of a
/// GPT-2 with `layers` blocks (tgc compile's pipeline: autodiff, optimizer,
/// canonicalization, tg-schedule).
int64_t gptActivationBytes(zoo::GPT2Config config, int64_t layers) {
  MLIRContext context;
  DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  config.layers = layers;
  auto module = zoo::buildModel(context, config, "gpt2");
  EXPECT_TRUE(succeeded(module));
  if (failed(module))
    return -1;
  PassManager pm(&context);
  TrainingPipelineOptions options;
  options.optimizer = tgc::OptimizerKind::AdamW;
  // The formula counts the tensors the unfused ops save for the backward.
  options.noFuse = true;
  options.noMemoryPlan = true;
  buildTrainingPipeline(pm, options);
  EXPECT_TRUE(succeeded(pm.run(**module)));
  auto function = *(**module).getOps<func::FuncOp>().begin();
  return MemorySimulation::run(function).activationBytes;
}

// Korthikanti et al. count s*b*h*(34 + 5*a*s/h) bytes of activations per
// transformer layer, with 16-bit activations, 1-byte dropout masks and no
// recomputation: 16 sbh-sized tensors at 2 bytes (ln_1 input, QKV input,
// Q, K, V, c_proj input, ln_2 input, c_fc input, GELU input (4), GELU output
// (4)), two residual dropout masks (2 x 1 byte) and the attention core's
// softmax output, its dropout mask and output (5as^2b). tgc's step differs,
// exactly:
//  - activations are f32 here (4 bytes per element);
//  - dropout masks are not stored: the backward regenerates them from the
//    Philox seed (-2sbh in the paper's bytes);
//  - attention is flash attention: no softmax output and no attention
//    dropout (GPT-2's attention-probability dropout is not modelled), so no
//    5as^2b term; instead attention_grad reads the attention output O (one
//    more sbh tensor besides c_proj's input) and the f32 logsumexp (4asb);
//  - each layer norm keeps its f32 mean and rstd (2 x 8sb).
// So tgc keeps 17 f32 sbh tensors, 68sbh + 4asb + 16sb bytes per layer:
// twice the paper's 34sbh (f32 instead of 16-bit; O replaces the masks)
// and none of its 5as^2b.
TEST(KorthikantiTest, GptActivationsPerLayer) {
  struct Shape {
    int64_t hidden, heads, seq, batch;
  } shapes[] = {{768, 12, 1024, 1}, {256, 4, 128, 4}};
  for (Shape shape : shapes) {
    for (double dropout : {0.0, 0.1}) {
      zoo::GPT2Config config;
      config.hidden = shape.hidden;
      config.heads = shape.heads;
      config.seq = shape.seq;
      config.positions = shape.seq;
      config.batch = shape.batch;
      config.vocab = 1000;
      config.dropout = dropout;
      int64_t perLayer =
          gptActivationBytes(config, 2) - gptActivationBytes(config, 1);
      int64_t s = shape.seq, b = shape.batch, h = shape.hidden, a = shape.heads;
      double korthikanti16 = double(s * b * h) * (34.0 + 5.0 * a * s / h);
      int64_t expected = 68 * s * b * h + 4 * a * s * b + 16 * s * b;
      EXPECT_EQ(perLayer, expected) << "h=" << h << " a=" << a << " s=" << s
                                    << " b=" << b << " dropout=" << dropout;
      // Against the paper's formula: 2x its 34sbh term, none of 5as^2b.
      EXPECT_EQ(
          perLayer - 4 * a * s * b - 16 * s * b,
          static_cast<int64_t>(2 * (korthikanti16 - 5.0 * a * s * s * b)));
    }
  }
}

} // namespace
