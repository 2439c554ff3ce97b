//===- ShardedTensors.cpp - global tensors split over a mesh --------------===//

#include "tgc/Interpreter/ShardedTensors.h"

#include "tgc/Interpreter/Collectives.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace tgc;

ShardedLayout ShardedLayout::getReplicated(unsigned rank) {
  ShardedLayout layout;
  layout.dimAxes.resize(rank);
  return layout;
}

bool ShardedLayout::isReplicated() const {
  return unreducedAxes.empty() &&
         llvm::all_of(dimAxes, [](const auto &axes) { return axes.empty(); });
}

std::string ShardedLayout::verify(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> meshShape) const {
  if (dimAxes.size() != shape.size())
    return "the sharding has " + std::to_string(dimAxes.size()) +
           " dimensions, the tensor " + std::to_string(shape.size());
  llvm::SmallSet<unsigned, 4> used;
  auto use = [&](unsigned axis) -> std::string {
    if (axis >= meshShape.size())
      return "mesh axis " + std::to_string(axis) + " does not exist";
    if (!used.insert(axis).second)
      return "mesh axis " + std::to_string(axis) + " is used twice";
    return "";
  };
  for (auto [dim, axes] : llvm::enumerate(dimAxes)) {
    for (unsigned axis : axes)
      if (std::string error = use(axis); !error.empty())
        return error;
    int64_t blocks = getBlockCount(dim, meshShape);
    if (shape[dim] % blocks != 0)
      return "dimension " + std::to_string(dim) + " of size " +
             std::to_string(shape[dim]) + " does not split into " +
             std::to_string(blocks) + " equal blocks";
  }
  for (unsigned axis : unreducedAxes)
    if (std::string error = use(axis); !error.empty())
      return error;
  return "";
}

int64_t ShardedLayout::getBlockCount(unsigned dim,
                                     ArrayRef<int64_t> meshShape) const {
  int64_t blocks = 1;
  for (unsigned axis : dimAxes[dim])
    blocks *= meshShape[axis];
  return blocks;
}

SmallVector<int64_t>
ShardedLayout::getLocalShape(ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> meshShape) const {
  SmallVector<int64_t> local;
  for (auto [dim, size] : llvm::enumerate(shape))
    local.push_back(size / getBlockCount(dim, meshShape));
  return local;
}

SmallVector<int64_t>
ShardedLayout::getGlobalShape(ArrayRef<int64_t> localShape,
                              ArrayRef<int64_t> meshShape) const {
  SmallVector<int64_t> global;
  for (auto [dim, size] : llvm::enumerate(localShape))
    global.push_back(size * getBlockCount(dim, meshShape));
  return global;
}

/// The block counts of every dimension, and the block device `device`
/// holds.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
getBlockOf(const ShardedLayout &layout, ArrayRef<int64_t> meshShape,
           int64_t device) {
  SmallVector<int64_t> coordinates = getDeviceCoordinates(meshShape, device);
  SmallVector<int64_t> counts, indices;
  for (auto [dim, axes] : llvm::enumerate(layout.dimAxes)) {
    counts.push_back(layout.getBlockCount(dim, meshShape));
    indices.push_back(getPositionOnAxes(meshShape, coordinates, axes));
  }
  return {counts, indices};
}

static int64_t getNumDevices(ArrayRef<int64_t> meshShape) {
  int64_t count = 1;
  for (int64_t size : meshShape)
    count *= size;
  return count;
}

SmallVector<Tensor> tgc::splitTensor(const Tensor &global,
                                     const ShardedLayout &layout,
                                     ArrayRef<int64_t> meshShape) {
  SmallVector<Tensor> locals;
  for (int64_t device = 0, e = getNumDevices(meshShape); device < e; ++device) {
    auto [counts, indices] = getBlockOf(layout, meshShape, device);
    locals.push_back(extractBlock(global, counts, indices));
  }
  return locals;
}

/// `sum` += `value` elementwise in the storage of both.
static void addInto(Tensor &sum, const Tensor &value) {
  switch (sum.getStorage()) {
  case Tensor::Storage::Float:
    for (auto [s, v] : llvm::zip_equal(sum.floats(), value.floats()))
      s += v;
    return;
  case Tensor::Storage::Double:
    for (auto [s, v] : llvm::zip_equal(sum.doubles(), value.doubles()))
      s += v;
    return;
  case Tensor::Storage::Int:
    for (auto [s, v] : llvm::zip_equal(sum.ints(), value.ints()))
      s = static_cast<int64_t>(static_cast<uint64_t>(s) +
                               static_cast<uint64_t>(v));
    return;
  }
}

llvm::Expected<Tensor> tgc::assembleTensor(ArrayRef<Tensor> locals,
                                           const ShardedLayout &layout,
                                           ArrayRef<int64_t> meshShape,
                                           const EvalOptions &options) {
  int64_t numDevices = getNumDevices(meshShape);
  int64_t partials = 1;
  for (unsigned axis : layout.unreducedAxes)
    partials *= meshShape[axis];
  // The devices that hold (block, partial): the first one is the replica
  // kept, the others must hold the same bits.
  llvm::DenseMap<int64_t, SmallVector<int64_t>> representative;
  SmallVector<SmallVector<int64_t>> blockOf(numDevices);
  for (int64_t device = 0; device < numDevices; ++device) {
    auto [counts, indices] = getBlockOf(layout, meshShape, device);
    int64_t block = 0;
    for (auto [count, index] : llvm::zip_equal(counts, indices))
      block = block * count + index;
    int64_t partial =
        getPositionOnAxes(meshShape, getDeviceCoordinates(meshShape, device),
                          layout.unreducedAxes);
    blockOf[device] = indices;
    SmallVector<int64_t> &holders = representative[block];
    if (holders.empty())
      holders.assign(partials, -1);
    int64_t &first = holders[partial];
    if (first < 0) {
      first = device;
      continue;
    }
    if (!areBitwiseEqual(locals[device], locals[first]))
      return llvm::createStringError(
          "device " + Twine(device) + " and device " + Twine(first) +
          " should hold the same replica, but their values differ");
  }
  const Tensor &some = locals.front();
  Tensor global(
      some.getType().clone(layout.getGlobalShape(some.getShape(), meshShape)),
      some.getStorage());
  for (auto &[block, holders] : representative) {
    Tensor sum = locals[holders.front()];
    for (int64_t device : ArrayRef<int64_t>(holders).drop_front())
      addInto(sum, locals[device]);
    if (holders.size() > 1)
      normalizeTensor(sum, options);
    insertBlock(global, sum, blockOf[holders.front()]);
  }
  return global;
}
