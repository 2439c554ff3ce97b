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
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "tgc/runtime/HostDevice.h"

#include <string>

namespace tgc::cuda {

/// How the runtime stores an element type: the C type of kernels, the
/// compute type `ld` widens to, and the runtime's DType enumerator.
struct StorageType {
  std::string cType, computeType, dtype;
  int64_t bytes;
  /// An integer type's smallest and largest values as C++ text (empty for
  /// floats and i1).
  std::string intMin = {}, intMax = {};
};
mlir::FailureOr<StorageType> getStorageType(mlir::Type elementType,
                                            mlir::Location loc);

/// A place in device memory: the arena or the kernels' scratch, at an offset.
struct Place {
  bool scratch = false;
  int64_t offset = 0;
};

/// describeLocation(loc) for generated C++ (a comment's end, a string):
/// "unknown" when it is empty, a final backslash escaped.
std::string formatLocation(mlir::Location loc);

/// C++ text of a number (exact for doubles; INFINITY, NAN) and of a Dims.
std::string formatNumber(double value);
inline std::string formatNumber(const llvm::APFloat &value) {
  return formatNumber(value.convertToDouble());
}
std::string formatDims(llvm::ArrayRef<int64_t> values);
llvm::SmallVector<int64_t> getRowMajorStrides(llvm::ArrayRef<int64_t> shape);
int64_t getNumElements(mlir::Value value);
mlir::Type getElementType(mlir::Value value);

/// The ops the kernel emitter lowers, and those it refuses on purpose
/// (with the reason), by op name: the op-coverage test lists both.
bool hasKernelLowering(llvm::StringRef opName);
/// Whether the op is one formula per element (element i of its result from
/// elements i of its operands).
bool hasElementwiseFormula(llvm::StringRef opName);

/// Builds the launches of one tg.fusion region (or one op) from its ops
/// in order. Elementwise ops and the views (broadcast_in_dim, transpose,
/// slice, reshape, pad, concat, splat constants) become formulas inside
/// grid-stride
/// loops: a value that nothing outside the loop reads stays in a register
/// or is recomputed where a view reads it at another index, and only the
/// values the region yields or a runtime op kernel reads are stored.
/// Consecutive loops and pointwise op kernels share a launch as long as
/// every thread reads only what it wrote itself (the same element index)
/// or what earlier launches wrote; anything else starts a launch.
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
  /// Emits `op`, in order after the ops emitted before it.
  mlir::LogicalResult emitOp(mlir::Operation *op);
  /// A kernel to launch, over `elements` outputs (its threads loop over
  /// them with a grid stride).
  struct Launch {
    std::string kernel;
    int64_t elements;
    /// A block per element (a row of a row-wise op), not per 256.
    bool perRow;
  };
  /// The kernels' text, one per launch, in order. One launch keeps the
  /// kernel's name; more are name_s0, name_s1, ... getLaunches() lists
  /// them in order.
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
  /// A value read through an index map of another: element i of the view
  /// is element offset + sum_d index_d(i) * strides[d] of `source`
  /// (row-major over `shape`, the view's); `identity` when that is i.
  struct View {
    mlir::Value source;
    llvm::SmallVector<int64_t> shape, strides;
    int64_t offset = 0;
    bool identity = false;
  };
  /// What the current launch wrote into a variable: at each thread's own
  /// element indices (a grid-stride loop), or anywhere.
  enum class Written { Pointwise, Anywhere };

  mlir::FailureOr<std::string> pointer(mlir::Value value);
  mlir::FailureOr<std::string> result(mlir::Value value);
  mlir::FailureOr<std::string> declare(mlir::Value value, Place place);
  /// A variable pointing at `place` as `cType *`.
  std::string declarePointer(llvm::StringRef cType, Place place);
  /// `bytes` more of the kernel's scratch (256-byte aligned).
  Place takeScratch(int64_t bytes);
  /// A variable naming `elements` of `cType` (`bytes` each) in the
  /// kernel's scratch: an op kernel's own working memory.
  std::string scratchArray(llvm::StringRef cType, int64_t bytes,
                           int64_t elements);
  mlir::LogicalResult emitElementwise(mlir::Operation *op);
  mlir::LogicalResult emitShape(mlir::Operation *op);
  mlir::LogicalResult emitCompound(mlir::Operation *op);
  /// The elementwise ops (and reshapes) right after a norm gradient in its
  /// region that read its dx, each other's results and what its launch may
  /// read: they run in its epilogue. Empty for other ops.
  llvm::SmallVector<mlir::Operation *> getEpilogue(mlir::Operation *op);
  /// Whether anything outside `run` reads `value` (or the region yields it).
  bool isReadOutside(mlir::Value value, llvm::ArrayRef<mlir::Operation *> run);
  /// The row-wise call `call` with `run` as its epilogue lambda, then
  /// `callEnd`; the lambda also stores dx at `dxPointer` unless empty.
  mlir::LogicalResult emitEpilogue(mlir::Operation *op,
                                   llvm::ArrayRef<mlir::Operation *> run,
                                   llvm::StringRef call,
                                   llvm::StringRef callEnd,
                                   llvm::StringRef dxPointer);

