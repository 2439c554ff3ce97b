//===- Plan.cpp - tgc plan: choosing the parallel configuration -----------===//
//
// Enumerate, prune, price, rank. A configuration is priced by compiling the
// step exactly as `tgc compile` does (compileModule) and reading the figures
// `tgc report` prints (StepReport); a model of identical layers is compiled
// with 1 and 2 layers (and 2 and 4 micro-batches) and extrapolated.
//
//===----------------------------------------------------------------------===//

#include "tgc/Driver/Plan.h"

#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Analysis/StepReport.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Driver/Compile.h"
#include "tgc/Driver/Model.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <thread>
#include <tuple>

using namespace mlir;
using namespace tgc;

/// tg-microbatch's bound on the ops of the repeated bodies
/// (lib/Transforms/Microbatch.cpp): a plan beyond it would not compile.
static constexpr int64_t kMaxUnrolledOps = int64_t(1) << 20;
/// The finalists whose whole step (micro-batches unrolled) has at most
/// this many ops are compiled whole, so their figures are exact.
static constexpr int64_t kMaxExactOps = 20000;

std::string ParallelConfig::getMesh() const {
  SmallVector<std::string> axes;
  if (dp > 1)
    axes.push_back("dp=" + std::to_string(dp));
  if (pp > 1)
    axes.push_back("pp=" + std::to_string(pp));
  if (tp > 1)
    axes.push_back("tp=" + std::to_string(tp));
  return llvm::join(axes, ",");
}

std::string ParallelConfig::getSchedule() const {
  if (pp == 1)
    return "";
  return virtualStages > 1 ? "interleaved" : "1f1b";
}

std::vector<std::string>
ParallelConfig::getCompileFlags(const TrainingPipelineOptions &base,
                                StringRef budget) const {
  std::vector<std::string> flags = {"--train"};
  if (base.optimizer != OptimizerKind::AdamW)
    flags.push_back("--optimizer=" +
                    stringifyOptimizerKind(base.optimizer).str());
  if (base.precision != PrecisionPolicy::FP32)
    flags.push_back("--precision=" +
                    stringifyPrecisionPolicy(base.precision).str());
  if (std::string mesh = getMesh(); !mesh.empty())
    flags.push_back("--mesh=" + mesh);
  if (zero)
    flags.push_back("--zero=" + std::to_string(zero));
  if (sequenceParallel)
    flags.push_back("--sequence-parallel");
  if (expertParallel)
    flags.push_back("--expert-parallel");
  if (microBatches > 1)
    flags.push_back("--micro-batches=" + std::to_string(microBatches));
  if (pp > 1)
    flags.push_back("--pipeline-schedule=" + getSchedule());
  if (virtualStages > 1)
    flags.push_back("--virtual-stages=" + std::to_string(virtualStages));
  if (recompute)
    flags.push_back("--memory-budget=" + budget.str());
  return flags;
}

static std::string formatBytes(int64_t bytes) {
  if (bytes < (int64_t(1) << 30))
    return llvm::formatv("{0:F1} MiB", double(bytes) / double(1 << 20)).str();
  return llvm::formatv("{0:F1} GiB", double(bytes) / double(1 << 30)).str();
}

namespace {

/// A compiled point: the step of `layers` layers over `microBatches`
/// micro-batches of one configuration.
struct PointKey {
  int64_t dp, tp, zero, sp, ep, microBatchSize, layers, microBatches, budget;
  bool operator<(const PointKey &other) const {
    return std::tie(dp, tp, zero, sp, ep, microBatchSize, layers, microBatches,
                    budget) < std::tie(other.dp, other.tp, other.zero, other.sp,
                                       other.ep, other.microBatchSize,
                                       other.layers, other.microBatches,
                                       other.budget);
  }
};

/// The training steps a worker has built, in its context, for the points
/// it compiles: the training-step stage (mixed precision, autodiff,
/// micro-batches, optimizer) depends only on the model's batch, layers and
/// micro-batches and on whether tp splits the fused projections, so the
/// ZeRO stages, sequence parallelism and meshes of the same batch share it.
struct StepCache {
  using Key = std::tuple<int64_t, int64_t, int64_t, bool>;
  /// The step and the name of its function.
  std::map<Key, std::pair<OwningOpRef<ModuleOp>, std::string>> steps;
};

/// Why a configuration was left out, for the message when none fits.
struct Rejection {
  std::string reason;
  int64_t peakBytes = 0;
  /// A configuration left out for its memory: its figures without
  /// recompute, for --explain.
  std::optional<PlanCandidate> unfit;
};

class PlanSearch {
public:
  PlanSearch(MLIRContext &context, const PlanModel &model,
             const PlanRequest &request, StepCache *stepCache = nullptr)
      : context(context), model(model), request(request),
        budget(getAutoBudget(request.device)), stepCache(stepCache) {
    options.optimizer = request.optimizer;
    options.precision = request.precision;
  }

  LogicalResult run(llvm::raw_ostream &os);
  /// Drops the modules kept for later points (before their context goes).
  void releaseModules() { sharded.clear(); }

private:
  /// The training step of `layers` layers over `microBatches` micro-batches
  /// of `config`, sharded, in `module` (a copy of the kept one when an
  /// earlier point built it); the name of its function in `name`.
  LogicalResult buildShardedStep(const ParallelConfig &config, int64_t layers,
                                 int64_t microBatches,
                                 const TrainingPipelineOptions &pointOptions,
                                 OwningOpRef<ModuleOp> &module,
                                 std::string &name);
  /// The figures of one compiled point; failure with `error` set when the
  /// pipeline refuses it.
  FailureOr<PlanFigures> compilePoint(const ParallelConfig &config,
                                      int64_t layers, int64_t microBatches,
                                      int64_t pointBudget);
  /// Sets `point` to the pipeline's options for a point of `config` (its
  /// mesh as given).
  void setPointOptions(TrainingPipelineOptions &point,
                       const ParallelConfig &config, int64_t microBatches,
                       int64_t pointBudget) const;
  /// The figures of the whole step of a pipelined `config`, compiled with
  /// its pipeline (the points model it from its stage's mesh).
  FailureOr<PlanFigures> compilePipeline(const ParallelConfig &config,
                                         int64_t pointBudget);
  /// The figures of `config` for the whole model, extrapolated from points
  /// (exact when the points are the model); `savingsPerLayer` > 0 compiles
  /// every point with a budget that many bytes per layer below its peak.
  FailureOr<PlanFigures> evaluate(const ParallelConfig &config,
                                  int64_t savingsPerLayer, bool &exact);
  /// The ops of the training step of the whole model (one micro-batch),
  /// which tg-microbatch repeats.
  FailureOr<int64_t> countStepOps();
  /// The points of `config` at ks[i] layers and ms[j] micro-batches, in
  /// f[i][j].
  LogicalResult compilePoints(const ParallelConfig &config,
                              ArrayRef<int64_t> ks, ArrayRef<int64_t> ms,
                              int64_t savingsPerLayer, PlanFigures (&f)[2][2]);
  /// The figures of a pipelined `config` (pp > 1), modelled stage by stage
  /// from points of its mesh without pp (docs/plan.md).
  FailureOr<PlanFigures> evaluatePipeline(const ParallelConfig &config,
                                          int64_t savingsPerLayer);
  /// Prices `config` (pp > 1) under each schedule and number of virtual
  /// stages, keeping those that fit; the fastest step, none when no
  /// schedule fits or the points fail.
  std::optional<double> searchPipelines(ParallelConfig config,
                                        std::optional<double> previous);
  /// Prices the micro-batch sizes of `base` in increasing order while the
  /// step gets shorter; `ops` is the step's op count.
  void searchMicroBatches(const ParallelConfig &base, FailureOr<int64_t> ops);
  /// Moves `other`'s progress (points, plans, rejections, counts, where it
  /// stopped) to this search, which runs in another context.
  void adopt(PlanSearch &&other) {
    points = std::move(other.points);
    candidates = std::move(other.candidates);
    rejections = std::move(other.rejections);
    compiled = other.compiled;
    pruned = other.pruned;
    deferred = other.deferred;
  }
  /// Bytes per parameter of the model states at `config`'s ZeRO stage
  /// (params, gradients, optimizer state), before tp.
  double getStateBytesPerParam(const ParallelConfig &config) const;
  /// Bytes one device keeps across steps at least (params, gradients,
  /// optimizer state; every tensor assumed split over tp, a pipeline
  /// stage's share of the layers).
  int64_t getPersistentLowerBound(const ParallelConfig &config) const;
  void reject(const ParallelConfig &config, std::string reason,
              int64_t peak = 0);
  /// Rejects `config`, whose figures without recompute are `unbounded`,
  /// for its memory.
  void rejectUnfit(const ParallelConfig &config, const PlanFigures &unbounded,
                   std::string reason);
  std::string describe(const ParallelConfig &config) const;
  void printTable(llvm::raw_ostream &os, ArrayRef<PlanCandidate> ranked) const;
  void printExplanation(llvm::raw_ostream &os, const PlanCandidate &best,
                        const PlanCandidate &runnerUp) const;
  std::string getModelFile() const;
  std::string getCommand(const PlanCandidate &candidate) const;

