//===- TGSharding.h - meshes and the sharding attribute --------*- C++ -*-===//
//
// A device mesh (a `shard.grid` with named axes) and `#tg.sharding`, the
// layout of a tensor over it: what tg-shard-propagate decides, tg-partition
// realizes, and the simulated ranks and the report read.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGSHARDING_H
#define TGC_DIALECT_TG_TGSHARDING_H

#include "tgc/Dialect/TG/TGDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

#define GET_ATTRDEF_CLASSES
#include "tgc/Dialect/TG/TGAttrs.h.inc"

namespace tgc::tg {

/// The name of the `shard.grid` attribute that names the mesh's axes.
inline constexpr llvm::StringLiteral kMeshAxesAttrName = "tg.mesh_axes";
/// The argument/result attribute holding a `#tg.sharding`.
inline constexpr llvm::StringLiteral kShardingAttrName = "tg.sharding";
/// The op attribute holding one `#tg.sharding` per result.
inline constexpr llvm::StringLiteral kShardingsAttrName = "tg.shardings";
/// The op attribute holding, per result, the priority its sharding was
/// propagated at (-1: none), so that tg-partition weighs layouts as
/// propagation did.
inline constexpr llvm::StringLiteral kShardingPrioritiesAttrName =
    "tg.sharding_priorities";
/// The unit attribute of a `tg.embedding` whose table may be split on its
/// rows (Megatron's vocabulary-parallel embedding, chosen by
/// tg-shard-annotate's tp preset or by a user sharding of the table).
/// Without it the rows stay whole: a lookup that sums partial rows costs an
/// all-reduce of its result, more than gathering a small table (GPT-2's
/// positions under ZeRO-3).
inline constexpr llvm::StringLiteral kVocabParallelAttrName =
    "tg.vocab_parallel";
/// The exclusive bound of the global ids or labels an op reads, where its
/// types no longer show it (the data of `tgc train` and of the generated
/// trainer are drawn below it, and the interpreter checks it): on the
/// `tg.sub` that shifts them into a device's block of rows or classes
/// (tg-partition's vocabulary-parallel ops), and on the `tg.embedding`,
/// `tg.cross_entropy` and `tg.cross_entropy_grad` of a padded vocabulary
/// (tg-shard-annotate under tp: its tables have more rows, its logits more
/// classes, than there are ids).
inline constexpr llvm::StringLiteral kIdBoundAttrName = "tg.id_bound";
/// On an argument or result that ZeRO pads (tg-shard-annotate: no dimension
/// of a parameter divides by dp): the shape the caller holds. The function's
/// type is that shape with zeros appended at the end of each dimension
/// (before tg-partition; its global shape after), so that dp splits it into
/// equal blocks; callers (`tgc run` and `tgc train`, the generated trainer,
/// checkpoints) pad on the way in and cut the padding off on the way out.
inline constexpr llvm::StringLiteral kUnpaddedShapeAttrName =
    "tg.unpadded_shape";
/// On a dropout or an attention with dropout whose heads tp padded
/// (tg-shard-annotate): the shape of its numbers before the padding.
/// tg-partition draws each device's block as a block of that shape (its
/// `global_shape`), so the real heads get the unpadded step's masks; the
/// padded heads' numbers repeat others', and their values are zeros.
inline constexpr llvm::StringLiteral kUnpaddedRandomShapeAttrName =
    "tg.unpadded_random_shape";

/// A mesh of devices with named axes, the last innermost: device numbers are
/// row-major over the axes.
struct Mesh {
  std::string name;
  llvm::SmallVector<std::string> axisNames;
  llvm::SmallVector<int64_t> axisSizes;

  int64_t getNumDevices() const;
  std::optional<unsigned> getAxisIndex(llvm::StringRef axis) const;
  /// The size of axis `axis` (which must exist).
  int64_t getAxisSize(llvm::StringRef axis) const;
  /// The product of the sizes of `axes`.
  int64_t getGroupSize(llvm::ArrayRef<llvm::StringRef> axes) const;

  /// `dp=8,tp=4`: axis names (letters, digits, `_`; unique) with sizes >= 1.
  static llvm::FailureOr<Mesh> parse(llvm::StringRef spec, std::string &error);
  /// The mesh of the `shard.grid` named `gridName` in the symbol table above
  /// `from`, with its `tg.mesh_axes`; a located error on `from` otherwise.
  static mlir::FailureOr<Mesh> lookup(mlir::Operation *from,
                                      llvm::StringRef gridName);
  /// `dp=8,tp=4`.
  std::string str() const;
  /// The mesh without axis `axis` (itself when it has none).
  Mesh withoutAxis(llvm::StringRef axis) const;
};

/// The number of blocks dimension `dim` is cut into.
int64_t getShardCount(ShardingAttr sharding, unsigned dim, const Mesh &mesh);
/// The local shape of a tensor of `globalShape`; nullopt when a split does
/// not divide its dimension.
std::optional<llvm::SmallVector<int64_t>>
getLocalShape(ShardingAttr sharding, llvm::ArrayRef<int64_t> globalShape,
              const Mesh &mesh);
llvm::SmallVector<int64_t> getGlobalShape(ShardingAttr sharding,
                                          llvm::ArrayRef<int64_t> localShape,
                                          const Mesh &mesh);

/// `tg.unpadded_shape` of argument / result `index` (null: not padded).
mlir::DenseI64ArrayAttr getArgUnpaddedShape(mlir::FunctionOpInterface function,
                                            unsigned index);
mlir::DenseI64ArrayAttr
getResultUnpaddedShape(mlir::FunctionOpInterface function, unsigned index);
/// The shape a caller holds for a value of global shape `global` whose
/// `tg.unpadded_shape` is `unpadded` (null: `global`); a message when the
/// attribute does not fit (another rank, or a dimension larger than the
/// global one).
mlir::FailureOr<llvm::SmallVector<int64_t>>
getCallerShape(llvm::ArrayRef<int64_t> global, mlir::DenseI64ArrayAttr unpadded,
               std::string &error);
/// The shape the caller holds for argument `index` of `function`: its global
/// shape on `mesh` (its type's without one), or its tg.unpadded_shape; a
/// located error when that does not fit.
mlir::FailureOr<llvm::SmallVector<int64_t>>
getCallerArgShape(mlir::FunctionOpInterface function, unsigned index,
                  const Mesh *mesh);

/// `tg.sharding` of argument / result `index` (null: none, i.e. replicated).
ShardingAttr getArgSharding(mlir::FunctionOpInterface function, unsigned index);
ShardingAttr getResultSharding(mlir::FunctionOpInterface function,
                               unsigned index);
/// The `tg.shardings` entry of `value`'s defining op (null: none).
ShardingAttr getValueSharding(mlir::Value value);

/// The mesh a function's shardings refer to: the first `tg.sharding` of its
/// arguments and results (all must name the same mesh). Null when none.
mlir::FlatSymbolRefAttr getFunctionMesh(mlir::FunctionOpInterface function);
/// The Mesh of getFunctionMesh: nullopt when the function has no sharding,
/// a located error when its grid is missing or has no axis names.
mlir::FailureOr<std::optional<Mesh>>
lookupFunctionMesh(mlir::FunctionOpInterface function);

} // namespace tgc::tg

#endif // TGC_DIALECT_TG_TGSHARDING_H
