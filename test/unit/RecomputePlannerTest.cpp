//===- RecomputePlannerTest.cpp - the recompute planner against brute force
//===//
//
// Random small chains and DAGs, differentiated: every keep/recompute subset
// of their activations is rewritten, scheduled as tg-schedule would and
// simulated, and at every budget (each
// peak some subset reaches) the planner's extra time must equal the best
// subset's and its simulated peak must fit the budget.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/RecomputeBound.h"
#include "tgc/Analysis/Schedule.h"
#include "tgc/InitAll.h"
#include "tgc/Transforms/Passes.h"
#include "tgc/Zoo/ModelZoo.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <random>

using namespace mlir;
using namespace tgc;

namespace {

/// A random differentiable function of x (input) and w (param): `ops`
/// values, each a unary op, a binary op or a matmul of earlier ones (the
/// last one in a chain, any in a DAG); the loss sums the last value and, in
/// a DAG, one earlier value.
std::string makeGraph(std::mt19937 &rng, unsigned ops, bool chain) {
  const char *type = "tensor<32x32xf32>";
  std::string text =
      "func.func @f(%x: tensor<32x32xf32> {tg.role = \"input\"}, "
      "%w: tensor<32x32xf32> {tg.role = \"param\", tg.name = "
      "\"w\"}) -> (tensor<f32> {tg.role = \"loss\"}) {\n";
  text += "  %v0 = tg.matmul %x, %w : (" + std::string(type) + ", " + type +
          ") -> " + type + "\n";
  auto pick = [&](unsigned defined) {
    unsigned index =
        chain ? defined - 1
              : std::uniform_int_distribution<unsigned>(0, defined - 1)(rng);
    return "%v" + std::to_string(index);
  };
  static const char *unary[] = {"tanh", "exp", "sigmoid"};
  static const char *binary[] = {"add", "mul"};
  for (unsigned at = 1; at < ops; ++at) {
    std::string name = "%v" + std::to_string(at);
    unsigned kind = std::uniform_int_distribution<unsigned>(0, 5)(rng);
    std::string a = pick(at), b = pick(at);
    if (kind < 3)
      text +=
          "  " + name + " = tg." + unary[kind] + " " + a + " : " + type + "\n";
    else if (kind < 5)
      text += "  " + name + " = tg." + binary[kind - 3] + " " + a + ", " +
              (chain ? "%w" : b) + " : " + type + "\n";
    else
      text += "  " + name + " = tg.matmul " + a + ", " + (chain ? "%w" : b) +
              " : (" + type + ", " + type + ") -> " + type + "\n";
  }
  std::string last = "%v" + std::to_string(ops - 1);
  std::string summed = last;
  if (!chain) {
    text += "  %extra = tg.add " + last + ", " + pick(ops - 1) + " : " + type +
            "\n";
    summed = "%extra";
  }
  text += "  %sq = tg.mul " + summed + ", " + summed + " : " + type + "\n";
  text += "  %l = tg.reduce sum %sq dims = [0, 1] : " + std::string(type) +
          " -> tensor<f32>\n  return %l : tensor<f32>\n}\n";
  return text;
}

class RecomputePlannerTest : public ::testing::Test {
protected:
  RecomputePlannerTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    device = *lookupDevice("H100-SXM");
  }

  func::FuncOp differentiate(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source.str();
    if (!module)
      return nullptr;
    PassManager pm(&context);
    pm.addPass(createTGAutodiff());
    EXPECT_TRUE(succeeded(pm.run(*module))) << source.str();
    return *module->getOps<func::FuncOp>().begin();
  }

  static double totalTime(func::FuncOp function, const DeviceSpec &device) {
    double time = 0;
    for (Operation &op : function.getBody().front().without_terminator())
      time += estimateOpTime(&op, device).time;
    return time;
  }

