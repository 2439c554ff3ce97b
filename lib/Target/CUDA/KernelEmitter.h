//===- KernelEmitter.h - one kernel of a generated step ---------*- C++ -*-===//
//
// Private to lib/Target/CUDA: the C++ text of one kernel (a tg.fusion region
// or one op) built op by op, and the element types as the runtime stores
// them.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TARGET_CUDA_KERNELEMITTER_H
#define TGC_LIB_TARGET_CUDA_KERNELEMITTER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace tgc::cuda {

/// How the runtime stores an element type: the C type of kernels, the
/// compute type `ld` widens to, and the runtime's DType enumerator.
struct StorageType {
  std::string cType, computeType, dtype;
  int64_t bytes;
};
mlir::FailureOr<StorageType> getStorageType(mlir::Type elementType,
                                            mlir::Location loc);

/// A place in device memory: the arena or the kernels' scratch, at an offset.
struct Place {
  bool scratch = false;
  int64_t offset = 0;
};

/// "file:line:col" of `loc` (through fused and named locations).
std::string formatLocation(mlir::Location loc);

/// C++ text of a number (exact for doubles; INFINITY, NAN) and of a Dims.
std::string formatNumber(double value);
std::string formatDims(llvm::ArrayRef<int64_t> values);
llvm::SmallVector<int64_t> getRowMajorStrides(llvm::ArrayRef<int64_t> shape);
int64_t getNumElements(mlir::Value value);
mlir::Type getElementType(mlir::Value value);

/// The ops the kernel emitter lowers, and those it refuses on purpose
/// (with the reason), by op name: the op-coverage test lists both.
bool hasKernelLowering(llvm::StringRef opName);
std::optional<llvm::StringRef> getRefusalReason(llvm::StringRef opName);

/// Builds one kernel from ops whose operands are bound to places.
class KernelEmitter {
public:
  /// `scratchBase`: where this kernel's scratch starts (after what the
  /// step's host code put there for it, like a GEMM result).
  KernelEmitter(std::string name, int64_t scratchBase);

  /// `value` lives at `place` (an input, or a result written there).
  mlir::LogicalResult bind(mlir::Value value, Place place);
  /// A result that must end at `place`: written there directly when
  /// `direct`, else copied there after every step (a region output that
  /// would overwrite an input still to be read, or one that is an input).
  void requireOutput(mlir::Value value, Place place, bool direct);
  /// Emits `op` as one step of the kernel.
  mlir::LogicalResult emitOp(mlir::Operation *op);
  /// A kernel to launch, over `elements` outputs (its threads loop over
  /// them with a grid stride).
  struct Launch {
    std::string kernel;
    int64_t elements;
    /// A block per element (a row of a row-wise op), not per 256.
    bool perRow;
  };
  /// The kernels' text, one kernel per step: a step reads what the steps
  /// before it wrote, anywhere in the tensor, so each is its own launch on
  /// the stream (a block cannot wait for the grid) and has the whole grid.
  /// One step keeps the kernel's name; more are name_s0, name_s1, ...
  /// getLaunches() lists them in order.
  std::string finish(llvm::StringRef comment);
  const std::vector<Launch> &getLaunches() const { return launches; }
  int64_t getScratchEnd() const { return scratchTop; }
  const std::string &getName() const { return name; }
  bool isEmpty() const { return steps + finalCopies.size() == 0; }

private:
  struct Bound {
    std::string name;
    StorageType type;
  };
  mlir::FailureOr<std::string> pointer(mlir::Value value);
  mlir::FailureOr<std::string> result(mlir::Value value);
  mlir::FailureOr<std::string> declare(mlir::Value value, Place place);
  mlir::LogicalResult emitElementwise(mlir::Operation *op);
  mlir::LogicalResult emitShape(mlir::Operation *op);
  mlir::LogicalResult emitCompound(mlir::Operation *op);
  /// Starts the step of `op`. A `pointwise` step (element i from elements
  /// i of its operands) after a pointwise step over as many elements joins
  /// its kernel: each thread reads only what it wrote itself.
  void beginStep(mlir::Operation *op, int64_t outputElements,
                 bool pointwise = false, bool perRow = false);

  struct Step {
    std::string text;
    int64_t elements;
    bool perRow;
  };
  std::string name;
  /// The pointer of each bound value: its variable and declaration.
  llvm::SmallVector<std::pair<std::string, std::string>> declarations;
  /// The steps before the current one, and the current one's text.
  std::vector<Step> done;
  std::string body;
  int64_t stepElements = 1;
  bool stepIsPointwise = false, stepIsPerRow = false;
  std::vector<Launch> launches;
  llvm::DenseMap<mlir::Value, Bound> bound;
  llvm::DenseMap<mlir::Value, Place> outputs;
  llvm::SmallVector<std::pair<mlir::Value, Place>> finalCopies;
  int64_t scratchTop;
  unsigned counter = 0, steps = 0;
};

} // namespace tgc::cuda

#endif // TGC_LIB_TARGET_CUDA_KERNELEMITTER_H
