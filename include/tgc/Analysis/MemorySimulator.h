//===- MemorySimulator.h - exact live memory of a step ----------*- C++ -*-===//
//
// The buffers a function needs when its ops run one after the other in block
// order, each from the op that writes it to the last op that reads it, and
// the live bytes during every op. This is the single source of every memory
// figure tgc prints, of tg-schedule's objective and of tg-memory-plan's
// lower bound.
//
// The buffer model (docs/memory.md):
//  - Arguments are live for the whole step (the host owns them across steps).
//  - A result with `tg.aliases = k` is written in place into argument k when
//    nothing reads argument k after the op that computes it (and that op is
//    elementwise or an optimizer update when it reads argument k itself);
//    otherwise it needs its own buffer until the end.
//  - Other returned values live from their definition to the end.
//  - Every other op result is a buffer from its op to its last use (uses in
//    nested regions count at their top-level op); an unused result lives
//    during its op only.
//  - A view (an op that moves no bytes and returns its single operand's bytes,
//    like tg.reshape) shares its operand's buffer; so does a slice that is
//    one contiguous run of its operand, at that run's offset.
//  - A concat's input whose producer writes nothing else and that nothing
//    else reads is written by its producer in place, inside the concat's
//    buffer, which then lives from the first such producer on (a gradient
//    bucket's gradients, tg-bucket-collectives); the concat copies only the
//    other inputs, if any.
//  - Dense constants are part of the program: live for the whole step. Splat
//    constants are filled just before their first use.
//  - Each op's workspace (CostOpInterface) is live during the op; the GEMM
//    library's workspace is live for the whole step when any op uses the
//    matrix units.
//
// A pipelined function (docs/pipeline.md) is simulated once per pp device:
// the ops of its stages in block order, the arguments they read, the values
// they produce (returned ones live to the end). A shard.send's result has no
// storage (its operand lives until the send); a shard.recv's result is a new
// buffer on the receiver. The step's figures are those of the device with
// the largest peak.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_MEMORYSIMULATOR_H
#define TGC_ANALYSIS_MEMORYSIMULATOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

struct DeviceSpec;

/// The step's batch: its `input` and `label` arguments.
llvm::SmallVector<mlir::Value> getBatchArguments(mlir::func::FuncOp function);

/// The values of `body` computed from `seeds`: the seeds and the results of
/// every op that reads one of them (a fusion region reads its inputs).
llvm::DenseSet<mlir::Value>
getValuesDependingOn(mlir::Block &body, llvm::ArrayRef<mlir::Value> seeds);

/// The phases of a training step, recovered from its structure (see
/// StepStructure::compute).
enum class Phase { Forward, Backward, Optimizer };
llvm::StringRef stringifyPhase(Phase phase);

/// Which op belongs to which phase, and which values are gradients.
///  - forward: the ops the loss and the `output` results depend on;
///  - backward: the other ops that gradients depend on (a gradient is a
///    `grad` result or the gradient operand of an optimizer update, and the
///    same-shaped elementwise partials it is made of: accumulation,
///    clipping);
///  - optimizer: everything else (the updates and their state arithmetic).
/// A function without a loss is all forward.
struct StepStructure {
  llvm::DenseMap<mlir::Operation *, Phase> phases;
  llvm::DenseSet<mlir::Value> gradients;

  static StepStructure compute(mlir::func::FuncOp function);
  Phase getPhase(mlir::Operation *op) const {
    auto it = phases.find(op);
    return it == phases.end() ? Phase::Forward : it->second;
  }
};

/// What a buffer holds, for the peak breakdown.
enum class MemoryKind {
  Params,
  OptimizerState, // `state` and `hyper` arguments
  Inputs,         // `input` and `label` arguments
  Constants,      // dense constants of the program
  Gradients,
  Activations, // forward values read by the backward or the optimizer
  Transient,   // every other intermediate
  Workspace,   // op workspaces and the GEMM library's
};
constexpr unsigned kNumMemoryKinds = 8;
llvm::StringRef stringifyMemoryKind(MemoryKind kind);
using MemoryBreakdown = std::array<int64_t, kNumMemoryKinds>;

/// One allocation of the step.
struct Buffer {
  /// The values stored in it (views and in-place results share a buffer);
  /// empty for workspaces.
  llvm::SmallVector<mlir::Value, 1> values;
  int64_t bytes = 0;
  /// Live during the ops with index in [start, end] (block order, the
  /// terminator excluded).
  int64_t start = 0;
  int64_t end = 0;
  MemoryKind kind = MemoryKind::Transient;
  /// The function argument it holds, or -1.
  int64_t argument = -1;
  /// The op whose workspace it is (null for the GEMM library's workspace
  /// and for buffers holding values).
  mlir::Operation *workspaceOf = nullptr;
};

