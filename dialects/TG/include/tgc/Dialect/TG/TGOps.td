//===- TGOps.td - operations of the tg dialect -------------*- tablegen -*-===//
//
// Forward ops of a training step, grouped as in DESIGN.md: elementwise, shape,
// reduction, compute and structure.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGOPS_TD
#define TGC_DIALECT_TG_TGOPS_TD

include "tgc/Dialect/TG/TGDialect.td"
include "tgc/Dialect/TG/TGAttrs.td"
include "tgc/Dialect/TG/TGInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Traits that group ops for fusion.
//===----------------------------------------------------------------------===//

// Moves or reinterprets data without arithmetic.
def TG_ShapeOpTrait : NativeOpTrait<"ShapeOp"> {
  let cppNamespace = "::tgc::tg::OpTrait";
}
// Reduces along some dimensions of its (first) operand.
def TG_ReductionOpTrait : NativeOpTrait<"ReductionOp"> {
  let cppNamespace = "::tgc::tg::OpTrait";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// The op builds its vector-Jacobian product (TGDifferentiation.cpp).
defvar TG_Differentiable = DeclareOpInterfaceMethods<TG_DifferentiableOpInterface>;
// The interface's defaults: shape ops follow their operands; other ops take
// bf16/f16 operands and every result follows (elementwise arithmetic).
defvar TG_DefaultPrecision = TG_PrecisionOpInterface;
// The op states the precision of its operands (TGPrecision.cpp).
defvar TG_OperandPrecision =
    DeclareOpInterfaceMethods<TG_PrecisionOpInterface, ["getOperandPrecision"]>;
// ... and which results keep a fixed f32 type, and the accumulation type.
defvar TG_StatisticsPrecision =
    DeclareOpInterfaceMethods<TG_PrecisionOpInterface,
        ["getOperandPrecision", "isResultInComputeType", "getAccumulationType"]>;

// Every op states its cost and, unless `sharded` is 0 (the structure ops,
// which exist only after partitioning), its sharding rule (TGSharding.cpp);
// `shardingMethods` lists the rule's optional methods the op defines.
class TG_Op<string mnemonic, list<Trait> traits = [], bit sharded = 1,
            list<string> shardingMethods = []>
    : Op<TG_Dialect, mnemonic,
         [DeclareOpInterfaceMethods<TG_CostOpInterface>] #
         !if(sharded,
             [DeclareOpInterfaceMethods<TG_ShardingRuleOpInterface,
                                        shardingMethods>], []) #
         traits>;

// An op whose rule tg-partition restricts (restrictForPartitioning).
defvar TG_PartitionRestricted = ["restrictForPartitioning"];

// An elementwise op whose cost is `flops` FLOPs and `transcendentals`
// transcendental evaluations per result element.
class TG_ElementwiseOp<string mnemonic, int flops, int transcendentals,
                       list<Trait> traits = []>
    : TG_Op<mnemonic, [Pure, Elementwise] # traits> {
  let extraClassDefinition = [{
    ::tgc::tg::OpCost $cppClass::getCost() {
      return ::tgc::tg::getElementwiseCost(getOperation(), }] # flops #
      [{, }] # transcendentals # [{);
    }
    ::tgc::tg::ShardingRule $cppClass::getShardingRule() {
      return ::tgc::tg::getElementwiseShardingRule(getOperation());
    }
  }];
}

class TG_UnaryOp<string mnemonic, int flops, int transcendentals,
                 Type type = TG_FloatTensor, list<Trait> traits = []>
    : TG_ElementwiseOp<mnemonic, flops, transcendentals,
                       [SameOperandsAndResultType, TG_Differentiable,
                        TG_DefaultPrecision] # traits> {
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class TG_BinaryOp<string mnemonic, int flops, int transcendentals,
                  Type type = TG_NumericTensor, list<Trait> traits = []>
    : TG_ElementwiseOp<mnemonic, flops, transcendentals,
                       [SameOperandsAndResultType, TG_Differentiable,
                        TG_DefaultPrecision] # traits> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def TG_AddOp : TG_BinaryOp<"add", 1, 0, TG_NumericTensor, [Commutative]> {
  let summary = "Elementwise addition";
  let description = [{
    `result[i] = lhs[i] + rhs[i]`. Integers wrap around.

    ```mlir
    %0 = tg.add %a, %b : tensor<4x8xf32>
    ```
  }];
  let hasFolder = 1;
}

def TG_SubOp : TG_BinaryOp<"sub", 1, 0> {
  let summary = "Elementwise subtraction";
  let description = [{
    `result[i] = lhs[i] - rhs[i]`. Integers wrap around.
  }];
  let hasFolder = 1;
}

def TG_MulOp : TG_BinaryOp<"mul", 1, 0, TG_NumericTensor, [Commutative]> {
  let summary = "Elementwise multiplication";
  let description = [{
    `result[i] = lhs[i] * rhs[i]`. Integers wrap around.
  }];
  let hasFolder = 1;
}

def TG_DivOp : TG_BinaryOp<"div", 1, 0> {
  let summary = "Elementwise division";
  let description = [{
    `result[i] = lhs[i] / rhs[i]`, IEEE division for floats; integer division
    rounds toward zero and dividing by zero is an error at run time.
  }];
  let hasFolder = 1;
}

def TG_MaxOp : TG_BinaryOp<"max", 1, 0, TG_NumericTensor, [Commutative]> {
  let summary = "Elementwise maximum";
  let description = [{
    `result[i] = max(lhs[i], rhs[i])`; NaN if either float operand is NaN.
  }];
}

def TG_MinOp : TG_BinaryOp<"min", 1, 0, TG_NumericTensor, [Commutative]> {
  let summary = "Elementwise minimum";
  let description = [{
    `result[i] = min(lhs[i], rhs[i])`; NaN if either float operand is NaN.
  }];
}

def TG_PowOp : TG_BinaryOp<"pow", 1, 1, TG_FloatTensor> {
  let summary = "Elementwise power";
  let description = [{
    `result[i] = lhs[i] ^ rhs[i]`, with the special cases of C's `pow`.
  }];
}

def TG_NegOp : TG_UnaryOp<"neg", 1, 0, TG_NumericTensor> {
  let summary = "Elementwise negation";
  let description = "`result[i] = -operand[i]`.";
  let hasFolder = 1;
}

def TG_AbsOp : TG_UnaryOp<"abs", 1, 0, TG_NumericTensor> {
  let summary = "Elementwise absolute value";
  let description = "`result[i] = |operand[i]|`.";
}

def TG_ExpOp : TG_UnaryOp<"exp", 1, 1> {
  let summary = "Elementwise exponential";
  let description = "`result[i] = e ^ operand[i]`.";
}

def TG_LogOp : TG_UnaryOp<"log", 1, 1> {
  let summary = "Elementwise natural logarithm";
  let description = "`result[i] = ln(operand[i])`; NaN below zero.";
}

def TG_SqrtOp : TG_UnaryOp<"sqrt", 1, 1> {
  let summary = "Elementwise square root";
  let description = "`result[i] = sqrt(operand[i])`.";
}

def TG_RsqrtOp : TG_UnaryOp<"rsqrt", 2, 1> {
  let summary = "Elementwise reciprocal square root";
  let description = "`result[i] = 1 / sqrt(operand[i])`.";
}

def TG_TanhOp : TG_UnaryOp<"tanh", 1, 1> {
  let summary = "Elementwise hyperbolic tangent";
  let description = "`result[i] = tanh(operand[i])`.";
}

def TG_ErfOp : TG_UnaryOp<"erf", 1, 1> {
  let summary = "Elementwise error function";
  let description = "`result[i] = erf(operand[i])`.";
}

def TG_SinOp : TG_UnaryOp<"sin", 1, 1> {
  let summary = "Elementwise sine";
  let description = "`result[i] = sin(operand[i])` (radians).";
}

def TG_CosOp : TG_UnaryOp<"cos", 1, 1> {
  let summary = "Elementwise cosine";
  let description = "`result[i] = cos(operand[i])` (radians).";
}

def TG_SigmoidOp : TG_UnaryOp<"sigmoid", 3, 1> {
  let summary = "Elementwise logistic sigmoid";
  let description = "`result[i] = 1 / (1 + e ^ -operand[i])`.";
}

