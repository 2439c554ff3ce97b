//===- InitializerRoles.cpp - parameters and buffers of a graph -----------===//
//
// Exporters write a module's buffers as initializers like its weights: the
// causal-mask table, rotary tables, inv_freq, ALiBi slopes. Trained, they
// would silently change the model (a mask that stops masking), so a float
// initializer is a parameter only when nothing says otherwise. In order:
// the --parameter/--buffer globs, the user's --parameters list, the
// exported program's signature that the dynamo exporter records (its
// parameters and buffers, and the parameters its optimizer folded into an
// initializer: a position embedding gathered at arange(T) is that
// parameter's rows, not a constant), then the graph's evidence: an
// initializer that only makes masks, one that holds
// mask fill values, one named as PyTorch names buffers, and one the
// exporter made up (an undotted name among state-dict names) that feeds no
// weight operand.
//
//===----------------------------------------------------------------------===//

#include "InitializerRoles.h"
#include "ParameterProvenance.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

static bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

/// Ops that move or reinterpret data: a value keeps its role through them.
static bool isView(StringRef opType) {
  static const llvm::StringSet<> views = {"Identity", "Slice",     "Reshape",
                                          "Squeeze",  "Unsqueeze", "Transpose",
                                          "Expand",   "Cast",      "CastLike"};
  return views.contains(opType);
}

/// Adds to `names` what `graph` reads that neither it nor `defined` (the
/// names of the subgraphs it is in) defines.
static void collectOuterNames(const onnx::GraphProto &graph,
                              llvm::StringSet<> defined,
                              llvm::StringSet<> &seen,
                              llvm::SmallVector<std::string> &names) {
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    defined.insert(initializer.name());
  auto read = [&](const std::string &name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second)
      names.push_back(name);
  };
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      read(input);
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectOuterNames(attribute.g(), defined, seen, names);
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        collectOuterNames(subgraph, defined, seen, names);
    }
    for (const std::string &output : node.output())
      defined.insert(output);
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    read(output.name());
}

llvm::SmallVector<std::string>
onnx_import::getOuterNames(const onnx::NodeProto &node) {
  llvm::SmallVector<std::string> names;
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto &attribute : node.attribute()) {
    if (attribute.has_g())
      collectOuterNames(attribute.g(), {}, seen, names);
    for (const onnx::GraphProto &subgraph : attribute.graphs())
      collectOuterNames(subgraph, {}, seen, names);
  }
  return names;
}

