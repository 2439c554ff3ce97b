//===- Compile.cpp - running the pipeline on a model ----------------------===//

#include "tgc/Driver/Compile.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Driver/Model.h"
#include "tgc/Pipeline/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include <mutex>

using namespace mlir;
using namespace tgc;

bool tgc::isCompiledStep(ModuleOp module) {
  if (module->hasAttr(tg::TGDialect::kPipelineAttrName))
    return true;
  return llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
    return f->hasAttr(tg::TGDialect::kArenaSizeAttrName);
  });
}

namespace {
/// Records each function's costs just before tg-fuse forms its kernels.
class UnfusedCostObserver : public PassInstrumentation {
public:
  UnfusedCostObserver(CompileObservations &observations,
                      const DeviceSpec &device)
      : observations(observations), device(device) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    auto function = dyn_cast<func::FuncOp>(op);
    if (!function || function.isExternal() || pass->getArgument() != "tg-fuse")
      return;
    StepTimeEstimate estimate = StepTimeEstimate::compute(
        function, device, StepStructure::compute(function));
    std::lock_guard<std::mutex> lock(mutex);
    observations.unfused[function.getName()] = std::move(estimate);
  }

private:
  CompileObservations &observations;
  const DeviceSpec &device;
  std::mutex mutex;
};
} // namespace

/// Refuses a compiled step, records the device and runs `build`'s passes.
static LogicalResult
runStages(ModuleOp module, const CompileRequest &request,
          function_ref<void(OpPassManager &)> build, bool recordPipeline) {
  if (isCompiledStep(module))
    return reportError("the module is already a compiled step; give the "
                       "model it was compiled from (tgc report reports a "
                       "compiled step as it is)");
  if (request.device)
    setModuleDevice(module, *request.device);
  llvm::Expected<DeviceSpec> device = getDeviceOf(module);
  if (!device)
    return module.emitError() << llvm::toString(device.takeError());
  if (!module->hasAttr(tg::TGDialect::kDeviceAttrName))
    setModuleDevice(module, *device);

  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  build(pm);
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  pm.printAsTextualPipeline(os);
  if (request.pipelineDump)
    *request.pipelineDump << pipeline << "\n";
  if (request.observations)
    pm.addInstrumentation(
        std::make_unique<UnfusedCostObserver>(*request.observations, *device));
  if (failed(pm.run(module)))
    return failure();
  if (recordPipeline)
    module->setAttr(tg::TGDialect::kPipelineAttrName,
                    StringAttr::get(module.getContext(), pipeline));
  return success();
}

LogicalResult tgc::compileModule(ModuleOp module,
                                 const TrainingPipelineOptions &options,
                                 const CompileRequest &request) {
  return runStages(
      module, request,
      [&](OpPassManager &pm) { buildTrainingPipeline(pm, options); },
      /*recordPipeline=*/true);
}

LogicalResult tgc::buildTrainingStep(ModuleOp module,
                                     const TrainingPipelineOptions &options,
                                     const CompileRequest &request) {
  return runStages(
      module, request,
      [&](OpPassManager &pm) { buildTrainingStepStage(pm, options); },
      /*recordPipeline=*/false);
}