  MLIRContext &context;
  const PlanModel &model;
  const PlanRequest &request;
  int64_t budget;
  TrainingPipelineOptions options;
  int64_t seq = 0, globalBatch = 0;
  StepCache *stepCache;
  std::map<PointKey, FailureOr<PlanFigures>> points;
  /// The sharded steps of the points compiled without a budget, which the
  /// same points with a budget (recompute) plan again.
  std::map<PointKey, std::pair<OwningOpRef<ModuleOp>, std::string>> sharded;
  std::string lastError;
  std::vector<PlanCandidate> candidates;
  std::vector<Rejection> rejections;
  unsigned compiled = 0, pruned = 0;
  std::optional<int64_t> stepOps;
  /// The step of the top-K-th plan the search without pp found, where the
  /// table is made of extrapolated figures: a pipelined schedule whose step
  /// without recompute is slower cannot enter the table, and is not
  /// recomputed.
  std::optional<double> stepBound;
  /// Whether the search stops before its first recompute, which it resumes
  /// once every task has found the plans that need none (`stepBound`).
  bool deferRecompute = false;
  /// Where a search that stopped for a recompute resumes: the index of the
  /// micro-batch size and the step of the previous one.
  struct Resume {
    size_t size;
    std::optional<double> previous;
  };
  std::optional<Resume> deferred;
  /// Set by searchPipelines when it stopped for a recompute.
  bool stoppedForRecompute = false;
};

} // namespace

std::string PlanSearch::describe(const ParallelConfig &config) const {
  std::string text = config.getMesh().empty() ? "1 device" : config.getMesh();
  if (config.dp > 1)
    text += " zero=" + std::to_string(config.zero);
  if (config.sequenceParallel)
    text += " sp";
  if (config.expertParallel)
    text += " ep";
  text += llvm::formatv(" micro-batches {0}x{1}", config.microBatches,
                        config.microBatchSize)
              .str();
  if (config.pp > 1)
    text += " " + config.getSchedule();
  if (config.virtualStages > 1)
    text += " V=" + std::to_string(config.virtualStages);
  return text;
}

void PlanSearch::reject(const ParallelConfig &config, std::string reason,
                        int64_t peak) {
  rejections.push_back({describe(config) + ": " + reason, peak, {}});
}

void PlanSearch::rejectUnfit(const ParallelConfig &config,
                             const PlanFigures &unbounded, std::string reason) {
  reject(config, std::move(reason), unbounded.peakBytes);
  ParallelConfig original = config;
  original.recompute = false;
  rejections.back().unfit = PlanCandidate{original, unbounded, false};
}

/// What the plan reads of a compiled step's report. A pipeline's step is
/// its simulated step (the last device's finish; total.time sums every
/// stage's ops), its peak the binding device's.
static PlanFigures getFigures(const StepReport &report) {
  PlanFigures figures;
  figures.peakBytes = report.memory.peakBytes;
  figures.keptBytes =
      report.memory.persistentBytes + report.memory.activationBytes;
  figures.activationBytes = report.memory.activationBytes;
  figures.stepTime =
      report.time.pipeline ? report.time.stepTime : report.time.total.time;
  figures.mfu = report.time.mfu;
  figures.exposedCommunication = report.time.communication.exposedTime;
  figures.flops = static_cast<double>(report.time.total.flops);
  if (report.time.pipeline) {
    figures.bubble = report.time.pipelineTimeline.getBubbleFraction();
    figures.bindingStage = std::max<int64_t>(0, report.memory.peakDevice);
  }
  return figures;
}

FailureOr<PlanFigures> PlanSearch::compilePoint(const ParallelConfig &config,
                                                int64_t layers,
                                                int64_t microBatches,
                                                int64_t pointBudget) {
  PointKey key{config.dp,
               config.tp,
               config.zero,
               config.sequenceParallel,
               config.expertParallel,
               config.microBatchSize,
               layers,
               microBatches,
               pointBudget};
  if (auto it = points.find(key); it != points.end())
    return it->second;
  ++compiled;
  // A configuration the pipeline refuses (a split that does not divide, a
  // budget recompute cannot reach) is a rejected candidate, not an error of
  // the plan: keep its first message.
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = diagnostic.str();
    return success();
  });
  auto finish = [&](FailureOr<PlanFigures> figures) {
    lastError = error.empty() ? "the pipeline failed" : error;
    return points.emplace(key, figures).first->second;
  };
  // A pipeline's points are its stage's mesh without pp.
  ParallelConfig stage = config;
  stage.pp = 1;
  stage.virtualStages = 1;
  TrainingPipelineOptions pointOptions;
  setPointOptions(pointOptions, stage, microBatches, pointBudget);
  OwningOpRef<ModuleOp> module;
  std::string name;
  if (failed(buildShardedStep(config, layers, microBatches, pointOptions,
                              module, name)))
    return finish(failure());
  CompileRequest compile;
  compile.device = request.device;
  compile.first = CompileStage::Planning;
  if (failed(compileModule(*module, pointOptions, compile)))
    return finish(failure());
  auto function = module->lookupSymbol<func::FuncOp>(name);
  FailureOr<StepReport> report =
      StepReport::compute(function, request.device, /*figuresOnly=*/true);
  if (failed(report))
    return finish(failure());
  return finish(getFigures(*report));
}

FailureOr<PlanFigures> PlanSearch::compilePipeline(const ParallelConfig &config,
                                                   int64_t pointBudget) {
  ++compiled;
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = diagnostic.str();
    return success();
  });
  auto fail = [&]() -> FailureOr<PlanFigures> {
    lastError = error.empty() ? "the pipeline failed" : error;
    return failure();
  };
  TrainingPipelineOptions pipelineOptions;
  setPointOptions(pipelineOptions, config, config.microBatches, pointBudget);
  FailureOr<OwningOpRef<ModuleOp>> module = model.build(
      context, model.getLayers(), config.dp * config.microBatchSize, seq);
  if (failed(module))
    return fail();
  CompileRequest compile;
  compile.device = request.device;
  if (failed(compileModule(**module, pipelineOptions, compile)))
    return fail();
  auto functions = (*module)->getOps<func::FuncOp>();
  if (functions.empty())
    return fail();
  FailureOr<StepReport> report =
      StepReport::compute(*functions.begin(), request.device,
                          /*figuresOnly=*/true);
  if (failed(report))
    return fail();
  return getFigures(*report);
}

