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
#include "tgc/Driver/Compile.h"
#include "tgc/Driver/Model.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <map>
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
  if (tp > 1)
    axes.push_back("tp=" + std::to_string(tp));
  return llvm::join(axes, ",");
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
  if (microBatches > 1)
    flags.push_back("--micro-batches=" + std::to_string(microBatches));
  if (recompute)
    flags.push_back("--memory-budget=" + budget.str());
  return flags;
}

namespace {

/// A compiled point: the step of `layers` layers over `microBatches`
/// micro-batches of one configuration.
struct PointKey {
  int64_t dp, tp, zero, sp, microBatchSize, layers, microBatches, budget;
  bool operator<(const PointKey &other) const {
    return std::tie(dp, tp, zero, sp, microBatchSize, layers, microBatches,
                    budget) < std::tie(other.dp, other.tp, other.zero, other.sp,
                                       other.microBatchSize, other.layers,
                                       other.microBatches, other.budget);
  }
};

/// Why a configuration was left out, for the message when none fits.
struct Rejection {
  std::string reason;
  int64_t peakBytes = 0;
};

class PlanSearch {
public:
  PlanSearch(MLIRContext &context, const PlanModel &model,
             const PlanRequest &request)
      : context(context), model(model), request(request),
        budget(getAutoBudget(request.device)) {
    options.optimizer = request.optimizer;
    options.precision = request.precision;
  }

  LogicalResult run(llvm::raw_ostream &os);

private:
  /// The figures of one compiled point; failure with `error` set when the
  /// pipeline refuses it.
  FailureOr<PlanFigures> compilePoint(const ParallelConfig &config,
                                      int64_t layers, int64_t microBatches,
                                      int64_t pointBudget);
  /// The figures of `config` for the whole model, extrapolated from points
  /// (exact when the points are the model); `savingsPerLayer` > 0 compiles
  /// every point with a budget that many bytes per layer below its peak.
  FailureOr<PlanFigures> evaluate(const ParallelConfig &config,
                                  int64_t savingsPerLayer, bool &exact);
  /// The ops of the training step of the whole model (one micro-batch),
  /// which tg-microbatch repeats.
  FailureOr<int64_t> countStepOps();
  /// Bytes one device keeps across steps at least (params, gradients,
  /// optimizer state; every tensor assumed split over tp).
  int64_t getPersistentLowerBound(const ParallelConfig &config) const;
  void reject(const ParallelConfig &config, std::string reason,
              int64_t peak = 0);
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
  std::map<PointKey, FailureOr<PlanFigures>> points;
  std::string lastError;
  std::vector<PlanCandidate> candidates;
  std::vector<Rejection> rejections;
  unsigned compiled = 0, pruned = 0;
  std::optional<int64_t> stepOps;
};

} // namespace

std::string PlanSearch::describe(const ParallelConfig &config) const {
  std::string text = config.getMesh().empty() ? "1 device" : config.getMesh();
  if (config.dp > 1)
    text += " zero=" + std::to_string(config.zero);
  if (config.sequenceParallel)
    text += " sp";
  text += llvm::formatv(" micro-batches {0}x{1}", config.microBatches,
                        config.microBatchSize)
              .str();
  return text;
}

void PlanSearch::reject(const ParallelConfig &config, std::string reason,
                        int64_t peak) {
  rejections.push_back({describe(config) + ": " + reason, peak});
}