  /// Whether `value` must be stored: the region yields it, or an op that
  /// is not a formula reads it, or a view reads it at other indices and
  /// recomputing it there would cost more than a few ops.
  bool needsMemory(mlir::Value value);
  /// Ops of a formula: those of `value` not stored (0 for a stored value).
  int64_t getFormulaSize(mlir::Value value);
  /// Whether this launch may read `value` at the loop's index (`same`) or
  /// at any index.
  bool isReadable(mlir::Value value, bool same);
  /// The value of element `index` of `value` in its compute type (rounded
  /// to its storage type). At the loop's own index (`same`) a formula's
  /// value is computed once into a local.
  mlir::FailureOr<std::string> element(mlir::Value value,
                                       const std::string &index, bool same);
  std::string mapIndex(const View &view, const std::string &index);
  /// Element `index` of a pad or a concat: an operand's element, or zero.
  mlir::FailureOr<std::string> piece(mlir::Value value, mlir::Operation *op,
                                     const std::string &index);
  /// The formula of an elementwise op over its operands' elements.
  mlir::FailureOr<std::string> formula(mlir::Operation *op,
                                       const std::string &index, bool same);

  /// Starts a part of the current launch for `op`, or a new launch when
  /// `join` is false or the current one is row-wise or closed.
  void beginPart(mlir::Operation *op, int64_t elements, bool join);
  /// A launch of its own; nothing joins a row-wise one.
  void beginLaunch(mlir::Operation *op, int64_t elements, bool perRow);
  /// Stores `value` (a formula or a view) into its place, in a loop.
  mlir::LogicalResult store(mlir::Value value, mlir::Operation *op);
  /// Opens (or continues) the grid-stride loop over `count` elements.
  void openLoop(int64_t count);
  void closeLoop();
  void comment(mlir::Operation *op, llvm::StringRef indent);

  struct Step {
    std::string text;
    int64_t elements;
    bool perRow;
  };
  std::string name;
  /// The pointer of each bound value: its variable and declaration.
  llvm::SmallVector<std::pair<std::string, std::string>> declarations;
  /// The launches before the current one, and the current one's text.
  std::vector<Step> done;
  std::string body;
  int64_t stepElements = 1;
  bool stepIsPerRow = false;
  /// The open loop's element count (-1: none), how it ends (a
  /// forEachElement lambda, or a row-wise op's epilogue and the rest of
  /// its call), and the locals it computed.
  int64_t loopCount = -1;
  std::string loopEnd;
  /// Ops already emitted in an epilogue (emitOp skips them).
  llvm::DenseSet<mlir::Operation *> emitted;
  llvm::DenseMap<mlir::Value, std::string> locals;
  /// What the current launch wrote, by variable.
  llvm::StringMap<Written> written;
  std::vector<Launch> launches;
  llvm::DenseMap<mlir::Value, Bound> bound;
  /// Formulas not stored: elementwise ops and splat constants, views, and
  /// pads and concats (an operand's element or zero, one of the operands').
  llvm::DenseMap<mlir::Value, mlir::Operation *> formulas;
  llvm::DenseMap<mlir::Value, View> views;
  llvm::DenseMap<mlir::Value, mlir::Operation *> pieces;
  llvm::DenseMap<mlir::Value, Place> outputs;
  llvm::SmallVector<std::pair<mlir::Value, Place>> finalCopies;
  int64_t scratchTop;
  unsigned counter = 0, steps = 0;
};

} // namespace tgc::cuda

#endif // TGC_LIB_TARGET_CUDA_KERNELEMITTER_H
