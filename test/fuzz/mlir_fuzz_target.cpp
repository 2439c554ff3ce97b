//===- mlir_fuzz_target.cpp - libFuzzer target of the MLIR front end ------===//
//
// One input is an .mlir file. It goes where a user's file goes, in process:
// loadModel (size, bracket nesting, parse, verifiers, signature sizes), then,
// on a copy of what parsed each time,
//  - the canonicalizer (tgc-opt --canonicalize),
//  - the report of every function as it is (tgc report),
//  - the simulated ranks or the interpreter on random arguments (tgc run),
//  - the training passes under a precision policy (tgc-opt's tg-* passes),
//  - the whole pipeline with --train (else, when that fails, without) under
//    one of six meshes (tgc compile), the compiled step on the
//    interpreter, and the CUDA emitter on a training step (--emit cuda).
// The policy and the mesh are drawn from a hash of the input, so an input
// always takes the same path. Errors are the expected outcome; a crash, a
// sanitizer report, an exit or a hang is a bug.
//
// Built with libFuzzer (scripts/fuzz.sh, -DTGC_LIBFUZZER=ON) it is
// coverage-guided; built without, replay_main.cpp runs the corpus and the
// crash inputs kept in test/fuzz/ (ctest fuzz-replay-mlir).
//
//===----------------------------------------------------------------------===//

#include "FuzzRun.h"

#include "tgc/Driver/Compile.h"
#include "tgc/Driver/Model.h"
#include "tgc/Driver/Report.h"
#include "tgc/InitAll.h"
#include "tgc/Target/CUDA/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <string>

using namespace mlir;

namespace {
const char *const kPolicies[] = {"fp32", "bf16", "fp16", "fp8"};
const char *const kMeshes[] = {
    "",
    "mesh=pp=2 micro-batches=2",
    "mesh=dp=2 zero=1",
    "mesh=tp=2 sequence-parallel=true",
    "mesh=tp=3",
    "mesh=dp=2 zero=3 gather-buckets=always scatter-buckets=always"};

/// The registry every input's context is made from, and the passes parsed
/// by name.
DialectRegistry &getRegistry() {
  static DialectRegistry *registry = [] {
    auto *registry = new DialectRegistry;
    tgc::registerAllDialects(*registry);
    tgc::registerAllPasses();
    return registry;
  }();
  return *registry;
}

/// Where the input is written for loadModel, one file per process.
const std::string &getInputPath() {
  static const std::string path = [] {
    std::string dir =
        llvm::sys::fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    return dir + "/tgc-fuzz-mlir-" +
           std::to_string(llvm::sys::Process::getProcessId()) + ".mlir";
  }();
  return path;
}

OwningOpRef<ModuleOp> cloneOf(ModuleOp module) {
  return OwningOpRef<ModuleOp>(cast<ModuleOp>(module->clone()));
}

void runPasses(ModuleOp module, llvm::StringRef pipeline) {
  PassManager pm(module->getContext(), ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (succeeded(parsePassPipeline(pipeline, pm)))
    (void)pm.run(module);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Far above any seed; larger inputs only make the fuzzer slow.
  if (size > (1 << 16))
    return -1;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  uint64_t hash = llvm::xxh3_64bits(text);
  {
    std::error_code error;
    llvm::raw_fd_ostream file(getInputPath(), error);
    if (error)
      return -1;
    file << text;
  }

  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler quiet(&context, tgc::fuzz::handleDiagnostic);
  llvm::SourceMgr sourceMgr;
  FailureOr<tgc::LoadedModel> loaded =
      tgc::loadModel(context, sourceMgr, getInputPath(), {});
  // The source manager holds its own copy; leave nothing in /dev/shm.
  llvm::sys::fs::remove(getInputPath());
  if (failed(loaded))
    return 0;
  ModuleOp module = *loaded->module;

  runPasses(*cloneOf(module), "canonicalize");
  {
    OwningOpRef<ModuleOp> copy = cloneOf(module);
    for (auto function : copy->getOps<func::FuncOp>())
      if (!function.isExternal())
        (void)tgc::reportStep(*copy, function, {}, llvm::nulls());
  }
  for (auto function : module.getOps<func::FuncOp>())
    tgc::fuzz::runIfSmall(function, hash);

  const char *policy = kPolicies[hash % std::size(kPolicies)];
  runPasses(*cloneOf(module),
            (llvm::Twine("tg-mixed-precision{policy=") + policy +
             "},tg-autodiff,tg-microbatch{micro-batches=2},tg-optimizer,"
             "tg-scaling-update,canonicalize")
                .str());
  // Its evaluation (tgc train --val-data, tgc compile --evaluation).
  runPasses(*cloneOf(module), (llvm::Twine("tg-evaluation,tg-mixed-precision{"
                                           "policy=") +
                               policy + "},canonicalize")
                                  .str());

  // The training step, else (no loss, say) the planning of the function as
  // it is: tgc compile with and without --train.
  const char *mesh = kMeshes[(hash >> 8) % std::size(kMeshes)];
  for (const char *train : {"autodiff=true optimizer=adamw ", ""}) {
    tgc::TrainingPipelineOptions options;
    std::string flags =
        (llvm::Twine(train) + "precision=" + policy + " " + mesh).str();
    if (failed(options.parseFromString(flags)) ||
        tgc::validatePipelineOptions(options)) {
      llvm::errs() << "tgc-fuzz-mlir: the fuzzer's own options are wrong: "
                   << flags << "\n";
      abort();
    }
    OwningOpRef<ModuleOp> step = cloneOf(module);
    if (failed(tgc::compileModule(*step, options)))
      continue;
    for (auto function : step->getOps<func::FuncOp>()) {
      tgc::fuzz::runIfSmall(function, hash);
      // tgc compile --emit cuda (a training step only; the emitter refuses
      // partitioned and pipelined steps with an error).
      if (*train && !function.isExternal())
        (void)tgc::emitCudaProject(function);
    }
    break;
  }
  return 0;
}
