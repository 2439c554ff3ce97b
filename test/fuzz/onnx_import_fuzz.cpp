//===- onnx_import_fuzz.cpp - mutation fuzzing of the ONNX importer -------===//
//
// Mutates seed models in process, byte-wise (flips, truncations, splices)
// and structurally (attributes, dimensions, op types, inputs of the parsed
// protobuf), imports each mutant and runs the ones that import on random
// arguments (ONNXFuzz.h). Any crash fails; errors are the expected outcome.
// Blind and bounded, for ctest; tgc-fuzz-onnx is the same with libFuzzer's
// coverage guidance, for long runs (docs/fuzzing.md).
//
//   onnx-import-fuzz --iterations N --seed S MODEL.onnx...
//
//===----------------------------------------------------------------------===//

#include "ONNXFuzz.h"

#include "tgc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::list<std::string> seeds(cl::Positional, cl::OneOrMore,
                                   cl::desc("<seed model.onnx>..."));
static cl::opt<unsigned> iterations("iterations", cl::init(2000),
                                    cl::desc("Mutants to try"));
static cl::opt<unsigned> randomSeed("seed", cl::init(1),
                                    cl::desc("Seed of the mutations"));
static cl::opt<std::string>
    lastMutant("last-mutant",
               cl::desc("Write each mutant to this file before importing "
                        "it: after a crash or a kill, it holds the culprit"),
               cl::value_desc("FILE"));

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
  tgc::fuzz::ONNXMutator mutator(randomSeed);
  unsigned imported = 0, ran = 0;
  for (unsigned i = 0; i < iterations; ++i) {
    std::string bytes = mutator.mutate(corpus[mutator.pick(corpus.size())]);
    if (!lastMutant.empty()) {
      std::error_code error;
      llvm::raw_fd_ostream out(lastMutant, error);
      if (error) {
        llvm::errs() << "onnx-import-fuzz: cannot write '" << lastMutant
                     << "': " << error.message() << "\n";
        return 1;
      }
      out << bytes;
    }
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    ScopedDiagnosticHandler quiet(&context, tgc::fuzz::handleDiagnostic);
    tgc::fuzz::ONNXOutcome outcome =
        tgc::fuzz::fuzzONNXModel(context, bytes, i);
    imported += outcome.imported;
    ran += outcome.ran;
  }
  llvm::outs() << "onnx-import-fuzz: " << iterations << " mutants, " << imported
               << " imported, " << ran << " run, no crash\n";
  return 0;
}
