//===- ONNXFuzz.h - what the ONNX fuzzers do with one input ----*- C++ -*-===//
//
// Shared by onnx-import-fuzz (random mutation, bounded, run by ctest) and
// tgc-fuzz-onnx (libFuzzer, coverage-guided, run for CPU-hours outside CI):
// the structural mutator of ONNX models, and one input's run through the
// importer, the post-import passes and the interpreter. An error is the
// expected outcome; a crash, a sanitizer report or a hang is a bug.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TEST_FUZZ_ONNXFUZZ_H
#define TGC_TEST_FUZZ_ONNXFUZZ_H

#include "FuzzRun.h"

#include "tgc/Import/ONNX/Importer.h"
#include "tgc/Pipeline/PostImportPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <onnx/onnx_pb.h>

#include <random>

namespace tgc::fuzz {

class ONNXMutator {
public:
  explicit ONNXMutator(uint64_t seed) : rng(seed) {}

  int64_t pick(int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
  }
  /// A value that breaks assumptions: small, negative, huge, or off by one.
  int64_t interesting(int64_t original) {
    static const int64_t values[] = {
        0,    1,  -1,      2,         -2,        3,        7,
        -100, 64, 1 << 20, INT32_MAX, INT64_MAX, INT64_MIN};
    if (pick(3) == 0) // Wraps around, as the importer must expect.
      return static_cast<int64_t>(static_cast<uint64_t>(original) +
                                  static_cast<uint64_t>(pick(5)) - 2);
    return values[pick(std::size(values))];
  }