void PlanSearch::setPointOptions(TrainingPipelineOptions &point,
                                 const ParallelConfig &config,
                                 int64_t microBatches,
                                 int64_t pointBudget) const {
  point.copyOptionValuesFrom(options);
  point.mesh = config.getMesh();
  point.zero = config.dp > 1 ? config.zero : 0;
  point.sequenceParallel = config.sequenceParallel;
  point.expertParallel = config.expertParallel;
  point.microBatches = microBatches;
  if (config.pp > 1) {
    point.pipelineSchedule = config.getSchedule();
    point.virtualStages = config.virtualStages;
  }
  // The figures read are the simulated peak and the modelled time, which
  // the arena's offsets do not change.
  point.noMemoryPlan = true;
  if (pointBudget > 0)
    point.memoryBudget = std::to_string(pointBudget);
}

LogicalResult
PlanSearch::buildShardedStep(const ParallelConfig &config, int64_t layers,
                             int64_t microBatches,
                             const TrainingPipelineOptions &pointOptions,
                             OwningOpRef<ModuleOp> &module, std::string &name) {
  PointKey key{config.dp,
               config.tp,
               config.zero,
               config.sequenceParallel,
               config.expertParallel,
               config.microBatchSize,
               layers,
               microBatches,
               0};
  if (auto it = sharded.find(key); it != sharded.end()) {
    module = it->second.first->clone();
    name = it->second.second;
    return success();
  }
  CompileRequest compile;
  compile.device = request.device;
  StepCache::Key stepKey{config.dp * config.microBatchSize, layers,
                         microBatches, config.tp > 1};
  if (stepCache)
    if (auto it = stepCache->steps.find(stepKey);
        it != stepCache->steps.end()) {
      module = it->second.first->clone();
      name = it->second.second;
    }
  if (!module) {
    FailureOr<OwningOpRef<ModuleOp>> built =
        model.build(context, layers, config.dp * config.microBatchSize, seq);
    if (failed(built))
      return failure();
    module = std::move(*built);
    auto entry = llvm::to_vector(module->getOps<func::FuncOp>());
    if (entry.size() != 1)
      return emitError(module->getLoc(), "the model must hold one function");
    name = entry.front().getSymName().str();
    compile.last = CompileStage::TrainingStep;
    if (failed(compileModule(*module, pointOptions, compile)))
      return failure();
    if (stepCache)
      stepCache->steps[stepKey] = {module->clone(), name};
  }
  compile.first = compile.last = CompileStage::Sharding;
  if (failed(compileModule(*module, pointOptions, compile)))
    return failure();
  // Only a budget's points plan the same sharded step again.
  sharded[key] = {module->clone(), name};
  return success();
}

LogicalResult PlanSearch::compilePoints(const ParallelConfig &config,
                                        ArrayRef<int64_t> ks,
                                        ArrayRef<int64_t> ms,
                                        int64_t savingsPerLayer,
                                        PlanFigures (&f)[2][2]) {
  for (auto [i, k] : llvm::enumerate(ks))
    for (auto [j, mb] : llvm::enumerate(ms)) {
      int64_t pointBudget = 0;
      if (savingsPerLayer > 0) {
        FailureOr<PlanFigures> unbounded = compilePoint(config, k, mb, 0);
        if (failed(unbounded))
          return failure();
        pointBudget = unbounded->peakBytes - k * savingsPerLayer;
        if (pointBudget <= 0) {
          lastError = "recompute cannot save that much";
          return failure();
        }
      }
      FailureOr<PlanFigures> point = compilePoint(config, k, mb, pointBudget);
      if (failed(point))
        return failure();
      f[i][j] = *point;
    }
  return success();
}

FailureOr<PlanFigures> PlanSearch::evaluate(const ParallelConfig &config,
                                            int64_t savingsPerLayer,
                                            bool &exact) {
  int64_t layers = model.getLayers(), m = config.microBatches;
  // The points: the whole model where it has at most 2 layers, else 1 and
  // 2 layers; the micro-batches themselves up to 2, else 1 and 2.
  SmallVector<int64_t, 2> ks = layers <= 2 ? SmallVector<int64_t, 2>{layers}
                                           : SmallVector<int64_t, 2>{1, 2};
  // The first micro-batches differ from the rest (the accumulators are
  // created, and from 4 on the schedule keeps one micro-batch's activations):
  // up to 4 they are compiled as they are, beyond from 2 and 4.
  SmallVector<int64_t, 2> ms =
      m <= 4 ? SmallVector<int64_t, 2>{m} : SmallVector<int64_t, 2>{2, 4};
  exact = ks.size() == 1 && ms.size() == 1;
  // f[i][j]: the point of ks[i] layers and ms[j] micro-batches. The peak
  // of M >= 4 micro-batches is that of 4 (one micro-batch's activations
  // and the accumulated gradients); everything else grows linearly.
  PlanFigures f[2][2];
  if (failed(compilePoints(config, ks, ms, savingsPerLayer, f)))
    return failure();
  double dl = ks.size() == 2 ? double(layers - 1) : 0.0;
  double dm = ms.size() == 2 ? double(m - ms[0]) / double(ms[1] - ms[0]) : 0.0;
  auto linear = [&](auto field) {
    double f11 = field(f[0][0]);
    double fk = ks.size() == 2 ? field(f[1][0]) - f11 : 0.0;
    double fm = ms.size() == 2 ? field(f[0][1]) - f11 : 0.0;
    double fkm = ks.size() == 2 && ms.size() == 2
                     ? field(f[1][1]) - field(f[1][0]) - field(f[0][1]) + f11
                     : 0.0;
    return f11 + dl * fk + dm * fm + dl * dm * fkm;
  };
  if (exact)
    return f[0][0];
  PlanFigures figures;
  // The peak of a short model sits in the loss and LM head, where fewer
  // layers' activations are live than when the backward starts; per layer
  // it grows by at least what the layer keeps (its states and the
  // activations it saves for the backward), from the larger point on.
  unsigned j = ms.size() - 1, last = ks.size() - 1;
  int64_t pk = 0;
  if (ks.size() == 2)
    pk = std::max(f[1][j].peakBytes - f[0][j].peakBytes,
                  f[1][j].keptBytes - f[0][j].keptBytes);
  figures.peakBytes =
      f[last][j].peakBytes + (layers - ks[last]) * std::max<int64_t>(pk, 0);
  figures.stepTime = linear([](const PlanFigures &p) { return p.stepTime; });
  // A linear fit of a time that is 0 at some points can dip below 0.
  figures.exposedCommunication = std::max(
      0.0, linear([](const PlanFigures &p) { return p.exposedCommunication; }));
  figures.flops = linear([](const PlanFigures &p) { return p.flops; });
  // MFU is FLOPs over time at the peak rate the points ran at.
  double rate =
      f[0][0].mfu > 0 ? f[0][0].flops / (f[0][0].stepTime * f[0][0].mfu) : 0.0;
  figures.mfu = rate > 0 ? figures.flops / (figures.stepTime * rate) : 0.0;
  return figures;
}

