//===- TGAttrs.td - attributes of the tg dialect -----------*- tablegen -*-===//
//
// The sharding of a tensor over a device mesh.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGATTRS_TD
#define TGC_DIALECT_TG_TGATTRS_TD

include "tgc/Dialect/TG/TGDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def TG_ShardingAttr : AttrDef<TG_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "How a tensor is split over the axes of a device mesh";
  let description = [{
    The sharding of a tensor over the mesh `@mesh` (a `shard.grid` whose
    `tg.mesh_axes` names its axes; the last axis is innermost). For each
    dimension of the global tensor, the mesh axes it is split over, major
    first: a dimension of size D split over axes of sizes a and b is cut into
    a·b equal blocks, and the device at coordinates (i, j) on those axes holds
    block i·b + j. A dimension without axes is replicated. `?` marks a
    dimension that propagation may still split further (open); the others are
    closed. `unreduced` lists the axes over which each device holds a partial
    sum of the value (the global value is the sum over the group).
    `priority` orders annotations for `tg-shard-propagate` (lower is
    stronger: 0 user, 1 batch / data parallelism, 2 tensor parallelism,
    3 ZeRO); absent, the sharding is a result of propagation.

    ```mlir
    // [batch, hidden]: batch split over dp, hidden over tp.
    #tg.sharding<@mesh, [{"dp"}, {"tp"} ]>
    // Replicated, and open on its first dimension, from the user.
    #tg.sharding<@mesh, [{?}, {} ], priority = 0>
    // A partial sum over tp, its rows split over dp.
    #tg.sharding<@mesh, [{"dp"}, {} ], unreduced = {"tp"}>
    ```

    Function arguments and results carry it as `tg.sharding`; after
    `tg-shard-propagate`, every op result carries one in the op's
    `tg.shardings` array. After `tg-partition` the types are local and the
    argument and result attributes still describe the global layout.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    "::mlir::ArrayAttr":$dims,
    ArrayRefParameter<"bool">:$openDims,
    "::mlir::ArrayAttr":$unreduced,
    DefaultValuedParameter<"int64_t", "-1">:$priority
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The axes of dimension `dim`, major first.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(unsigned dim) const;
    /// The axes of the partial sums.
    ::llvm::SmallVector<::llvm::StringRef> getUnreducedAxes() const;
    int64_t getRank() const { return getDims().size(); }
    bool isOpen(unsigned dim) const { return getOpenDims()[dim]; }
    bool hasPriority() const { return getPriority() >= 0; }
    /// No dimension split and no partial sum.
    bool isReplicated() const;
    /// Every axis the sharding uses, in dimension order, then the unreduced.
    ::llvm::SmallVector<::llvm::StringRef> getUsedAxes() const;

    /// A sharding from axis names per dimension (closed, no priority).
    static ShardingAttr get(::mlir::MLIRContext *context,
                            ::llvm::StringRef mesh,
                            ::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>> dims,
                            ::llvm::ArrayRef<::llvm::StringRef> unreduced = {},
                            int64_t priority = -1);
    /// The replicated sharding of a rank-`rank` tensor.
    static ShardingAttr getReplicated(::mlir::MLIRContext *context,
                                      ::llvm::StringRef mesh, int64_t rank,
                                      int64_t priority = -1);
  }];
}

#endif // TGC_DIALECT_TG_TGATTRS_TD