llvm::Expected<InitializerRoles>
InitializerRoles::create(const onnx::GraphProto &graph,
                         const ONNXImportOptions &options) {
  InitializerRoles roles;
  // The consumers of each name: every node of the graph and of its
  // subgraphs (a BatchNormalization in an If's branch reads its statistics
  // there), and an If, Loop or Scan also of what its subgraphs read.
  std::function<void(const onnx::GraphProto &)> addConsumers =
      [&](const onnx::GraphProto &body) {
        for (const onnx::NodeProto &node : body.node()) {
          llvm::SmallVector<std::string> inputs(node.input().begin(),
                                                node.input().end());
          llvm::append_range(inputs, getOuterNames(node));
          for (const std::string &input : inputs)
            if (!input.empty() && (roles.consumers[input].empty() ||
                                   roles.consumers[input].back() != &node))
              roles.consumers[input].push_back(&node);
          for (const onnx::AttributeProto &attribute : node.attribute()) {
            if (attribute.has_g())
              addConsumers(attribute.g());
            for (const onnx::GraphProto &subgraph : attribute.graphs())
              addConsumers(subgraph);
          }
        }
      };
  addConsumers(graph);
  for (const onnx::ValueInfoProto &output : graph.output())
    roles.graphOutputs.insert(output.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    roles.hasStateDictNames |= StringRef(initializer.name()).contains('.');
  // The dynamo exporter's record of the exported program: lines
  // "p_wpe_weight: PARAMETER target='wpe.weight'", "b_inv_freq: BUFFER
  // target='inv_freq' persistent=False".
  roles.torchScriptExport =
      llvm::none_of(graph.node(), hasScopeMetadata) &&
      llvm::any_of(graph.node(), [](const onnx::NodeProto &node) {
        return StringRef(node.name()).starts_with("/") ||
               llvm::any_of(node.input(), [](const std::string &input) {
                 return StringRef(input).starts_with("onnx::");
               });
      });
  if (std::optional<std::string> signature =
          getMetadata(graph, kGraphMetadataField,
                      "pkg.torch.export.ExportedProgram.graph_signature")) {
    SmallVector<StringRef> lines;
    StringRef(*signature).split(lines, '\n');
    for (StringRef line : lines) {
      auto [kind, rest] = line.split(": ").second.split(' ');
      StringRef target = rest.split("target='").second.split('\'').first;
      if (target.empty())
        continue;
      if (kind == "PARAMETER" &&
          roles.signatureParameters.insert(target).second)
        roles.signatureParameterList.push_back(target.str());
      else if (kind == "BUFFER")
        roles.signatureBuffers.insert(target);
    }
  }
  // The optimizer's folded_from of each folded value.
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (std::optional<std::string> folded =
            getMetadata(info, kValueInfoMetadataField,
                        "pkg.onnxscript.optimizer.folded_from"))
      if (std::optional<SmallVector<std::string>> sources =
              parseStringList(*folded))
        roles.foldedFrom[info.name()] = std::move(*sources);
  if (options.parameterNames) {
    roles.parameterNames.emplace();
    for (const std::string &name : *options.parameterNames)
      roles.parameterNames->insert(name);
  }
  for (auto [globs, patterns] :
       {std::make_pair(&options.parameterGlobs, &roles.parameterGlobs),
        std::make_pair(&options.bufferGlobs, &roles.bufferGlobs)})
    for (const std::string &glob : *globs) {
      llvm::Expected<llvm::GlobPattern> pattern =
          llvm::GlobPattern::create(glob);
      if (!pattern)
        return pattern.takeError();
      patterns->push_back({glob, std::move(*pattern)});
    }
  return roles;
}

/// Whether every use of `value` ends in an operand that carries no gradient
/// (a comparison, Where's condition, a Shape), possibly through views. Such
/// a value is a mask: training could never change it.
bool InitializerRoles::onlyMakesMasks(StringRef value,
                                      llvm::StringSet<> &visiting) const {
  if (graphOutputs.contains(value) || !visiting.insert(value).second)
    return !graphOutputs.contains(value);
  auto it = consumers.find(value);
  if (it == consumers.end())
    return false;
  static const llvm::StringSet<> masks = {
      "Equal",          "Less",  "LessOrEqual", "Greater",
      "GreaterOrEqual", "Shape", "Size",        "IsNaN"};
  for (const onnx::NodeProto *node : it->second) {
    if (!isDefaultDomain(*node))
      return false;
    if (masks.contains(node->op_type()))
      continue;
    if (node->op_type() == "Where") {
      for (int i = 1; i < node->input_size(); ++i)
        if (node->input(i) == value)
          return false;
      continue;
    }
    if (!isView(node->op_type()))
      return false;
    // Shape operands (a Reshape's shape, Slice's starts) carry no gradient.
    if (!node->input_size() || node->input(0) != value)
      continue;
    for (const std::string &output : node->output())
      if (!output.empty() && !onlyMakesMasks(output, visiting))
        return false;
  }
  return true;
}

/// Calls `read(node, input)` for each BatchNormalization reading `name`,
/// directly or through Identity nodes (exporters put them in front of
/// shared initializers), as its input `input`.
template <typename Read>
static void forEachBatchNormRead(
    const llvm::StringMap<llvm::SmallVector<const onnx::NodeProto *>>
        &consumers,
    StringRef name, Read read, unsigned depth = 0) {
  auto it = consumers.find(name);
  if (it == consumers.end() || depth > 16)
    return;
  for (const onnx::NodeProto *node : it->second) {
    if (!isDefaultDomain(*node))
      continue;
    if (node->op_type() == "Identity" && node->output_size() == 1 &&
        !node->output(0).empty())
      forEachBatchNormRead(consumers, node->output(0), read, depth + 1);
    if (node->op_type() != "BatchNormalization")
      continue;
    for (int input = 3; input <= 4 && input < node->input_size(); ++input)
      if (node->input(input) == name)
        read(*node, input);
  }
}

bool InitializerRoles::isBatchNormStatistic(StringRef name) const {
  // Read as something else too (an exporter deduplicated a fresh norm's
  // weight with a running variance, both ones, behind an Identity): the
  // initializer is what its own readers make it, each Identity's output
  // is decided on its own. (An If, Loop or Scan reads it in its
  // subgraphs' nodes, which are consumers too.)
  if (auto it = consumers.find(name); it != consumers.end())
    for (const onnx::NodeProto *node : it->second) {
      if (node->op_type() == "Identity")
        continue;
      bool batchNorm = node->op_type() == "BatchNormalization";
      for (auto [i, input] : llvm::enumerate(node->input()))
        if (input == name && !(batchNorm && (i == 3 || i == 4)))
          return false;
    }
  bool found = false;
  forEachBatchNormRead(consumers, name,
                       [&](const onnx::NodeProto &, int) { found = true; });
  return found;
}

bool onnx_import::isTrainingBatchNorm(const onnx::NodeProto &node,
                                      int64_t opset) {
  auto intAttribute = [&](StringRef name, int64_t defaultValue) {
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (attribute.name() == name &&
          attribute.type() == onnx::AttributeProto::INT)
        return attribute.i();
    return defaultValue;
  };
  // The dynamo exporter's inference-mode node of a training-mode batch norm.
  if (getRecoveredBatchNormMomentum(node))
    return true;
  if (opset >= 14)
    return intAttribute("training_mode", 0) != 0;
  if (opset >= 7)
    return node.output_size() > 1;
  return intAttribute("is_test", 0) == 0;
}

unsigned InitializerRoles::getRunningStatistic(StringRef name,
                                               int64_t opset) const {
  unsigned statistic = 0;
  forEachBatchNormRead(
      consumers, name, [&](const onnx::NodeProto &node, int input) {
        // Updated when the node outputs its new value, or trains as its
        // FX node says (which updates it without an output).
        int output = input - 2;
        if (!statistic && isTrainingBatchNorm(node, opset) &&
            ((node.output_size() > output && !node.output(output).empty()) ||
             getRecoveredBatchNormMomentum(node)))
          statistic = output;
      });
  return statistic;
}

bool InitializerRoles::isOnlyReadAs(
    StringRef name, const llvm::StringMap<uint32_t> &operands) const {
  auto it = consumers.find(name);
  return it != consumers.end() &&
         llvm::all_of(it->second, [&](const onnx::NodeProto *node) {
           auto mask = operands.find(node->op_type());
           if (!isDefaultDomain(*node) || mask == operands.end())
             return false;
           for (int i = 0; i < node->input_size(); ++i)
             if (node->input(i) == name &&
                 (i >= 32 || !(mask->second >> i & 1)))
               return false;
           return true;
         });
}

bool InitializerRoles::isImportTimeOperand(StringRef name) const {
  // The inputs of these ops (bit i: input i) computed with at import.
  static const llvm::StringMap<uint32_t> operands = {
      {"Range", 0b111}, {"Resize", 0b110}, {"Upsample", 0b10},
      {"NonZero", 0b1}, {"Unique", 0b1},   {"RoiAlign", 0b10}};
  return isOnlyReadAs(name, operands);
}

bool InitializerRoles::isQuantizationScale(StringRef name) const {
  // The scales of the quantization ops (bit i: input i).
  static const llvm::StringMap<uint32_t> operands = {
      {"QuantizeLinear", 0b10},
      {"DequantizeLinear", 0b10},
      {"QLinearMatMul", 0b1010010},
      {"QLinearConv", 0b1010010}};
  return isOnlyReadAs(name, operands);
}

bool InitializerRoles::feedsWeightOperand(StringRef name) const {
  auto it = consumers.find(name);
  if (it == consumers.end())
    return false;
  for (const onnx::NodeProto *node : it->second) {
    if (!isDefaultDomain(*node))
      return false;
    StringRef op = node->op_type();
    if (op == "MatMul" || op == "Einsum" ||
        (op == "Gemm" && (node->input_size() < 3 || node->input(2) != name)) ||
        (op == "Gather" && node->input(0) == name))
      continue;
    // A recurrent layer's weights, biases and peepholes.
    if ((op == "RNN" || op == "GRU" || op == "LSTM") &&
        llvm::all_of(llvm::enumerate(node->input()), [&](auto input) {
          return input.value() != name ||
                 (input.index() >= 1 && input.index() <= 3) ||
                 input.index() == 7;
        }))
      continue;
    if (!isView(op) || node->input_size() == 0 || node->input(0) != name ||
        node->output_size() != 1 || !feedsWeightOperand(node->output(0)))
      return false;
  }
  return true;
}

/// The names PyTorch modules give their buffers (the last component of a
/// state-dict name).
static bool isBufferName(StringRef name, const Tensor &value) {
  static const llvm::StringSet<> buffers = {
      "inv_freq",     "original_inv_freq", "cos_cached",         "sin_cached",
      "_cos_cached",  "_sin_cached",       "freqs_cis",          "masked_bias",
      "causal_mask",  "position_ids",      "token_type_ids",     "alibi",
      "running_mean", "running_var",       "num_batches_tracked"};
  StringRef last = name.rsplit('.').second;
  if (last.empty())
    last = name;
  // GPT-2's attention mask is its `attn.bias`, a [1, 1, n, n] table of
  // ones and zeros; the bias of a layer has rank 1, or the shape it
  // broadcasts in (ConvNeXt V2's GRN bias, [1, 1, 1, C]).
  ArrayRef<int64_t> shape = value.getShape();
  if (last == "bias" && shape.size() >= 3 && shape.end()[-1] > 1 &&
      shape.end()[-1] == shape.end()[-2]) {
    for (int64_t i = 0, e = value.getNumElements(); i < e; ++i)
      if (double v = value.getAsDouble(i); v != 0 && v != 1)
        return false;
    return true;
  }
  return buffers.contains(last);
}

bool InitializerRoles::matchesGlob(StringRef name) const {
  for (const auto *globs : {&parameterGlobs, &bufferGlobs})
    for (const auto &[glob, pattern] : *globs)
      if (pattern.match(name))
        return true;
  return false;
}

std::optional<std::string>
InitializerRoles::getBufferReason(StringRef name, const Tensor &value) const {
  for (const auto &[glob, pattern] : parameterGlobs)
    if (pattern.match(name))
      return std::nullopt;
  for (const auto &[glob, pattern] : bufferGlobs)
    if (pattern.match(name))
      return "matches --buffer " + glob;
  if (parameterNames) {
    if (parameterNames->contains(name))
      return std::nullopt;
    // What the optimizer folded from listed parameters alone (GPT-2's
    // position table gathered at arange(T)) trains in their place, as
    // without a list.
    llvm::SmallVector<std::string> folded = getFoldedParameters(name);
    if (!folded.empty() && llvm::all_of(folded, [&](const std::string &source) {
          return parameterNames->contains(source);
        }))
      return std::nullopt;
    return std::string("not in --parameters");
  }
  // What the exported program says (a dynamo export).
  if (std::optional<bool> parameter = isSignatureParameter(name))
    return *parameter
               ? std::nullopt
               : std::optional<std::string>("a buffer of the exported program");
  if (!getFoldedParameters(name).empty())
    return std::nullopt;
  // Folded, in a graph whose signature lists the parameters, from values
  // none of which is one: a table computed from constants (`eye(n).expand`,
  // a causal mask), which PyTorch never trains. The optimizer's folded_from
  // accumulates along chained folds, so a parameter anywhere upstream would
  // be named.
  if (!signatureParameters.empty() && foldedFrom.count(name))
    return std::string("folded by the exporter from constants alone (its "
                       "folded_from names no parameter of the exported "
                       "program)");
  llvm::StringSet<> visiting;
  if (onlyMakesMasks(name, visiting))
    return std::string("only feeds comparisons (a mask)");
  for (int64_t i = 0, e = value.getNumElements(); i < e; ++i) {
    double v = value.getAsDouble(i);
    // Not NaN: no mask fills with it (a NaN weight is a corrupt model,
    // which tgc train refuses by name).
    if (std::isinf(v) || std::abs(v) >= 1e30)
      return "holds a mask fill value (" + llvm::formatv("{0:e}", v).str() +
             ")";
  }
  if (isBatchNormStatistic(name))
    return std::string("a BatchNormalization's mean or variance");
  if (isImportTimeOperand(name))
    return std::string("read only as an operand the import computes with "
                       "(Resize's scales or roi, Range's bounds, the input "
                       "of NonZero or Unique, RoiAlign's regions)");
  if (isQuantizationScale(name))
    return std::string("read only as a quantization scale (observers set "
                       "it; no gradient reaches it through the integers)");
  if (isBufferName(name, value))
    return std::string("named as a buffer");
  if (isMadeUpName(name) && !feedsWeightOperand(name))
    return std::string("no state-dict name (the exporter computed it) and "
                       "feeds no matmul or embedding");
  return std::nullopt;
}

llvm::SmallVector<std::string>
InitializerRoles::getFoldedBuffers(StringRef name) const {
  llvm::SmallVector<std::string> buffers;
  auto it = foldedFrom.find(name);
  if (it != foldedFrom.end())
    for (const std::string &source : it->second)
      if (signatureBuffers.contains(source))
        buffers.push_back(source);
  return buffers;
}

llvm::SmallVector<std::string>
InitializerRoles::getFoldedOps(StringRef name) const {
  llvm::SmallVector<std::string> ops;
  auto it = foldedFrom.find(name);
  if (it == foldedFrom.end())
    return ops;
  auto add = [&](StringRef value) {
    if (value.starts_with("val_") || value.contains('.') ||
        signatureParameters.contains(value) || signatureBuffers.contains(value))
      return;
    ops.push_back(getFxNodeOp(value).str());
  };
  add(name);
  for (const std::string &source : it->second)
    add(source);
  return ops;
}

llvm::SmallVector<std::string>
InitializerRoles::getFoldedParameters(StringRef name) const {
  llvm::SmallVector<std::string> parameters;
  auto it = foldedFrom.find(name);
  if (it == foldedFrom.end())
    return parameters;
  for (const std::string &source : it->second)
    if (signatureParameters.contains(source))
      parameters.push_back(source);
  return parameters;
}

std::optional<bool>
InitializerRoles::isSignatureParameter(StringRef name) const {
  if (signatureParameters.contains(name))
    return true;
  if (signatureBuffers.contains(name))
    return false;
  return std::nullopt;
}