FailureOr<PlanFigures>
PlanSearch::evaluatePipeline(const ParallelConfig &config,
                             int64_t savingsPerLayer) {
  // The stage's mesh without pp, compiled at 1 and 2 layers and 2 and 4
  // micro-batches: every figure is bilinear in the layers k and the
  // micro-batches m, T(k, m) = a + b k + c m + d k m, where d is a layer's
  // forward and backward of one micro-batch, c the rest of a micro-batch
  // (embedding, LM head, loss), b a layer's share of the step's end
  // (gradient reduction over dp, optimizer update) and a the rest of it.
  PlanFigures f[2][2];
  if (failed(compilePoints(config, {1, 2}, {2, 4}, savingsPerLayer, f)))
    return failure();
  struct Bilinear {
    double a, b, c, d;
  };
  auto fit = [&](auto field) {
    double t12 = field(f[0][0]), t14 = field(f[0][1]), t22 = field(f[1][0]),
           t24 = field(f[1][1]);
    double d = (t24 - t14 - t22 + t12) / 2;
    double b = t22 - t12 - 2 * d;
    double c = (t14 - t12) / 2 - d;
    return Bilinear{t12 - b - 2 * c - 2 * d, b, c, d};
  };
  int64_t P = config.pp, V = config.virtualStages, M = config.microBatches;
  int64_t layers = model.getLayers(), n = layers / P;
  // The slowest stage is the last (its layers, the LM head and the loss;
  // the embedding is counted there too); a micro-batch's work on it, and
  // its share of the step's end after the pipeline's flush.
  auto perMicroBatch = [&](const Bilinear &x) {
    return std::max(0.0, double(n) * x.d + x.c);
  };
  auto perStep = [&](const Bilinear &x) {
    return std::max(0.0, double(n) * x.b + x.a);
  };
  Bilinear time = fit([](const PlanFigures &p) { return p.stepTime; });
  Bilinear exposed =
      fit([](const PlanFigures &p) { return p.exposedCommunication; });
  Bilinear flops = fit([](const PlanFigures &p) { return p.flops; });
  double stage = perMicroBatch(time);
  // 1F1B runs M + P - 1 stage slots, interleaved 1F1B M + (P - 1) / V (a
  // slot of 1/V of the stage's layers).
  double slots = double(M * V + P - 1) / double(V);
  // The activations (and their gradients) between two stages: one
  // micro-batch's [b, seq, hidden], split over tp under sequence
  // parallelism, sent and received once per slot each way, exposed; over
  // NVLink where the stages of one tp group's pipeline share a node.
  double elementBytes = request.precision == PrecisionPolicy::FP32 ? 4 : 2;
  double bytes = double(config.microBatchSize) * double(seq) *
                 double(model.getHidden()) * elementBytes /
                 double(config.sequenceParallel ? config.tp : 1);
  const LinkSpec &link = config.tp * config.pp <= request.device.gpusPerNode
                             ? request.device.nvlink
                             : request.device.infiniband;
  double hop = link.latency + (link.bandwidth > 0 ? bytes / link.bandwidth : 0);
  PlanFigures figures;
  figures.transferTime = 2 * double(M * V + P - 1) * hop;
  figures.stepTime = stage * slots + figures.transferTime + perStep(time);
  figures.bubble = stage * double(P - 1) / double(V) / figures.stepTime;
  figures.exposedCommunication = perMicroBatch(exposed) * double(M) +
                                 perStep(exposed) + figures.transferTime;
  figures.flops = (flops.a + flops.b * double(layers) + flops.c * double(M) +
                   flops.d * double(layers) * double(M)) /
                  double(P);
  double rate =
      f[0][0].mfu > 0 ? f[0][0].flops / (f[0][0].stepTime * f[0][0].mfu) : 0.0;
  figures.mfu = rate > 0 ? figures.flops / (figures.stepTime * rate) : 0.0;

  // Memory, from the 4-micro-batch points (where the peak stopped growing):
  // the peak of n layers as evaluate() extrapolates it (one micro-batch in
  // flight, the LM head and the loss included), less the states of the
  // other end's parameters, plus the activations of the further
  // micro-batches in flight: 1F1B keeps P - p on stage p, interleaved 1F1B
  // Megatron's warm-up count (P - 1 - p) * 2 + (V - 1) * P + 1 of chunks of
  // n / V layers (all M * V when M = P), GPipe M.
  const PlanFigures &one = f[0][1], &two = f[1][1];
  int64_t slope = std::max({two.peakBytes - one.peakBytes,
                            two.keptBytes - one.keptBytes, int64_t(0)});
  int64_t peak = n == 1 ? one.peakBytes : two.peakBytes + (n - 2) * slope;
  int64_t perLayer =
      std::max<int64_t>(two.activationBytes - one.activationBytes, 0);
  // The schedule tg-pipeline-schedule gives each device, in micro-batches
  // of the stage's layers.
  PipelineConfig schedule;
  schedule.stages = P;
  schedule.virtualStages = V;
  schedule.microBatches = M;
  schedule.schedule = V > 1 ? PipelineScheduleKind::Interleaved
                            : PipelineScheduleKind::OneFOneB;
  auto inFlight = [&](int64_t p) {
    return double(getMaxUnitsInFlight(schedule, p)) / double(V);
  };
  double stateBytes = getStateBytesPerParam(config) / double(config.tp);
  auto [firstOnly, lastOnly] = model.getEdgeParams();
  auto stagePeak = [&](int64_t p, int64_t otherEnd) {
    return peak - static_cast<int64_t>(double(otherEnd) * stateBytes) +
           static_cast<int64_t>((inFlight(p) - 1) * double(n * perLayer));
  };
  int64_t first = stagePeak(0, lastOnly), last = stagePeak(P - 1, firstOnly);
  figures.bindingStage = first >= last ? 0 : P - 1;
  figures.peakBytes = std::max(first, last);
  figures.inFlight = inFlight(figures.bindingStage);
  figures.inFlightBytes =
      static_cast<int64_t>(figures.inFlight * double(n * perLayer));
  figures.activationBytes = n * perLayer;
  figures.keptBytes = figures.peakBytes;
  return figures;
}

std::optional<double>
PlanSearch::searchPipelines(ParallelConfig config,
                            std::optional<double> previous) {
  int64_t n = model.getLayers() / config.pp;
  // 1F1B, and interleaved 1F1B with V model chunks of n / V layers per
  // device (M a multiple of P). GPipe is left out: it runs as many slots
  // as 1F1B and keeps all M micro-batches in flight, so it never wins.
  SmallVector<int64_t> chunks = {1};
  if (config.microBatches % config.pp == 0)
    for (int64_t v = 2; v <= n; ++v)
      if (n % v == 0)
        chunks.push_back(v);
  // Every schedule without recompute first (no new points): those that fit
  // are plans, and bound the others, whose recompute only adds work; those
  // are recomputed fastest first.
  std::optional<double> fastest;
  SmallVector<std::pair<ParallelConfig, PlanFigures>> unfit;
  for (int64_t v : chunks) {
    config.virtualStages = v;
    FailureOr<PlanFigures> figures = evaluatePipeline(config, 0);
    if (failed(figures)) {
      reject(config, lastError);
      return std::nullopt;
    }
    if (figures->peakBytes > budget) {
      unfit.push_back({config, *figures});
      continue;
    }
    candidates.push_back({config, *figures, false});
    if (!fastest || figures->stepTime < *fastest)
      fastest = figures->stepTime;
  }
  llvm::stable_sort(unfit, [](const auto &a, const auto &b) {
    return a.second.stepTime < b.second.stepTime;
  });
  size_t firstCandidate = candidates.size(), firstRejection = rejections.size();
  unsigned prunedBefore = pruned;
  for (auto &[unfitConfig, unbounded] : unfit) {
    std::optional<double> bound = fastest;
    if (previous && (!bound || *previous < *bound))
      bound = previous;
    if (bound && unbounded.stepTime > *bound) {
      // Slower than another schedule or the smaller micro-batches already,
      // it cannot be the plan.
      ++pruned;
      rejectUnfit(unfitConfig, unbounded,
                  "peaks at " + formatBytes(unbounded.peakBytes) +
                      " without recompute, and is slower than a plan that "
                      "fits even so");
      continue;
    }
    if (stepBound && unbounded.stepTime > *stepBound) {
      // Slower than the top plans that need no recompute already, it
      // cannot enter the table; like a recompute that fails, it leaves
      // this micro-batch size to the schedules that fit.
      ++pruned;
      rejectUnfit(unfitConfig, unbounded,
                  llvm::formatv("peaks at {0} without recompute, and is "
                                "slower than the {1} fastest plans even so",
                                formatBytes(unbounded.peakBytes),
                                std::max(1u, request.top)));
      continue;
    }
    if (deferRecompute) {
      // This micro-batch size is searched again once the bound is known.
      candidates.resize(firstCandidate);
      rejections.resize(firstRejection);
      pruned = prunedBefore;
      stoppedForRecompute = true;
      return std::nullopt;
    }
    // Recompute the same share of every layer of the binding stage's
    // micro-batches in flight to the budget.
    double over = double(unbounded.peakBytes - budget);
    int64_t savings = static_cast<int64_t>(
        std::ceil(over / (unbounded.inFlight * double(n))));
    ParallelConfig recomputed = unfitConfig;
    recomputed.recompute = true;
    FailureOr<PlanFigures> figures = evaluatePipeline(recomputed, savings);
    if (failed(figures) || figures->peakBytes > budget) {
      rejectUnfit(recomputed, unbounded,
                  llvm::formatv("peaks at {0} on stage {1} without recompute "
                                "({2:F1} micro-batches of activations in "
                                "flight, {3}), and recompute cannot bring it "
                                "under the budget",
                                formatBytes(unbounded.peakBytes),
                                unbounded.bindingStage, unbounded.inFlight,
                                formatBytes(unbounded.inFlightBytes)));
      continue;
    }
    candidates.push_back({recomputed, *figures, false});
    if (!fastest || figures->stepTime < *fastest)
      fastest = figures->stepTime;
  }
  return fastest;
}

