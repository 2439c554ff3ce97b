//===- onnx_fuzz_target.cpp - libFuzzer target of the ONNX importer -------===//
//
// One input is a serialized ONNX model: imported with external data refused,
// through the post-import passes and, when small, run on the interpreter
// (ONNXFuzz.h). The custom mutator alternates libFuzzer's byte mutations
// with ONNXMutator's structural ones (attributes, dimensions, op types,
// inputs, initializers, opsets of the parsed protobuf), which reach the
// importer's op translations that random bytes rarely parse into.
//
// Built with libFuzzer (scripts/fuzz.sh, -DTGC_LIBFUZZER=ON) it is
// coverage-guided; built without, replay_main.cpp runs the corpus and the
// crash inputs kept in test/fuzz/ (ctest fuzz-replay-onnx).
//
//===----------------------------------------------------------------------===//

#include "ONNXFuzz.h"

#include "tgc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/xxhash.h"

#include <cstring>

using namespace mlir;

static DialectRegistry &getRegistry() {
  static DialectRegistry *registry = [] {
    auto *registry = new DialectRegistry;
    tgc::registerAllDialects(*registry);
    return registry;
  }();
  return *registry;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The seeds are under 4 KiB; larger inputs only make the fuzzer slow.
  if (size > (1 << 16))
    return -1;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler quiet(&context, tgc::fuzz::handleDiagnostic);
  (void)tgc::fuzz::fuzzONNXModel(context, bytes, llvm::xxh3_64bits(bytes));
  return 0;
}

#ifdef TGC_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  if (seed % 2)
    return LLVMFuzzerMutate(data, size, maxSize);
  tgc::fuzz::ONNXMutator mutator(seed);
  std::string mutant =
      mutator.mutate(std::string(reinterpret_cast<char *>(data), size));
  if (mutant.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, mutant.data(), mutant.size());
  return mutant.size();
}
#endif