FailureOr<PlanFigures> PlanSearch::compilePoint(const ParallelConfig &config,
                                                int64_t layers,
                                                int64_t microBatches,
                                                int64_t pointBudget) {
  PointKey key{config.dp,
               config.tp,
               config.zero,
               config.sequenceParallel,
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
  FailureOr<OwningOpRef<ModuleOp>> module =
      model.build(context, layers, config.dp * config.microBatchSize, seq);
  if (failed(module))
    return finish(failure());
  TrainingPipelineOptions pointOptions;
  pointOptions.copyOptionValuesFrom(options);
  pointOptions.mesh = config.getMesh();
  pointOptions.zero = config.dp > 1 ? config.zero : 0;
  pointOptions.sequenceParallel = config.sequenceParallel;
  pointOptions.microBatches = microBatches;
  if (pointBudget > 0)
    pointOptions.memoryBudget = std::to_string(pointBudget);
  CompileRequest compile;
  compile.device = request.device;
  auto entry = llvm::to_vector((**module).getOps<func::FuncOp>());
  if (entry.size() != 1) {
    error = "the model must hold one function";
    return finish(failure());
  }
  std::string name = entry.front().getSymName().str();
  if (failed(compileModule(**module, pointOptions, compile)))
    return finish(failure());
  auto function = (**module).lookupSymbol<func::FuncOp>(name);
  FailureOr<StepReport> report = StepReport::compute(function, request.device);
  if (failed(report))
    return finish(failure());
  PlanFigures figures;
  figures.peakBytes = report->memory.peakBytes;
  figures.keptBytes =
      report->memory.persistentBytes + report->memory.activationBytes;
  figures.stepTime = report->time.total.time;
  figures.mfu = report->time.mfu;
  figures.exposedCommunication = report->time.communication.exposedTime;
  figures.flops = static_cast<double>(report->time.total.flops);
  return finish(figures);
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
  figures.exposedCommunication =
      linear([](const PlanFigures &p) { return p.exposedCommunication; });
  figures.flops = linear([](const PlanFigures &p) { return p.flops; });
  // MFU is FLOPs over time at the peak rate the points ran at.
  double rate =
      f[0][0].mfu > 0 ? f[0][0].flops / (f[0][0].stepTime * f[0][0].mfu) : 0.0;
  figures.mfu = rate > 0 ? figures.flops / (figures.stepTime * rate) : 0.0;
  return figures;
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

int64_t
PlanSearch::getPersistentLowerBound(const ParallelConfig &config) const {
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
  double bytes = copy / (config.zero >= 3 ? dp : 1) +
                 master / (config.zero >= 1 ? dp : 1) +
                 copy / (config.zero >= 2 ? dp : 1) +
                 state / (config.zero >= 1 ? dp : 1);
  return static_cast<int64_t>(double(model.getParams()) * bytes /
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

static std::string formatBytes(int64_t bytes) {
  if (bytes < (int64_t(1) << 30))
    return llvm::formatv("{0:F1} MiB", double(bytes) / double(1 << 20)).str();
  return llvm::formatv("{0:F1} GiB", double(bytes) / double(1 << 30)).str();
}

void PlanSearch::printTable(llvm::raw_ostream &os,
                            ArrayRef<PlanCandidate> ranked) const {
  os << llvm::format("  %-4s %-14s %-4s %-3s %-12s %-9s %11s %11s %6s %11s\n",
                     "rank", "mesh", "zero", "sp", "micro-batch", "recompute",
                     "peak", "step", "MFU", "exposed");
  for (auto [index, candidate] : llvm::enumerate(ranked)) {
    const ParallelConfig &c = candidate.config;
    std::string mesh = c.getMesh().empty() ? "-" : c.getMesh();
    std::string micro =
        llvm::formatv("{0} x {1}", c.microBatches, c.microBatchSize).str();
    os << llvm::format(
        "  %-4u %-14s %-4s %-3s %-12s %-9s %11s %9.4g s %5.1f%% %9.4g s%s\n",
        unsigned(index + 1), mesh.c_str(),
        c.dp > 1 ? std::to_string(c.zero).c_str() : "-",
        c.sequenceParallel ? "on" : "off", micro.c_str(),
        c.recompute ? "to budget" : "off",
        formatBytes(candidate.figures.peakBytes).c_str(),
        candidate.figures.stepTime, 100 * candidate.figures.mfu,
        candidate.figures.exposedCommunication, candidate.exact ? "" : " ~");
  }
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
  double compute = (b.stepTime - b.exposedCommunication) -
                   (a.stepTime - a.exposedCommunication);
  if (communication >= compute)
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
  os << llvm::format("; its peak is %s against %s",
                     formatBytes(b.peakBytes).c_str(),
                     formatBytes(a.peakBytes).c_str());
  os << "\n";
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

  // The meshes: dp x tp = devices, tp inside a node.
  struct Mesh {
    int64_t dp, tp;
  };
  SmallVector<Mesh> meshes;
  int64_t node = request.device.gpusPerNode;
  for (int64_t tp = 1; tp <= request.devices && tp <= node; ++tp) {
    if (request.devices % tp || node % tp)
      continue;
    int64_t dp = request.devices / tp;
    if (globalBatch % dp) {
      reject({dp, tp}, llvm::formatv("the global batch of {0} is not "
                                     "divisible by dp = {1}",
                                     globalBatch, dp));
      continue;
    }
    if (!model.canReshape() && model.getBatch() % dp) {
      reject({dp, tp},
             llvm::formatv("the model's batch of {0} (one micro-batch over "
                           "dp) is not divisible by dp = {1}",
                           model.getBatch(), dp));
      continue;
    }
    meshes.push_back({dp, tp});
  }
  FailureOr<int64_t> ops = countStepOps();

  for (const Mesh &mesh : meshes) {
    SmallVector<int64_t> sizes;
    if (model.canReshape()) {
      for (int64_t b = 1; b <= globalBatch / mesh.dp; ++b)
        if ((globalBatch / mesh.dp) % b == 0)
          sizes.push_back(b);
    } else {
      sizes.push_back(model.getBatch() / mesh.dp);
    }
    for (unsigned zero = 0; zero <= (mesh.dp > 1 ? 3u : 0u); ++zero)
      for (bool sp : {false, true}) {
        if (sp && mesh.tp == 1)
          continue;
        ParallelConfig base{mesh.dp, mesh.tp, zero, sp};
        if (int64_t bound = getPersistentLowerBound(base); bound > budget) {
          ++pruned;
          reject(base,
                 "the model states alone (params, gradients, optimizer "
                 "state at this ZeRO stage) need at least " +
                     formatBytes(bound) + " per device",
                 bound);
          continue;
        }
        std::optional<double> previous;
        for (int64_t b : sizes) {
          ParallelConfig config = base;
          config.microBatchSize = b;
          config.microBatches = globalBatch / (mesh.dp * b);
          if (succeeded(ops) && *ops * config.microBatches > kMaxUnrolledOps) {
            ++pruned;
            reject(config,
                   llvm::formatv("{0} micro-batches of a {1}-op step "
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
          if (figures->peakBytes > budget) {
            // Recompute the same share of every layer to the budget.
            int64_t over = figures->peakBytes - budget;
            int64_t layers = model.getLayers();
            int64_t savings = (over + layers - 1) / layers;
            PlanFigures unbounded = *figures;
            config.recompute = true;
            figures = evaluate(config, savings, exact);
            if (failed(figures) || figures->peakBytes > budget) {
              reject(config,
                     "peaks at " + formatBytes(unbounded.peakBytes) +
                         " without recompute, and recompute cannot bring "
                         "it under the budget",
                     unbounded.peakBytes);
              break;
            }
          }
          candidates.push_back({config, *figures, exact});
          // Larger micro-batches only pay off while the step gets shorter.
          if (previous && figures->stepTime > *previous)
            break;
          previous = figures->stepTime;
        }
      }
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
  llvm::stable_sort(candidates, byStepTime);
  // The finalists small enough are compiled whole: exact figures, and the
  // extrapolation's error on them.
  double peakError = 0, timeError = 0;
  unsigned checked = 0;
  for (PlanCandidate &candidate : llvm::make_range(
           candidates.begin(),
           candidates.begin() + std::min<size_t>(candidates.size(),
                                                 std::max(1u, request.top)))) {
    if (candidate.exact || failed(ops) ||
        *ops * candidate.config.microBatches > kMaxExactOps)
      continue;
    FailureOr<PlanFigures> whole = compilePoint(
        candidate.config, model.getLayers(), candidate.config.microBatches,
        candidate.config.recompute ? budget : 0);
    if (failed(whole))
      continue;
    ++checked;
    peakError =
        std::max(peakError, std::abs(double(candidate.figures.peakBytes) /
                                         double(whole->peakBytes) -
                                     1));
    timeError = std::max(
        timeError, std::abs(candidate.figures.stepTime / whole->stepTime - 1));
    candidate.figures = *whole;
    candidate.exact = true;
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
          {"tp", c.tp},
          {"zero", c.zero},
          {"sequence_parallel", c.sequenceParallel},
          {"micro_batch_size", c.microBatchSize},
          {"micro_batches", c.microBatches},
          {"recompute", c.recompute},
          {"peak_bytes", candidate.figures.peakBytes},
          {"step_time_s", candidate.figures.stepTime},
          {"mfu", candidate.figures.mfu},
          {"exposed_communication_s", candidate.figures.exposedCommunication},
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
                      "device, step time modelled with communication "
                      "exposed; no pipeline parallelism (pp) yet\n",
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