void PlanSearch::searchMicroBatches(const ParallelConfig &base,
                                    FailureOr<int64_t> ops) {
  SmallVector<int64_t> sizes;
  if (model.canReshape()) {
    for (int64_t b = 1; b <= globalBatch / base.dp; ++b)
      if ((globalBatch / base.dp) % b == 0)
        sizes.push_back(b);
  } else {
    sizes.push_back(model.getBatch() / base.dp);
  }
  int64_t layers = model.getLayers();
  std::optional<double> previous;
  size_t start = 0;
  if (deferred) {
    start = deferred->size;
    previous = deferred->previous;
    deferred.reset();
  }
  for (size_t index = start; index < sizes.size(); ++index) {
    int64_t b = sizes[index];
    ParallelConfig config = base;
    config.microBatchSize = b;
    config.microBatches = globalBatch / (base.dp * b);
    if (base.pp > 1) {
      // Fewer micro-batches than stages leave most stages idle (a bubble
      // of at least half the step).
      if (config.microBatches < base.pp) {
        ++pruned;
        reject(config, llvm::formatv("{0} micro-batches for {1} pipeline "
                                     "stages",
                                     config.microBatches, base.pp));
        break;
      }
      std::optional<double> fastest = searchPipelines(config, previous);
      if (stoppedForRecompute) {
        stoppedForRecompute = false;
        deferred = Resume{index, previous};
        return;
      }
      if (!fastest)
        break;
      // Larger micro-batches only pay off while the step gets shorter.
      if (previous && *fastest > *previous)
        break;
      previous = fastest;
      continue;
    }
    if (succeeded(ops) && *ops * config.microBatches > kMaxUnrolledOps) {
      ++pruned;
      reject(config, llvm::formatv("{0} micro-batches of a {1}-op step "
                                   "exceed tg-microbatch's {2} ops",
                                   config.microBatches, *ops, kMaxUnrolledOps));
      continue;
    }
    bool exact = false;
    FailureOr<PlanFigures> figures = evaluate(config, 0, exact);
    if (failed(figures)) {
      reject(config, lastError);
      break;
    }
    if (figures->peakBytes > budget && previous &&
        figures->stepTime > *previous) {
      // Recompute only adds work: slower than the smaller micro-batches
      // already, it cannot be the plan.
      ++pruned;
      rejectUnfit(config, *figures,
                  "peaks at " + formatBytes(figures->peakBytes) +
                      " without recompute, and is slower than the "
                      "smaller micro-batches even so");
      break;
    }
    if (figures->peakBytes > budget && deferRecompute) {
      deferred = Resume{index, previous};
      return;
    }
    if (figures->peakBytes > budget && stepBound &&
        figures->stepTime > *stepBound) {
      // Slower than the top plans that need no recompute already, it
      // cannot enter the table; the micro-batch sizes end here, as where
      // recompute fails.
      ++pruned;
      rejectUnfit(config, *figures,
                  llvm::formatv("peaks at {0} without recompute, and is "
                                "slower than the {1} fastest plans even so",
                                formatBytes(figures->peakBytes),
                                std::max(1u, request.top)));
      break;
    }
    if (figures->peakBytes > budget) {
      // Recompute the same share of every layer to the budget.
      int64_t over = figures->peakBytes - budget;
      int64_t savings = (over + layers - 1) / layers;
      PlanFigures unbounded = *figures;
      config.recompute = true;
      figures = evaluate(config, savings, exact);
      if (failed(figures) || figures->peakBytes > budget) {
        rejectUnfit(config, unbounded,
                    "peaks at " + formatBytes(unbounded.peakBytes) +
                        " without recompute, and recompute cannot bring it "
                        "under the budget");
        break;
      }
    }
    // A step extrapolated below its FLOPs at the device's peak rate is not
    // one: the points' costs per layer and micro-batch do not add up there
    // (their two streams overlap differently at each point).
    if (!exact && figures->mfu > 1.0) {
      reject(config, llvm::formatv("extrapolated to {0:F1}% MFU, faster than "
                                   "the device's peak: the compiled points "
                                   "do not extrapolate",
                                   100.0 * figures->mfu));
      continue;
    }
    candidates.push_back({config, *figures, exact});
    // The step need not shorten steadily as micro-batches grow (fewer of
    // them run more efficiently, while the gradients' reduction does not
    // scale with their number): every size that fits is priced, and
    // `previous` is the fastest so far.
    if (!previous || figures->stepTime < *previous)
      previous = figures->stepTime;
  }
}

FailureOr<int64_t> PlanSearch::countStepOps() {
  if (stepOps)
    return *stepOps;
  auto opsOf = [&](int64_t layers) -> FailureOr<int64_t> {
    FailureOr<OwningOpRef<ModuleOp>> module =
        model.build(context, layers, model.getBatch(), model.getSeq());
    if (failed(module))
      return failure();
    ScopedDiagnosticHandler silence(&context,
                                    [](Diagnostic &) { return success(); });
    if (failed(buildTrainingStep(**module, options)))
      return failure();
    int64_t ops = 0;
    (**module).walk([&](func::FuncOp function) {
      function.walk([&](Operation *) { ++ops; });
    });
    return ops;
  };
  int64_t layers = model.getLayers();
  if (layers <= 2) {
    FailureOr<int64_t> ops = opsOf(layers);
    if (failed(ops))
      return failure();
    return *(stepOps = *ops);
  }
  FailureOr<int64_t> one = opsOf(1), two = opsOf(2);
  if (failed(one) || failed(two))
    return failure();
  return *(stepOps = *one + (layers - 1) * (*two - *one));
}

double PlanSearch::getStateBytesPerParam(const ParallelConfig &config) const {
  // Bytes per parameter of each state (docs/sharding.md, ZeRO): the copy
  // the compute reads, the f32 master weights of mixed precision, the f32
  // gradient, the optimizer state; each split over dp from its ZeRO stage.
  double copy = 4, master = 0;
  switch (request.precision) {
  case PrecisionPolicy::FP32:
    break;
  case PrecisionPolicy::BF16:
  case PrecisionPolicy::FP16:
    copy = 2, master = 4;
    break;
  case PrecisionPolicy::FP8:
    copy = 1, master = 4;
    break;
  }
  double state = request.optimizer == OptimizerKind::AdamW ||
                         request.optimizer == OptimizerKind::LAMB
                     ? 8
                     : 0;
  // Gradients are as wide as the copies the compute reads (f32 at most).
  double dp = double(config.dp);
  return copy / (config.zero >= 3 ? dp : 1) +
         master / (config.zero >= 1 ? dp : 1) +
         copy / (config.zero >= 2 ? dp : 1) +
         state / (config.zero >= 1 ? dp : 1);
}

