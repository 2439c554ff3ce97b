//===- Collectives.cpp - collectives among simulated ranks ----------------===//
//
// Device groups, block slicing, and the reductions and data movements of
// the shard collectives on host tensors.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/Collectives.h"

#include "tgc/Eval/TensorVisit.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Devices and groups
//===----------------------------------------------------------------------===//

SmallVector<int64_t> tgc::getDeviceCoordinates(ArrayRef<int64_t> meshShape,
                                               int64_t device) {
  SmallVector<int64_t> coordinates(meshShape.size());
  for (int64_t axis = static_cast<int64_t>(meshShape.size()) - 1; axis >= 0;
       --axis) {
    coordinates[axis] = device % meshShape[axis];
    device /= meshShape[axis];
  }
  return coordinates;
}

int64_t tgc::getPositionOnAxes(ArrayRef<int64_t> meshShape,
                               ArrayRef<int64_t> coordinates,
                               ArrayRef<unsigned> axes) {
  int64_t position = 0;
  for (unsigned axis : axes)
    position = position * meshShape[axis] + coordinates[axis];
  return position;
}

DeviceGroups DeviceGroups::get(ArrayRef<int64_t> meshShape,
                               ArrayRef<unsigned> axes) {
  int64_t numDevices = 1;
  for (int64_t size : meshShape)
    numDevices *= size;
  int64_t groupSize = 1;
  for (unsigned axis : axes)
    groupSize *= meshShape[axis];
  DeviceGroups groups;
  groups.groupOf.resize(numDevices);
  groups.positionOf.resize(numDevices);
  // A group is named by the device's coordinates off the group's axes.
  llvm::DenseMap<int64_t, int64_t> groupOfKey;
  for (int64_t device = 0; device < numDevices; ++device) {
    SmallVector<int64_t> coordinates = getDeviceCoordinates(meshShape, device);
    int64_t position = getPositionOnAxes(meshShape, coordinates, axes);
    for (unsigned axis : axes)
      coordinates[axis] = 0;
    int64_t key = 0;
    for (auto [size, coordinate] : llvm::zip(meshShape, coordinates))
      key = key * size + coordinate;
    auto [it, inserted] = groupOfKey.try_emplace(key, groups.members.size());
    if (inserted)
      groups.members.emplace_back(groupSize, -1);
    groups.members[it->second][position] = device;
    groups.groupOf[device] = it->second;
    groups.positionOf[device] = position;
  }
  return groups;
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

/// Copies the box of `extent` at `sourceOffsets` of `source` (of
/// `sourceShape`) to `destinationOffsets` of `destination`: whole rows of
/// the innermost dimension at a time.
template <typename Vector>
static void copyBox(const Vector &source, ArrayRef<int64_t> sourceShape,
                    ArrayRef<int64_t> sourceOffsets, Vector &destination,
                    ArrayRef<int64_t> destinationShape,
                    ArrayRef<int64_t> destinationOffsets,
                    ArrayRef<int64_t> extent) {
  int64_t rank = extent.size();
  if (llvm::is_contained(extent, 0))
    return;
  if (rank == 0) {
    destination[0] = source[0];
    return;
  }
  auto strides = [rank](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> result(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      result[d] = result[d + 1] * shape[d + 1];
    return result;
  };
  SmallVector<int64_t> sourceStrides = strides(sourceShape);
  SmallVector<int64_t> destinationStrides = strides(destinationShape);
  SmallVector<int64_t> index(rank, 0);
  int64_t row = extent[rank - 1];
  while (true) {
    int64_t from = 0, to = 0;
    for (int64_t d = 0; d < rank; ++d) {
      from += (sourceOffsets[d] + index[d]) * sourceStrides[d];
      to += (destinationOffsets[d] + index[d]) * destinationStrides[d];
    }
    std::copy_n(source.begin() + from, row, destination.begin() + to);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < extent[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

Tensor tgc::extractBlock(const Tensor &tensor, ArrayRef<int64_t> blockCounts,
                         ArrayRef<int64_t> blockIndices) {
  ArrayRef<int64_t> shape = tensor.getShape();
  SmallVector<int64_t> blockShape, offsets;
  for (auto [size, count, index] :
       llvm::zip_equal(shape, blockCounts, blockIndices)) {
    blockShape.push_back(size / count);
    offsets.push_back(index * (size / count));
  }
  Tensor block(tensor.getType().clone(blockShape), tensor.getStorage());
  SmallVector<int64_t> zeros(shape.size(), 0);
  detail::visitData(tensor, block, [&](const auto &source, auto &destination) {
    copyBox(source, shape, offsets, destination, blockShape, zeros, blockShape);
  });
  return block;
}

void tgc::insertBlock(Tensor &tensor, const Tensor &block,
                      ArrayRef<int64_t> blockIndices) {
  ArrayRef<int64_t> blockShape = block.getShape();
  SmallVector<int64_t> offsets;
  for (auto [size, index] : llvm::zip_equal(blockShape, blockIndices))
    offsets.push_back(index * size);
  SmallVector<int64_t> zeros(blockShape.size(), 0);
  detail::visitData(block, tensor, [&](const auto &source, auto &destination) {
    copyBox(source, blockShape, zeros, destination, tensor.getShape(), offsets,
            blockShape);
  });
}

Tensor tgc::resizeTensor(const Tensor &tensor, ArrayRef<int64_t> shape) {
  Tensor result(tensor.getType().clone(shape), tensor.getStorage());
  SmallVector<int64_t> extent, zeros(shape.size(), 0);
  for (auto [have, want] : llvm::zip_equal(tensor.getShape(), shape))
    extent.push_back(std::min(have, want));
  if (llvm::is_contained(extent, 0))
    return result;
  detail::visitData(tensor, result, [&](const auto &source, auto &destination) {
    copyBox(source, tensor.getShape(), zeros, destination, shape, zeros,
            extent);
  });
  return result;
}

/// Block counts and indices that cut only `axis`.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
alongAxis(int64_t rank, int64_t axis, int64_t count, int64_t index) {
  SmallVector<int64_t> counts(rank, 1), indices(rank, 0);
  counts[axis] = count;
  indices[axis] = index;
  return {counts, indices};
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Tensor tgc::allGather(ArrayRef<const Tensor *> pieces, int64_t axis) {
  const Tensor &first = *pieces.front();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] *= static_cast<int64_t>(pieces.size());
  Tensor result(first.getType().clone(shape), first.getStorage());
  for (auto [position, piece] : llvm::enumerate(pieces))
    insertBlock(result, *piece,
                alongAxis(shape.size(), axis, pieces.size(), position).second);
  return result;
}

Tensor tgc::allSlice(const Tensor &input, int64_t axis, int64_t groupSize,
                     int64_t position) {
  auto [counts, indices] =
      alongAxis(input.getShape().size(), axis, groupSize, position);
  return extractBlock(input, counts, indices);
}

SmallVector<Tensor> tgc::allToAll(ArrayRef<const Tensor *> pieces,
                                  int64_t splitAxis, int64_t concatAxis) {
  int64_t groupSize = pieces.size();
  int64_t rank = pieces.front()->getShape().size();
  SmallVector<Tensor> results;
  for (int64_t receiver = 0; receiver < groupSize; ++receiver) {
    SmallVector<Tensor> received;
    for (const Tensor *piece : pieces)
      received.push_back(allSlice(*piece, splitAxis, groupSize, receiver));
    SmallVector<int64_t> shape(received.front().getShape());
    shape[concatAxis] *= groupSize;
    Tensor result(received.front().getType().clone(shape),
                  received.front().getStorage());
    for (auto [sender, block] : llvm::enumerate(received))
      insertBlock(result, block,
                  alongAxis(rank, concatAxis, groupSize, sender).second);
    results.push_back(std::move(result));
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

bool tgc::isSupportedReduction(shard::ReductionKind kind, Type elementType) {
  switch (kind) {
  case shard::ReductionKind::Sum:
  case shard::ReductionKind::Max:
  case shard::ReductionKind::Min:
  case shard::ReductionKind::Product:
    return true;
  case shard::ReductionKind::Average:
    return isa<FloatType>(elementType);
  default:
    return false;
  }
}

/// Combines `value` into `accumulator` (T: float, double or int64_t).
template <typename T>
static T combine(shard::ReductionKind kind, T accumulator, T value) {
  switch (kind) {
  case shard::ReductionKind::Max:
  case shard::ReductionKind::Min: {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(accumulator) || std::isnan(value))
        return std::numeric_limits<T>::quiet_NaN();
    bool takeValue = kind == shard::ReductionKind::Max ? value > accumulator
                                                       : value < accumulator;
    return takeValue ? value : accumulator;
  }
  case shard::ReductionKind::Product:
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<uint64_t>(accumulator) *
                            static_cast<uint64_t>(value));
    else
      return accumulator * value;
  default: // Sum and Average.
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<uint64_t>(accumulator) +
                            static_cast<uint64_t>(value));
    else
      return accumulator + value;
  }
}

/// Element `index` of `tensor` as T.
template <typename T> static T elementAs(const Tensor &tensor, int64_t index) {
  if constexpr (std::is_integral_v<T>)
    return tensor.isIntStorage() ? tensor.ints()[index]
                                 : static_cast<T>(tensor.getAsDouble(index));
  else
    return static_cast<T>(tensor.getAsDouble(index));
}

template <typename T>
static void reduceInto(std::vector<T> &result, ArrayRef<const Tensor *> pieces,
                       shard::ReductionKind kind) {
  int64_t count = static_cast<int64_t>(result.size());
  for (int64_t i = 0; i < count; ++i) {
    T accumulator = elementAs<T>(*pieces.front(), i);
    for (const Tensor *piece : pieces.drop_front())
      accumulator = combine(kind, accumulator, elementAs<T>(*piece, i));
    if constexpr (std::is_floating_point_v<T>)
      if (kind == shard::ReductionKind::Average)
        accumulator /= static_cast<T>(pieces.size());
    result[i] = accumulator;
  }
}

Tensor tgc::allReduce(ArrayRef<const Tensor *> pieces,
                      shard::ReductionKind kind, Type resultElementType,
                      const EvalOptions &options) {
  KernelContext context{options};
  Tensor result =
      context.makeResult(pieces.front()->getType().clone(resultElementType));
  switch (result.getStorage()) {
  case Tensor::Storage::Float:
    reduceInto(result.floats(), pieces, kind);
    break;
  case Tensor::Storage::Double:
    reduceInto(result.doubles(), pieces, kind);
    break;
  case Tensor::Storage::Int:
    reduceInto(result.ints(), pieces, kind);
    break;
  }
  normalizeTensor(result, options);
  return result;
}

SmallVector<Tensor> tgc::reduceScatter(ArrayRef<const Tensor *> pieces,
                                       shard::ReductionKind kind,
                                       Type resultElementType, int64_t axis,
                                       const EvalOptions &options) {
  Tensor reduced = allReduce(pieces, kind, resultElementType, options);
  SmallVector<Tensor> results;
  for (int64_t position = 0, e = pieces.size(); position < e; ++position)
    results.push_back(allSlice(reduced, axis, e, position));
  return results;
}

bool tgc::areBitwiseEqual(const Tensor &a, const Tensor &b) {
  if (a.getType() != b.getType() || a.getStorage() != b.getStorage())
    return false;
  auto same = [](const auto &x, const auto &y) {
    return x.size() == y.size() &&
           (x.empty() ||
            std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  switch (a.getStorage()) {
  case Tensor::Storage::Float:
    return same(a.floats(), b.floats());
  case Tensor::Storage::Double:
    return same(a.doubles(), b.doubles());
  case Tensor::Storage::Int:
    return same(a.ints(), b.ints());
  }
  return false;
}
