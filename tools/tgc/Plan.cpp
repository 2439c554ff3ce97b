//===- Plan.cpp - tgc plan: the parallel configuration, chosen ------------===//
//
// Parses the plan's own flags and calls planParallelism (lib/Driver/Plan.cpp).
//
//===----------------------------------------------------------------------===//

#include "Flags.h"

#include "tgc/Driver/Plan.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

#define TGC_PLAN cl::sub(cli::getPlanCommand()), cl::cat(cli::getCategory())

// Integers are read as text so that a bad value gets a message naming the
// flag and the value, not cl's.
static cl::opt<std::string>
    devices("devices",
            cl::desc("The GPUs to plan for (required): the mesh is dp x pp "
                     "x tp over them, tp inside a node, pp dividing the "
                     "layers"),
            cl::value_desc("N"), TGC_PLAN);
static cl::opt<std::string> nodesOf(
    "nodes-of",
    cl::desc("GPUs per node (NVLink domain), which bounds tp (default: the "
             "device's, 8 for the built-in ones)"),
    cl::value_desc("G"), TGC_PLAN);
static cl::opt<std::string> globalBatch(
    "global-batch",
    cl::desc("Sequences per step = dp x micro-batch size x micro-batches "
             "(default: the model's batch)"),
    cl::value_desc("B"), TGC_PLAN);
static cl::opt<std::string>
    seq("seq",
        cl::desc("Sequence length (default: the model's; another needs a "
                 "tgc-zoo model, which the plan rebuilds)"),
        cl::value_desc("S"), TGC_PLAN);
static cl::opt<std::string>
    pipelineStages("pp",
                   cl::desc("Pipeline stages: plan only meshes with this pp "
                            "(default: searched; 1: no pipeline)"),
                   cl::value_desc("P"), TGC_PLAN);
static cl::opt<std::string> top("top",
                                cl::desc("Plans in the table (default 5)"),
                                cl::value_desc("K"), cl::init("5"), TGC_PLAN);
static cl::opt<bool> explainPlan(
    "explain",
    cl::desc("Say why the runner-up lost: step time, communication, memory"),
    TGC_PLAN);
static cl::opt<bool> json("json", cl::desc("Print the plans as JSON"),
                          TGC_PLAN);

/// `text` as a positive integer, else an error naming `flag`.
static FailureOr<int64_t> parsePositive(StringRef flag, StringRef text,
                                        int64_t limit) {
  int64_t value = 0;
  if (text.getAsInteger(10, value) || value < 1 || value > limit) {
    (void)reportError("--" + flag + " must be a positive integer (at most " +
                      Twine(limit) + "), got '" + text + "'");
    return failure();
  }
  return value;
}

LogicalResult cli::runPlan(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  constexpr int64_t kMaxDevices = int64_t(1) << 20;
  PlanRequest request;
  if (!devices.getNumOccurrences())
    return reportError("tgc plan needs --devices N");
  FailureOr<int64_t> count = parsePositive("devices", devices, kMaxDevices);
  if (failed(count))
    return failure();
  request.devices = *count;
  FailureOr<std::optional<DeviceSpec>> device = getChosenDevice();
  if (failed(device))
    return failure();
  if (*device) {
    request.device = **device;
  } else {
    llvm::Expected<DeviceSpec> fallback = resolveDevice("", "");
    if (!fallback)
      return reportError(llvm::toString(fallback.takeError()));
    request.device = *fallback;
  }
  if (nodesOf.getNumOccurrences()) {
    FailureOr<int64_t> node = parsePositive("nodes-of", nodesOf, 65536);
    if (failed(node))
      return failure();
    request.nodeSizeChanged = *node != request.device.gpusPerNode;
    request.device.gpusPerNode = *node;
  }
  for (auto [flag, text, target] :
       {std::tuple("global-batch", &globalBatch, &request.globalBatch),
        std::tuple("seq", &seq, &request.seq),
        std::tuple("pp", &pipelineStages, &request.pp)}) {
    if (!text->getNumOccurrences())
      continue;
    FailureOr<int64_t> value = parsePositive(flag, *text, int64_t(1) << 30);
    if (failed(value))
      return failure();
    *target = *value;
  }
  FailureOr<int64_t> topPlans = parsePositive("top", top, 1000);
  if (failed(topPlans))
    return failure();
  request.top = *topPlans;
  request.precision = getGivenPrecision().value_or(PrecisionPolicy::BF16);
  request.optimizer = getOptimizer() == OptimizerKind::None
                          ? OptimizerKind::AdamW
                          : getOptimizer();
  request.explain = explainPlan;
  request.json = json;
  request.modelFile = getInputFile().str();
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  return planParallelism(*model->module, request, llvm::outs());
}