int64_t
PlanSearch::getPersistentLowerBound(const ParallelConfig &config) const {
  // A pipeline stage holds its share of the layers and at least the
  // smaller end's parameters outside them.
  double params = double(model.getParams());
  // Expert parallelism splits every state of the stacks dp divides over dp,
  // as ZeRO-3 would.
  double splitExperts = 0;
  if (config.expertParallel)
    for (auto [elements, experts] : model.getExpertStacks())
      if (experts % config.dp == 0)
        splitExperts += double(elements);
  params -= splitExperts;
  ParallelConfig whole = config;
  whole.zero = 3;
  if (config.pp > 1) {
    auto [firstOnly, lastOnly] = model.getEdgeParams();
    params = (params - double(firstOnly + lastOnly)) / double(config.pp) +
             double(std::min(firstOnly, lastOnly));
  }
  return static_cast<int64_t>((params * getStateBytesPerParam(config) +
                               splitExperts * getStateBytesPerParam(whole)) /
                              double(config.tp));
}

std::string PlanSearch::getModelFile() const {
  return model.canReshape() ? "plan-model.mlir" : request.modelFile;
}

std::string PlanSearch::getCommand(const PlanCandidate &candidate) const {
  const ParallelConfig &config = candidate.config;
  std::string command;
  std::string write = model.getWriteCommand(config.dp * config.microBatchSize,
                                            seq, getModelFile());
  if (!write.empty())
    command = write + " && ";
  command += "tgc compile " + getModelFile();
  for (const std::string &flag : config.getCompileFlags(options, "auto"))
    command += " " + flag;
  if (request.nodeSizeChanged)
    command += " --device-file=plan-device.json";
  else
    command += " --device=" + request.device.name;
  return command + " -o step.mlir";
}

void PlanSearch::printTable(llvm::raw_ostream &os,
                            ArrayRef<PlanCandidate> ranked) const {
  os << llvm::format("  %-4s %-16s %-4s %-3s %-12s %-9s %-9s %11s %11s %6s "
                     "%11s %6s\n",
                     "rank", "mesh", "zero", "sp", "micro-batch", "schedule",
                     "recompute", "peak", "step", "MFU", "exposed", "bubble");
  for (auto [index, candidate] : llvm::enumerate(ranked)) {
    const ParallelConfig &c = candidate.config;
    std::string mesh = c.getMesh().empty() ? "-" : c.getMesh();
    if (c.expertParallel)
      mesh += " ep";
    std::string micro =
        llvm::formatv("{0} x {1}", c.microBatches, c.microBatchSize).str();
    std::string schedule = c.pp == 1 ? "-"
                           : c.virtualStages > 1
                               ? "int x" + std::to_string(c.virtualStages)
                               : "1f1b";
    os << llvm::format("  %-4u %-16s %-4s %-3s %-12s %-9s %-9s %11s %9.4g s "
                       "%5.1f%% %9.4g s %5.1f%%%s\n",
                       unsigned(index + 1), mesh.c_str(),
                       c.dp > 1 ? std::to_string(c.zero).c_str() : "-",
                       c.sequenceParallel ? "on" : "off", micro.c_str(),
                       schedule.c_str(), c.recompute ? "to budget" : "off",
                       formatBytes(candidate.figures.peakBytes).c_str(),
                       candidate.figures.stepTime, 100 * candidate.figures.mfu,
                       candidate.figures.exposedCommunication,
                       100 * candidate.figures.bubble,
                       candidate.exact ? "" : " ~");
  }
}

/// Where the peak of a plan lies: its stage and what binds there.
static std::string describePeak(const PlanCandidate &candidate) {
  const ParallelConfig &c = candidate.config;
  const PlanFigures &f = candidate.figures;
  if (c.pp == 1)
    return formatBytes(f.peakBytes);
  return llvm::formatv("{0} on stage {1} of {2} ({3} holding {4:F1} "
                       "micro-batches of activations in flight, {5}, and "
                       "{6} of states and working memory)",
                       formatBytes(f.peakBytes), f.bindingStage, c.pp,
                       f.bindingStage == 0 ? "the first, with the embedding,"
                                           : "the last, with the LM head,",
                       f.inFlight, formatBytes(f.inFlightBytes),
                       formatBytes(f.peakBytes - f.inFlightBytes))
      .str();
}

void PlanSearch::printExplanation(llvm::raw_ostream &os,
                                  const PlanCandidate &best,
                                  const PlanCandidate &runnerUp) const {
  const PlanFigures &a = best.figures, &b = runnerUp.figures;
  os << "why not the runner-up (" << describe(runnerUp.config) << "): ";
  os << llvm::format("its step is %.4g s longer (%.1f%%)",
                     b.stepTime - a.stepTime,
                     100 * (b.stepTime - a.stepTime) / a.stepTime);
  double communication = b.exposedCommunication - a.exposedCommunication;
  double bubble = b.bubble * b.stepTime - a.bubble * a.stepTime;
  double compute = (b.stepTime - b.exposedCommunication) -
                   (a.stepTime - a.exposedCommunication) - bubble;
  if (bubble >= communication && bubble >= compute)
    os << llvm::format(", mostly the pipeline's bubble (+%.4g s; exposed "
                       "communication %+.4g s, compute and memory traffic "
                       "%+.4g s)",
                       bubble, communication, compute);
  else if (communication >= compute)
    os << llvm::format(", mostly exposed communication (+%.4g s; compute "
                       "and memory traffic %+.4g s)",
                       communication, compute);
  else
    os << llvm::format(", mostly compute and memory traffic (+%.4g s%s; "
                       "exposed communication %+.4g s)",
                       compute,
                       runnerUp.config.recompute && !best.config.recompute
                           ? ", with recompute"
                           : "",
                       communication);
  os << "; its peak is " << describePeak(runnerUp) << " against "
     << describePeak(best) << "\n";
  // Where memory decided: the fastest plans that did not fit, or only with
  // recompute, and what bound them.
  if (runnerUp.config.recompute && !best.config.recompute)
    os << "  the runner-up fits the " << formatBytes(budget)
       << " budget only by recomputing activations\n";
  if (best.config.recompute)
    os << "  the chosen plan fits the " << formatBytes(budget)
       << " budget only by recomputing activations\n";
  const PlanCandidate *fastest = nullptr;
  for (const Rejection &rejection : rejections)
    if (rejection.unfit &&
        rejection.unfit->figures.stepTime < best.figures.stepTime &&
        (!fastest ||
         rejection.unfit->figures.stepTime < fastest->figures.stepTime))
      fastest = &*rejection.unfit;
  if (fastest)
    os << "memory decided: the fastest plan left out ("
       << describe(fastest->config) << ") would take "
       << llvm::format("%.4g s", fastest->figures.stepTime) << " but peaks at "
       << describePeak(*fastest) << ", over the " << formatBytes(budget)
       << " budget even with recompute\n";
}