struct MemorySimulation {
  std::string functionName;
  /// The top-level ops in order (the terminator excluded).
  std::vector<mlir::Operation *> ops;
  std::vector<Buffer> buffers;
  /// The buffer of each value stored in one.
  llvm::DenseMap<mlir::Value, size_t> bufferOf;
  /// The byte offset of a value in its buffer, where it is not 0 (a slice
  /// view, a concat's input written in place).
  llvm::DenseMap<mlir::Value, int64_t> offsetInBuffer;
  /// Live bytes during each op, by kind.
  std::vector<MemoryBreakdown> timeline;
  int64_t peakBytes = 0;
  int64_t peakIndex = -1; // the first op at the peak, -1 without ops
  MemoryBreakdown peakBreakdown{};
  /// Bytes that stay allocated across steps (arguments and dense constants).
  int64_t persistentBytes = 0;
  /// The most bytes of forward values kept for the backward that are live
  /// at once (when the backward starts): what recomputation can trade.
  int64_t activationBytes = 0;
  /// The phase of each op, as in `ops`.
  std::vector<Phase> phases;
  /// A pipelined function: the simulation of each pp device (its stages'
  /// ops alone, `buffers` and indices its own); every field above is a copy
  /// of the one of `peakDevice`, the first device with the largest peak.
  std::vector<MemorySimulation> devices;
  int64_t peakDevice = -1;

  /// Simulates `function` in its block order. The device only contributes
  /// its GEMM workspace; null leaves it out.
  static MemorySimulation run(mlir::func::FuncOp function,
                              const DeviceSpec *device = nullptr);

  /// The sum over the ops of the live bytes during each: how long memory is
  /// held, the tie-breaker between orders with the same peak.
  int64_t area = 0;

  /// The peak of `function` if its top-level ops ran in `order` (a
  /// permutation of them that respects dependencies); pipelined, the largest
  /// device peak (and the devices' areas summed).
  static int64_t peakOf(mlir::func::FuncOp function,
                        llvm::ArrayRef<mlir::Operation *> order,
                        const DeviceSpec *device = nullptr);
  /// (peak, area) of `function` in `order`, to compare orders by.
  static std::pair<int64_t, int64_t>
  peakAndAreaOf(mlir::func::FuncOp function,
                llvm::ArrayRef<mlir::Operation *> order,
                const DeviceSpec *device = nullptr);

  void print(llvm::raw_ostream &os) const;
  nlohmann::json toJson(bool withTimeline = false) const;
  /// An SVG of live memory over the op sequence, stacked by kind, with the
  /// peak marked and the phases shaded.
  void writeTimelineSvg(llvm::raw_ostream &os) const;
};

namespace detail {
struct SimulationFacts;
} // namespace detail

/// Simulates one function in several orders (tg-schedule's candidates), with
/// what does not depend on the order (the step's phases, each op's costs and
/// buffer kinds) computed once. The function must not change meanwhile.
class OrderSimulator {
public:
  OrderSimulator(mlir::func::FuncOp function,
                 const DeviceSpec *device = nullptr);
  ~OrderSimulator();
  /// (peak, area) of the function's top-level ops run in `order` (a
  /// permutation of them that respects dependencies).
  std::pair<int64_t, int64_t>
  getPeakAndArea(llvm::ArrayRef<mlir::Operation *> order) const;

private:
  std::unique_ptr<detail::SimulationFacts> facts;
};

/// Whether `op` is a view of its single operand (shares its buffer): it
/// moves no bytes and returns as many bytes as it reads, like tg.reshape.
bool isViewOp(mlir::Operation *op);

/// Whether `op` is a splat constant, which the simulator has live from just
/// before its first use (so whoever runs the step must fill it there, not
/// where it stands in the order).
bool isFilledAtFirstUse(mlir::Operation *op);

/// A value stored inside another's buffer (a slice view, a concat's input
/// written in place) starts a multiple of this many bytes into it, so that
/// every buffer a kernel or a library call sees stays as aligned as the
/// arena's.
constexpr int64_t kInPlaceAlignment = 256;

/// The byte offset of a tg.slice's result in its operand when the result is
/// one contiguous run of the operand's elements (unit strides, every
/// dimension after the first one cut taken whole, one index in every one
/// before) starting kInPlaceAlignment-aligned: the slice is a view at that
/// offset. Nullopt otherwise, or for another op.
std::optional<int64_t> getSliceViewOffset(mlir::Operation *op);

/// For each input of a tg.concat that stacks its inputs one after the
/// other in memory (every dimension before the concatenated one has size
/// 1): the byte offset in the result at which the input's producer writes
/// it in place, or nullopt where the concat copies it. An input is written
/// in place when it is the result of a top-level op (not a constant, a
/// view, a concat or a collective) whose only reader is the concat,
/// through views read once each, at an aligned offset. Empty for another
/// op.
llvm::SmallVector<std::optional<int64_t>>
getInPlaceConcatOffsets(mlir::Operation *op);

/// Whether `op` launches nothing once the memory plan has placed it: a
/// slice view, or a concat whose inputs are all written in place. The cost
/// model charges such an op nothing.
bool isPlacedInPlace(mlir::Operation *op);

/// Calls `callback` with each top-level op of `body` (other than `op`) that
/// produces a value `op` or an op nested in it reads.
void forEachProducer(mlir::Operation *op, mlir::Block &body,
                     llvm::function_ref<void(mlir::Operation *)> callback);

/// Total bytes of a breakdown.
int64_t getTotal(const MemoryBreakdown &breakdown);

} // namespace tgc

#endif // TGC_ANALYSIS_MEMORYSIMULATOR_H