def TG_ReluOp : TG_UnaryOp<"relu", 1, 0> {
  let summary = "Elementwise rectified linear unit";
  let description = "`result[i] = max(operand[i], 0)`; NaN stays NaN.";
}

def TG_SiluOp : TG_UnaryOp<"silu", 4, 1> {
  let summary = "Elementwise SiLU (swish)";
  let description = "`result[i] = operand[i] * sigmoid(operand[i])`.";
}

def TG_GeluOp : TG_ElementwiseOp<"gelu", 8, 1, [TG_Differentiable,
    TG_DefaultPrecision, SameOperandsAndResultType]> {
  let summary = "Elementwise GELU, exact (erf) or tanh approximation";
  let description = [{
    With `erf`: `x * 0.5 * (1 + erf(x / sqrt(2)))`.
    With `tanh`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`,
    the form of GPT-2 and PyTorch's `approximate="tanh"`.

    ```mlir
    %0 = tg.gelu tanh %x : tensor<4x3072xbf16>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$operand,
                       TG_GeluApproximation:$approximation);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$approximation $operand attr-dict `:` type($result)";
}

def TG_SelectOp : TG_ElementwiseOp<"select", 1, 0,
    [TG_Differentiable, TG_DefaultPrecision,
     AllTypesMatch<["on_true", "on_false", "result"]>,
     AllShapesMatch<["pred", "result"]>]> {
  let summary = "Elementwise choice between two tensors";
  let description = [{
    `result[i] = pred[i] ? on_true[i] : on_false[i]`.

    ```mlir
    %0 = tg.select %mask, %a, %b : tensor<4x4xi1>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins TG_BoolTensor:$pred, TG_Tensor:$on_true,
                       TG_Tensor:$on_false);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
  let hasFolder = 1;
}

def TG_ModeSelectOp : TG_ElementwiseOp<"mode_select", 0, 0,
    [TG_Differentiable, TG_DefaultPrecision,
     AllTypesMatch<["training", "evaluation", "result"]>]> {
  let summary = "A value that differs between training and evaluation";
  let description = [{
    `result = training` in a training step and wherever the graph runs as
    imported; `result = evaluation` once `tg-evaluation` has made the graph
    its evaluation. `tg-training-mode` resolves it to `training` (and erases
    what only `evaluation` read), so that a training step holds none. The
    ONNX importer builds one for the statistics of a BatchNormalization in
    training mode: the batch's in training, the running averages in
    evaluation, as PyTorch's `model.eval()` does. The gradient goes to
    `training` alone.

    ```mlir
    %0 = tg.mode_select training %batch_mean evaluation %running_mean
        : tensor<1x16x1x1xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$training, TG_Tensor:$evaluation);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    `training` $training `evaluation` $evaluation attr-dict `:` type($result)
  }];
}

def TG_CompareOp : TG_ElementwiseOp<"compare", 1, 0,
    [AllTypesMatch<["lhs", "rhs"]>, TG_DefaultPrecision,
     InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison";
  let description = [{
    `result[i] = lhs[i] <direction> rhs[i]`, an `i1` tensor of the operands'
    shape. Float comparisons are ordered (false when either side is NaN),
    except `ne`, which is true when either side is NaN.

    ```mlir
    %0 = tg.compare lt, %a, %b : tensor<4xf32>
    ```
  }];
  let arguments = (ins TG_CompareDirection:$direction, TG_NumericTensor:$lhs,
                       TG_NumericTensor:$rhs);
  let results = (outs TG_BoolTensor:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)
  }];
}