LogicalResult PlanSearch::run(llvm::raw_ostream &os) {
  auto start = std::chrono::steady_clock::now();
  // The batch: sequences per step = dp x micro-batch size x micro-batches.
  seq = request.seq ? request.seq : model.getSeq();
  globalBatch = request.globalBatch ? request.globalBatch : model.getBatch();
  if (model.getBatch() <= 0)
    return reportError("the model has no `input` argument with a batch "
                       "dimension; tgc plan splits the batch over dp");
  if (!model.canReshape()) {
    if (request.seq && request.seq != model.getSeq())
      return reportError(llvm::formatv(
          "--seq {0}: the model's sequence length is {1}, and tgc plan "
          "rebuilds only tgc-zoo models; write the model with --seq {0}",
          request.seq, model.getSeq()));
    if (globalBatch % model.getBatch())
      return reportError(llvm::formatv(
          "the global batch of {0} sequences is not a multiple of the "
          "model's batch ({1}), which is one micro-batch over all of dp",
          globalBatch, model.getBatch()));
  }

  // The meshes: dp x pp x tp = devices, tp inside a node, pp dividing the
  // layers (a forced pp: that one).
  int64_t layers = model.getLayers();
  if (request.pp) {
    if (request.pp > 1 && layers == 1)
      return reportError(llvm::formatv(
          "--pp {0}: {1} is not a model of identical layers (a tgc-zoo "
          "model), and tgc plan cuts pipeline stages at layers",
          request.pp, request.modelFile));
    if (request.pp > layers)
      return reportError(llvm::formatv(
          "--pp {0}: the model has {1} layers, and a pipeline stage holds at "
          "least one",
          request.pp, layers));
    if (layers % request.pp)
      return reportError(llvm::formatv("--pp {0} does not divide the model's "
                                       "{1} layers into equal stages",
                                       request.pp, layers));
    if (request.devices % request.pp)
      return reportError(llvm::formatv("--pp {0} does not divide the {1} "
                                       "devices",
                                       request.pp, request.devices));
  }
  struct Mesh {
    int64_t dp, pp, tp;
  };
  SmallVector<Mesh> meshes;
  SmallVector<int64_t> indivisible;
  int64_t node = request.device.gpusPerNode;
  for (int64_t pp = 1; pp <= request.devices && pp <= layers; ++pp) {
    if (request.devices % pp || layers % pp ||
        (request.pp && pp != request.pp) || (pp > 1 && !model.canReshape()))
      continue;
    for (int64_t tp = 1; tp * pp <= request.devices && tp <= node; ++tp) {
      if ((request.devices / pp) % tp || node % tp)
        continue;
      int64_t dp = request.devices / (pp * tp);
      ParallelConfig config{dp, tp};
      config.pp = pp;
      if (globalBatch % dp) {
        reject(config, llvm::formatv("the global batch of {0} is not "
                                     "divisible by dp = {1}",
                                     globalBatch, dp));
        if (!llvm::is_contained(indivisible, dp))
          indivisible.push_back(dp);
        continue;
      }
      if (!model.canReshape() && model.getBatch() % dp) {
        reject(config,
               llvm::formatv("the model's batch of {0} (one micro-batch over "
                             "dp) is not divisible by dp = {1}",
                             model.getBatch(), dp));
        continue;
      }
      meshes.push_back({dp, pp, tp});
    }
  }
  if (meshes.empty() && !indivisible.empty()) {
    llvm::sort(indivisible);
    return reportError(llvm::formatv(
        "no mesh of {0} device{1} divides the global batch of {2} "
        "sequences: it must be dp x micro-batch size x micro-batches, and "
        "every mesh's dp ({3}) leaves a remainder; give a global batch that "
        "a dp divides{4}",
        request.devices, request.devices == 1 ? "" : "s", globalBatch,
        llvm::join(
            llvm::map_range(indivisible,
                            [](int64_t dp) { return std::to_string(dp); }),
            ", "),
        request.pp ? " (or another --pp)" : ""));
  }
  FailureOr<int64_t> ops = countStepOps();

  // The tasks: one per mesh, ZeRO stage and sequence parallelism, each
  // trying its micro-batch sizes in turn. Tasks share no compiled point, so
  // they run on worker threads, each with its own context, and their
  // results are merged in task order: the same plans as one at a time.
  SmallVector<ParallelConfig> tasks;
  for (const Mesh &mesh : meshes) {
    // A pipeline composes with ZeRO-1 at most: ZeRO-2 and 3 would reduce
    // (and gather) a stage's gradients (parameters) once per micro-batch.
    unsigned maxZero = mesh.dp == 1 ? 0u : mesh.pp > 1 ? 1u : 3u;
    // Expert parallelism where dp splits some expert stack (not with
    // pipeline stages).
    bool experts = mesh.dp > 1 && mesh.pp == 1 &&
                   llvm::any_of(model.getExpertStacks(), [&](auto stack) {
                     return stack.second % mesh.dp == 0;
                   });
    for (unsigned zero = 0; zero <= maxZero; ++zero)
      for (bool sp : {false, true})
        for (bool ep : {false, true}) {
          if ((sp && mesh.tp == 1) || (ep && !experts))
            continue;
          ParallelConfig base{mesh.dp, mesh.tp, zero, sp, ep};
          base.pp = mesh.pp;
          if (int64_t bound = getPersistentLowerBound(base); bound > budget) {
            ++pruned;
            reject(base,
                   "the model states alone (params, gradients, optimizer "
                   "state at this ZeRO stage" +
                       std::string(mesh.pp > 1 ? ", one stage's share" : "") +
                       ") need at least " + formatBytes(bound) + " per device",
                   bound);
            continue;
          }
          tasks.push_back(base);
        }
  }
  // A model as given is cloned from its own context: one task at a time.
  unsigned threads =
      model.canReshape()
          ? std::min<unsigned>(
                std::max(1u, llvm::get_physical_cores() > 0
                                 ? unsigned(llvm::get_physical_cores())
                                 : 1u),
                tasks.size())
          : 1u;
  if (const char *limit = std::getenv("TGC_PLAN_THREADS"))
    threads = std::max(1, std::atoi(limit));
  std::vector<std::unique_ptr<PlanSearch>> results(tasks.size());
  // A task runs in two parts: until its first recompute, then (once every
  // task has found the plans that need none) on from there, bounded.
  auto runTask = [&](MLIRContext &taskContext, StepCache &steps, size_t index,
                     std::optional<double> bound) {
    auto search =
        std::make_unique<PlanSearch>(taskContext, model, request, &steps);
    search->seq = seq;
    search->globalBatch = globalBatch;
    search->stepOps = stepOps;
    search->stepBound = bound;
    if (results[index]) {
      if (!results[index]->deferred)
        return;
      search->adopt(std::move(*results[index]));
    } else {
      search->deferRecompute = true;
    }
    search->searchMicroBatches(tasks[index], ops);
    search->releaseModules();
    search->deferRecompute = false;
    results[index] = std::move(search);
  };
  StepCache mainSteps;
  auto runTasks = [&](std::optional<double> bound) {
    if (threads <= 1) {
      for (size_t index = 0; index < tasks.size(); ++index)
        runTask(context, mainSteps, index, bound);
      return;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (unsigned worker = 0; worker < threads; ++worker)
      workers.emplace_back([&] {
        MLIRContext workerContext(context.getDialectRegistry(),
                                  MLIRContext::Threading::DISABLED);
        workerContext.loadAllAvailableDialects();
        StepCache steps;
        for (size_t index = next++; index < tasks.size(); index = next++)
          runTask(workerContext, steps, index, bound);
      });
    for (std::thread &worker : workers)
      worker.join();
  };
  runTasks(std::nullopt);
  // The top-K-th step of the plans found without recompute whose figures
  // are final (exact, or too large to be compiled whole as finalists below)
  // bounds the recomputes: a configuration slower than it without
  // recompute cannot enter the table, since recompute only adds work.
  std::optional<double> bound;
  unsigned top = std::max(1u, request.top);
  std::vector<double> finalSteps;
  for (const std::unique_ptr<PlanSearch> &result : results)
    for (const PlanCandidate &candidate : result->candidates)
      if (candidate.exact || failed(ops) ||
          *ops * candidate.config.microBatches > kMaxExactOps)
        finalSteps.push_back(candidate.figures.stepTime);
  if (finalSteps.size() >= top) {
    std::nth_element(finalSteps.begin(), finalSteps.begin() + (top - 1),
                     finalSteps.end());
    bound = finalSteps[top - 1];
  }
  runTasks(bound);
  for (std::unique_ptr<PlanSearch> &result : results) {
    llvm::append_range(candidates, result->candidates);
    for (Rejection &rejection : result->rejections)
      rejections.push_back(std::move(rejection));
    compiled += result->compiled;
    pruned += result->pruned;
  }

  if (candidates.empty()) {
    std::string message =
        llvm::formatv("no configuration of {0} device{1} fits {2} ({3} "
                      "budget: its memory less 5%)",
                      request.devices, request.devices == 1 ? "" : "s",
                      request.device.name, formatBytes(budget))
            .str();
    const Rejection *smallest = nullptr;
    for (const Rejection &rejection : rejections)
      if (rejection.peakBytes > 0 &&
          (!smallest || rejection.peakBytes < smallest->peakBytes))
        smallest = &rejection;
    if (smallest)
      message += "; the least per-device memory found is " +
                 formatBytes(smallest->peakBytes) + " (" + smallest->reason +
                 ")";
    else if (!rejections.empty())
      message += "; " + rejections.front().reason;
    return reportError(message);
  }

  auto byStepTime = [](const PlanCandidate &a, const PlanCandidate &b) {
    return a.figures.stepTime < b.figures.stepTime;
  };
  // The finalists small enough are compiled whole: exact figures, and the
  // extrapolation's error on them. A finalist whose exact figures are
  // slower leaves the top for the next one, compiled whole in turn (at
  // most 4 rounds of the top's size).
  double peakError = 0, timeError = 0;
  unsigned checked = 0;
  size_t finalists = std::max<size_t>(1, request.top);
  for (unsigned round = 0; round < 4; ++round) {
    llvm::stable_sort(candidates, byStepTime);
    llvm::erase_if(candidates, [&](const PlanCandidate &candidate) {
      return candidate.exact && candidate.figures.peakBytes > budget;
    });
    bool changed = false;
    for (PlanCandidate &candidate : llvm::make_range(
             candidates.begin(),
             candidates.begin() + std::min(candidates.size(), finalists))) {
      if (candidate.exact || candidate.wholeFailed || failed(ops) ||
          *ops * candidate.config.microBatches > kMaxExactOps)
        continue;
      // A pipeline compiles with its stages, sends and schedule.
      FailureOr<PlanFigures> whole =
          candidate.config.pp > 1
              ? compilePipeline(candidate.config,
                                candidate.config.recompute ? budget : 0)
              : compilePoint(candidate.config, model.getLayers(),
                             candidate.config.microBatches,
                             candidate.config.recompute ? budget : 0);
      if (failed(whole)) {
        candidate.wholeFailed = true;
        continue;
      }
      ++checked;
      changed = true;
      peakError =
          std::max(peakError, std::abs(double(candidate.figures.peakBytes) /
                                           double(whole->peakBytes) -
                                       1));
      timeError =
          std::max(timeError,
                   std::abs(candidate.figures.stepTime / whole->stepTime - 1));
      candidate.figures = *whole;
      candidate.exact = true;
    }
    if (!changed)
      break;
  }
  llvm::erase_if(candidates, [&](const PlanCandidate &candidate) {
    return candidate.figures.peakBytes > budget;
  });
  if (candidates.empty())
    return reportError("no configuration fits once compiled whole (the "
                       "extrapolated peaks were too low); see docs/plan.md");
  llvm::stable_sort(candidates, byStepTime);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ArrayRef<PlanCandidate> ranked(candidates);
  ranked = ranked.take_front(std::max(1u, request.top));
  const PlanCandidate &best = candidates.front();

  if (request.json) {
    auto toJson = [&](const PlanCandidate &candidate) {
      const ParallelConfig &c = candidate.config;
      return nlohmann::json{
          {"mesh", c.getMesh()},
          {"dp", c.dp},
          {"pp", c.pp},
          {"tp", c.tp},
          {"pipeline_schedule", c.getSchedule()},
          {"virtual_stages", c.virtualStages},
          {"zero", c.zero},
          {"sequence_parallel", c.sequenceParallel},
          {"expert_parallel", c.expertParallel},
          {"micro_batch_size", c.microBatchSize},
          {"micro_batches", c.microBatches},
          {"recompute", c.recompute},
          {"peak_bytes", candidate.figures.peakBytes},
          {"step_time_s", candidate.figures.stepTime},
          {"mfu", candidate.figures.mfu},
          {"exposed_communication_s", candidate.figures.exposedCommunication},
          {"bubble", candidate.figures.bubble},
          {"pipeline_transfer_s", candidate.figures.transferTime},
          {"binding_stage", candidate.figures.bindingStage},
          {"exact", candidate.exact},
          {"model_batch", c.dp * c.microBatchSize},
          {"compile_flags", c.getCompileFlags(options, "auto")},
          {"command", getCommand(candidate)}};
    };
    nlohmann::json plans = nlohmann::json::array();
    for (const PlanCandidate &candidate : ranked)
      plans.push_back(toJson(candidate));
    nlohmann::json json = {{"model", model.describe()},
                           {"layers", model.getLayers()},
                           {"seq", seq},
                           {"global_batch", globalBatch},
                           {"devices", request.devices},
                           {"device", request.device.name},
                           {"gpus_per_node", request.device.gpusPerNode},
                           {"memory_budget_bytes", budget},
                           {"candidates", candidates.size()},
                           {"compiled_points", compiled},
                           {"pruned", pruned},
                           {"search_time_s", seconds},
                           {"finalists_compiled_whole", checked},
                           {"extrapolation_peak_error", peakError},
                           {"extrapolation_step_time_error", timeError},
                           {"plans", plans},
                           {"chosen", plans[0]}};
    os << json.dump(2) << "\n";
    return success();
  }

  os << "tgc plan: " << model.describe() << "\n";
  os << llvm::formatv("{0} x {1} ({2} GPUs per node), global batch {3} "
                      "sequences of {4}, budget {5} per device\n",
                      request.devices, request.device.name,
                      request.device.gpusPerNode, globalBatch, seq,
                      formatBytes(budget));
  os << llvm::formatv("searched {0} configurations ({1} compiled points, "
                      "{2} pruned before compiling) in {3:F1} s; figures per "
                      "device (a pipeline's: its binding stage's peak), step "
                      "time modelled with exposed communication and the "
                      "pipeline's bubble\n",
                      candidates.size(), compiled, pruned, seconds);
  if (llvm::any_of(ranked, [](const PlanCandidate &candidate) {
        return !candidate.exact;
      }))
    os << "figures marked ~ are extrapolated from 1- and 2-layer compiles "
          "(and 2 and 4 micro-batches): see docs/plan.md for their "
          "accuracy\n";
  if (checked)
    os << llvm::formatv("{0} finalists compiled whole: the extrapolation was "
                        "off by at most {1:F2}% in peak and {2:F2}% in step "
                        "time\n",
                        checked, 100 * peakError, 100 * timeError);
  os << "\n";
  printTable(os, ranked);
  os << "\nchosen: " << describe(best.config) << "\n  " << getCommand(best)
     << "\n";
  if (request.nodeSizeChanged)
    os << "  (plan-device.json: {\"base\": \"" << request.device.name
       << "\", \"gpus_per_node\": " << request.device.gpusPerNode << "})\n";
  if (request.explain && candidates.size() > 1)
    printExplanation(os, best, candidates[1]);
  return success();
}

LogicalResult tgc::planParallelism(ModuleOp module, const PlanRequest &request,
                                   llvm::raw_ostream &os) {
  if (request.devices < 1)
    return reportError("--devices must be a positive integer");
  std::unique_ptr<PlanModel> model =
      recognizePlanModel(module, request.modelFile);
  PlanSearch search(*module.getContext(), *model, request);
  return search.run(os);
}
