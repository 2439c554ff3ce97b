//===- LocalFunctions.cpp - model-local ONNX functions, inlined -----------===//
//
// A call of a local function becomes the function's nodes, renamed per call,
// before the importer reads the graph: the roles of the initializers a
// function reads, the batch statistics of a BatchNormalization inside one
// and every converter then see plain nodes.
//
//===----------------------------------------------------------------------===//

#include "LocalFunctions.h"

#include "tgc/Support/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <google/protobuf/unknown_field_set.h>

#include <functional>

using namespace tgc;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// How deep functions may call functions (a function that calls itself
/// would never end), and the most nodes inlining may make in all.
constexpr unsigned kMaxCallDepth = 16;
constexpr int64_t kMaxInlinedNodes = int64_t(1) << 20;

/// Fields newer than the onnx 1.12 protos tgc is built with, read from the
/// unknown fields protobuf keeps: FunctionProto's `attribute_proto` (the
/// attributes' defaults, IR 9) and `overload` (IR 10), NodeProto's
/// `overload`.
constexpr int kFunctionAttributeProtoField = 11;
constexpr int kFunctionOverloadField = 13;
constexpr int kNodeOverloadField = 8;

/// The length-delimited values of unknown field `number` of `message`.
llvm::SmallVector<std::string>
getNewerField(const google::protobuf::Message &message, int number) {
  llvm::SmallVector<std::string> values;
  const google::protobuf::UnknownFieldSet &unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i)
    if (unknown.field(i).number() == number &&
        unknown.field(i).type() ==
            google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      values.push_back(unknown.field(i).length_delimited());
  return values;
}

std::string getOverload(const google::protobuf::Message &message, int number) {
  llvm::SmallVector<std::string> values = getNewerField(message, number);
  return values.empty() ? std::string() : values.back();
}

bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string getKey(StringRef domain, StringRef name, StringRef overload) {
  return domain.str() + '\0' + name.str() + '\0' + overload.str();
}

std::string getLabel(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return node.name();
  return node.output_size() && !node.output(0).empty() ? node.output(0)
                                                       : node.op_type();
}

/// Calls `fn` on every graph `node`'s attributes hold.
void forEachSubgraph(onnx::NodeProto &node,
                     const std::function<void(onnx::GraphProto &)> &fn) {
  for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
    if (attribute.has_g())
      fn(*attribute.mutable_g());
    for (onnx::GraphProto &graph : *attribute.mutable_graphs())
      fn(graph);
  }
}

class Inliner {
public:
  explicit Inliner(onnx::ModelProto &model) : model(model) {}

  llvm::Error run();

private:
  llvm::Error expandGraph(onnx::GraphProto &graph, unsigned depth);
  /// Appends `nodes` to `out`, each call expanded.
  llvm::Error
  expandNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
              google::protobuf::RepeatedPtrField<onnx::NodeProto> &out,
              unsigned depth);
  llvm::Error
  expandCall(const onnx::NodeProto &call, const onnx::FunctionProto &function,
             google::protobuf::RepeatedPtrField<onnx::NodeProto> &out,
             unsigned depth);

  onnx::ModelProto &model;
  llvm::StringMap<const onnx::FunctionProto *> functions;
  /// The default domain's opset of the model, if it imports one.
  std::optional<int64_t> opset;
  int64_t made = 0;
  unsigned calls = 0;
};

} // namespace

llvm::Error Inliner::run() {
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (isDefaultDomain(id.domain()))
      opset = id.version();
  for (const onnx::FunctionProto &function : model.functions()) {
    std::string key = getKey(function.domain(), function.name(),
                             getOverload(function, kFunctionOverloadField));
    if (!functions.try_emplace(key, &function).second)
      return llvm::createStringError(
          "local function '" + printableName(function.name()) +
          "' of domain '" + printableName(function.domain()) +
          "' is defined twice");
  }
  if (!model.has_graph())
    return llvm::Error::success();
  return expandGraph(*model.mutable_graph(), 0);
}

llvm::Error Inliner::expandGraph(onnx::GraphProto &graph, unsigned depth) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes, out;
  nodes.Swap(graph.mutable_node());
  llvm::Error error = expandNodes(nodes, out, depth);
  graph.mutable_node()->Swap(&out);
  return error;
}