  /// (peak, extra time) of every subset of the candidates, by mask.
  std::vector<std::pair<int64_t, double>>
  bruteForce(func::FuncOp function, const RecomputePlanner &planner) {
    std::vector<Operation *> ops;
    for (Operation &op : function.getBody().front().without_terminator())
      ops.push_back(&op);
    std::vector<unsigned> positions;
    for (const RecomputeCandidate &candidate : planner.getCandidates())
      positions.push_back(std::find(ops.begin(), ops.end(), candidate.op) -
                          ops.begin());
    double base = totalTime(function, device);
    unsigned count = positions.size();
    std::vector<std::pair<int64_t, double>> results;
    for (uint64_t mask = 0; mask < (uint64_t(1) << count); ++mask) {
      func::FuncOp copy = function.clone();
      std::vector<Operation *> copyOps;
      for (Operation &op : copy.getBody().front().without_terminator())
        copyOps.push_back(&op);
      SmallVector<Operation *> chosen;
      for (unsigned bit = 0; bit < count; ++bit)
        if (mask & (uint64_t(1) << bit))
          chosen.push_back(copyOps[positions[bit]]);
      applyRecompute(copy, chosen);
      results.push_back({computeSchedule(copy, &device).peakBytes,
                         totalTime(copy, device) - base});
      copy.erase();
    }
    return results;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  DeviceSpec device;
};

} // namespace

/// The distinct simulated peaks of brute force's subsets, increasing.
static std::vector<int64_t>
getDistinctPeaks(ArrayRef<std::pair<int64_t, double>> subsets) {
  std::vector<int64_t> peaks;
  for (auto &[peak, time] : subsets)
    peaks.push_back(peak);
  llvm::sort(peaks);
  peaks.erase(std::unique(peaks.begin(), peaks.end()), peaks.end());
  return peaks;
}

/// The least extra time of a subset whose peak fits `budget`.
static double getOptimum(ArrayRef<std::pair<int64_t, double>> subsets,
                         int64_t budget) {
  double optimum = std::numeric_limits<double>::infinity();
  for (auto &[peak, time] : subsets)
    if (peak <= budget)
      optimum = std::min(optimum, time);
  return optimum;
}

/// The planner equals brute force at every budget; with the DP forced
/// (no exhaustive search) its peak still fits every budget it accepts and
/// its extra time is never below the optimum.
static void
runRandomGraphs(bool chain, std::function<func::FuncOp(StringRef)> build,
                std::function<std::vector<std::pair<int64_t, double>>(
                    func::FuncOp, const RecomputePlanner &)>
                    brute,
                const DeviceSpec &device) {
  std::mt19937 rng(chain ? 7 : 11);
  unsigned budgets = 0, dpOptimal = 0, dpSolved = 0;
  for (unsigned seed = 0; seed < 12; ++seed) {
    unsigned ops = std::uniform_int_distribution<unsigned>(3, 8)(rng);
    std::string source = makeGraph(rng, ops, chain);
    func::FuncOp function = build(source);
    ASSERT_TRUE(function);
    RecomputePlanner planner(function, device);
    ASSERT_LE(planner.getCandidates().size(), planner.exhaustiveLimit)
        << source;
    std::vector<std::pair<int64_t, double>> subsets = brute(function, planner);
    std::vector<int64_t> peaks = getDistinctPeaks(subsets);
    RecomputePlanner dp(function, device);
    dp.exhaustiveLimit = 0;
    for (int64_t budget : peaks) {
      double optimum = getOptimum(subsets, budget);
      int64_t minimum = 0;
      FailureOr<RecomputePlan> plan = planner.solve(budget, minimum);
      ASSERT_TRUE(succeeded(plan)) << source << "budget " << budget;
      EXPECT_LE(plan->peakBytes, budget) << source;
      EXPECT_NEAR(plan->extraTime, optimum, 1e-12) << source << budget;
      ++budgets;

      FailureOr<RecomputePlan> dpPlan = dp.solve(budget, minimum);
      if (succeeded(dpPlan)) {
        ++dpSolved;
        EXPECT_LE(dpPlan->peakBytes, budget) << source;
        EXPECT_GE(dpPlan->extraTime, optimum - 1e-12) << source;
        dpOptimal += dpPlan->extraTime <= optimum + 1e-12;
      }
    }
    // Below the smallest peak any subset reaches, the planner refuses.
    int64_t minimum = 0;
    EXPECT_TRUE(failed(planner.solve(peaks.front() - 1, minimum)));
    EXPECT_EQ(minimum, peaks.front()) << source;
  }
  std::cout << (chain ? "chains" : "DAGs") << ": " << budgets
            << " budgets, the block DP alone solved " << dpSolved
            << " and was optimal at " << dpOptimal << "\n";
}

