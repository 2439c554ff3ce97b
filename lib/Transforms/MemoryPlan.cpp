//===- MemoryPlan.cpp - static offsets in one arena per device ------------===//
//
// Simulate (collect the buffers and their lifetimes), plan (greedy by size,
// best fit), record (offsets as attributes for the code generator).
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemoryPlanner.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tg-memory-plan"

namespace tgc {
#define GEN_PASS_DEF_TGMEMORYPLAN
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {
struct TGMemoryPlanPass : tgc::impl::TGMemoryPlanBase<TGMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-memory-plan")))
      return signalPassFailure();
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      function.emitError() << "tg-memory-plan: alignment must be a power of "
                              "two, got "
                           << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    llvm::Expected<DeviceSpec> spec = getDeviceOf(function, device);
    if (!spec) {
      function.emitError() << "tg-memory-plan: "
                           << llvm::toString(spec.takeError());
      return signalPassFailure();
    }

    MemorySimulation simulation = MemorySimulation::run(function, &*spec);
    ArenaPlan plan = planArena(simulation, alignment);
    record(function, simulation, plan);

    arenaBytes = plan.arenaBytes;
    lowerBoundBytes = plan.lowerBound;
    if (explain)
      function.emitRemark()
          << "tg-memory-plan: arena " << plan.arenaBytes
          << " bytes, simulated peak " << simulation.peakBytes << " bytes ("
          << plan.lowerBound << " with " << static_cast<int64_t>(alignment)
          << "-byte alignment): "
          << llvm::formatv("{0:F4}",
                           simulation.peakBytes
                               ? double(plan.arenaBytes) / simulation.peakBytes
                               : 1.0)
                 .str()
          << " x the peak";
  }

  /// Records `plan`; a pipelined simulation is recorded device by device
  /// (each op is on one; an argument several devices hold and the GEMM
  /// workspace have the same offset on all).
  void record(func::FuncOp function, const MemorySimulation &simulation,
              const ArenaPlan &plan) {
    if (simulation.devices.empty())
      return record(function, simulation, plan, 0);
    // Arguments no device reads keep offset 0.
    for (BlockArgument arg : function.getArguments())
      function.setArgAttr(arg.getArgNumber(), tg::TGDialect::kOffsetAttrName,
                          Builder(function).getI64IntegerAttr(0));
    for (auto [index, device] : llvm::enumerate(simulation.devices))
      record(function, device, plan, getPlanBufferBase(simulation, index),
             /*allArguments=*/false);
    function->setAttr(tg::TGDialect::kArenaSizeAttrName,
                      Builder(function).getI64IntegerAttr(plan.arenaBytes));
  }

  /// Records the offsets of `simulation`'s buffers, at `base` in `plan`.
  void record(func::FuncOp function, const MemorySimulation &simulation,
              const ArenaPlan &plan, size_t base, bool allArguments = true) {
    Builder builder(function.getContext());
    auto offsetOf = [&](Value value) -> int64_t {
      auto it = simulation.bufferOf.find(value);
      return it == simulation.bufferOf.end()
                 ? 0
                 : plan.offsets[base + it->second] +
                       simulation.offsetInBuffer.lookup(value);
    };
    for (BlockArgument arg : function.getArguments())
      if (allArguments || simulation.bufferOf.count(arg))
        function.setArgAttr(arg.getArgNumber(), tg::TGDialect::kOffsetAttrName,
                            builder.getI64IntegerAttr(offsetOf(arg)));
    for (Operation *op : simulation.ops) {
      op->removeAttr(tg::TGDialect::kWorkspaceOffsetAttrName);
      if (op->getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op->getResults())
        offsets.push_back(offsetOf(result));
      op->setAttr(tg::TGDialect::kOffsetsAttrName,
                  builder.getDenseI64ArrayAttr(offsets));
    }
    if (allArguments)
      function->removeAttr(tg::TGDialect::kGemmWorkspaceOffsetAttrName);
    for (auto [index, buffer] : llvm::enumerate(simulation.buffers)) {
      if (buffer.kind != MemoryKind::Workspace)
        continue;
      IntegerAttr offset =
          builder.getI64IntegerAttr(plan.offsets[base + index]);
      if (buffer.workspaceOf)
        buffer.workspaceOf->setAttr(tg::TGDialect::kWorkspaceOffsetAttrName,
                                    offset);
      else
        function->setAttr(tg::TGDialect::kGemmWorkspaceOffsetAttrName, offset);
    }
    function->setAttr(tg::TGDialect::kArenaSizeAttrName,
                      builder.getI64IntegerAttr(plan.arenaBytes));
  }
};
} // namespace
