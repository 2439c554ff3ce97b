//===- TGDialect.td - the tg dialect, its types and enums -*- tablegen -*-===//
//
// The tg dialect: tensor-semantics, side-effect-free ops for training steps.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGDIALECT_TD
#define TGC_DIALECT_TG_TGDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TG_Dialect : Dialect {
  let name = "tg";
  let cppNamespace = "::tgc::tg";
  let summary = "Training-graph dialect: the ops of a deep-learning training step";
  let description = [{
    The `tg` dialect describes one training step (forward, loss, backward and
    optimizer update) as a `func.func` over statically shaped tensors. Every op
    has tensor semantics and no side effects; shapes must match exactly, so
    broadcasting is the explicit `tg.broadcast_in_dim` op.

    Element types: `f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `f64` (reference
    only), `i64`, `i32` and `i1`. A scalar is a rank-0 tensor (`tensor<f32>`).

    Function arguments and results carry attributes that say what they are:

    * `tg.role` on an argument: `"param"`, `"state"` (optimizer state, and
      mixed precision's loss scale and fp8 amax histories), `"input"`,
      `"label"` or `"hyper"` (learning rate, step, dropout seed).
    * `tg.role` on a result: `"loss"` (a floating-point scalar, at most one),
      `"grad"`, `"param"`, `"state"` or `"output"`.
    * `tg.name` on either: the framework's stable name; unique among the
      arguments and unique among the results.
    * `tg.default` on a scalar argument: the value the host uses unless told
      otherwise (e.g. the learning rate tg-optimizer was given); a float for a
      float scalar, an integer for an integer scalar.
    * `tg.init` on a float `param` (or `tg.buffer` state) argument: how a
      fresh run initializes it, `"normal"` (mean 0, standard deviation
      0.02, the default), `"zeros"` (e.g. LoRA's B matrices) or `"ones"`.
    * `tg.frozen` (a unit attribute) on a `param` argument: the parameter is
      not trained; `tg-autodiff` builds no gradient for it, whatever its
      `frozen`/`trainable` globs say (`tg-lora` freezes the base model).
    * `tg.buffer` (a unit attribute) on a `state` argument: model state the
      step updates that is no optimizer state (a training-mode
      BatchNormalization's running statistics): its initial value is the
      model's, and it is loaded and saved with the parameters.
    * `tg.aliases = N` on a result: the result is the new value of argument
      `N`, which must have the same type and the role `param` or `state`; at
      most one result aliases a given argument. The buffer may be updated in
      place.

    Pipeline parallelism (docs/pipeline.md) marks a pipelined function with
    `tg.pipeline_stages = {axis = "pp", stages = P, virtual_stages = V,
    micro_batches = M, schedule = "1f1b"}` (the schedule one of `"gpipe"`,
    `"1f1b"`, `"interleaved"`) and its ops with `tg.stage` and
    `tg.micro_batch` (non-negative integers) and `tg.backward` (a unit
    attribute).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes of TGAttrs.td (TGShardingAttr.cpp).
    void registerAttributes();
    /// Names of the function argument/result attributes.
    static constexpr ::llvm::StringLiteral kRoleAttrName = "tg.role";
    static constexpr ::llvm::StringLiteral kNameAttrName = "tg.name";
    static constexpr ::llvm::StringLiteral kAliasesAttrName = "tg.aliases";
    static constexpr ::llvm::StringLiteral kDefaultAttrName = "tg.default";
    static constexpr ::llvm::StringLiteral kInitAttrName = "tg.init";
    static constexpr ::llvm::StringLiteral kFrozenAttrName = "tg.frozen";
    static constexpr ::llvm::StringLiteral kBufferAttrName = "tg.buffer";
    /// The memory plan (tg-memory-plan): byte offsets in the arena.
    static constexpr ::llvm::StringLiteral kOffsetAttrName = "tg.offset";
    static constexpr ::llvm::StringLiteral kOffsetsAttrName = "tg.offsets";
    static constexpr ::llvm::StringLiteral kWorkspaceOffsetAttrName =
        "tg.workspace_offset";
    static constexpr ::llvm::StringLiteral kArenaSizeAttrName =
        "tg.arena_size";
    static constexpr ::llvm::StringLiteral kGemmWorkspaceOffsetAttrName =
        "tg.gemm_workspace_offset";
    /// On the module: the device the step is planned for (the fields of a
    /// device JSON file), and the pipeline that compiled it.
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "tg.device";
    static constexpr ::llvm::StringLiteral kPipelineAttrName = "tg.pipeline";
    /// Pipeline parallelism (docs/pipeline.md): on a function, its pipeline
    /// (a dictionary); on ops, the stage and micro-batch they belong to and
    /// whether the backward built them.
    static constexpr ::llvm::StringLiteral kPipelineStagesAttrName =
        "tg.pipeline_stages";
    static constexpr ::llvm::StringLiteral kStageAttrName = "tg.stage";
    static constexpr ::llvm::StringLiteral kMicroBatchAttrName =
        "tg.micro_batch";
    static constexpr ::llvm::StringLiteral kBackwardAttrName = "tg.backward";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// The float8 FNUZ formats, f4E2M1FN and f8E8M0FNU are storage formats of
// imported models (ONNX's FLOAT8E4M3FNUZ, FLOAT8E5M2FNUZ, FLOAT4E2M1 and
// FLOAT8E8M0, the MX formats' elements and scales): the interpreter
// computes with them, and generated kernels store them one element a byte.
def TG_FloatElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, F8E4M3FNUZ,
                                 F8E5M2FNUZ, F4E2M1FN, F8E8M0FNU, F64],
                                "tg floating-point type">;
// Signless integers are signed (two's complement, wrapping); ui8, ui16,
// ui32 and ui64 are unsigned (the interpreter holds ui64 values as their
// bits in int64 and orders and divides them unsigned); i4, ui4, i2 and ui2
// are ONNX's packed INT4, UINT4, INT2 and UINT2.
def TG_IntElement : AnyTypeOf<[I64, I32, I16, I8, I<4>, I<2>, UI64, UI32, UI16,
                               UI8, UI<4>, UI<2>],
                              "tg integer type">;
// Indices, labels, seeds and step counts.
def TG_IndexElement : AnyTypeOf<[I64, I32], "tg index type">;
def TG_BoolElement : I<1>;

// Statically shaped tensors of `types` without an encoding: tg values are
// plain dense tensors (layouts and shardings are tgc's own attributes).
// A tensor holds at most tg::kMaxTensorBytes (16 TiB): the sizes, bytes and
// FLOPs computed from it cannot overflow.
class TG_TensorOf<list<Type> types>
    : ConfinedType<StaticShapeTensorOf<types>,
                   [CPred<"!::llvm::cast<::mlir::RankedTensorType>($_self)"
                          ".getEncoding()">,
                    CPred<"::tgc::tg::isWithinTensorSizeLimit($_self)">],
                   StaticShapeTensorOf<types>.summary #
                       " without encoding, of at most 2^44 bytes",
                   "::mlir::RankedTensorType">;
class TG_ScalarOf<list<Type> types>
    : ConfinedType<0DTensorOf<types>,
                   [CPred<"!::llvm::cast<::mlir::RankedTensorType>($_self)"
                          ".getEncoding()">],
                   0DTensorOf<types>.summary # " without encoding",
                   "::mlir::RankedTensorType">;

def TG_Tensor : TG_TensorOf<[TG_FloatElement, TG_IntElement, TG_BoolElement]>;
def TG_FloatTensor : TG_TensorOf<[TG_FloatElement]>;
def TG_IndexTensor : TG_TensorOf<[TG_IndexElement]>;
def TG_NumericTensor : TG_TensorOf<[TG_FloatElement, TG_IntElement]>;
def TG_BoolTensor : TG_TensorOf<[TG_BoolElement]>;
def TG_IntOrBoolTensor : TG_TensorOf<[TG_IntElement, TG_BoolElement]>;
def TG_IndexScalar : TG_ScalarOf<[TG_IndexElement]>;
def TG_FloatScalar : TG_ScalarOf<[TG_FloatElement]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def TG_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::tgc::tg";
}

def TG_BitwiseKind : I32EnumAttr<"BitwiseKind", "bitwise operation", [
      I32EnumAttrCase<"And", 0, "and">, I32EnumAttrCase<"Or", 1, "or">,
      I32EnumAttrCase<"Xor", 2, "xor">]> {
  let cppNamespace = "::tgc::tg";
}

def TG_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
      I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">, I32EnumAttrCase<"Mean", 3, "mean">]> {
  let cppNamespace = "::tgc::tg";
}

def TG_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula", [
      I32EnumAttrCase<"Erf", 0, "erf">, I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::tgc::tg";
}

def TG_RandomDistribution : I32EnumAttr<"RandomDistribution",
    "random distribution", [
      I32EnumAttrCase<"Uniform", 0, "uniform">,
      I32EnumAttrCase<"Normal", 1, "normal">]> {
  let cppNamespace = "::tgc::tg";
}

def TG_LossReduction : I32EnumAttr<"LossReduction", "loss reduction", [
      I32EnumAttrCase<"Mean", 0, "mean">, I32EnumAttrCase<"Sum", 1, "sum">]> {
  let cppNamespace = "::tgc::tg";
}

// What a step's argument or result is: the value of `tg.role`, spelled as a
// string in the IR (`tg.role = "param"`). Arguments take param, state,
// input, label or hyper; results loss, grad, param, state or output.
def TG_Role : I32Enum<"Role", "role of a function argument or result", [
      I32EnumCase<"Param", 0, "param">, I32EnumCase<"State", 1, "state">,
      I32EnumCase<"Input", 2, "input">, I32EnumCase<"Label", 3, "label">,
      I32EnumCase<"Hyper", 4, "hyper">, I32EnumCase<"Loss", 5, "loss">,
      I32EnumCase<"Grad", 6, "grad">, I32EnumCase<"Output", 7, "output">]> {
  let cppNamespace = "::tgc::tg";
}

#endif // TGC_DIALECT_TG_TGDIALECT_TD
