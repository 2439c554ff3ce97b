//===- onnx_import_fuzz.cpp - mutation fuzzing of the ONNX importer -------===//
//
// Mutates seed models in process, byte-wise (flips, truncations, splices)
// and structurally (attributes, dimensions, op types, inputs of the parsed
// protobuf), imports each mutant and runs the ones that import on random
// arguments. Any crash fails; errors are the expected outcome.
//
//   onnx-import-fuzz --iterations N --seed S MODEL.onnx...
//
//===----------------------------------------------------------------------===//

#include "tgc/Import/ONNX/Importer.h"
#include "tgc/InitAll.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx/onnx_pb.h>

#include <random>

using namespace mlir;
namespace cl = llvm::cl;

static cl::list<std::string> seeds(cl::Positional, cl::OneOrMore,
                                   cl::desc("<seed model.onnx>..."));
static cl::opt<unsigned> iterations("iterations", cl::init(2000),
                                    cl::desc("Mutants to try"));
static cl::opt<unsigned> randomSeed("seed", cl::init(1),
                                    cl::desc("Seed of the mutations"));

namespace {
class Mutator {
public:
  explicit Mutator(unsigned seed) : rng(seed) {}

  int64_t pick(int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
  }
  /// A value that breaks assumptions: small, negative, huge, or off by one.
  int64_t interesting(int64_t original) {
    static const int64_t values[] = {
        0,    1,  -1,      2,         -2,        3,        7,
        -100, 64, 1 << 20, INT32_MAX, INT64_MAX, INT64_MIN};
    if (pick(3) == 0)
      return original + pick(5) - 2;
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
                                    "Shape"};
    switch (pick(7)) {
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
          static const char *names[] = {"axis",   "axes", "perm", "keepdims",
                                        "transA", "to",   "upper"};
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
    default: // The opset.
      if (model.opset_import_size())
        model.mutable_opset_import(0)->set_version(interesting(13));
    }
  }

private:
  std::mt19937_64 rng;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "mutation fuzzing of the importer\n");
  std::vector<std::string> corpus;
  for (const std::string &path : seeds) {
    auto file = llvm::MemoryBuffer::getFile(path, false, false);
    if (!file) {
      llvm::errs() << "onnx-import-fuzz: cannot read '" << path << "'\n";
      return 1;
    }
    corpus.push_back((*file)->getBuffer().str());
  }
  DialectRegistry registry;
  tgc::registerAllDialects(registry);
  Mutator mutator(randomSeed);
  unsigned imported = 0, ran = 0;
  for (unsigned i = 0; i < iterations; ++i) {
    std::string bytes = corpus[mutator.pick(corpus.size())];
    onnx::ModelProto model;
    if (mutator.pick(3) && model.ParseFromString(bytes)) {
      for (int m = 0, n = 1 + mutator.pick(3); m < n; ++m)
        mutator.mutateModel(model);
      bytes = model.SerializeAsString();
    } else {
      bytes = mutator.mutateBytes(bytes);
    }
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    FailureOr<tgc::ImportedModel> result = tgc::importONNXBytes(
        context, bytes, "mutant.onnx", /*baseDirectory=*/"", {});
    if (failed(result))
      continue;
    ++imported;
    auto function = *result->module->getOps<func::FuncOp>().begin();
    int64_t elements = 0;
    for (Type type : function.getArgumentTypes())
      elements += cast<RankedTensorType>(type).getNumElements();
    bool small = elements < 100000;
    function.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type))
          small &= tensor.getNumElements() < 1000000;
    });
    if (!small)
      continue;
    SmallVector<tgc::Tensor> arguments;
    for (unsigned a = 0; a < function.getNumArguments(); ++a)
      arguments.push_back(tgc::makeRandomArgument(function, a, i));
    tgc::Interpreter interpreter;
    (void)interpreter.run(function, arguments);
    ++ran;
  }
  llvm::outs() << "onnx-import-fuzz: " << iterations << " mutants, " << imported
               << " imported, " << ran << " run, no crash\n";
  return 0;
}
