//===- TGInterfaces.td - op interfaces of the tg dialect -*- tablegen -*-===//
//
// The interfaces through which passes learn what they need of an op, so that
// no pass lists op names: cost, differentiation, sharding and precision.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGINTERFACES_TD
#define TGC_DIALECT_TG_TGINTERFACES_TD

include "mlir/IR/OpBase.td"

def TG_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    What executing the op costs: floating-point operations (with the element
    type they run in, so the cost model can pick the right peak rate),
    transcendental function evaluations, and the bytes it reads from and
    writes to device memory when it runs as its own kernel.

    The figures describe the op as one kernel. A fusion region reports the
    FLOPs of its body but only the bytes of its own inputs and outputs.
  }];
  let methods = [
    InterfaceMethod<"Returns the cost of executing this op as one kernel.",
      "::tgc::tg::OpCost", "getCost">,
  ];
}

def TG_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    Reverse-mode differentiation: builds the vector-Jacobian product of the op.
    Given the gradients of the op's results (a null value where a result has
    no gradient), the op emits the ops that compute the gradient of each
    operand and returns them, one per operand; a null value marks an operand
    without a gradient (integer ids, labels, seeds).
  }];
  let methods = [
    InterfaceMethod<[{
        Whether operand `index` can receive a gradient.
      }], "bool", "isDifferentiableOperand", (ins "unsigned":$index),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::isa<::mlir::FloatType>(::mlir::getElementTypeOrSelf(
            $_op->getOperand(index).getType()));
      }]>,
    InterfaceMethod<[{
        Emits the vector-Jacobian product at the builder's insertion point and
        returns one gradient per operand (null where there is none).
      }], "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads)>,
  ];
}

def TG_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    How the op's tensor dimensions relate, as factors (the model of Shardy's
    `OpShardingRule`): each factor has a size, and each operand and result
    dimension is a product of factors, major to minor. A factor that appears
    in operands but in no result is a reduction factor: sharding it leaves
    partial sums. A factor whose sharding needs more than that (a softmax or
    a norm along it, a slice of it) is marked need-replication. Every tg op
    but the structure ops (`tg.fusion`, `tg.yield`) implements it, in
    TGSharding.cpp; `tgc-opt --tg-print-sharding-rules` prints the rules in
    Shardy's notation.

    The rule states the op's mathematics (what `--tg-print-sharding-rules`
    prints). An op whose per-device computation would need the device's
    position (a dropout mask of global element indices, a causal mask of
    global positions) restricts it: the factors tg-partition cannot split on
    one device's block are need-replication for propagation and
    partitioning, which gathers them first.
  }];
  let methods = [
    InterfaceMethod<"Returns the factor-based sharding rule of the op.",
      "::tgc::tg::ShardingRule", "getShardingRule">,
    InterfaceMethod<[{
        Marks need-replication the factors of `rule` (the op's own) that
        tg-partition cannot split on one device's block. By default none.
      }],
      "void", "restrictForPartitioning",
      (ins "::tgc::tg::ShardingRule &":$rule), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{ return; }]>,
  ];
}

def TG_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    Mixed precision (`tg-mixed-precision`): in which type each float operand
    of the op may be fed, which results take the op's compute type, and what
    the op accumulates in. The pass decides from these answers alone; it
    lists no op names.

    `OperandPrecision` values:

    * `Follow`: the op moves data without arithmetic (shape ops); it runs in
      whatever type the operand has, and its results follow.
    * `Reduced`: the operand may be bf16 or f16 (elementwise arithmetic,
      attention, normalized input of a norm).
    * `Fp8`: as `Reduced`, and the operand may also be quantized to an fp8
      format with a per-tensor scale (matmul inputs, which tensor cores read
      in fp8).
    * `Full`: the operand must be f32 (softmax, reductions, losses, norm
      scales, optimizer updates).

    Ops without the interface are treated as if every float operand were
    `Full`.
  }];
  let methods = [
    InterfaceMethod<[{
        The lowest precision float operand `index` may be fed in (by
        default `Follow` for shape ops, else `Reduced`).
      }], "::tgc::tg::OperandPrecision", "getOperandPrecision",
      (ins "unsigned":$index), /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return $_op->template hasTrait<::tgc::tg::OpTrait::ShapeOp>()
                   ? ::tgc::tg::OperandPrecision::Follow
                   : ::tgc::tg::OperandPrecision::Reduced;
      }]>,
    InterfaceMethod<[{
        Whether result `index` takes the type the op computes in (bf16 when
        its operands are bf16), rather than a fixed f32 type (statistics,
        log-sum-exp, losses).
      }], "bool", "isResultInComputeType", (ins "unsigned":$index),
      /*methodBody=*/"", /*defaultImplementation=*/"return true;">,
    InterfaceMethod<[{
        The type the op accumulates in, or null if it does not accumulate.
      }], "::mlir::Type", "getAccumulationType", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return {};">,
  ];
}