def TG_BitwiseOp : TG_ElementwiseOp<"bitwise", 1, 0,
    [SameOperandsAndResultType, TG_DefaultPrecision]> {
  let summary = "Elementwise bitwise and, or, xor of integers";
  let description = [{
    `result[i] = lhs[i] <kind> rhs[i]` on the two's complement bits of the
    element type (ONNX's BitwiseAnd, BitwiseOr, BitwiseXor); on `i1` the
    logical and, or and xor. Not differentiable: integers carry no gradient.

    ```mlir
    %0 = tg.bitwise xor, %a, %b : tensor<4xui8>
    ```
  }];
  let arguments = (ins TG_BitwiseKind:$kind, TG_IntOrBoolTensor:$lhs,
                       TG_IntOrBoolTensor:$rhs);
  let results = (outs TG_IntOrBoolTensor:$result);
  let assemblyFormat = [{
    $kind `,` $lhs `,` $rhs attr-dict `:` type($result)
  }];
}

def TG_BitwiseNotOp : TG_ElementwiseOp<"bitwise_not", 1, 0,
    [SameOperandsAndResultType, TG_DefaultPrecision]> {
  let summary = "Elementwise bitwise complement of integers";
  let description = [{
    `result[i] = ~operand[i]`: every bit of the element type flipped (ui8
    5 gives 250, i8 5 gives -6); on `i1` the logical not (ONNX's
    BitwiseNot).
  }];
  let arguments = (ins TG_IntOrBoolTensor:$operand);
  let results = (outs TG_IntOrBoolTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def TG_BitcastOp : TG_ElementwiseOp<"bitcast", 0, 0,
    [TG_DefaultPrecision, TG_Differentiable,
     AllShapesMatch<["operand", "result"]>]> {
  let summary = "Elementwise reinterpretation of the bits";
  let description = [{
    Each element's bits read as the result's element type of the same
    width (ONNX's BitCast): f32 1.0 is i32 1065353216, i8 -1 is ui8 255;
    `i1` counts as one byte (ONNX stores bool so): true is `i8` or `ui8`
    1, and a byte reinterprets as `i1` true when it is not 0. A float
    result of integer bits carries no gradient back (integers carry none);
    one of a float's bits cannot be differentiated (an error).

    ```mlir
    %0 = tg.bitcast %a : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $operand attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_ConvertOp : TG_ElementwiseOp<"convert", 1, 0,
    [TG_Differentiable, AllShapesMatch<["operand", "result"]>]> {
  let summary = "Elementwise element type conversion";
  let description = [{
    Converts each element to the result's element type:
    float to float rounds to nearest even (to infinity on overflow, or to NaN
    for `f8E4M3FN` and the FNUZ formats, which have no infinity, whose
    zeros are +0; `f4E2M1FN`, with neither infinity nor NaN, saturates at
    6 and takes NaN to 0; `f8E8M0FNU`, powers of two only, rounds its
    exponent up from a mantissa of one half, 0 to 2^-127, a negative value
    to NaN); float to integer rounds toward zero and saturates, NaN
    becoming 0; integer to float rounds to nearest even; anything to `i1`
    is `x != 0`; `i1` to anything is 0 or 1.

    ```mlir
    %0 = tg.convert %w : tensor<768x768xf32> -> tensor<768x768xbf16>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def TG_ConstantOp : TG_Op<"constant", [Pure, ConstantLike, TG_ShapeOpTrait,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor";
  let description = [{
    ```mlir
    %0 = tg.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), value);
    }]>,
  ];
}

def TG_BroadcastInDimOp : TG_Op<"broadcast_in_dim", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision]> {
  let summary = "Broadcast a tensor to a larger shape";
  let description = [{
    Dimension `i` of the operand becomes dimension `dims[i]` of the result;
    the other result dimensions are new. `dims` is strictly increasing, and
    each operand dimension either equals its result dimension or is 1 (and is
    then repeated).
    `result[j] = operand[i]` with `i[k] = operand_dim(k) == 1 ? 0 : j[dims[k]]`.

    ```mlir
    %0 = tg.broadcast_in_dim %bias dims = [1] : tensor<768xf32> -> tensor<8x768xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $operand `dims` `=` $broadcast_dimensions attr-dict `:` type($operand)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_ReshapeOp : TG_Op<"reshape", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision]> {
  let summary = "Reinterpret a tensor with another shape";
  let description = [{
    Same elements in row-major order; the element counts must match.

    ```mlir
    %0 = tg.reshape %x : tensor<8x128x768xf32> -> tensor<1024x768xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_TransposeOp : TG_Op<"transpose", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision,
    InferTypeOpAdaptor]> {
  let summary = "Permute the dimensions of a tensor";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %0 = tg.transpose %x perm = [0, 2, 1, 3] : tensor<8x128x12x64xf32> -> tensor<8x12x128x64xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $operand `perm` `=` $permutation attr-dict `:` type($operand) `->`
    type($result)
  }];
  let hasFolder = 1;
}

def TG_SliceOp : TG_Op<"slice", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision,
    InferTypeOpAdaptor]> {
  let summary = "A strided rectangular part of a tensor";
  let description = [{
    For each dimension, the elements `start, start + stride, ...` below
    `limit`, written `start:limit` or `start:limit:stride`; the result
    dimension is `ceil((limit - start) / stride)`, with
    `0 <= start <= limit <= size` and `stride >= 1`.

    ```mlir
    %q = tg.slice %qkv [0:8, 0:128, 0:768] : tensor<8x128x2304xf32> -> tensor<8x128x768xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand, DenseI64ArrayAttr:$start_indices,
                       DenseI64ArrayAttr:$limit_indices,
                       DenseI64ArrayAttr:$strides);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $operand custom<SliceRanges>($start_indices, $limit_indices, $strides)
    attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def TG_PadOp : TG_Op<"pad", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision, InferTypeOpAdaptor]> {
  let summary = "Surround a tensor with zeros, and space its elements apart";
  let description = [{
    For each dimension, `low` zeros before the elements, `high` zeros after
    them and `interior` zeros between two neighbours: the result dimension is
    `low + size + (size - 1) * interior + high` (for `size > 0`). All
    paddings are non-negative. This is the backward of `tg.slice`.

    ```mlir
    %0 = tg.pad %x low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x7xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$operand, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $operand `low` `=` $low `high` `=` $high `interior` `=` $interior
    attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def TG_ConcatOp : TG_Op<"concat", [TG_Differentiable, Pure, TG_ShapeOpTrait, TG_DefaultPrecision,
    InferTypeOpAdaptor]> {
  let summary = "Concatenate tensors along one dimension";
  let description = [{
    All inputs have the same element type and the same sizes except along
    `dim`.

    ```mlir
    %0 = tg.concat %a, %b dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dimension attr-dict `:` functional-type($inputs, $result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def TG_ReduceOp : TG_Op<"reduce", [TG_Differentiable, TG_OperandPrecision, Pure, TG_ReductionOpTrait,
    InferTypeOpAdaptor]> {
  let summary = "Sum, max, min or mean over some dimensions";
  let description = [{
    Reduces over `dims` (strictly increasing), which disappear from the
    result. Floating-point reductions accumulate in f32 (f64 for f64) and
    round once to the result type, as GPU libraries do. `mean` is for floats
    only. Over an empty set, `sum` is 0, `max` is -inf (the lowest integer)
    and `min` is +inf (the highest integer).

    ```mlir
    %0 = tg.reduce sum %x dims = [0, 1] : tensor<8x128x768xf32> -> tensor<768xf32>
    ```
  }];
  let arguments = (ins TG_ReduceKind:$kind, TG_NumericTensor:$operand,
                       DenseI64ArrayAttr:$dimensions);
  let results = (outs TG_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $operand `dims` `=` $dimensions attr-dict `:` type($operand) `->`
    type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

def TG_MatmulOp : TG_Op<"matmul", [TG_Differentiable,
    DeclareOpInterfaceMethods<TG_PrecisionOpInterface,
        ["getOperandPrecision", "getAccumulationType"]>, Pure]> {
  let summary = "Batched matrix multiplication";
  let description = [{
    `result[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n]` after the
    optional transposes of the last two dimensions of each operand.

    Either both operands have the same rank and identical batch dimensions,
    or `rhs` is a matrix shared by every batch of `lhs` (a linear layer:
    `tensor<8x128x768xbf16>` times `tensor<768x3072xbf16>`). Both operands
    have the same floating-point element type; the products are accumulated
    in f32 (f64 for f64) and rounded once to the result's element type, which
    may differ from the operands' (e.g. bf16 inputs, f32 output).

    ```mlir
    %0 = tg.matmul %x, %w : (tensor<8x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16>
    %1 = tg.matmul %q, %k transpose_b : (tensor<8x12x128x64xf32>, tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [
    // Infers the result type, with the operands' element type.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transposeA,
                   CArg<"bool", "false">:$transposeB)>,
  ];
  let extraClassDeclaration = [{
    /// The shape of the result implied by the operands, or failure with a
    /// message in `error`.
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferResultShape(::llvm::ArrayRef<int64_t> lhs, ::llvm::ArrayRef<int64_t> rhs,
                     bool transposeA, bool transposeB, std::string &error);
  }];
}

def TG_EmbeddingOp : TG_Op<"embedding", [TG_Differentiable, TG_DefaultPrecision, Pure,
    InferTypeOpAdaptor], 1, TG_PartitionRestricted> {
  let summary = "Gather rows of a table by integer ids";
  let description = [{
    `result[i..., d] = table[indices[i...], d]` for a `VxD` table. Every id
    must be in `[0, V)`; the interpreter reports one that is not.

    The table may have any element type: the importer gathers masks and ids
    with it (ONNX `Gather`, `GatherND`, `GatherElements`, reversed slices).
    Only a float table has a gradient (`tg.embedding_grad`); the ids never
    have one.

    `padding_idx` (PyTorch's `nn.Embedding(padding_idx=p)`, a float table's
    row in `[0, V)`) changes the gradient alone: row `p` gets none, as the
    positions whose id is `p` pass none back (the gradient is masked there
    before the scatter). The result is the same.

    ```mlir
    %0 = tg.embedding %wte[%ids] : (tensor<50257x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
    %1 = tg.embedding %wte[%ids] {padding_idx = 1 : i64} : (tensor<50272x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$table, TG_IndexTensor:$indices,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs TG_Tensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$table,
                   "::mlir::Value":$indices), [{
      build($_builder, $_state, result, table, indices, ::mlir::IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $table `[` $indices `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

// The experts' matrices of tg.expert_matmul (its weight) and
// tg.expert_matmul_grad (its result), and their sizes.
defvar TG_ExpertMatricesAccessors = [{
    /// [E, H, O], or [E, O, H] with transpose_b.
    ::mlir::RankedTensorType getMatricesType();
    /// The experts of the whole stack: global_experts, or E.
    int64_t getNumGlobalExperts() {
      if (auto global = getGlobalExperts())
        return *global;
      return getNumExperts();
    }
    /// The number of experts E and the matrices' input and output widths
    /// H and O.
    int64_t getNumExperts() { return getMatricesType().getDimSize(0); }
    int64_t getInputWidth() {
      return getMatricesType().getDimSize(getTransposeB() ? 2 : 1);
    }
    int64_t getOutputWidth() {
      return getMatricesType().getDimSize(getTransposeB() ? 1 : 2);
    }
}];

def TG_ExpertMatmulOp : TG_Op<"expert_matmul", [TG_Differentiable,
    DeclareOpInterfaceMethods<TG_PrecisionOpInterface, ["getAccumulationType"]>,
    Pure]> {
  let summary = "Each row times the matrix of the expert its id names";
  let description = [{
    `result[i..., o] = sum_h input[i..., h] * weight[ids[i...], h, o]` for
    an `ExHxO` stack of expert matrices (`ExOxH` with `transpose_b`: the
    row times the transposed matrix). Every id must be in `[0, E)`; the
    interpreter reports one that is not. A mixture-of-experts layer's
    routed products: the rows are the (token, chosen expert) pairs, and
    only the chosen experts' products are computed (a grouped GEMM), not
    every expert's for every token. Products accumulate in f32 (f64 for
    f64) and are rounded once to the result's element type.

    With `global_experts = G`, the matrices are one device's block of E of
    a stack of G experts (expert parallelism; tg-partition builds it) and
    the ids are relative to the block: a row whose id is outside `[0, E)`
    names an expert another device holds, and its result row is zero (no
    product is computed for it). Ids must then be in `[E - G, G)`.

    tg-raise forms it from the exports that gather each pair's matrix with
    `tg.embedding` and multiply it by the pair's vector. Its gradient is an
    `expert_matmul` of the result's gradient by the transposed matrices
    (the input's) and a `tg.expert_matmul_grad` (the weight's).

    ```mlir
    %y = tg.expert_matmul %x, %w[%ids] transpose_b : (tensor<512x4096xbf16>, tensor<8x14336x4096xbf16>, tensor<512xi64>) -> tensor<512x14336xbf16>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$weight,
                       TG_IndexTensor:$ids, UnitAttr:$transpose_b,
                       OptionalAttr<I64Attr>:$global_experts);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `[` $ids `]` (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = TG_ExpertMatricesAccessors;
}

def TG_ExpertMatmulGradOp : TG_Op<"expert_matmul_grad", [Pure,
    DeclareOpInterfaceMethods<TG_PrecisionOpInterface, ["getAccumulationType"]>]> {
  let summary = "Backward of expert_matmul for its weight";
  let description = [{
    `result[e, h, o] = sum of input[i..., h] * grad_output[i..., o] over the
    rows i... whose id is e`, accumulated in f32 in the rows' order; the
    result has the expert matrices' type and layout (`ExOxH` with
    `transpose_b`), and an expert no id names gets zeros. Every id must be
    in `[0, E)`; with `global_experts = G` (a device's block of E of G
    experts, as `tg.expert_matmul`'s), rows whose id is outside `[0, E)`
    add nothing, and ids must be in `[E - G, G)`.

    ```mlir
    %dw = tg.expert_matmul_grad %x, %dy[%ids] transpose_b : (tensor<512x4096xf32>, tensor<512x14336xf32>, tensor<512xi64>) -> tensor<8x14336x4096xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$grad_output,
                       TG_IndexTensor:$ids, UnitAttr:$transpose_b,
                       OptionalAttr<I64Attr>:$global_experts);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad_output `[` $ids `]` (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = TG_ExpertMatricesAccessors;
}

def TG_TopKOp : TG_Op<"top_k", [TG_Differentiable, TG_DefaultPrecision, Pure,
    InferTypeOpAdaptor]> {
  let summary = "The k largest (or smallest) elements along the last dimension";
  let description = [{
    For each row along the last dimension, `values` holds the `k` largest
    elements in descending order (with `smallest`: the `k` smallest, in
    ascending order) and `indices` their positions in the row (i64). Of equal
    elements the one at the lower position comes first, as in ONNX `TopK`;
    NaN is larger than every number. `0 <= k <= size`.

    The gradient of `values` flows back to the positions in `indices`; the
    indices have no gradient.

    ```mlir
    %v, %i = tg.top_k %logits k = 2 : tensor<16x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
    ```
  }];
  let arguments = (ins TG_NumericTensor:$operand, I64Attr:$k,
                       UnitAttr:$smallest);
  let results = (outs TG_NumericTensor:$values, TG_IndexTensor:$indices);
  let assemblyFormat = [{
    $operand `k` `=` $k (`smallest` $smallest^)? attr-dict `:` type($operand)
    `->` type($values) `,` type($indices)
  }];
  let hasFolder = 1;
}

class TG_SoftmaxLikeOp<string mnemonic> : TG_Op<mnemonic, [TG_Differentiable, TG_OperandPrecision, Pure,
    SameOperandsAndResultType, TG_ReductionOpTrait]> {
  let arguments = (ins TG_FloatTensor:$operand, I64Attr:$dimension);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `dim` `=` $dimension attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def TG_SoftmaxOp : TG_SoftmaxLikeOp<"softmax"> {
  let summary = "Softmax along one dimension";
  let description = [{
    `result = exp(x - max(x)) / sum(exp(x - max(x)))` along `dim`, computed
    in f32 for lower-precision inputs and rounded once.

    ```mlir
    %0 = tg.softmax %scores dim = 3 : tensor<8x12x128x128xf32>
    ```
  }];
}

def TG_LogSoftmaxOp : TG_SoftmaxLikeOp<"log_softmax"> {
  let summary = "Log-softmax along one dimension";
  let description = [{
    `result = x - max(x) - log(sum(exp(x - max(x))))` along `dim`, computed
    in f32 for lower-precision inputs and rounded once.
  }];
}

def TG_LayerNormOp : TG_Op<"layer_norm", [TG_Differentiable, TG_StatisticsPrecision, Pure, TG_ReductionOpTrait,
    AllTypesMatch<["scale", "bias"]>,
    InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    Over the last dimension of `x` (size `H`), with f32 statistics:
    `mean = sum(x) / H`, `var = sum((x - mean)^2) / H` (biased),
    `rstd = 1 / sqrt(var + epsilon)`,
    `y = (x - mean) * rstd * scale + bias`.
    `scale` and `bias` are vectors of size `H` and may have another float type
    than `x` (fp32 master weights under mixed precision). Results: `y` (the
    type of `x`), and `mean` and `rstd` (f32, the shape of `x` without its
    last dimension), which the backward reuses.

    ```mlir
    %y, %mean, %rstd = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<8x128xf32>, tensor<8x128xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$scale,
                       TG_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs TG_FloatTensor:$result, TG_FloatTensor:$mean,
                      TG_FloatTensor:$rstd);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `epsilon` `=` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_RmsNormOp : TG_Op<"rms_norm", [TG_Differentiable, TG_StatisticsPrecision, Pure, TG_ReductionOpTrait,
    InferTypeOpAdaptor]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    Over the last dimension of `x` (size `H`), with f32 statistics:
    `rstd = 1 / sqrt(sum(x^2) / H + epsilon)`, `y = x * rstd * scale`.
    Results: `y` (the type of `x`) and `rstd` (f32, the shape of `x` without
    its last dimension).

    ```mlir
    %y, %rstd = tg.rms_norm %x, %g epsilon = 1.000000e-06 : (tensor<2x64x256xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$scale,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs TG_FloatTensor:$result, TG_FloatTensor:$rstd);
  let assemblyFormat = [{
    $input `,` $scale `epsilon` `=` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

// tg.attention's dropout draws as tg.dropout of its probabilities would.
defvar TG_AttentionRandom = DeclareOpInterfaceMethods<
    TG_CounterRandomOpInterface,
    ["getRandomStream", "getRandomShape", "drawsRandom"]>;

def TG_AttentionOp : TG_Op<"attention", [TG_Differentiable, TG_StatisticsPrecision, Pure,
    AllElementTypesMatch<["query", "key", "value"]>, AttrSizedOperandSegments,
    InferTypeOpAdaptor, TG_AttentionRandom], 1, TG_PartitionRestricted> {
  let summary = "Scaled dot-product attention (flash-attention semantics)";
  let description = [{
    `query` is `BxHxSqxD`, `key` is `BxKxSkxD`, `value` is `BxKxSkxDv`, where
    the query heads `H` are a multiple of the key/value heads `K` (grouped-query
    attention: query head `h` uses key/value head `h / (H / K)`).

    `p = softmax(scale * query @ key^T)` over the keys, `output = p @ value`
    (`BxHxSqxDv`, the element type of the query), and `logsumexp` (`BxHxSq`,
    f32) is the log of the softmax denominator including the scale, which the
    backward reuses. Scores and the softmax are computed in f32.
    `scale` defaults to `1 / sqrt(D)`.

    With `causal`, query `i` sees key `j` only if `j <= i + Sk - Sq` (the
    mask is aligned to the bottom right, as in FlashAttention 2); this
    requires `Sq <= Sk` so that every query sees at least one key.

    With `softcap = c`, the scaled scores are capped to `c * tanh(s / c)`
    before the bias (Gemma 2's attention logit soft-capping, FlashAttention
    2's `softcap`, ONNX Attention's `softcap`), so that a bias of `-inf`
    still hides its key; the backward multiplies the scores' gradient by
    `1 - tanh(s / c)^2`.

    The optional `bias` (f32, `[B|1, H|1, Sq|1, Sk|1]`, a dimension of 1
    broadcast) is added to the scaled (and capped) scores before the softmax: a padding
    mask (`-inf` or a large negative value on the hidden keys), ALiBi, a
    relative position bias. The kernels read it in place, so a masked
    attention keeps flash-attention's memory. A query row none of whose
    keys has a score above `-inf` has an output of zeros and a `logsumexp`
    of `+inf` (so that the backward's probabilities are zeros there).
    The bias gets a gradient like any operand; when nothing trained reaches
    it (a mask computed from the inputs) that gradient is never built.

    With `dropout = rate`, `seed` and `stream`, the probabilities are
    dropped before they weigh the values (`output = (p * keep / (1 - rate))
    @ value`, attention dropout), the mask exactly the one `tg.dropout` with
    the same seed, stream, rate, `offset` and `global_shape` draws on the
    `BxHxSqxSk` probabilities (element `((b * H + h) * Sq + i) * Sk + j`):
    the kernels regenerate it tile by tile, forward and backward, instead
    of storing it. `logsumexp` is the undropped softmax's.

    ```mlir
    %o, %lse = tg.attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
    %o2, %lse2 = tg.attention %q, %k, %v bias %mask : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x1x1x128xf32>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$query, TG_FloatTensor:$key,
                       TG_FloatTensor:$value, Optional<TG_FloatTensor>:$bias,
                       Optional<TG_IndexScalar>:$seed,
                       Optional<TG_IndexScalar>:$offset,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs TG_FloatTensor:$output, TG_FloatTensor:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`bias` $bias^)? (`causal` $causal^)?
    (`scale` `=` $scale^)? (`softcap` `=` $softcap^)?
    (`dropout` `=` $dropout^)? (`seed` $seed^)? (`offset` $offset^)?
    (`stream` `=` $stream^)? (`of` $global_shape^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, else 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

// Draws its numbers from Philox by element index (TGOps.cpp).
defvar TG_CounterRandom = DeclareOpInterfaceMethods<TG_CounterRandomOpInterface>;

def TG_DropoutOp : TG_Op<"dropout", [TG_Differentiable, TG_DefaultPrecision, Pure,
    TG_CounterRandom, AllTypesMatch<["operand", "result"]>], 1,
    TG_PartitionRestricted> {
  let summary = "Counter-based, seeded dropout";
  let description = [{
    `result[i] = keep(i) ? operand[i] / (1 - rate) : 0`, where the mask is a
    pure function of the seed, the op's `stream` and the element's row-major
    index `i`, so a recomputed dropout and the backward regenerate exactly the
    same mask:

    * Philox4x32-10 with key `(lo32(seed), hi32(seed))` and counter
      `(lo32(i), hi32(i), stream, 0)`;
    * `u` = the first output word divided by 2^32;
    * `keep(i)` is `u >= rate`.

    `seed` is a runtime scalar (a `hyper` argument, new each step); `stream`
    tells the random ops of one step apart. Two ops with the same seed and
    stream draw the same mask: that is how a recomputation replays one.

    The optional `offset` and `global_shape` place the operand in a whole
    tensor, as for every `CounterRandomOpInterface` op: `tg-partition` gives
    a device's block the global index of the block's first element and,
    when the block is split on another dimension than its first (sequence
    parallelism), the whole tensor's shape, so that each device draws its
    part of the whole tensor's mask; `tg-microbatch` offsets each
    micro-batch by the elements of the ones before it, so that they draw
    the whole batch's mask. `rate` is in `[0, 1)`.

    ```mlir
    %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 3 : tensor<8x128x768xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$operand, TG_IndexScalar:$seed,
                       Optional<TG_IndexScalar>:$offset,
                       F64Attr:$rate, I64Attr:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $seed (`offset` $offset^)? `rate` `=` $rate `stream` `=`
    $stream (`of` $global_shape^)? attr-dict `:` type($operand) `,` type($seed)
    (`,` type($offset)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_RandomOp : TG_Op<"random", [Pure, TG_CounterRandom], 1,
    TG_PartitionRestricted> {
  let summary = "Counter-based, seeded random numbers";
  let description = [{
    A tensor of random numbers, each a pure function of the seed, the op's
    `stream` and the element's row-major index `i` (with the `offset` and
    `global_shape` of every `CounterRandomOpInterface` op): Philox4x32-10
    with key `(lo32(seed), hi32(seed))` and counter
    `(lo32(i), hi32(i), stream, 0)` gives four words `w0..w3`, and

    * `uniform`: `(w0 >> 8) / 2^24`, in `[0, 1)` (exact in f32);
    * `normal`: Box-Muller, `sqrt(-2 log(u1)) cos(2 pi u2)` with
      `u1 = (w0 + 1) / 2^32` in `(0, 1]` and `u2 = w1 / 2^32`, computed in
      f64: a standard normal.

    The value is rounded to the result's type. It is the same in the
    interpreter, the host target and CUDA: the uniform bit for bit; the
    normal up to the platform's f64 `log` and `cos` (CUDA documents them
    within 1 and 2 ulps), a few f64 ulps, far below an f32 rounding. Scaling and shifting
    (ONNX's `low`/`high`, `mean`/`scale`) and Bernoulli draws are built from
    these by the importer. `seed` is a runtime scalar (a `hyper` argument,
    new each step): the numbers change every step and a recomputation (the
    same seed and stream) replays them. The op has no gradient.

    ```mlir
    %0 = tg.random normal %seed stream = 4 : tensor<i64> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins TG_IndexScalar:$seed, Optional<TG_IndexScalar>:$offset,
                       TG_RandomDistribution:$distribution, I64Attr:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $distribution $seed (`offset` $offset^)? `stream` `=` $stream
    (`of` $global_shape^)? attr-dict `:` type($seed) (`,` type($offset)^)?
    `->` type($result)
  }];
}

def TG_CrossEntropyOp : TG_Op<"cross_entropy", [TG_Differentiable, TG_OperandPrecision, Pure, TG_ReductionOpTrait,
    InferTypeOpAdaptor], 1, TG_PartitionRestricted> {
  let summary = "Softmax cross-entropy loss against integer labels";
  let description = [{
    `logits` is `N...xC`, `labels` is `N...` with class ids in `[0, C)`.
    Per token: `loss_t = logsumexp(logits_t) - logits_t[label_t]`, computed in
    f32. The result `loss` (a f32 scalar) is the `mean` over the tokens whose
    label is not `ignore_index` (0/0 is NaN when every token is ignored, as in
    PyTorch and ONNX), or their `sum`. The second result is the f32
    `logsumexp` per token, which the backward reuses.

    ```mlir
    %loss, %lse = tg.cross_entropy mean %logits, %labels ignore_index = -100 : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
    ```
  }];
  let arguments = (ins TG_LossReduction:$reduction, TG_FloatTensor:$logits,
                       TG_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs TG_FloatScalar:$loss, TG_FloatTensor:$logsumexp);
  let assemblyFormat = [{
    $reduction $logits `,` $labels (`ignore_index` `=` $ignore_index^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Mixed precision: gradient scaling and fp8 quantization (tg-mixed-precision).
//===----------------------------------------------------------------------===//

def TG_ScaleGradOp : TG_Op<"scale_grad", [Pure, TG_Differentiable,
    TG_OperandPrecision, AllTypesMatch<["operand", "result"]>]> {
  let summary = "Identity whose gradient is multiplied by a scale";
  let description = [{
    `result = operand`; in the backward, the gradient of `operand` is the
    gradient of `result` times `scale` (converted to the gradient's element
    type). Dynamic loss scaling puts one on the loss (scale `S`, so that the
    backward runs on gradients `S` times larger, above fp16's underflow) and
    one on every parameter (scale `1 / S`, so that the gradients reach the
    optimizer unscaled, in f32).

    ```mlir
    %l = tg.scale_grad %loss, %loss_scale : tensor<f32>, tensor<f32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$operand, TG_FloatScalar:$scale);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $scale attr-dict `:` type($operand) `,` type($scale)
  }];
}

class TG_FakeQuantOpBase<string mnemonic> : TG_Op<mnemonic, [Pure,
    TG_Differentiable, TG_OperandPrecision,
    AllTypesMatch<["operand", "result"]>]> {
  let arguments = (ins TG_FloatTensor:$operand, TG_FloatTensor:$amax_history,
                       TypeAttr:$format, I64Attr:$margin);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $amax_history `format` `=` $format `margin` `=` $margin
    attr-dict `:` type($operand) `,` type($amax_history)
  }];
  let hasVerifier = 1;
}

def TG_FakeQuantOp : TG_FakeQuantOpBase<"fake_quant"> {
  let summary = "Round to an fp8 format with a delayed per-tensor scale";
  let description = [{
    The values an fp8 kernel would read, in the operand's type: with
    `amax = max(amax_history)` (the largest magnitudes of the previous
    steps, delayed scaling as in Transformer Engine) and `F` the largest
    finite value of `format` (448 for `f8E4M3FN`, 57344 for `f8E5M2`), the
    scale is the power of two `s = 2^(floor(log2(F / amax)) - margin)`, or 1
    when `amax` is 0 or not finite; then
    `result = round_format(clamp(operand * s, -F, F)) / s` (round to nearest
    even; NaN stays NaN). With a power-of-two scale the result is exact in
    bf16, so a bf16 matmul on it computes what an fp8 matmul with f32
    accumulation does. `amax_history` is a 1-D f32 `state` tensor that
    `tg-scaling-update` rolls forward each step with the operand's amax.
    `margin` (>= 0) leaves `2^margin` of headroom.

    The backward passes the gradient through unchanged (straight-through).

    ```mlir
    %xq = tg.fake_quant %x, %hist format = f8E4M3FN margin = 0 : tensor<8x768xbf16>, tensor<16xf32>
    ```
  }];
}

def TG_FakeQuantGradOp : TG_FakeQuantOpBase<"fake_quant_grad"> {
  let summary = "Identity whose gradient is rounded to an fp8 format";
  let description = [{
    `result = operand`; in the backward, the gradient of `operand` is
    `tg.fake_quant` of the gradient of `result` with this op's
    `amax_history`, `format` and `margin`: the gradient an fp8 backward
    matmul reads (`f8E5M2`, whose wider range suits gradients). Placed on
    the result of a matmul whose inputs are quantized, it quantizes the
    output gradient that both the data- and weight-gradient matmuls read.

    ```mlir
    %y2 = tg.fake_quant_grad %y, %ghist format = f8E5M2 margin = 0 : tensor<8x768xbf16>, tensor<16xf32>
    ```
  }];
}

def TG_QuantizeDequantizeOp : TG_ElementwiseOp<"quantize_dequantize", 6, 0,
    [TG_Differentiable, TG_DefaultPrecision, SameOperandsAndResultType]> {
  let summary = "Round to an affine integer grid and back (fake quantization)";
  let description = [{
    The values an integer kernel would read, in the operand's type:
    `q = clamp(round(operand / scale) + zero_point, low, high)` (halves to
    even; NaN gives 0) and `result = (q - zero_point) * scale`, computed in
    f32 (f64 for f64 tensors). `scale` and `zero_point` hold one value per
    element (the importer broadcasts a per-tensor or per-axis scale);
    `[low, high]` is the integer type's range (`[-128, 127]` for int8,
    `[0, 255]` for uint8). ONNX's QuantizeLinear followed by
    DequantizeLinear with the same scale and zero point, PyTorch's
    `fake_quantize_per_tensor_affine` and `_per_channel_affine`.

    The backward is the straight-through estimator of quantization-aware
    training: the gradient passes where `round(operand / scale) +
    zero_point` lies in `[low, high]` and is 0 where it was clamped
    (`tg.quantize_dequantize_grad`), as PyTorch's FakeQuantize; `scale` and
    `zero_point` get none.

    ```mlir
    %wq = tg.quantize_dequantize %w, %scale, %zero range = [-128, 127] : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$operand, TG_FloatTensor:$scale,
                       TG_FloatTensor:$zero_point, I64Attr:$low, I64Attr:$high);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $scale `,` $zero_point `range` `=` `[` $low `,` $high `]`
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer ops: the update of one parameter and its state, in one kernel.
//===----------------------------------------------------------------------===//

class TG_OptimizerOp<string mnemonic, list<Trait> traits = []>
    : TG_Op<mnemonic, [Pure, AllTypesMatch<["param", "new_param"]>,
                       TG_OperandPrecision, TG_OptimizerOpInterface]
                      # traits> {
  let hasVerifier = 1;
}

def TG_SgdOp : TG_OptimizerOp<"sgd", [InferTypeOpAdaptor,
                                     AttrSizedOperandSegments]> {
  let summary = "Stochastic gradient descent step, with optional momentum";
  let description = [{
    With `momentum = 0` (no buffer operand):
    `new_param = param - lr * (grad + weight_decay * param)`.
    With momentum μ > 0 and a `momentum_buffer` operand and result (PyTorch's
    SGD): `d = grad + weight_decay * param`, `new_buffer = μ * buffer + d`,
    `new_param = param - lr * (nesterov ? d + μ * new_buffer : new_buffer)`.
    Computed in f32 (f64 for f64 parameters).

    ```mlir
    %p2 = tg.sgd %p, %g, %lr momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<768xf32>, tensor<f32>
    %p3, %b3 = tg.sgd %p, %g, %lr, %buf momentum = 9.000000e-01 weight_decay = 1.000000e-04 : tensor<768xf32>, tensor<f32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$param, TG_FloatTensor:$grad,
                       TG_FloatScalar:$lr,
                       Optional<TG_FloatTensor>:$momentum_buffer,
                       Optional<TG_FloatScalar>:$grad_scale,
                       F64Attr:$momentum, F64Attr:$weight_decay,
                       UnitAttr:$nesterov);
  let results = (outs TG_FloatTensor:$new_param,
                      Optional<TG_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr (`,` $momentum_buffer^)?
    (`grad_scale` $grad_scale^)? `momentum` `=` $momentum
    `weight_decay` `=` $weight_decay (`nesterov` $nesterov^)? attr-dict `:`
    type($param) `` custom<GradType>(type($grad), ref(type($param))) `,`
    type($lr) (`,` type($momentum_buffer)^)?
    (`grad_scale` type($grad_scale)^)?
  }];
}

class TG_AdamLikeOp<string mnemonic> : TG_OptimizerOp<mnemonic,
    [AllTypesMatch<["param", "exp_avg", "exp_avg_sq", "new_exp_avg",
                    "new_exp_avg_sq"]>]> {
  let arguments = (ins TG_FloatTensor:$param, TG_FloatTensor:$grad,
                       TG_FloatTensor:$exp_avg, TG_FloatTensor:$exp_avg_sq,
                       TG_FloatScalar:$lr, TG_IndexScalar:$step,
                       Optional<TG_FloatScalar>:$grad_scale,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon,
                       F64Attr:$weight_decay);
  let results = (outs TG_FloatTensor:$new_param, TG_FloatTensor:$new_exp_avg,
                      TG_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step
    (`grad_scale` $grad_scale^)?
    `betas` `=` `(` $beta1 `,` $beta2 `)` `epsilon` `=` $epsilon
    `weight_decay` `=` $weight_decay attr-dict `:` type($param) ``
    custom<GradType>(type($grad), ref(type($param))) `,` type($lr) `,`
    type($step) (`grad_scale` type($grad_scale)^)?
  }];
}

def TG_AdamWOp : TG_AdamLikeOp<"adamw"> {
  let summary = "AdamW step (decoupled weight decay)";
  let description = [{
    With `t = step` (1 for the first step; the host increments it):
    `m' = beta1 * m + (1 - beta1) * grad`,
    `v' = beta2 * v + (1 - beta2) * grad^2`,
    `new_param = param - lr * (m' / (1 - beta1^t) / (sqrt(v' / (1 - beta2^t)) + epsilon) + weight_decay * param)`
    (PyTorch's AdamW). Computed in f32 (f64 for f64 parameters).

    As for every optimizer op, the gradient may have a narrower float type
    than the parameter, written `grad <type>` after the parameter's type:
    the update widens it (exactly) as it reads it, so a mixed-precision
    step keeps bf16 gradients and f32 master weights and moments (apex's
    and Megatron's fused AdamW with half-precision gradients). An optional
    `grad_scale` scalar multiplies the widened gradient before the update
    (the loss scale's inverse of an fp16 step, as PyTorch's fused AdamW's
    `grad_scale`), so the unscaled gradient is never stored either.

    ```mlir
    %p2, %m2, %v2 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.01 : tensor<768xf32>, tensor<f32>, tensor<i64>
    %w2, %mw2, %vw2 = tg.adamw %w, %gw, %mw, %vw, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.01 : tensor<768x768xf32> grad tensor<768x768xbf16>, tensor<f32>, tensor<i64>
    %u2, %mu2, %vu2 = tg.adamw %u, %gu, %mu, %vu, %lr, %t grad_scale %inv betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.01 : tensor<768xf32> grad tensor<768xf16>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
    ```
  }];
}

def TG_LambOp : TG_AdamLikeOp<"lamb"> {
  let summary = "LAMB step (layer-wise adaptive moments)";
  let description = [{
    As AdamW, the update direction is
    `r = m' / (1 - beta1^t) / (sqrt(v' / (1 - beta2^t)) + epsilon) + weight_decay * param`,
    scaled per parameter tensor by the trust ratio `|param| / |r|` (1 when
    either norm is 0): `new_param = param - lr * ratio * r` (You et al. 2020).

    ```mlir
    %p2, %m2, %v2 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-06 weight_decay = 0.01 : tensor<768xf32>, tensor<f32>, tensor<i64>
    ```
  }];
}

def TG_AdafactorOp : TG_OptimizerOp<"adafactor", [InferTypeOpAdaptor,
                                                 AttrSizedOperandSegments]> {
  let summary = "Adafactor step (factored second moments, no momentum)";
  let description = [{
    Adafactor (Shazeer & Stern 2018) with an explicit learning rate and no
    first moment (fairseq's and Hugging Face's `Adafactor` with
    `relative_step=False, scale_parameter=False, warmup_init=False`). With
    `t = step` (1 for the first step; the host increments it),
    `b = beta2_t = 1 - t^decay_rate` (0 at the first step, so the initial
    state does not matter) and `g2 = grad^2 + epsilon1`:

    - A parameter of rank >= 2, shape `[..., m, n]`, has two states, the
      second moment factored over its last two dimensions: a row state `R`
      of shape `[..., m]` and a column state `C` of shape `[..., n]`.
      `R' = b * R + (1 - b) * mean_j(g2[..., i, j])`,
      `C' = b * C + (1 - b) * mean_i(g2[..., i, j])`,
      `V[..., i, j] = R'[..., i] * C'[..., j] / mean_i(R'[..., i])`.
    - A parameter of rank 0 or 1 has one unfactored state `S` of its own
      type: `S' = b * S + (1 - b) * g2`, and `V = S'`.

    Then `U = grad / sqrt(V)`, clipped by its root mean square over the whole
    tensor: `U' = U / max(1, RMS(U) / clip_threshold)` with
    `RMS(U) = sqrt(mean(U^2))`, and
    `new_param = param - lr * (U' + weight_decay * param)`: the weight decay
    is decoupled from the gradient and scaled by `lr`, as AdamW's and
    fairseq's. The results are the new parameter and the new states, in the
    order of the state operands (row before column). Computed in f32 (f64 for
    f64 parameters). For an `m x n` matrix the state is `m + n` numbers,
    where AdamW keeps `2 * m * n`. `decay_rate` must be negative,
    `epsilon1` and `clip_threshold` positive; the attributes default to
    fairseq's values (-0.8, 1e-30, 1 and a weight decay of 0) in builders
    and the generic form.

    ```mlir
    %w2, %r2, %c2 = tg.adafactor %w, %gw, [%r, %c], %lr, %t decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<768x3072xf32>, [tensor<768xf32>, tensor<3072xf32>], tensor<f32>, tensor<i64>
    %b2, %v2 = tg.adafactor %b, %gb, [%v], %lr, %t decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<3072xf32>, [tensor<3072xf32>], tensor<f32>, tensor<i64>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$param, TG_FloatTensor:$grad,
                       Variadic<TG_FloatTensor>:$state,
                       TG_FloatScalar:$lr, TG_IndexScalar:$step,
                       Optional<TG_FloatScalar>:$grad_scale,
                       DefaultValuedAttr<F64Attr, "-0.8">:$decay_rate,
                       DefaultValuedAttr<F64Attr, "1e-30">:$epsilon1,
                       DefaultValuedAttr<F64Attr, "1.0">:$clip_threshold,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs TG_FloatTensor:$new_param,
                      Variadic<TG_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $param `,` $grad `,` `[` $state `]` `,` $lr `,` $step
    (`grad_scale` $grad_scale^)?
    `decay_rate` `=` $decay_rate `epsilon1` `=` $epsilon1
    `clip_threshold` `=` $clip_threshold `weight_decay` `=` $weight_decay
    attr-dict `:` type($param) ``
    custom<GradType>(type($grad), ref(type($param))) `,` `[` type($state) `]`
    `,` type($lr) `,` type($step) (`grad_scale` type($grad_scale)^)?
  }];
  let extraClassDeclaration = [{
    /// The state types of a parameter of type `param`: the row and column
    /// second moments for rank >= 2 (`[..., m]` and `[..., n]` for
    /// `[..., m, n]`), else one second moment of the parameter's type.
    static ::llvm::SmallVector<::mlir::RankedTensorType, 2>
    getStateTypes(::mlir::RankedTensorType param);
  }];
}

//===----------------------------------------------------------------------===//
// Backward ops: the vector-Jacobian products that are worth one kernel.
//===----------------------------------------------------------------------===//

def TG_SoftmaxGradOp : TG_Op<"softmax_grad", [Pure, TG_ReductionOpTrait,
    AllTypesMatch<["output", "grad_output", "result"]>]> {
  let summary = "Backward of softmax";
  let description = [{
    Given the softmax `output` y and the gradient `grad_output` dy along
    `dim`: `result = y * (dy - sum(dy * y))`, the sum along `dim`, computed
    in f32.

    ```mlir
    %dx = tg.softmax_grad %y, %dy dim = 3 : tensor<8x12x128x128xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$output, TG_FloatTensor:$grad_output,
                       I64Attr:$dimension);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $output `,` $grad_output `dim` `=` $dimension attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def TG_GeluGradOp : TG_ElementwiseOp<"gelu_grad", 12, 2,
    [AllTypesMatch<["grad_output", "input", "result"]>]> {
  let summary = "Backward of GELU";
  let description = [{
    `result = grad_output * gelu'(input)` for the op's GELU formula.

    ```mlir
    %dx = tg.gelu_grad tanh %dy, %x : tensor<8x128x3072xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$input,
                       TG_GeluApproximation:$approximation);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $approximation $grad_output `,` $input attr-dict `:` type($result)
  }];
}

def TG_QuantizeDequantizeGradOp : TG_ElementwiseOp<"quantize_dequantize_grad",
    4, 0, [AllTypesMatch<["grad_output", "input", "scale", "zero_point",
                          "result"]>]> {
  let summary = "Backward of quantize_dequantize (straight-through)";
  let description = [{
    `result = grad_output` where `low <= round(input / scale) + zero_point
    <= high` (the grid point `tg.quantize_dequantize` was not clamped to),
    0 elsewhere and where that value is NaN.

    ```mlir
    %dw = tg.quantize_dequantize_grad %dy, %w, %scale, %zero range = [-128, 127] : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$input,
                       TG_FloatTensor:$scale, TG_FloatTensor:$zero_point,
                       I64Attr:$low, I64Attr:$high);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $scale `,` $zero_point `range` `=` `[` $low
    `,` $high `]` attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def TG_LayerNormGradOp : TG_Op<"layer_norm_grad", [Pure, TG_ReductionOpTrait,
    InferTypeOpAdaptor]> {
  let summary = "Backward of layer normalization";
  let description = [{
    From the gradient of `y`, the input, the forward's `mean` and `rstd`, and
    the scale: with `xhat = (x - mean) * rstd` and `g = grad_output * scale`,
    `grad_input = rstd * (g - mean(g) - xhat * mean(g * xhat))` (means over
    the last dimension), `grad_scale = sum(grad_output * xhat)` and
    `grad_bias = sum(grad_output)` over every dimension but the last; in f32.

    ```mlir
    %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$input,
                       TG_FloatTensor:$mean, TG_FloatTensor:$rstd,
                       TG_FloatTensor:$scale);
  let results = (outs TG_FloatTensor:$grad_input, TG_FloatTensor:$grad_scale,
                      TG_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $mean `,` $rstd `,` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def TG_RmsNormGradOp : TG_Op<"rms_norm_grad", [Pure, TG_ReductionOpTrait,
    InferTypeOpAdaptor]> {
  let summary = "Backward of RMS normalization";
  let description = [{
    With `xhat = x * rstd` and `g = grad_output * scale`:
    `grad_input = rstd * (g - xhat * mean(g * xhat))` (mean over the last
    dimension) and `grad_scale = sum(grad_output * xhat)` over every dimension
    but the last; in f32.

    ```mlir
    %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$input,
                       TG_FloatTensor:$rstd, TG_FloatTensor:$scale);
  let results = (outs TG_FloatTensor:$grad_input, TG_FloatTensor:$grad_scale);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $rstd `,` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

def TG_AttentionGradOp : TG_Op<"attention_grad", [Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["query", "key", "value", "grad_output"]>,
    AttrSizedOperandSegments, TG_AttentionRandom], 1,
    TG_PartitionRestricted> {
  let summary = "Backward of attention (flash-attention semantics)";
  let description = [{
    The gradients of `tg.attention`'s query, key and value from the gradient
    of its output, its operands, its `output` and its `logsumexp` (which
    rebuild the probabilities `p` without storing them):
    `dp = grad_output @ value^T`, `ds = p * (dp - rowsum(grad_output * output))`,
    `grad_query = scale * ds @ key`, `grad_key = scale * ds^T @ query`,
    `grad_value = p^T @ grad_output`; with grouped-query attention, the
    gradients of a key/value head sum over the query heads that share it.
    `bias`, `causal`, `scale`, `softcap` and the dropout (`dropout`,
    `seed`, `offset`, `stream`, `global_shape`) are those of the forward op
    (the bias enters the rebuilt scores, its own gradient is built from
    other ops; with a soft cap, `ds` is multiplied by
    `1 - tanh(s / softcap)^2` of the scaled score `s`; with dropout, the
    regenerated mask `z = keep / (1 - rate)` gives `grad_value = (p * z)^T @
    grad_output` and `dp = (grad_output @ value^T) * z`, while
    `rowsum(grad_output * output)` already is `rowsum(dp * p)`).

    ```mlir
    %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal : (...) -> (...)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$query,
                       TG_FloatTensor:$key, TG_FloatTensor:$value,
                       TG_FloatTensor:$output, TG_FloatTensor:$logsumexp,
                       Optional<TG_FloatTensor>:$bias,
                       Optional<TG_IndexScalar>:$seed,
                       Optional<TG_IndexScalar>:$offset,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs TG_FloatTensor:$grad_query, TG_FloatTensor:$grad_key,
                      TG_FloatTensor:$grad_value);
  let assemblyFormat = [{
    $grad_output `,` $query `,` $key `,` $value `,` $output `,` $logsumexp
    (`bias` $bias^)? (`causal` $causal^)? (`scale` `=` $scale^)?
    (`softcap` `=` $softcap^)? (`dropout` `=` $dropout^)? (`seed` $seed^)?
    (`offset` $offset^)? (`stream` `=` $stream^)? (`of` $global_shape^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, else 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

def TG_AttentionBiasGradOp : TG_Op<"attention_bias_grad", [Pure,
    InferTypeOpAdaptor,
    AllElementTypesMatch<["query", "key", "value", "grad_output"]>,
    AttrSizedOperandSegments, TG_AttentionRandom], 1,
    TG_PartitionRestricted> {
  let summary = "Gradient of attention's bias (flash-attention semantics)";
  let description = [{
    The gradient of `tg.attention`'s `bias` from the gradient of its output,
    its operands, its `output` and its `logsumexp`: `ds = p * (dp -
    rowsum(grad_output * output))` with the probabilities `p` rebuilt from
    the scores and `dp = grad_output @ value^T` (through the dropout's mask
    with dropout), summed over the dimensions the bias broadcasts, in f32,
    of the bias's type. Like `tg.attention_grad`, it forms each score where
    it needs it instead of a `[B, H, Sq, Sk]` tensor: autodiff builds it
    where a trained value reaches the bias (T5's relative position bias).
    The operands and attributes are those of the forward op.

    ```mlir
    %db = tg.attention_bias_grad %do, %q, %k, %v, %o, %lse bias %b : (...) -> tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_FloatTensor:$query,
                       TG_FloatTensor:$key, TG_FloatTensor:$value,
                       TG_FloatTensor:$output, TG_FloatTensor:$logsumexp,
                       TG_FloatTensor:$bias,
                       Optional<TG_IndexScalar>:$seed,
                       Optional<TG_IndexScalar>:$offset,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<F64Attr>:$softcap,
                       OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs TG_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $query `,` $key `,` $value `,` $output `,` $logsumexp
    `bias` $bias (`causal` $causal^)? (`scale` `=` $scale^)?
    (`softcap` `=` $softcap^)? (`dropout` `=` $dropout^)? (`seed` $seed^)?
    (`offset` $offset^)? (`stream` `=` $stream^)? (`of` $global_shape^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, else 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

def TG_EmbeddingGradOp : TG_Op<"embedding_grad", [Pure, TG_Differentiable]> {
  let summary = "Backward of embedding: scatter-add rows into a table";
  let description = [{
    `result[v, d] = sum of grad_output[i..., d] over the positions i... whose
    id is v`, accumulated in f32; the result has the embedding table's type
    (`VxD`). Every id must be in `[0, V)`. The importer also scatters with
    it (ONNX `ScatterND` and `ScatterElements` at run-time indices); its
    gradient is the gather of the result's gradient by the same ids.

    ```mlir
    %dw = tg.embedding_grad %dy[%ids] : (tensor<8x128x768xf32>, tensor<8x128xi64>) -> tensor<50257x768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad_output, TG_IndexTensor:$indices);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output `[` $indices `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_CrossEntropyGradOp : TG_Op<"cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>], 1, TG_PartitionRestricted> {
  let summary = "Backward of cross-entropy";
  let description = [{
    `result[t, c] = w * (softmax(logits[t])[c] - (c == labels[t]))`, with
    `softmax = exp(logits - logsumexp)` from the forward's `logsumexp`, and
    `w = grad_loss / N` for the `mean` over the N counted tokens
    (`grad_loss` for `sum`); ignored tokens get zeros. `reduction` and
    `ignore_index` are those of the forward op.

    ```mlir
    %dl = tg.cross_entropy_grad mean %dloss, %logits, %labels, %lse ignore_index = -100 : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
    ```
  }];
  let arguments = (ins TG_LossReduction:$reduction, TG_FloatScalar:$grad_loss,
                       TG_FloatTensor:$logits, TG_IndexTensor:$labels,
                       TG_FloatTensor:$logsumexp,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $reduction $grad_loss `,` $logits `,` $labels `,` $logsumexp
    (`ignore_index` `=` $ignore_index^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def TG_FusionOp : TG_Op<"fusion", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects, RecursivelySpeculatable], /*sharded=*/0> {
  let summary = "A region that becomes one kernel";
  let description = [{
    The body computes the results from the block arguments, which are the
    `inputs`; it reads nothing else from above. Code generation emits the
    region as one kernel (or one library call with an epilogue), so only the
    inputs and results move through device memory.

    ```mlir
    %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = tg.add %x, %y : tensor<4xf32>
      %r = tg.relu %s : tensor<4xf32>
      tg.yield %r : tensor<4xf32>
    }
    ```

    tg-fuse records what kind of kernel the region is in `kind` (`loop`,
    `reduction`, `gemm` or `multi_tensor`); a `gemm` region names the
    cuBLASLt epilogue it maps to in `epilogue` (`CUBLASLT_EPILOGUE_...`),
    with `epilogue_c` when a residual is read as the GEMM's C operand.
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs,
                       OptionalAttr<StrAttr>:$kind,
                       OptionalAttr<StrAttr>:$epilogue,
                       UnitAttr:$epilogue_c);
  let results = (outs Variadic<TG_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$inputs), [{
      build($_builder, $_state, resultTypes, inputs, nullptr, nullptr, false);
    }]>,
  ];
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
}

def TG_YieldOp : TG_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">], /*sharded=*/0> {
  let summary = "Returns the results of a fusion region";
  let arguments = (ins Variadic<TG_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

#endif // TGC_DIALECT_TG_TGOPS_TD
