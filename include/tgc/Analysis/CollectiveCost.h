//===- CollectiveCost.h - modelled time of shard collectives ----*- C++ -*-===//
//
// The communication half of the cost model: the bytes each device sends and
// the time of a `shard` collective (all_reduce, all_gather, reduce_scatter,
// all_to_all, all_slice) in the alpha-beta model of one link, ring
// algorithms, NVLink when every group of the collective lies in one node and
// InfiniBand otherwise (docs/cost-model.md); and of the point-to-point
// send/recv pairs between pipeline stages (docs/pipeline.md).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_COLLECTIVECOST_H
#define TGC_ANALYSIS_COLLECTIVECOST_H

#include "tgc/Analysis/Device.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace tgc {

/// The collectives the cost model knows, in report order.
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  AllSlice,
  Send,
  Recv
};
constexpr unsigned kNumCollectiveKinds = 7;
/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_slice",
/// "send", "recv".
llvm::StringRef stringifyCollectiveKind(CollectiveKind kind);

enum class LinkKind { NVLink, InfiniBand };
llvm::StringRef stringifyLinkKind(LinkKind link);

/// What one collective costs each device of its group.
struct CollectiveCost {
  CollectiveKind kind = CollectiveKind::AllReduce;
  /// Devices per group (the product of the grid axes' sizes).
  int64_t groupSize = 1;
  LinkKind link = LinkKind::NVLink;
  /// Latency terms: the ring's steps.
  int64_t steps = 0;
  /// Bytes each device sends (and receives).
  int64_t bytesPerDevice = 0;
  /// steps * latency + bytesPerDevice / bandwidth, in seconds.
  double time = 0;
};

/// What a collective op moves, independent of the device: its kind, group
/// and full tensor (see estimateCollectiveCost), and the grid it runs on.
struct CollectiveShape {
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t groupSize = 1;
  int64_t bytes = 0;
  llvm::SmallVector<int64_t> gridShape;
  llvm::SmallVector<int64_t> groupAxes;
};

/// The shape of the shard collective `op`: its grid looked up from its
/// `grid` symbol, its group from `grid_axes`, its full tensor's bytes.
/// Fails for an op that is not one of the collectives above, or whose grid
/// or tensor sizes are not static; `why` (when given) says which.
mlir::FailureOr<CollectiveShape> getCollectiveShape(mlir::Operation *op,
                                                    std::string *why = nullptr);

/// The latency terms of a ring collective of `kind` among `groupSize`
/// devices: 2(n-1) for an all-reduce, n-1 for the others, 0 for an
/// all-slice or a group of one; 1 for a send or a recv (one message).
int64_t getCollectiveSteps(CollectiveKind kind, int64_t groupSize);
/// The bytes each device sends in it: each step sends 1/n of `bytes` (the
/// full tensor, as for estimateCollectiveCost).
int64_t getCollectiveBytesPerDevice(CollectiveKind kind, int64_t groupSize,
                                    int64_t bytes);

/// The ring cost of a collective of `kind` among `groupSize` devices over
/// `link`. `bytes` is the full tensor: the unreduced operand of an
/// all-reduce or reduce-scatter, the gathered result of an all-gather, the
/// local tensor of an all-to-all. Per device, an all-reduce sends
/// 2(n-1)/n of it in 2(n-1) steps, an all-gather and a reduce-scatter
/// (n-1)/n in n-1 steps, an all-to-all (n-1)/n in n-1 steps; an all-slice
/// sends nothing. A send sends all of `bytes` in one message; a recv sends
/// nothing and takes the time of the message it waits for.
CollectiveCost estimateCollectiveCost(CollectiveKind kind, int64_t groupSize,
                                      int64_t bytes, LinkKind link,
                                      const DeviceSpec &device);

/// Whether each group of a collective over the grid axes `groupAxes` of a
/// grid of shape `gridShape` lies in one node. Devices are numbered
/// row-major (the last axis innermost) and node k holds ranks
/// [k * gpusPerNode, (k + 1) * gpusPerNode); a group is the devices whose
/// coordinates differ only on `groupAxes`. False if any group spans nodes.
bool isGroupWithinNode(llvm::ArrayRef<int64_t> gridShape,
                       llvm::ArrayRef<int64_t> groupAxes, int64_t gpusPerNode);

/// Whether the devices at coordinates `from` and `to` on grid axis `axis`
/// (the others equal) always lie in one node, numbered as above.
bool isPairWithinNode(llvm::ArrayRef<int64_t> gridShape, int64_t axis,
                      int64_t from, int64_t to, int64_t gpusPerNode);

/// The kind of a shard collective op (send and recv included), or nullopt
/// for any other op.
std::optional<CollectiveKind> getCollectiveKind(mlir::Operation *op);

/// The cost of the shard collective `op` on `device`: its shape, over
/// NVLink when isGroupWithinNode holds for the device's gpusPerNode, else
/// over InfiniBand. A send or recv with a `tg.stage` (docs/pipeline.md)
/// runs between its own device and its peer on the one grid axis it names:
/// over NVLink when the two share a node (isPairWithinNode). Fails where
/// getCollectiveShape does, silently (verifyCollectivesModelled says why).
mlir::FailureOr<CollectiveCost>
estimateCollectiveCost(mlir::Operation *op, const DeviceSpec &device);

/// Checks that every shard op in `function` is a collective the cost model
/// knows, with a grid it can resolve: a located error otherwise.
mlir::LogicalResult verifyCollectivesModelled(mlir::Operation *function);

} // namespace tgc

#endif // TGC_ANALYSIS_COLLECTIVECOST_H