def TG_OptimizerOpInterface : OpInterface<"OptimizerOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    An optimizer update: the op that turns one parameter and its gradient
    (and its optimizer state) into the parameter's new value. Analyses use
    it to tell gradients from other values (the memory simulator's "grads"
    category, the optimizer phase of the cost report) without listing
    optimizer ops by name.
  }];
  let methods = [
    InterfaceMethod<"The parameter being updated.", "::mlir::Value",
      "getUpdatedParam", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getParam();">,
    InterfaceMethod<"The gradient of the parameter.", "::mlir::Value",
      "getParamGrad", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getGrad();">,
    InterfaceMethod<"The scalar the gradient is multiplied by, or null.",
      "::mlir::Value", "getParamGradScale", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getGradScale();">,
    InterfaceMethod<"The gradient operand, to replace it.",
      "::mlir::OpOperand &", "getParamGradMutable", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getGradMutable();">,
    InterfaceMethod<"The optional grad_scale operand, to set it.",
      "::mlir::MutableOperandRange", "getParamGradScaleMutable", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getGradScaleMutable();">,
  ];
}

def TG_CounterRandomOpInterface : OpInterface<"CounterRandomOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    An op whose random numbers are a pure function of a seed, a stream and
    each element's index (`tg.dropout`, `tg.random`, the dropout of
    `tg.attention`'s probabilities): Philox4x32-10 with key
    `(lo32(seed), hi32(seed))` and counter `(lo32(i), hi32(i), stream, 0)`
    (`stream` in `[0, 2^32)`).
    Two ops with the same seed and stream draw the same numbers, which is
    how a recomputation replays one.

    The optional `offset` operand (an integer scalar) is added to every
    element's index, and the optional `global_shape` says that the result is
    a block of a tensor of that shape: an element's index is then its
    row-major index in that whole tensor plus `offset`. tg-partition gives a
    device's block the index of the block's first element (and the whole
    tensor's shape when the block is not split on its first dimension only),
    and tg-microbatch offsets a micro-batch by the elements of the ones
    before it, so that the blocks draw the whole tensor's numbers. Passes
    reach these operands and attributes through this interface.
  }];
  let methods = [
    InterfaceMethod<"The seed operand (an integer scalar).", "::mlir::Value",
      "getRandomSeed", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getSeed();">,
    InterfaceMethod<"The optional offset operand, or null.", "::mlir::Value",
      "getRandomOffset", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getOffset();">,
    InterfaceMethod<"The optional offset operand, to set it.",
      "::mlir::MutableOperandRange", "getRandomOffsetMutable", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getOffsetMutable();">,
    InterfaceMethod<"The op's stream.", "uint64_t", "getRandomStream", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return $_op.getStream();">,
    InterfaceMethod<"The whole tensor's shape, if the result is a block.",
      "std::optional<::llvm::ArrayRef<int64_t>>", "getRandomGlobalShape",
      (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return $_op.getGlobalShape();">,
    InterfaceMethod<"Sets the whole tensor's shape.", "void",
      "setRandomGlobalShape", (ins "::llvm::ArrayRef<int64_t>":$shape),
      /*methodBody=*/"",
      /*defaultImplementation=*/"$_op.setGlobalShape(shape);">,
    InterfaceMethod<[{
        The shape of the op's numbers: its result's (tg.attention's are its
        probabilities', `BxHxSqxSk`).
      }], "::llvm::SmallVector<int64_t>", "getRandomShape", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::llvm::to_vector(
            ::mlir::cast<::mlir::ShapedType>($_op->getResult(0).getType())
                .getShape());
      }]>,
    InterfaceMethod<[{
        Whether the op draws numbers at all (tg.attention only with
        dropout): passes leave the others alone.
      }], "bool", "drawsRandom", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/"return true;">,
    InterfaceMethod<[{
        How an element's index in the result maps to its index in the whole
        tensor: levels of (size, stride in the result, stride in the whole),
        outermost first, dimensions merged where the inner one is whole; the
        index in the whole is the sum over levels of
        ((i / result stride) % size) * whole stride. One level (1 apart in
        both) without a global shape or when the block is split on its
        first dimension only.
      }], "::llvm::SmallVector<std::array<int64_t, 3>>", "getIndexLevels",
      (ins), /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::tgc::tg::getCounterIndexLevels(
            ::mlir::cast<CounterRandomOpInterface>($_op.getOperation())
                .getRandomShape(),
            $_op.getGlobalShape());
      }]>,
  ];
  let verify = [{
    return ::tgc::tg::verifyCounterRandomOp($_op);
  }];
}

#endif // TGC_DIALECT_TG_TGINTERFACES_TD