  std::string mutateBytes(std::string bytes) {
    if (bytes.empty())
      return bytes;
    switch (pick(4)) {
    case 0:
      for (int i = 0, n = 1 + pick(8); i < n; ++i)
        bytes[pick(bytes.size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 1:
      bytes.resize(pick(bytes.size()));
      break;
    case 2: {
      size_t at = pick(bytes.size()), length = pick(16);
      bytes.insert(at, bytes.substr(pick(bytes.size()), length));
      break;
    }
    default:
      bytes.erase(pick(bytes.size()), pick(16));
    }
    return bytes;
  }

  void mutateModel(onnx::ModelProto &model) {
    onnx::GraphProto *graph = model.mutable_graph();
    static const char *opTypes[] = {"Add",
                                    "MatMul",
                                    "Reshape",
                                    "Gather",
                                    "Slice",
                                    "Concat",
                                    "Transpose",
                                    "Squeeze",
                                    "Unsqueeze",
                                    "Expand",
                                    "Softmax",
                                    "ReduceSum",
                                    "Split",
                                    "Einsum",
                                    "Gemm",
                                    "Where",
                                    "Range",
                                    "Trilu",
                                    "Cast",
                                    "LayerNormalization",
                                    "SoftmaxCrossEntropyLoss",
                                    "ConstantOfShape",
                                    "Flatten",
                                    "Shape",
                                    "ArgMax",
                                    "Hardmax",
                                    "PRelu",
                                    "Celu",
                                    "IsInf",
                                    "OneHot",
                                    "DepthToSpace",
                                    "InstanceNormalization",
                                    "EyeLike",
                                    "Conv",
                                    "MaxPool",
                                    "AveragePool",
                                    "BatchNormalization",
                                    "ConvTranspose",
                                    "Compress",
                                    "NonZero",
                                    "Unique",
                                    "RoiAlign",
                                    "GridSample",
                                    "Attention",
                                    "RMSNormalization",
                                    "RotaryEmbedding",
                                    "GroupNormalization",
                                    "LpPool",
                                    "CumProd",
                                    "AffineGrid",
                                    "CenterCropPad",
                                    "SwiGLU",
                                    "BitShift",
                                    "CausalConvWithState",
                                    "LinearAttention"};
    switch (pick(8)) {
    case 0: // An attribute's integers.
      if (graph->node_size()) {
        onnx::NodeProto *node = graph->mutable_node(pick(graph->node_size()));
        if (node->attribute_size()) {
          onnx::AttributeProto *a =
              node->mutable_attribute(pick(node->attribute_size()));
          a->set_i(interesting(a->i()));
          for (int i = 0; i < a->ints_size(); ++i)
            if (pick(2))
              a->set_ints(i, interesting(a->ints(i)));
          if (pick(4) == 0)
            a->add_ints(interesting(0));
          a->set_f(pick(2) ? -a->f() : 1e30f);
        } else {
          onnx::AttributeProto *a = node->add_attribute();
          static const char *names[] = {
              "axis",   "axes", "perm",  "keepdims",
              "transA", "to",   "upper", "select_last_index"};
          a->set_name(names[pick(std::size(names))]);
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(interesting(0));
        }
      }
      break;
    case 1: // The dimensions of a graph input.
      if (graph->input_size()) {
        auto *shape = graph->mutable_input(pick(graph->input_size()))
                          ->mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape();
        if (shape->dim_size() && pick(3))
          shape->mutable_dim(pick(shape->dim_size()))
              ->set_dim_value(interesting(2));
        else
          shape->add_dim()->set_dim_value(interesting(1));
      }
      break;
    case 2: // An op type.
      if (graph->node_size())
        graph->mutable_node(pick(graph->node_size()))
            ->set_op_type(opTypes[pick(std::size(opTypes))]);
      break;
    case 3: // Inputs dropped, duplicated or renamed.
      if (graph->node_size()) {
        onnx::NodeProto *node = graph->mutable_node(pick(graph->node_size()));
        if (node->input_size() && pick(2))
          node->mutable_input()->RemoveLast();
        else if (node->input_size())
          node->add_input(node->input(pick(node->input_size())));
        else
          node->add_input("");
      }
      break;
    case 4: // An initializer's dimensions or element type.
      if (graph->initializer_size()) {
        onnx::TensorProto *t =
            graph->mutable_initializer(pick(graph->initializer_size()));
        if (t->dims_size() && pick(2))
          t->set_dims(pick(t->dims_size()), interesting(t->dims(0)));
        else
          t->set_data_type(pick(17));
      }
      break;
    case 5: // An element type of an input or output.
      if (graph->input_size())
        graph->mutable_input(pick(graph->input_size()))
            ->mutable_type()
            ->mutable_tensor_type()
            ->set_elem_type(pick(17));
      break;
    case 6: // The dynamo exporter's metadata of a node, or of the graph.
      if (graph->node_size() && pick(4))
        mutateMetadata(*graph->mutable_node(pick(graph->node_size())),
                       kNodeMetadata, graph->node(pick(graph->node_size())));
      else
        mutateMetadata(*graph, kGraphMetadata, *graph);
      break;
    default: // The opset.
      if (model.opset_import_size())
        model.mutable_opset_import(0)->set_version(interesting(13));
    }
  }

  /// The fields of NodeProto's and GraphProto's `metadata_props` (ONNX
  /// 1.16), which Debian's older onnx.proto keeps as unknown fields: the
  /// FX node, module scopes, folds and rewrite rules the importer reads.
  static constexpr int kNodeMetadata = 9, kGraphMetadata = 16;

  /// One of `message`'s metadata entries (field `field`): a number in its
  /// value made interesting, its value's bytes mutated, its key made
  /// another key the importer reads (the value then parsed as that), or an
  /// entry of `donor` (another node) added: an FX node that disagrees with
  /// the graph.
  void mutateMetadata(google::protobuf::Message &message, int field,
                      const google::protobuf::Message &donor) {
    using google::protobuf::UnknownField;
    auto entries = [&](const google::protobuf::UnknownFieldSet &set) {
      std::vector<int> found;
      for (int i = 0; i < set.field_count(); ++i)
        if (set.field(i).number() == field &&
            set.field(i).type() == UnknownField::TYPE_LENGTH_DELIMITED)
          found.push_back(i);
      return found;
    };
    google::protobuf::UnknownFieldSet *unknown =
        message.GetReflection()->MutableUnknownFields(&message);
    std::vector<int> own = entries(*unknown);
    if (own.empty() || pick(5) == 0) {
      const google::protobuf::UnknownFieldSet &given =
          donor.GetReflection()->GetUnknownFields(donor);
      std::vector<int> theirs = entries(given);
      if (!theirs.empty() && &donor != &message)
        unknown->AddLengthDelimited(
            field, given.field(theirs[pick(theirs.size())]).length_delimited());
      return;
    }
    std::string *bytes = unknown->mutable_field(own[pick(own.size())])
                             ->mutable_length_delimited();
    onnx::StringStringEntryProto entry;
    if (!entry.ParseFromString(*bytes))
      return;
    std::string value = entry.value();
    switch (pick(3)) {
    case 0: { // A number (a dimension, an index, a momentum's digits).
      std::vector<std::pair<size_t, size_t>> numbers;
      for (size_t i = 0; i < value.size();) {
        size_t j = i;
        while (j < value.size() && value[j] >= '0' && value[j] <= '9')
          ++j;
        if (j > i)
          numbers.push_back({i, j - i});
        i = j + 1;
      }
      if (numbers.empty())
        break;
      auto [at, length] = numbers[pick(numbers.size())];
      value.replace(at, length, std::to_string(interesting(1)));
      break;
    }
    case 1:
      value = mutateBytes(value);
      break;
    default: {
      static const char *keys[] = {"pkg.torch.onnx.fx_node",
                                   "pkg.torch.onnx.name_scopes",
                                   "pkg.onnxscript.optimizer.folded_from",
                                   "pkg.onnxscript.rewriter.rule_name",
                                   "pkg.torch.export.ExportedProgram."
                                   "graph_signature"};
      entry.set_key(keys[pick(std::size(keys))]);
    }
    }
    entry.set_value(value);
    *bytes = entry.SerializeAsString();
  }

  /// One mutant of `bytes`: structural mutations of the parsed model two
  /// times in three (when it parses), else byte-wise ones.
  std::string mutate(const std::string &bytes) {
    onnx::ModelProto model;
    if (pick(3) && model.ParseFromString(bytes)) {
      for (int m = 0, n = 1 + pick(3); m < n; ++m)
        mutateModel(model);
      return model.SerializeAsString();
    }
    return mutateBytes(bytes);
  }

private:
  std::mt19937_64 rng;
};

/// What became of one input.
struct ONNXOutcome {
  bool imported = false;
  bool ran = false;
};

/// Imports `bytes` (external data refused), runs the post-import passes and,
/// when the graph is small, the interpreter on random arguments drawn from
/// `seed`.
inline ONNXOutcome fuzzONNXModel(mlir::MLIRContext &context,
                                 llvm::StringRef bytes, uint64_t seed) {
  ONNXOutcome outcome;
  mlir::FailureOr<ImportedModel> result =
      importONNXBytes(context, bytes, "mutant.onnx", /*baseDirectory=*/"", {});
  if (mlir::failed(result))
    return outcome;
  outcome.imported = true;
  mlir::PassManager pm(&context);
  buildPostImportPipeline(pm);
  if (mlir::failed(pm.run(*result->module)))
    return outcome;
  for (auto function : result->module->getOps<mlir::func::FuncOp>())
    outcome.ran |= runIfSmall(function, seed);
  return outcome;
}

} // namespace tgc::fuzz

#endif // TGC_TEST_FUZZ_ONNXFUZZ_H
