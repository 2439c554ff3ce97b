//===- ShardedTensors.h - global tensors split over a mesh ------*- C++ -*-===//
//
// From a global tensor and its layout on a mesh, each device's local tensor;
// from the devices' local tensors, the global one. A layout is what a
// tg.sharding attribute says with its axis names resolved to mesh axes:
// dimension d of the global tensor is cut into as many equal blocks as its
// axes have devices together, and a device holds the block whose number is
// the mixed-radix number of its coordinates on those axes (first major);
// on unreduced axes the devices hold partial sums.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_SHARDEDTENSORS_H
#define TGC_INTERPRETER_SHARDEDTENSORS_H

#include "tgc/Eval/Kernels.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace tgc {

struct ShardedLayout {
  /// Per dimension, the mesh axes it is split over, the first major.
  llvm::SmallVector<llvm::SmallVector<unsigned>> dimAxes;
  /// The mesh axes over which the devices hold partial sums.
  llvm::SmallVector<unsigned> unreducedAxes;

  /// Every device holds the whole tensor.
  static ShardedLayout getReplicated(unsigned rank);
  bool isReplicated() const;

  /// Why the layout does not fit a tensor of `shape` on a mesh of
  /// `meshShape` (an axis out of range or used twice, a dimension not
  /// divided by its devices, a rank mismatch), or an empty string.
  std::string verify(llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> meshShape) const;

  /// The blocks dimension `dim` is cut into.
  int64_t getBlockCount(unsigned dim, llvm::ArrayRef<int64_t> meshShape) const;
  /// The local shape of a global `shape`, and the reverse.
  llvm::SmallVector<int64_t>
  getLocalShape(llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> meshShape) const;
  llvm::SmallVector<int64_t>
  getGlobalShape(llvm::ArrayRef<int64_t> localShape,
                 llvm::ArrayRef<int64_t> meshShape) const;
};

/// Each device's block of `global` (a verified layout without unreduced
/// axes): result[d] is device d's.
llvm::SmallVector<Tensor> splitTensor(const Tensor &global,
                                      const ShardedLayout &layout,
                                      llvm::ArrayRef<int64_t> meshShape);

/// The global tensor of the devices' `locals` (local[d] is device d's, all
/// of one type and storage; a verified layout): the blocks put in place,
/// the partial sums of unreduced axes added in position order (f32
/// accumulation for floats held as float, rounded once to the element type
/// as `options` say). An error when two devices that should hold the same
/// replica differ in any bit.
llvm::Expected<Tensor> assembleTensor(llvm::ArrayRef<Tensor> locals,
                                      const ShardedLayout &layout,
                                      llvm::ArrayRef<int64_t> meshShape,
                                      const EvalOptions &options);

} // namespace tgc

#endif // TGC_INTERPRETER_SHARDEDTENSORS_H