TEST_F(RecomputePlannerTest, ChainsMatchBruteForce) {
  runRandomGraphs(
      /*chain=*/true, [&](StringRef s) { return differentiate(s); },
      [&](func::FuncOp f, const RecomputePlanner &p) {
        return bruteForce(f, p);
      },
      device);
}

TEST_F(RecomputePlannerTest, DagsMatchBruteForce) {
  runRandomGraphs(
      /*chain=*/false, [&](StringRef s) { return differentiate(s); },
      [&](func::FuncOp f, const RecomputePlanner &p) {
        return bruteForce(f, p);
      },
      device);
}

/// A real training graph: a 1-layer GPT-2 from the zoo, differentiated. The
/// planner equals the brute-force optimum at every budget; the block DP
/// alone (no exhaustive search) is measured against it: how often it finds
/// a plan, how often the optimal one, and its largest gap.
TEST_F(RecomputePlannerTest, Gpt2LayerGapOfTheDp) {
  zoo::GPT2Config config;
  config.layers = 1;
  config.hidden = 32;
  config.heads = 2;
  config.vocab = 64;
  config.positions = 8;
  config.seq = 8;
  config.batch = 2;
  FailureOr<OwningOpRef<ModuleOp>> built =
      zoo::buildModel(context, config, "gpt2");
  ASSERT_TRUE(succeeded(built));
  module = std::move(*built);
  PassManager pm(&context);
  pm.addPass(createTGAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  func::FuncOp function = *module->getOps<func::FuncOp>().begin();

  RecomputePlanner planner(function, device);
  planner.exhaustiveLimit = 16;
  ASSERT_LE(planner.getCandidates().size(), 14u);
  std::vector<std::pair<int64_t, double>> subsets =
      bruteForce(function, planner);
  std::vector<int64_t> peaks = getDistinctPeaks(subsets);
  RecomputePlanner dp(function, device);
  dp.exhaustiveLimit = 0;
  unsigned solved = 0, optimal = 0;
  double worstGap = 0;
  for (int64_t budget : peaks) {
    double optimum = getOptimum(subsets, budget);
    int64_t minimum = 0;
    FailureOr<RecomputePlan> plan = planner.solve(budget, minimum);
    ASSERT_TRUE(succeeded(plan)) << budget;
    EXPECT_LE(plan->peakBytes, budget);
    EXPECT_NEAR(plan->extraTime, optimum, 1e-12) << budget;
    FailureOr<RecomputePlan> dpPlan = dp.solve(budget, minimum);
    if (failed(dpPlan))
      continue;
    ++solved;
    EXPECT_LE(dpPlan->peakBytes, budget);
    EXPECT_GE(dpPlan->extraTime, optimum - 1e-12);
    if (dpPlan->extraTime <= optimum + 1e-12)
      ++optimal;
    else if (optimum > 0)
      worstGap = std::max(worstGap, dpPlan->extraTime / optimum - 1);
  }
  // The frontier from the DP path: by increasing simulated peak, strictly
  // falling extra time, never below the optimum at its peak, from the
  // smallest peak any subset reaches to the step without recomputation.
  std::vector<RecomputePlan> frontier = dp.computeFrontier(16);
  ASSERT_FALSE(frontier.empty());
  for (size_t i = 0; i < frontier.size(); ++i) {
    EXPECT_GE(frontier[i].extraTime,
              getOptimum(subsets, frontier[i].peakBytes) - 1e-12);
    if (i > 0) {
      EXPECT_GT(frontier[i].peakBytes, frontier[i - 1].peakBytes);
      EXPECT_LT(frontier[i].extraTime, frontier[i - 1].extraTime);
    }
  }
  EXPECT_EQ(frontier.back().peakBytes, dp.getPeakWithoutRecompute());
  EXPECT_EQ(frontier.back().extraTime, 0.0);
  EXPECT_EQ(frontier.front().peakBytes, peaks.front());
  std::cout << "gpt2 1 layer: " << planner.getCandidates().size()
            << " candidates, " << peaks.size()
            << " budgets; the block DP alone solved " << solved
            << ", was optimal at " << optimal << ", worst gap "
            << worstGap * 100 << "%\n";
}

/// Zoo training steps (AdamW, canonicalized, as tg-recompute sees them in the
/// pipeline), large enough for the block DP: at the peak of every frontier
/// plan, the budgeted solve succeeds, fits and is no more expensive than that
/// plan; the smallest frontier peak is the smallest feasible one (a budget
/// one byte below fails and reports it); a budget the step fits recomputes
/// nothing.
class RecomputeSolveTest : public RecomputePlannerTest {
protected:
  func::FuncOp buildStep(OwningOpRef<ModuleOp> built) {
    module = std::move(built);
    PassManager pm(&context);
    pm.addPass(createTGAutodiff());
    pm.addPass(createTGOptimizer());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    EXPECT_TRUE(succeeded(pm.run(*module)));
    return *module->getOps<func::FuncOp>().begin();
  }

  void checkAgainstFrontier(func::FuncOp function, StringRef name) {
    RecomputePlanner frontierPlanner(function, device);
    ASSERT_GT(frontierPlanner.getCandidates().size(),
              frontierPlanner.exhaustiveLimit)
        << name.str();
    std::vector<RecomputePlan> frontier = frontierPlanner.computeFrontier(0);
    ASSERT_GE(frontier.size(), 2u) << name.str();
    // A planner of its own, as a compile with --memory-budget has.
    RecomputePlanner planner(function, device);
    EXPECT_EQ(frontier.back().peakBytes, planner.getPeakWithoutRecompute());
    for (const RecomputePlan &point : frontier) {
      int64_t minimum = 0;
      FailureOr<RecomputePlan> plan = planner.solve(point.peakBytes, minimum);
      ASSERT_TRUE(succeeded(plan)) << name.str() << " at " << point.peakBytes;
      EXPECT_LE(plan->peakBytes, point.peakBytes) << name.str();
      EXPECT_LE(plan->extraTime, point.extraTime * (1 + 1e-12))
          << name.str() << " at " << point.peakBytes;
    }
    int64_t smallest = frontier.front().peakBytes;
    int64_t minimum = 0;
    EXPECT_TRUE(failed(planner.solve(smallest - 1, minimum))) << name.str();
    EXPECT_EQ(minimum, smallest) << name.str();
    FailureOr<RecomputePlan> unused =
        planner.solve(planner.getPeakWithoutRecompute(), minimum);
    ASSERT_TRUE(succeeded(unused));
    EXPECT_TRUE(unused->recomputed.empty()) << name.str();
    std::cout << name.str() << ": " << planner.getCandidates().size()
              << " candidates, " << frontier.size()
              << " frontier points, smallest peak " << smallest << "\n";
  }
};

/// Small zoo steps large enough for the block DP: gpt2 3 layers and llama 2
/// layers, with fused and eager attention.
static std::vector<std::pair<std::string, OwningOpRef<ModuleOp>>>
buildZooSteps(MLIRContext &context) {
  std::vector<std::pair<std::string, OwningOpRef<ModuleOp>>> steps;
  for (bool eager : {false, true}) {
    zoo::GPT2Config gpt2;
    gpt2.layers = 3;
    gpt2.hidden = 64;
    gpt2.heads = 4;
    gpt2.vocab = 128;
    gpt2.positions = 32;
    gpt2.seq = 32;
    gpt2.batch = 2;
    gpt2.eagerAttention = eager;
    steps.emplace_back(eager ? "gpt2 3 layers eager" : "gpt2 3 layers",
                       std::move(*zoo::buildModel(context, gpt2, "gpt2")));
    zoo::LlamaConfig llama;
    llama.layers = 2;
    llama.hidden = 64;
    llama.heads = 4;
    llama.kvHeads = 2;
    llama.intermediate = 128;
    llama.vocab = 128;
    llama.seq = 32;
    llama.batch = 2;
    llama.eagerAttention = eager;
    steps.emplace_back(eager ? "llama 2 layers eager" : "llama 2 layers",
                       std::move(*zoo::buildModel(context, llama, "llama")));
  }
  return steps;
}

TEST_F(RecomputeSolveTest, NeverWorseThanTheFrontier) {
  for (auto &[name, built] : buildZooSteps(context))
    checkAgainstFrontier(buildStep(std::move(built)), name);
}

/// The lower bound that lets solve skip simulations is one: on random plans
/// (each candidate recomputed with probability 1/8, 1/2 or 7/8) and the
/// frontier's, it never exceeds the simulated peak of the rewritten,
/// scheduled step, and `exceeds` answers as the bound does.
TEST_F(RecomputeSolveTest, BoundIsBelowTheSimulatedPeak) {
  std::mt19937 rng(15);
  for (auto &[name, built] : buildZooSteps(context)) {
    func::FuncOp function = buildStep(std::move(built));
    RecomputePlanner planner(function, device);
    RecomputePeakBound &bound = planner.getBound();
    std::vector<SmallVector<unsigned>> plans;
    for (const RecomputePlan &point : planner.computeFrontier(0))
      plans.push_back(point.recomputed);
    for (double share : {0.125, 0.5, 0.875})
      for (unsigned trial = 0; trial < 20; ++trial) {
        SmallVector<unsigned> plan;
        for (unsigned at = 0; at < planner.getCandidates().size(); ++at)
          if (std::bernoulli_distribution(share)(rng))
            plan.push_back(at);
        plans.push_back(plan);
      }
    unsigned tight = 0;
    for (const SmallVector<unsigned> &plan : plans) {
      int64_t peak = planner.simulatePeak(plan);
      int64_t lower = bound.get(plan);
      EXPECT_LE(lower, peak) << name << ", " << plan.size() << " recomputed";
      for (int64_t threshold : {lower - 1, lower, peak - 1, peak})
        EXPECT_EQ(bound.exceeds(plan, threshold), lower > threshold) << name;
      tight += lower * 20 >= peak * 19;
    }
    // Loose but not vacuous: within 5% of the peak for most plans.
    EXPECT_GE(tight * 2, plans.size()) << name;
  }
}

/// Skipping the plans the bound rules out changes nothing: at budgets
/// around every frontier point, the solve with the bound returns what the
/// solve that simulates every plan returns, and on failure the same
/// smallest peak.
TEST_F(RecomputeSolveTest, BoundChangesNoResult) {
  for (auto &[name, built] : buildZooSteps(context)) {
    func::FuncOp function = buildStep(std::move(built));
    RecomputePlanner bounded(function, device), simulated(function, device);
    simulated.useBound = false;
    std::vector<int64_t> budgets;
    for (const RecomputePlan &point : simulated.computeFrontier(0))
      for (int64_t delta : {-4096, -1, 0, 4096})
        budgets.push_back(point.peakBytes + delta);
    for (int64_t budget : budgets) {
      int64_t boundedMinimum = 0, simulatedMinimum = 0;
      FailureOr<RecomputePlan> a = bounded.solve(budget, boundedMinimum);
      FailureOr<RecomputePlan> b = simulated.solve(budget, simulatedMinimum);
      ASSERT_EQ(succeeded(a), succeeded(b)) << name << " at " << budget;
      if (failed(a)) {
        EXPECT_EQ(boundedMinimum, simulatedMinimum) << name << " at " << budget;
        continue;
      }
      EXPECT_EQ(a->recomputed, b->recomputed) << name << " at " << budget;
      EXPECT_EQ(a->peakBytes, b->peakBytes) << name << " at " << budget;
      EXPECT_LE(a->solves, b->solves) << name << " at " << budget;
    }
  }
}

TEST(RecomputeBudgetTest, ParsesSizes) {
  EXPECT_EQ(*parseByteSize("1000"), 1000);
  EXPECT_EQ(*parseByteSize("12GiB"), 12ll << 30);
  EXPECT_EQ(*parseByteSize("1.5 KiB"), 1536);
  EXPECT_EQ(*parseByteSize("40GB"), 40000000000ll);
  EXPECT_EQ(*parseByteSize("7B"), 7);
  EXPECT_TRUE(failed(parseByteSize("")));
  EXPECT_TRUE(failed(parseByteSize("-1")));
  EXPECT_TRUE(failed(parseByteSize("12 XB")));
  EXPECT_TRUE(failed(parseByteSize("GiB")));
  EXPECT_TRUE(failed(parseByteSize("99999999999TiB")));
}
