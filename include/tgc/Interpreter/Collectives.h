//===- Collectives.h - collectives among simulated ranks --------*- C++ -*-===//
//
// The shard dialect's collectives computed on host tensors for the devices
// of a mesh simulated in one process, and the block slicing that they and
// sharded arguments share. Devices are numbered row-major over the mesh axes
// (the last axis innermost); a collective over a list of axes acts within
// each group of devices that agree on every other axis, a device's position
// in its group being the mixed-radix number of its coordinates on the listed
// axes (first listed = major). docs/interpreter.md, "Simulated ranks".
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_COLLECTIVES_H
#define TGC_INTERPRETER_COLLECTIVES_H

#include "tgc/Eval/Kernels.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/SmallVector.h"

namespace tgc {

/// The coordinates of `device` on a mesh of shape `meshShape`.
llvm::SmallVector<int64_t>
getDeviceCoordinates(llvm::ArrayRef<int64_t> meshShape, int64_t device);

/// The mixed-radix number of `coordinates` on `axes` (the first major):
/// a device's position in its group, or the block it holds of a dimension
/// split over `axes`.
int64_t getPositionOnAxes(llvm::ArrayRef<int64_t> meshShape,
                          llvm::ArrayRef<int64_t> coordinates,
                          llvm::ArrayRef<unsigned> axes);

/// The groups a collective over `axes` acts within.
struct DeviceGroups {
  /// members[g][p]: the device at position p of group g.
  llvm::SmallVector<llvm::SmallVector<int64_t>> members;
  /// Per device: its group and its position in it.
  llvm::SmallVector<int64_t> groupOf, positionOf;

  /// `axes` must be distinct axes of the mesh.
  static DeviceGroups get(llvm::ArrayRef<int64_t> meshShape,
                          llvm::ArrayRef<unsigned> axes);
  int64_t getGroupSize() const { return members.front().size(); }
};

/// Block `blockIndices` of `tensor` when each dimension d is cut into
/// `blockCounts[d]` equal blocks (which must divide it).
Tensor extractBlock(const Tensor &tensor, llvm::ArrayRef<int64_t> blockCounts,
                    llvm::ArrayRef<int64_t> blockIndices);
/// Writes `block` at block `blockIndices` of `tensor` (whose dimensions are
/// multiples of the block's, in the same storage).
void insertBlock(Tensor &tensor, const Tensor &block,
                 llvm::ArrayRef<int64_t> blockIndices);
/// `tensor` with the sizes `shape`: its leading corner where `shape` is
/// smaller, zeros after its end where `shape` is larger (ZeRO's padding,
/// tg.unpadded_shape).
Tensor resizeTensor(const Tensor &tensor, llvm::ArrayRef<int64_t> shape);

// The collectives of one group: `pieces` are the members' inputs in group
// position order, all of one type and storage.

/// The pieces concatenated along `axis`: every member's result.
Tensor allGather(llvm::ArrayRef<const Tensor *> pieces, int64_t axis);

/// Block `position` of `groupSize` along `axis`.
Tensor allSlice(const Tensor &input, int64_t axis, int64_t groupSize,
                int64_t position);

/// Whether the collectives reduce with `kind` for this element type (sum,
/// max, min, product, average; average of floats only).
bool isSupportedReduction(mlir::shard::ReductionKind kind,
                          mlir::Type elementType);

/// The elementwise reduction of the pieces, in group position order, with
/// `resultElementType`: floats accumulate in f32 (in double where the
/// options hold doubles) and are rounded once to the result type; integers
/// in int64, wrapped to the result width. Max and min propagate NaN. Every
/// member's result.
Tensor allReduce(llvm::ArrayRef<const Tensor *> pieces,
                 mlir::shard::ReductionKind kind, mlir::Type resultElementType,
                 const EvalOptions &options);

/// allReduce, then each member keeps block `position` along `axis`: the
/// results in group position order.
llvm::SmallVector<Tensor> reduceScatter(llvm::ArrayRef<const Tensor *> pieces,
                                        mlir::shard::ReductionKind kind,
                                        mlir::Type resultElementType,
                                        int64_t axis,
                                        const EvalOptions &options);

/// Member i splits its piece along `splitAxis` into group-size blocks and
/// sends block j to member j, which concatenates what it receives along
/// `concatAxis` in group position order: the results in group position
/// order.
llvm::SmallVector<Tensor> allToAll(llvm::ArrayRef<const Tensor *> pieces,
                                   int64_t splitAxis, int64_t concatAxis);

/// Whether two tensors hold the same bits (NaN equals a NaN of the same
/// payload, 0 differs from -0).
bool areBitwiseEqual(const Tensor &a, const Tensor &b);

} // namespace tgc

#endif // TGC_INTERPRETER_COLLECTIVES_H
