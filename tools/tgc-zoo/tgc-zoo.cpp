//===- tgc-zoo.cpp - write the graphs of well-known models as tg MLIR -----===//
//
// `tgc-zoo MODEL [--preset P] [options] [--summary] [-o FILE]`: builds the
// forward pass and loss of GPT-2, Llama or an MLP with the tg ops, verifies
// it and writes it atomically; --summary prints the parameters instead.
//
//===----------------------------------------------------------------------===//

#include "tgc/InitAll.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/OutputFile.h"
#include "tgc/Zoo/ModelZoo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace tgc::zoo;
namespace cl = llvm::cl;

static cl::OptionCategory zooCategory("tgc-zoo options");

static cl::opt<std::string> modelName(cl::Positional,
                                      cl::desc("<model: gpt2, llama or mlp>"),
                                      cl::cat(zooCategory));
static cl::opt<std::string>
    presetName("preset",
               cl::desc("Start from a named configuration (gpt2: default "
                        "124m; llama: default 7b; see above)"),
               cl::value_desc("name"), cl::cat(zooCategory));

static cl::opt<int64_t> layers("layers",
                               cl::desc("Transformer blocks (gpt2, llama), or "
                                        "linear layers (mlp; default 2)"),
                               cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    hidden("hidden",
           cl::desc("Model width (gpt2, llama), or width of the hidden "
                    "layers (mlp; default 256)"),
           cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    heads("heads",
          cl::desc("Attention heads; must divide --hidden (gpt2, llama)"),
          cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    kvHeads("kv-heads",
            cl::desc("Key/value heads; must divide --heads, fewer is "
                     "grouped-query attention (llama; default: the preset's, "
                     "or --heads where the preset has as many)"),
            cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    intermediate("intermediate", cl::desc("Width of the SwiGLU MLP (llama)"),
                 cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    positions("positions",
              cl::desc("Rows of the position table wpe, n_positions "
                       "(gpt2; default 1024)"),
              cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t> vocab("vocab",
                              cl::desc("Vocabulary size (gpt2, llama)"),
                              cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t>
    seq("seq", cl::desc("Sequence length (gpt2, llama; default 64)"),
        cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Batch size (default 2; mlp: 32)"),
                              cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t> inputSize("input-size",
                                  cl::desc("Input features (mlp; default 784)"),
                                  cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<int64_t> classes("classes",
                                cl::desc("Output classes (mlp; default 10)"),
                                cl::value_desc("N"), cl::cat(zooCategory));
static cl::opt<MLPActivation> activation(
    "activation", cl::desc("Activation of the hidden layers (mlp)"),
    cl::values(clEnumValN(MLPActivation::ReLU, "relu", "ReLU (default)"),
               clEnumValN(MLPActivation::GELU, "gelu", "GELU, exact (erf)")),
    cl::cat(zooCategory));
static cl::opt<double>
    dropout("dropout",
            cl::desc("Dropout rate in [0, 1); above 0 adds a dropout_seed "
                     "argument (gpt2, mlp; default 0)"),
            cl::value_desc("rate"), cl::cat(zooCategory));
enum class AttentionForm { Fused, Eager };
static cl::opt<AttentionForm> attention(
    "attention",
    cl::desc("How attention is written (gpt2, llama): fused, one "
             "tg.attention (the default; gpt2 with --dropout drops its "
             "probabilities inside it), or eager, Hugging Face's eager "
             "path as separate ops: scores matmul, scale, causal mask "
             "(select), softmax, dropout of the probabilities (gpt2 with "
             "--dropout, the same mask), matmul with the values"),
    cl::values(clEnumValN(AttentionForm::Fused, "fused", "one tg.attention"),
               clEnumValN(AttentionForm::Eager, "eager", "separate ops")),
    cl::init(AttentionForm::Fused), cl::cat(zooCategory));
static cl::opt<double>
    normEpsilon("norm-eps",
                cl::desc("Epsilon of the LayerNorms (gpt2; default 1e-5) or "
                         "RMSNorms (llama; default 1e-5)"),
                cl::value_desc("eps"), cl::cat(zooCategory));
static cl::opt<double>
    ropeTheta("rope-theta",
              cl::desc("Base of the rotary frequencies (llama; default 10000)"),
              cl::value_desc("theta"), cl::cat(zooCategory));

static cl::opt<int64_t>
    loraRank("lora",
             cl::desc("Add LoRA adapters of rank R to the targeted linear "
                      "layers: P.lora_A.weight [in, R], P.lora_B.weight "
                      "[R, out] (gpt2, llama)"),
             cl::value_desc("R"), cl::cat(zooCategory));
static cl::opt<std::string> loraTargets(
    "lora-targets",
    cl::desc("Comma-separated globs over the weight names of the linear "
             "layers that get adapters (gpt2: *c_attn.weight; llama: "
             "*q_proj.weight,*v_proj.weight)"),
    cl::value_desc("GLOBS"), cl::cat(zooCategory));
static cl::opt<double>
    loraAlpha("lora-alpha",
              cl::desc("LoRA alpha: the adapters' output is scaled by "
                       "alpha / R (default R: scaling 1)"),
              cl::value_desc("alpha"), cl::cat(zooCategory));

static cl::opt<std::string>
    functionName("name",
                 cl::desc("Name of the function (default: the model's name)"),
                 cl::value_desc("symbol"), cl::cat(zooCategory));
static cl::opt<bool>
    summary("summary",
            cl::desc("Print the configuration and a table of the parameters "
                     "by group with their total; write the graph only if -o "
                     "is given too"),
            cl::cat(zooCategory));
static cl::opt<std::string> outputFilename(
    "o", cl::desc("Write the graph to FILE, atomically (default: stdout)"),
    cl::value_desc("FILE"), cl::init("-"), cl::cat(zooCategory));

/// The options that describe a model, each of which applies to some
/// models only.
static cl::Option *const kModelOptions[] = {
    &presetName,   &layers,    &hidden,      &heads,     &kvHeads,
    &intermediate, &positions, &vocab,       &seq,       &batch,
    &inputSize,    &classes,   &activation,  &dropout,   &normEpsilon,
    &ropeTheta,    &loraRank,  &loraTargets, &loraAlpha, &attention};

static void printError(const llvm::Twine &message) {
  llvm::errs() << "tgc-zoo: error: " << message << "\n";
}

/// Fails on a size option given for a model it does not apply to.
static LogicalResult checkOptionsApply(StringRef model,
                                       ArrayRef<cl::Option *> applicable) {
  for (cl::Option *option : kModelOptions) {
    if (!option->getNumOccurrences() || llvm::is_contained(applicable, option))
      continue;
    std::string names = llvm::join(
        llvm::map_range(applicable,
                        [](cl::Option *o) { return "--" + o->ArgStr.str(); }),
        " ");
    printError("--" + option->ArgStr + " does not apply to " + model +
               " (its options: " + names + ")");
    return failure();
  }
  return success();
}

template <typename T, typename FieldT>
static void applyOverride(const cl::opt<T> &option, FieldT &field) {
  if (option.getNumOccurrences())
    field = option;
}

/// Reads --lora, --lora-targets and --lora-alpha into `lora`; fails on
/// --lora-targets or --lora-alpha without --lora.
static LogicalResult applyLoraOptions(StringRef model, LoraConfig &lora) {
  if (!loraRank.getNumOccurrences()) {
    for (cl::Option *option :
         std::initializer_list<cl::Option *>{&loraTargets, &loraAlpha})
      if (option->getNumOccurrences()) {
        printError(model + ": --" + option->ArgStr + " needs --lora");
        return failure();
      }
    return success();
  }
  lora.rank = loraRank;
  if (lora.rank < 1) {
    printError(model + ": --lora must be between 1 and " +
               llvm::Twine(kMaxSize) + ", got " + llvm::Twine(lora.rank));
    return failure();
  }
  if (loraAlpha.getNumOccurrences()) {
    if (!(loraAlpha > 0.0) || !std::isfinite(loraAlpha)) {
      std::string value;
      llvm::raw_string_ostream(value) << llvm::format("%g", double(loraAlpha));
      printError(model + ": --lora-alpha must be a positive number, got " +
                 value);
      return failure();
    }
    lora.alpha = loraAlpha;
  }
  if (loraTargets.getNumOccurrences()) {
    SmallVector<StringRef> globs;
    StringRef(loraTargets)
        .split(globs, ',', /*MaxSplit=*/-1,
               /*KeepEmpty=*/false);
    if (globs.empty()) {
      printError(model + ": --lora-targets names no glob");
      return failure();
    }
    for (StringRef glob : globs)
      lora.targets.push_back(glob.trim().str());
  }
  return success();
}

/// The preset --preset names, else `defaultName`; null after an error.
template <typename ConfigT>
static const Preset<ConfigT> *findPreset(StringRef model,
                                         ArrayRef<Preset<ConfigT>> presets,
                                         StringRef defaultName) {
  StringRef name =
      presetName.getNumOccurrences() ? StringRef(presetName) : defaultName;
  if (const Preset<ConfigT> *preset = lookupPreset(presets, name))
    return preset;
  std::string names = llvm::join(
      llvm::map_range(presets,
                      [](const Preset<ConfigT> &p) { return p.name.str(); }),
      ", ");
  printError("unknown " + model + " preset '" + name + "'; presets: " + names);
  return nullptr;
}

/// Writes `path` (`-` is stdout) with `write` through a tgc::OutputFile: an
/// error never leaves a partial file behind nor changes an existing one.
static LogicalResult
writeAtomically(StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (llvm::Error error = tgc::writeOutput(path, write)) {
    printError(llvm::toString(std::move(error)));
    return failure();
  }
  return success();
}

/// Adds the LoRA adapters of a configuration (gpt2, llama) to `module`.
template <typename ConfigT>
static LogicalResult addAdapters(ModuleOp module, const ConfigT &config) {
  if constexpr (std::is_same_v<ConfigT, MLPConfig>)
    return success();
  else
    return config.lora.isEnabled()
               ? addLoraAdapters(module, config.lora, getLoraTargets(config))
               : success();
}

/// Writes the summary and/or the graph of a checked configuration.
template <typename ConfigT>
static LogicalResult emit(StringRef model, StringRef presetLabel,
                          const ConfigT &config) {
  std::string title = (model + presetLabel).str();
  bool needsGraph = outputFilename.getNumOccurrences() || !summary;
  bool hasLora = false;
  if constexpr (!std::is_same_v<ConfigT, MLPConfig>)
    hasLora = config.lora.isEnabled();

  DialectRegistry registry;
  tgc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  // A graph that fails to verify names the op, not the whole module.
  llvm::SourceMgr sourceMgr;
  tgc::ConciseDiagnosticHandler diagnostics(sourceMgr, &context);
  // The summary needs no graph, unless tg-lora is to say what it adds.
  OwningOpRef<ModuleOp> module;
  if (needsGraph || hasLora) {
    std::string name = functionName.getNumOccurrences()
                           ? functionName.getValue()
                           : model.str();
    FailureOr<OwningOpRef<ModuleOp>> built = buildModel(context, config, name);
    if (failed(built)) {
      printError("the " + model + " graph failed to verify (a bug of tgc-zoo)");
      return failure();
    }
    module = std::move(*built);
    // tg-lora's diagnostics are about the options, not about a place in a
    // file: `tgc-zoo: error: llama: tg-lora: ...`.
    ScopedDiagnosticHandler loraDiagnostics(&context, [&](Diagnostic &diag) {
      llvm::errs() << "tgc-zoo: "
                   << (diag.getSeverity() == DiagnosticSeverity::Error
                           ? "error"
                           : "remark")
                   << ": " << model << ": " << diag.str() << "\n";
      return success();
    });
    if (failed(addAdapters(*module, config)))
      return failure();
  }
  SmallVector<ParameterSpec> params =
      hasLora ? getBuiltParameters(*module) : getParameters(config);
  if (summary) {
    llvm::outs() << "model: " << title << "\n"
                 << "config: " << describeConfig(config) << "\n";
    printParameterSummary(llvm::outs(), params);
    llvm::outs().flush();
    if (!needsGraph)
      return success();
  }

  return writeAtomically(outputFilename, [&](llvm::raw_ostream &os) {
    os << "// " << title
       << ": forward pass and mean cross-entropy loss, written by tgc-zoo.\n"
       << "// " << describeConfig(config) << "\n"
       << "// " << countParameters(params) << " parameters";
    int64_t adapters = 0;
    for (const ParameterSpec &param : params)
      if (isLoraParameter(param.name))
        adapters += param.getNumElements();
    if (adapters)
      os << " (" << adapters
         << " in LoRA adapters, the only trainable ones: the base model is "
            "frozen)";
    os << ".\n";
    module->print(os);
    os << "\n";
  });
}

static LogicalResult runGPT2() {
  if (failed(checkOptionsApply("gpt2", {&presetName, &layers, &hidden, &heads,
                                        &positions, &vocab, &seq, &batch,
                                        &dropout, &normEpsilon, &loraRank,
                                        &loraTargets, &loraAlpha, &attention})))
    return failure();
  const Preset<GPT2Config> *preset =
      findPreset<GPT2Config>("gpt2", getGPT2Presets(), "124m");
  if (!preset)
    return failure();
  GPT2Config config = preset->config;
  applyOverride(layers, config.layers);
  applyOverride(hidden, config.hidden);
  applyOverride(heads, config.heads);
  applyOverride(positions, config.positions);
  applyOverride(vocab, config.vocab);
  applyOverride(seq, config.seq);
  applyOverride(batch, config.batch);
  applyOverride(dropout, config.dropout);
  applyOverride(normEpsilon, config.layerNormEpsilon);
  config.eagerAttention = attention == AttentionForm::Eager;
  if (failed(applyLoraOptions("gpt2", config.lora)))
    return failure();
  if (llvm::Error error = verifyConfig(config)) {
    printError("gpt2: " + llvm::toString(std::move(error)));
    return failure();
  }
  return emit("gpt2", (" (preset " + preset->name + ")").str(), config);
}

static LogicalResult runLlama() {
  if (failed(checkOptionsApply("llama",
                               {&presetName, &layers, &hidden, &heads, &kvHeads,
                                &intermediate, &vocab, &seq, &batch,
                                &normEpsilon, &ropeTheta, &loraRank,
                                &loraTargets, &loraAlpha, &attention})))
    return failure();
  const Preset<LlamaConfig> *preset =
      findPreset<LlamaConfig>("llama", getLlamaPresets(), "7b");
  if (!preset)
    return failure();
  LlamaConfig config = preset->config;
  applyOverride(layers, config.layers);
  applyOverride(hidden, config.hidden);
  // A preset without grouped-query attention keeps none when --heads
  // changes; a grouped one keeps its kv heads.
  if (heads.getNumOccurrences() && config.kvHeads == config.heads)
    config.kvHeads = heads;
  applyOverride(heads, config.heads);
  applyOverride(kvHeads, config.kvHeads);
  applyOverride(intermediate, config.intermediate);
  applyOverride(vocab, config.vocab);
  applyOverride(seq, config.seq);
  applyOverride(batch, config.batch);
  applyOverride(normEpsilon, config.rmsNormEpsilon);
  applyOverride(ropeTheta, config.ropeTheta);
  config.eagerAttention = attention == AttentionForm::Eager;
  if (failed(applyLoraOptions("llama", config.lora)))
    return failure();
  if (llvm::Error error = verifyConfig(config)) {
    printError("llama: " + llvm::toString(std::move(error)));
    return failure();
  }
  return emit("llama", (" (preset " + preset->name + ")").str(), config);
}

static LogicalResult runMLP() {
  if (failed(checkOptionsApply("mlp", {&layers, &hidden, &inputSize, &classes,
                                       &batch, &activation, &dropout})))
    return failure();
  MLPConfig config;
  applyOverride(layers, config.layers);
  applyOverride(hidden, config.hidden);
  applyOverride(inputSize, config.inputSize);
  applyOverride(classes, config.classes);
  applyOverride(batch, config.batch);
  applyOverride(activation, config.activation);
  applyOverride(dropout, config.dropout);
  if (llvm::Error error = verifyConfig(config)) {
    printError("mlp: " + llvm::toString(std::move(error)));
    return failure();
  }
  return emit("mlp", "", config);
}

/// The --help overview, with the presets from the tables.
static std::string getOverview() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tgc-zoo: write the forward pass and loss of a well-known model as tg "
        "MLIR\n\n"
        "  tgc-zoo MODEL [--preset P] [options] [--summary] [-o FILE.mlir]\n\n"
        "The graph is one func.func: input_ids/inputs (role input), labels "
        "(role label),\n"
        "dropout_seed (role hyper, only with --dropout > 0), then every "
        "parameter\n"
        "(role param, Hugging Face-style tg.name), returning the mean "
        "cross-entropy\n"
        "(role loss). Weights are [in, out] matrices used as x @ W. The "
        "graph is\n"
        "verified before it is written; on any error nothing is written and "
        "the exit\n"
        "status is 1. Options set on top of the preset override it.\n\n"
        "Models:\n"
        "  gpt2   GPT-2 (GPT2LMHeadModel): learned positions, pre-LayerNorm "
        "blocks,\n"
        "         GELU (tanh) MLP, causal attention, dropout, LM head tied to "
        "wte\n"
        "         --preset (default 124m):\n";
  for (const Preset<GPT2Config> &preset : getGPT2Presets())
    os << "           " << llvm::left_justify(preset.name, 5) << " "
       << preset.description << "\n";
  os << "  llama  Llama (LlamaForCausalLM): RMSNorm, rotary embeddings, "
        "grouped-query\n"
        "         attention, SwiGLU MLP, untied lm_head, no biases\n"
        "         --preset (default 7b):\n";
  for (const Preset<LlamaConfig> &preset : getLlamaPresets())
    os << "           " << llvm::left_justify(preset.name, 5) << " "
       << preset.description << "\n";
  os << "  mlp    classifier of --layers linear layers (fc1, fc2, ...) with "
        "ReLU or GELU\n\n"
        "Examples:\n"
        "  tgc-zoo gpt2 --preset 1.5b --summary\n"
        "  tgc-zoo gpt2 --layers 2 --hidden 64 --heads 4 --seq 16 --vocab 128 "
        "| tgc run - --random-inputs 0\n"
        "  tgc-zoo llama --preset 70b --seq 4096 --batch 1 -o llama-70b.mlir\n"
        "  tgc-zoo mlp --layers 3 --activation gelu -o mlp.mlir\n"
        "  tgc-zoo llama --preset tiny --lora 4 -o lora.mlir && tgc train "
        "lora.mlir --trainable '*lora_*'\n\n"
        "See docs/zoo.md for the graphs, names and layouts.\n";
  return text;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tgc::reportFileSizeLimitAsError();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tgc-zoo " << TGC_VERSION << " (MLIR " << LLVM_VERSION_STRING
       << ")\n";
  });
  cl::HideUnrelatedOptions(zooCategory);
  std::string overview = getOverview();
  cl::ParseCommandLineOptions(argc, argv, overview);

  if (functionName.getNumOccurrences() &&
      !llvm::Regex("^[A-Za-z_][A-Za-z0-9_$.]*$").match(functionName)) {
    printError("--name '" + functionName +
               "' is not a symbol name ([A-Za-z_][A-Za-z0-9_$.]*)");
    return 1;
  }
  if (summary && outputFilename.getNumOccurrences() && outputFilename == "-") {
    printError("--summary prints to stdout; give -o a file for the graph");
    return 1;
  }

  LogicalResult result = failure();
  if (modelName == "gpt2")
    result = runGPT2();
  else if (modelName == "llama")
    result = runLlama();
  else if (modelName == "mlp")
    result = runMLP();
  else if (modelName.empty())
    printError("expected a model: gpt2, llama or mlp (see 'tgc-zoo --help')");
  else
    printError("unknown model '" + modelName +
               "'; models: gpt2, llama, mlp (see 'tgc-zoo --help')");
  return succeeded(result) ? 0 : 1;
}
