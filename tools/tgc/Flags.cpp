//===- Flags.cpp - the flags every tgc subcommand shares ------------------===//

#include "Flags.h"

#include <memory>

using namespace tgc;
namespace cl = llvm::cl;

// Function-local statics: flags of other files name these subcommands while
// they are constructed, in no particular order.
cl::OptionCategory &cli::getCategory() {
  static cl::OptionCategory category("tgc options");
  return category;
}
cl::SubCommand &cli::getCompileCommand() {
  static cl::SubCommand command(
      "compile", "Build, optimize and plan a training step, and write it");
  return command;
}
cl::SubCommand &cli::getReportCommand() {
  static cl::SubCommand command(
      "report", "FLOPs and bytes of every op, estimated step time, simulated "
                "peak memory: of the step `tgc compile` writes with the same "
                "options, or of a compiled step as it is");
  return command;
}
cl::SubCommand &cli::getRunCommand() {
  static cl::SubCommand command(
      "run", "Run a function on the CPU reference interpreter");
  return command;
}
cl::SubCommand &cli::getTrainCommand() {
  static cl::SubCommand command(
      "train", "Train a model on the CPU interpreter (autodiff + optimizer)");
  return command;
}
cl::SubCommand &cli::getImportCommand() {
  static cl::SubCommand command("import",
                                "Import an ONNX model: write OUT.mlir and its "
                                "parameters to OUT.safetensors");
  return command;
}
cl::SubCommand &cli::getPlanCommand() {
  static cl::SubCommand command(
      "plan", "Choose the parallel configuration of a training step: mesh "
              "(dp x pp x tp), ZeRO stage, sequence and expert parallelism, "
              "micro-batches, pipeline schedule, recompute");
  return command;
}
cl::SubCommand &cli::getGradcheckCommand() {
  static cl::SubCommand command(
      "gradcheck",
      "Check tg-autodiff's gradients against finite differences (f64)");
  return command;
}

#define TGC_CAT cl::cat(cli::getCategory())
#define TGC_PLANNING_SUBS                                                      \
  cl::sub(cli::getCompileCommand()), cl::sub(cli::getReportCommand())
#define TGC_STEP_SUBS TGC_PLANNING_SUBS, cl::sub(cli::getTrainCommand())
#define TGC_MODEL_SUBS                                                         \
  TGC_STEP_SUBS, cl::sub(cli::getImportCommand()),                             \
      cl::sub(cli::getGradcheckCommand()), cl::sub(cli::getPlanCommand())

static cl::opt<std::string>
    inputFile(cl::Positional, cl::Required,
              cl::desc("<input .mlir or .onnx, or - for stdin>"),
              TGC_MODEL_SUBS, TGC_CAT);
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file for the module (default: stdout); the parameters "
             "of an ONNX model go next to it (OUT.safetensors)"),
    cl::value_desc("file"), cl::init("-"), cl::sub(cli::getCompileCommand()),
    cl::sub(cli::getImportCommand()), TGC_CAT);
static cl::opt<std::string> entryName(
    "entry",
    cl::desc("The function to run or report (default: the only one, or "
             "main)"),
    cl::value_desc("name"), cl::sub(cli::getRunCommand()),
    cl::sub(cli::getGradcheckCommand()), cl::sub(cli::getTrainCommand()),
    cl::sub(cli::getReportCommand()), TGC_CAT);

// ONNX import, the same for every subcommand that reads a model.
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("ONNX: the shape of graph input NAME, binding its symbolic "
             "dimensions there and in every other input (e.g. ids=4x128; "
             "repeatable, or comma-separated)"),
    cl::value_desc("NAME=DIMS"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);