llvm::Error
Inliner::expandNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto> &out,
                     unsigned depth) {
  for (onnx::NodeProto &node : nodes) {
    llvm::Error error = llvm::Error::success();
    forEachSubgraph(node, [&](onnx::GraphProto &graph) {
      if (!error)
        error = expandGraph(graph, depth);
    });
    if (error)
      return error;
    auto it =
        isDefaultDomain(node.domain())
            ? functions.end()
            : functions.find(getKey(node.domain(), node.op_type(),
                                    getOverload(node, kNodeOverloadField)));
    if (it == functions.end()) {
      *out.Add() = std::move(node);
      continue;
    }
    if (llvm::Error error = expandCall(node, *it->second, out, depth))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error Inliner::expandCall(
    const onnx::NodeProto &call, const onnx::FunctionProto &function,
    google::protobuf::RepeatedPtrField<onnx::NodeProto> &out, unsigned depth) {
  std::string label = getLabel(call);
  auto fail = [&](const Twine &message) {
    return llvm::createStringError(
        ("node '" + printableName(label) + "' (a call of local function '" +
         printableName(function.name()) + "' of domain '" +
         printableName(function.domain()) + "'): " + message)
            .str());
  };
  if (depth >= kMaxCallDepth)
    return fail("local functions call each other more than " +
                Twine(kMaxCallDepth) + " deep (a function that calls itself?)");
  for (const onnx::OperatorSetIdProto &id : function.opset_import())
    if (isDefaultDomain(id.domain()) && opset && id.version() != *opset)
      return fail("the function imports opset " + Twine(id.version()) +
                  " of the default domain, the model opset " + Twine(*opset) +
                  "; tgc imports one version");
  if (call.input_size() > function.input_size())
    return fail("the call has " + Twine(call.input_size()) +
                " inputs; the function takes " + Twine(function.input_size()));
  if (call.output_size() > function.output_size())
    return fail("the call has " + Twine(call.output_size()) +
                " outputs; the function makes " +
                Twine(function.output_size()));

  // The attributes: the call's, each one the function declares; the
  // function's defaults for the others.
  llvm::StringSet<> declared;
  for (const std::string &name : function.attribute())
    declared.insert(name);
  llvm::StringMap<onnx::AttributeProto> defaults;
  for (const std::string &bytes :
       getNewerField(function, kFunctionAttributeProtoField)) {
    onnx::AttributeProto attribute;
    if (!attribute.ParseFromString(bytes))
      return fail("a default attribute of the function cannot be parsed");
    declared.insert(attribute.name());
    defaults[attribute.name()] = std::move(attribute);
  }
  llvm::StringMap<const onnx::AttributeProto *> given;
  for (const onnx::AttributeProto &attribute : call.attribute()) {
    if (!declared.contains(attribute.name()))
      return fail("attribute '" + printableName(attribute.name()) +
                  "' is not one of the function's");
    given[attribute.name()] = &attribute;
  }

  // The names the body defines, at any depth, and those it reads.
  llvm::StringMap<std::string> inputs;
  for (auto [index, name] : llvm::enumerate(function.input())) {
    std::string bound =
        static_cast<int>(index) < call.input_size() ? call.input(index) : "";
    if (name.empty() || !inputs.try_emplace(name, bound).second)
      return fail("input #" + Twine(index) +
                  " of the function is unnamed or declared twice");
  }
  llvm::StringSet<> defined;
  for (const std::string &name : function.input())
    defined.insert(name);
  llvm::SmallVector<const std::string *> read;
  std::function<void(const onnx::NodeProto &)> collect =
      [&](const onnx::NodeProto &node) {
        for (const std::string &name : node.input())
          read.push_back(&name);
        for (const std::string &name : node.output())
          defined.insert(name);
        for (const onnx::AttributeProto &attribute : node.attribute()) {
          llvm::SmallVector<const onnx::GraphProto *> graphs;
          if (attribute.has_g())
            graphs.push_back(&attribute.g());
          for (const onnx::GraphProto &graph : attribute.graphs())
            graphs.push_back(&graph);
          for (const onnx::GraphProto *graph : graphs) {
            for (const onnx::ValueInfoProto &input : graph->input())
              defined.insert(input.name());
            for (const onnx::TensorProto &initializer : graph->initializer())
              defined.insert(initializer.name());
            for (const onnx::ValueInfoProto &output : graph->output())
              read.push_back(&output.name());
            for (const onnx::NodeProto &inner : graph->node())
              collect(inner);
          }
        }
      };
  for (const onnx::NodeProto &node : function.node())
    collect(node);
  for (const std::string &name : function.output())
    read.push_back(&name);
  for (const std::string *name : read)
    if (!name->empty() && !defined.contains(*name))
      return fail("the function reads '" + printableName(*name) +
                  "', which it neither takes nor computes");

  // Each copy of the body: inputs are the call's, other names get the
  // call's prefix, attributes that refer to the function's take the call's
  // value or the default.
  std::string prefix = label + "#" + std::to_string(++calls) + "/";
  auto rename = [&](std::string *name) {
    if (name->empty())
      return;
    auto it = inputs.find(*name);
    *name = it != inputs.end() ? it->second : prefix + *name;
  };
  std::function<llvm::Error(onnx::NodeProto &)> rewrite;
  std::function<llvm::Error(onnx::GraphProto &)> rewriteGraph =
      [&](onnx::GraphProto &graph) -> llvm::Error {
    for (onnx::ValueInfoProto &info : *graph.mutable_input())
      rename(info.mutable_name());
    for (onnx::ValueInfoProto &info : *graph.mutable_output())
      rename(info.mutable_name());
    for (onnx::ValueInfoProto &info : *graph.mutable_value_info())
      rename(info.mutable_name());
    for (onnx::TensorProto &initializer : *graph.mutable_initializer())
      rename(initializer.mutable_name());
    for (onnx::NodeProto &node : *graph.mutable_node())
      if (llvm::Error error = rewrite(node))
        return error;
    return llvm::Error::success();
  };
  rewrite = [&](onnx::NodeProto &node) -> llvm::Error {
    for (std::string &name : *node.mutable_input())
      rename(&name);
    for (std::string &name : *node.mutable_output())
      rename(&name);
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
    for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
      if (!attribute.ref_attr_name().empty()) {
        const onnx::AttributeProto *value = nullptr;
        if (auto it = given.find(attribute.ref_attr_name()); it != given.end())
          value = it->second;
        else if (auto it = defaults.find(attribute.ref_attr_name());
                 it != defaults.end())
          value = &it->second;
        if (!value)
          continue; // Neither given nor defaulted: the op's default.
        if (attribute.type() != onnx::AttributeProto::UNDEFINED &&
            value->type() != attribute.type())
          return fail("attribute '" + printableName(value->name()) +
                      "' has another type than the function's reference to "
                      "it expects");
        std::string name = attribute.name();
        attribute = *value;
        attribute.set_name(name);
      }
      if (attribute.has_g())
        if (llvm::Error error = rewriteGraph(*attribute.mutable_g()))
          return error;
      for (onnx::GraphProto &graph : *attribute.mutable_graphs())
        if (llvm::Error error = rewriteGraph(graph))
          return error;
      *attributes.Add() = std::move(attribute);
    }
    node.mutable_attribute()->Swap(&attributes);
    return llvm::Error::success();
  };

  made += function.node_size() + call.output_size();
  if (made > kMaxInlinedNodes)
    return fail("inlining local functions makes more than " +
                Twine(kMaxInlinedNodes) + " nodes");
  google::protobuf::RepeatedPtrField<onnx::NodeProto> body;
  for (const onnx::NodeProto &node : function.node()) {
    onnx::NodeProto *copy = body.Add();
    *copy = node;
    copy->set_name(label + "/" + getLabel(node));
    if (llvm::Error error = rewrite(*copy))
      return error;
  }
  if (llvm::Error error = expandNodes(body, out, depth + 1))
    return error;
  // The call's outputs: the function's, through an Identity (the importer
  // aliases it), so that an output that is an input works too.
  for (auto [index, name] : llvm::enumerate(call.output())) {
    if (name.empty())
      continue;
    onnx::NodeProto *identity = out.Add();
    identity->set_op_type("Identity");
    identity->set_name(label + "/output" + std::to_string(index));
    std::string source = function.output(index);
    rename(&source);
    identity->add_input(source);
    identity->add_output(name);
  }
  return llvm::Error::success();
}

llvm::Error tgc::onnx_import::inlineLocalFunctions(onnx::ModelProto &model) {
  if (model.functions_size() == 0)
    return llvm::Error::success();
  return Inliner(model).run();
}