static cl::list<std::string> inputValues(
    "input-value",
    cl::desc("ONNX: fix graph input NAME to the value in FILE (.npy, or an "
             "ONNX TensorProto .pb): it becomes a constant, as an operand tg "
             "needs at import must be (a Reshape's shape, TopK's k, an If's "
             "condition picking one branch, a Loop's trip count...)"),
    cl::value_desc("NAME=FILE"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);
static cl::opt<std::string> lossOutput(
    "loss-output",
    cl::desc("ONNX: the scalar graph output that is the loss (default: an "
             "output named 'loss')"),
    cl::value_desc("NAME"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);
static cl::opt<bool> explainAttention(
    "explain-attention",
    cl::desc("ONNX: a remark per reason tg-raise leaves an attention "
             "decomposed (a mask or op tg.attention does not take, an "
             "intermediate used elsewhere, shapes), at the first such "
             "attention"),
    TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()), TGC_CAT);
static cl::opt<std::string> addLoss(
    "add-loss",
    cl::desc("ONNX: add a mean cross-entropy of graph output LOGITS against "
             "a new 'label' argument, as the loss"),
    cl::value_desc("cross_entropy:LOGITS"), TGC_MODEL_SUBS,
    cl::sub(cli::getRunCommand()), TGC_CAT);

static cl::opt<std::string> parametersFile(
    "parameters",
    cl::desc("ONNX: the file of parameter names, one per line (e.g. from "
             "PyTorch's model.named_parameters()): the other float "
             "initializers are buffers, imported as constants; merged and "
             "folded parameters are recovered against it (without it, "
             "against a dynamo export's signature)"),
    cl::value_desc("FILE"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);
static cl::list<std::string> parameterGlobs(
    "parameter",
    cl::desc("ONNX: initializers matching GLOB are parameters, whatever the "
             "graph suggests (repeatable)"),
    cl::value_desc("GLOB"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);
static cl::list<std::string> bufferGlobs(
    "buffer",
    cl::desc("ONNX: initializers matching GLOB are buffers (constants, never "
             "trained; repeatable)"),
    cl::value_desc("GLOB"), TGC_MODEL_SUBS, cl::sub(cli::getRunCommand()),
    TGC_CAT);

static cl::opt<std::string>
    deviceName("device",
               cl::desc("The GPU to plan for: A100-40GB, A100-80GB, "
                        "H100-SXM (default), H200, B200"),
               cl::value_desc("name"), TGC_PLANNING_SUBS,
               cl::sub(cli::getPlanCommand()), TGC_CAT);
static cl::opt<std::string> deviceFile(
    "device-file",
    cl::desc(
        "Read the GPU's figures from a JSON file (see docs/cost-model.md)"),
    cl::value_desc("FILE.json"), TGC_PLANNING_SUBS,
    cl::sub(cli::getPlanCommand()), TGC_CAT);
static cl::opt<bool> dumpPipeline(
    "dump-pass-pipeline",
    cl::desc("Print the pass pipeline (textual form) to stderr before it "
             "runs"),
    TGC_STEP_SUBS, TGC_CAT);

//===--- The pipeline's knobs: TrainingPipelineOptions, flag by flag ------===//

static cl::opt<bool> trainingStep(
    "train",
    cl::desc("Build the training step: autodiff and --optimizer (adamw "
             "unless given)"),
    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<unsigned>
    lora("lora",
         cl::desc("Add LoRA adapters of rank R to the matmul weights of "
                  "--lora-targets and train only them (tg-lora; default 0: "
                  "none)"),
         cl::value_desc("R"), cl::init(0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double> loraAlpha(
    "lora-alpha",
    cl::desc("LoRA alpha: the adapters' output is scaled by A / R (default: "
             "R, a scaling of 1)"),
    cl::value_desc("A"), cl::init(0.0), TGC_STEP_SUBS, TGC_CAT);
static cl::list<std::string> loraTargets(
    "lora-targets",
    cl::desc("With --lora: the weights to adapt, by tg.name (globs, "
             "comma-separated; default: every parameter used only as a "
             "matmul weight)"),
    cl::value_desc("glob"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::opt<PrecisionPolicy> precision(
    "precision",
    cl::desc("Mixed precision; parameters, gradients and optimizer state "
             "stay f32"),
    cl::value_desc("policy"), getPrecisionPolicyValues(),
    cl::init(PrecisionPolicy::FP32), TGC_STEP_SUBS,
    cl::sub(cli::getPlanCommand()), TGC_CAT);
static cl::list<std::string>
    keepFp32("keep-fp32",
             cl::desc("With --precision: op names that always run in f32 "
                      "(comma-separated, e.g. tg.attention)"),
             cl::value_desc("op"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::list<std::string> keepFp32Params(
    "keep-fp32-params",
    cl::desc("With --precision: the ops reading these parameters (globs, "
             "comma-separated) run in f32"),
    cl::value_desc("glob"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double> initScale(
    "init-scale",
    cl::desc("--precision fp16: the initial loss scale (default 65536)"),
    cl::init(65536.0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned> growthInterval(
    "growth-interval",
    cl::desc("--precision fp16: clean steps before the loss scale doubles "
             "(default 2000)"),
    cl::init(2000), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned> amaxHistory(
    "amax-history",
    cl::desc("--precision fp8: steps of amax history per tensor (default 16)"),
    cl::init(16), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned> fp8Margin(
    "fp8-margin",
    cl::desc("--precision fp8: scales leave 2^margin of headroom (default 0)"),
    cl::init(0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<bool>
    autodiff("autodiff",
             cl::desc("Differentiate: also return the gradient of every param"),
             TGC_PLANNING_SUBS, TGC_CAT);
static cl::list<std::string>
    freeze("freeze",
           cl::desc("Do not train the parameters whose tg.name matches (globs, "
                    "comma-separated)"),
           cl::value_desc("glob"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::list<std::string> trainable(
    "trainable",
    cl::desc("Train only the parameters whose tg.name matches (globs, "
             "comma-separated)"),
    cl::value_desc("glob"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned> microBatches(
    "micro-batches",
    cl::desc("Accumulate gradients over N micro-batches: the graph is written "
             "for one, the step takes N times its batch (default 1)"),
    cl::value_desc("N"), cl::init(1), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<OptimizerKind> optimizer(
    "optimizer",
    cl::desc("Update the params with this optimizer (implies --autodiff; "
             "tgc train and --train: adamw unless given)"),
    cl::value_desc("kind"), getOptimizerKindValues(),
    cl::init(OptimizerKind::None), TGC_STEP_SUBS,
    cl::sub(cli::getPlanCommand()), TGC_CAT);
static cl::opt<double> lr("lr",
                          cl::desc("Learning rate of the optimizer (the "
                                   "default of its lr argument; 1e-3)"),
                          cl::init(1e-3), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double> momentum("momentum",
                                cl::desc("SGD momentum (default 0)"),
                                cl::init(0.0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<bool> nesterov("nesterov",
                              cl::desc("SGD: Nesterov momentum (with "
                                       "--momentum)"),
                              TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double>
    beta1("beta1",
          cl::desc("AdamW and LAMB: the first moment's decay (default 0.9)"),
          cl::init(0.9), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double>
    beta2("beta2",
          cl::desc("AdamW and LAMB: the second moment's decay (default 0.999; "
                   "GPT-2 trainers use 0.95)"),
          cl::init(0.999), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double>
    eps("eps",
        cl::desc("AdamW and LAMB: the denominator's epsilon (default 1e-8)"),
        cl::init(1e-8), TGC_STEP_SUBS, TGC_CAT);
static cl::list<std::string> noDecay(
    "no-decay",
    cl::desc("The parameters whose tg.name matches get no weight decay "
             "(globs, comma-separated; default *bias,*norm*,*ln_*: biases "
             "and normalization weights)"),
    cl::value_desc("glob"), cl::CommaSeparated, TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("Weight decay (default 0)"),
                                   cl::init(0.0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<double>
    clipNorm("clip-norm",
             cl::desc("Clip the global gradient norm (default 0: none)"),
             cl::init(0.0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<bool> noCanonicalize("no-canonicalize",
                                    cl::desc("Skip canonicalization and CSE"),
                                    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Recompute activations in the backward so the simulated peak "
             "fits BYTES (suffixes KiB, MiB, GiB, KB, MB, GB) or `auto` (the "
             "device's memory minus 5%); tg-recompute"),
    cl::value_desc("BYTES|auto"), TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<RecomputeStrategy> recompute(
    "recompute",
    cl::desc("How to choose what to recompute; with --memory-budget, a fixed "
             "strategy must fit it"),
    cl::value_desc("strategy"), getRecomputeStrategyValues(),
    cl::init(RecomputeStrategy::DP), TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool> explain(
    "explain",
    cl::desc("A remark per activation (kept or recomputed, bytes, recompute "
             "time) and a summary of tg-recompute; with a pp axis, a remark "
             "per pipeline stage (its layers and modelled time)"),
    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool> noFuse(
    "no-fuse",
    cl::desc("Do not group ops into fusion regions (skip tg-fuse); the "
             "report then shows the unfused kernels, bytes and step time"),
    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool> noFuseOptimizer(
    "no-fuse-optimizer",
    cl::desc("Keep each optimizer update (and master-weight cast) its own "
             "kernel instead of multi-tensor kernels grouped by gradient "
             "readiness"),
    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool>
    noSchedule("no-schedule",
               cl::desc("Keep the op order (skip tg-schedule, which reorders "
                        "ops to lower the peak memory)"),
               TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool> noOverlap(
    "no-overlap",
    cl::desc("Schedule for memory only: collectives are not ordered to "
             "overlap compute; the report then shows the step as the memory "
             "order leaves it"),
    TGC_PLANNING_SUBS, TGC_CAT);
static cl::opt<bool>
    noMemoryPlan("no-memory-plan",
                 cl::desc("Skip tg-memory-plan (no arena offsets on the ops)"),
                 TGC_PLANNING_SUBS, TGC_CAT);

static cl::opt<std::string>
    mesh("mesh",
         cl::desc("Devices as a mesh of named axes, the last innermost "
                  "(dp=8,pp=2,tp=4): dp splits the batch, tp the layers "
                  "(Megatron's layout), pp the model into pipeline stages "
                  "(docs/pipeline.md); the step becomes one device's program "
                  "with its collectives"),
         cl::value_desc("AXIS=N,..."), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned>
    zero("zero",
         cl::desc("ZeRO stage over the dp axis: 1 shards the optimizer "
                  "state, 2 also the gradients, 3 also the parameters"),
         cl::init(0), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<unsigned> gradBucketMB(
    "grad-bucket-mb",
    cl::desc("Merge the gradient all-reduces of a partitioned step into "
             "buckets of about this many MiB, in the order gradients are "
             "computed (0: one all-reduce per gradient; default 4)"),
    cl::init(4), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<std::string> scatterBuckets(
    "scatter-buckets",
    cl::desc("ZeRO-2/3's gradient reduce-scatters in buckets too, each "
             "gradient copied in: auto (when the step's communication "
             "outweighs its kernels; the default), always or never"),
    cl::value_desc("auto|always|never"), cl::init("auto"), TGC_STEP_SUBS,
    TGC_CAT);
static cl::opt<std::string> gatherBuckets(
    "gather-buckets",
    cl::desc("ZeRO's parameter all-gathers in buckets, each parameter copied "
             "out: auto (when the step's communication outweighs its "
             "kernels; the default), always or never"),
    cl::value_desc("auto|always|never"), cl::init("auto"), TGC_STEP_SUBS,
    TGC_CAT);
static cl::opt<bool> sequenceParallel(
    "sequence-parallel",
    cl::desc("With a tp axis: split the residual stream (the norms' inputs) "
             "on the sequence dimension over tp"),
    TGC_STEP_SUBS, TGC_CAT);
static cl::opt<bool> expertParallel(
    "expert-parallel",
    cl::desc("With a dp axis: split every mixture-of-experts stack on its "
             "experts over dp (expert parallelism: each device holds E/dp "
             "experts, the routed rows are gathered before them)"),
    TGC_STEP_SUBS, TGC_CAT);
static cl::opt<std::string> pipelineSchedule(
    "pipeline-schedule",
    cl::desc("With a pp mesh axis: the order of the pipeline's units: gpipe "
             "(every forward, then every backward), 1f1b (the default) or "
             "interleaved (Megatron's interleaved 1F1B over --virtual-stages "
             "model chunks per device)"),
    cl::value_desc("gpipe|1f1b|interleaved"), cl::init("1f1b"), TGC_STEP_SUBS,
    TGC_CAT);
static cl::opt<unsigned> virtualStages(
    "virtual-stages",
    cl::desc("With --pipeline-schedule interleaved: model chunks per pipeline "
             "device (default 2)"),
    cl::value_desc("V"), cl::init(0), TGC_STEP_SUBS, TGC_CAT);
static cl::list<std::string> shard(
    "shard",
    cl::desc("A user sharding of the arguments whose name matches: "
             "NAME_GLOB=AXES,AXES,... (one entry per dimension; a+b for two "
             "axes, empty for a whole dimension); wins over the presets"),
    cl::value_desc("GLOB=AXES,..."), TGC_STEP_SUBS, TGC_CAT);
static cl::opt<bool> explainSharding(
    "explain-sharding",
    cl::desc("A remark per sharding conflict and per inserted collective "
             "(value, op, why, bytes) and a table of the arguments' "
             "shardings"),
    TGC_STEP_SUBS, TGC_CAT);

llvm::StringRef cli::getInputFile() { return inputFile; }
llvm::StringRef cli::getEntryName() { return entryName; }
llvm::StringRef cli::getOutputFile() { return outputFile; }
bool cli::shouldDumpPipeline() { return dumpPipeline; }
bool cli::wantsTrainingStep() { return trainingStep; }
std::optional<PrecisionPolicy> cli::getGivenPrecision() {
  if (!precision.getNumOccurrences())
    return std::nullopt;
  return precision.getValue();
}
OptimizerKind cli::getOptimizer() { return optimizer; }

ModelImportFlags cli::getImportFlags() {
  return {
      std::vector<std::string>(inputShapes.begin(), inputShapes.end()),
      lossOutput,
      addLoss,
      parametersFile,
      std::vector<std::string>(parameterGlobs.begin(), parameterGlobs.end()),
      std::vector<std::string>(bufferGlobs.begin(), bufferGlobs.end()),
      std::vector<std::string>(inputValues.begin(), inputValues.end()),
      explainAttention};
}

mlir::FailureOr<std::optional<DeviceSpec>> cli::getChosenDevice() {
  if (deviceName.empty() && deviceFile.empty())
    return std::optional<DeviceSpec>();
  llvm::Expected<DeviceSpec> device = resolveDevice(deviceName, deviceFile);
  if (!device)
    return reportError(llvm::toString(device.takeError()));
  return std::optional<DeviceSpec>(*device);
}

mlir::LogicalResult cli::fillPipelineOptions(TrainingPipelineOptions &options,
                                             bool trainingStep) {
  if (!lora &&
      (loraAlpha.getNumOccurrences() || loraTargets.getNumOccurrences()))
    return reportError(
        std::string("--") +
        (loraAlpha.getNumOccurrences() ? "lora-alpha" : "lora-targets") +
        " needs --lora");
  options.lora = lora;
  options.loraAlpha = loraAlpha;
  options.loraTargets = loraTargets;
  options.precision = precision;
  options.keepFp32 = keepFp32;
  options.keepFp32Params = keepFp32Params;
  options.initScale = initScale;
  options.growthInterval = growthInterval;
  options.amaxHistory = amaxHistory;
  options.fp8Margin = fp8Margin;
  options.autodiff = autodiff;
  options.freeze = freeze;
  options.trainable = trainable;
  options.microBatches = microBatches;
  options.optimizer = optimizer;
  if (trainingStep && optimizer == OptimizerKind::None)
    options.optimizer = OptimizerKind::AdamW;
  options.lr = lr;
  options.momentum = momentum;
  options.weightDecay = weightDecay;
  options.nesterov = nesterov;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = eps;
  options.noDecay = noDecay;
  options.clipNorm = clipNorm;
  options.noCanonicalize = noCanonicalize;
  options.memoryBudget = memoryBudget;
  options.recompute = recompute;
  options.explain = explain;
  options.noFuse = noFuse;
  options.noFuseOptimizer = noFuseOptimizer;
  options.noSchedule = noSchedule;
  options.noOverlap = noOverlap;
  options.noMemoryPlan = noMemoryPlan;
  options.mesh = mesh;
  options.zero = zero;
  options.gradBucketMB = gradBucketMB;
  options.scatterBuckets = scatterBuckets;
  options.gatherBuckets = gatherBuckets;
  options.sequenceParallel = sequenceParallel;
  options.expertParallel = expertParallel;
  options.pipelineSchedule = pipelineSchedule;
  options.virtualStages = virtualStages;
  options.explainSharding = explainSharding;
  options.shard = shard;
  if (llvm::Error error = validatePipelineOptions(options))
    return reportError(llvm::toString(std::move(error)));
  return mlir::success();
}

bool cli::anyPipelineFlagGiven() {
  // std::addressof: a cl::list overloads & to give its values.
  const cl::Option *flags[] = {
      std::addressof(trainingStep),
      std::addressof(precision),
      std::addressof(keepFp32),
      std::addressof(keepFp32Params),
      std::addressof(initScale),
      std::addressof(growthInterval),
      std::addressof(amaxHistory),
      std::addressof(fp8Margin),
      std::addressof(autodiff),
      std::addressof(freeze),
      std::addressof(trainable),
      std::addressof(microBatches),
      std::addressof(optimizer),
      std::addressof(lr),
      std::addressof(momentum),
      std::addressof(weightDecay),
      std::addressof(nesterov),
      std::addressof(beta1),
      std::addressof(beta2),
      std::addressof(eps),
      std::addressof(noDecay),
      std::addressof(clipNorm),
      std::addressof(noCanonicalize),
      std::addressof(memoryBudget),
      std::addressof(recompute),
      std::addressof(explain),
      std::addressof(noFuse),
      std::addressof(noFuseOptimizer),
      std::addressof(noSchedule),
      std::addressof(noOverlap),
      std::addressof(noMemoryPlan),
      std::addressof(mesh),
      std::addressof(zero),
      std::addressof(gradBucketMB),
      std::addressof(scatterBuckets),
      std::addressof(gatherBuckets),
      std::addressof(sequenceParallel),
      std::addressof(expertParallel),
      std::addressof(pipelineSchedule),
      std::addressof(virtualStages),
      std::addressof(explainSharding),
      std::addressof(shard),
      std::addressof(lora),
      std::addressof(loraAlpha),
      std::addressof(loraTargets),
  };
  return llvm::any_of(
      flags, [](const cl::Option *flag) { return flag->getNumOccurrences(); });
}
