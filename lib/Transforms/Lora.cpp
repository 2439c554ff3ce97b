//===- Lora.cpp - tg-lora: LoRA adapters on the matmuls of chosen weights -===//
//
// Collect the parameters the globs name that are only matmul weights, check
// the rank against each, then add the adapter arguments, the low-rank path
// after every matmul of an adapted weight, and freeze the base model.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include <cmath>

#define DEBUG_TYPE "tg-lora"

namespace tgc {
#define GEN_PASS_DEF_TGLORA
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// A matmul that reads a weight as its right-hand operand, directly or
/// through a `tg.transpose` of its last two dimensions: `x @ W`, or
/// `x @ W^T` when `transposed`.
struct WeightUse {
  tg::MatmulOp matmul;
  bool transposed;
};

/// A weight that gets an adapter: its matmuls and the shapes of its two
/// adapter matrices.
struct LoraTarget {
  BlockArgument weight;
  std::string name;
  SmallVector<WeightUse> uses;
  RankedTensorType typeA, typeB;
};

/// Whether `transpose` swaps the last two dimensions and keeps the others.
bool swapsLastTwo(tg::TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

/// The matmuls that read `weight` (only as their right-hand operand, maybe
/// through a transpose, as ONNX exports of nn.Linear do), or why it is not
/// only a matmul weight.
FailureOr<SmallVector<WeightUse>> findWeightUses(Value weight, std::string &why,
                                                 bool throughTranspose = true) {
  SmallVector<WeightUse> uses;
  for (OpOperand &use : weight.getUses()) {
    Operation *owner = use.getOwner();
    if (auto matmul = dyn_cast<tg::MatmulOp>(owner)) {
      if (use.getOperandNumber() != 1) {
        why = "it is the left-hand operand of a matmul";
        return failure();
      }
      uses.push_back({matmul, matmul.getTransposeB()});
      continue;
    }
    auto transpose = dyn_cast<tg::TransposeOp>(owner);
    if (transpose && throughTranspose && swapsLastTwo(transpose)) {
      FailureOr<SmallVector<WeightUse>> inner = findWeightUses(
          transpose.getResult(), why, /*throughTranspose=*/false);
      if (failed(inner))
        return failure();
      for (WeightUse &innerUse : *inner)
        uses.push_back({innerUse.matmul, !innerUse.transposed});
      continue;
    }
    why =
        ("it is also read by '" + owner->getName().getStringRef() + "'").str();
    return failure();
  }
  if (uses.empty()) {
    why = "it is not used";
    return failure();
  }
  return uses;
}

/// The tg.name of argument `index` of `func`, else argN.
std::string getParamName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, tg::TGDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

/// PEFT's names for a `P.weight` (`P.lora_A.weight`), else `W.lora_A`.
std::string getAdapterName(StringRef weight, StringRef matrix) {
  StringRef prefix = weight;
  if (prefix.consume_back(".weight"))
    return (prefix + ".lora_" + matrix + ".weight").str();
  return (weight + ".lora_" + matrix).str();
}

struct TGLoraPass : tgc::impl::TGLoraBase<TGLoraPass> {
  using TGLoraBase::TGLoraBase;

  void runOnOperation() override;

private:
  /// The weights of `func` to adapt; errors for a weight that cannot take
  /// the rank or is used both ways. Counts the adapted weights per glob.
  FailureOr<SmallVector<LoraTarget>>
  collectTargets(func::FuncOp func, ArrayRef<llvm::GlobPattern> globs,
                 MutableArrayRef<unsigned> adaptedPerGlob);
  /// Adds the adapter arguments and matmuls of `targets` to `func`, and
  /// freezes its other parameters.
  LogicalResult addAdapters(func::FuncOp func,
                            MutableArrayRef<LoraTarget> targets,
                            double scaling);
};

FailureOr<SmallVector<LoraTarget>>
TGLoraPass::collectTargets(func::FuncOp func, ArrayRef<llvm::GlobPattern> globs,
                           MutableArrayRef<unsigned> adaptedPerGlob) {
  SmallVector<LoraTarget> targets;
  for (BlockArgument arg : func.getArguments()) {
    unsigned index = arg.getArgNumber();
    if (tg::getArgumentRole(func, index) != tg::Role::Param)
      continue;
    std::string name = getParamName(func, index);
    SmallVector<unsigned> matching;
    for (auto [i, glob] : llvm::enumerate(globs))
      if (glob.match(name))
        matching.push_back(i);
    if (!globs.empty() && matching.empty())
      continue;
    std::string why;
    FailureOr<SmallVector<WeightUse>> uses = findWeightUses(arg, why);
    if (failed(uses)) {
      // Without globs every parameter is a candidate: only the explicitly
      // named ones deserve a word.
      if (!globs.empty())
        emitRemark(arg.getLoc())
            << "tg-lora: parameter '" << name << "' gets no adapter: " << why;
      continue;
    }
    bool transposed = uses->front().transposed;
    if (llvm::any_of(*uses, [&](const WeightUse &use) {
          return use.transposed != transposed;
        }))
      return emitError(arg.getLoc())
             << "tg-lora: weight '" << name
             << "' is used both as x @ W and as x @ W^T; one adapter cannot "
                "serve both";
    LoraTarget target{arg, name, std::move(*uses), {}, {}};
    // A matmul operand has rank 2 or more (its verifier says so).
    auto type = cast<RankedTensorType>(arg.getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t in = shape[shape.size() - (transposed ? 1 : 2)];
    int64_t out = shape[shape.size() - (transposed ? 2 : 1)];
    if (rank > std::min(in, out))
      return emitError(arg.getLoc())
             << "tg-lora: rank " << int64_t(rank) << " is larger than weight '"
             << name << "' (" << in << " in, " << out << " out) allows";
    SmallVector<int64_t> shapeA(shape.drop_back(2)), shapeB(shapeA);
    shapeA.append({in, int64_t(rank)});
    shapeB.append({int64_t(rank), out});
    target.typeA = RankedTensorType::get(shapeA, type.getElementType());
    target.typeB = RankedTensorType::get(shapeB, type.getElementType());
    for (unsigned i : matching)
      ++adaptedPerGlob[i];
    targets.push_back(std::move(target));
  }
  return targets;
}

LogicalResult TGLoraPass::addAdapters(func::FuncOp func,
                                      MutableArrayRef<LoraTarget> targets,
                                      double scaling) {
  llvm::StringSet<> names;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    names.insert(getParamName(func, i));
  OpBuilder builder(func.getContext());
  unsigned baseArguments = func.getNumArguments();
  auto addParam = [&](const LoraTarget &target, RankedTensorType type,
                      StringRef matrix) -> FailureOr<BlockArgument> {
    std::string name = getAdapterName(target.name, matrix);
    if (!names.insert(name).second)
      return emitError(target.weight.getLoc())
             << "tg-lora: the adapter '" << name << "' of weight '"
             << target.name
             << "' is already an argument (were adapters added before?)";
    SmallVector<NamedAttribute> attrs = {
        tg::getRoleAttr(builder, tg::Role::Param),
        builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                             builder.getStringAttr(name))};
    // B = 0: the adapted graph starts as the base graph computes (PEFT).
    if (matrix == "B")
      attrs.push_back(builder.getNamedAttr(tg::TGDialect::kInitAttrName,
                                           builder.getStringAttr("zeros")));
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, type,
                                   builder.getDictionaryAttr(attrs),
                                   target.weight.getLoc())))
      return failure();
    return func.getArgument(index);
  };

  for (LoraTarget &target : targets) {
    FailureOr<BlockArgument> a = addParam(target, target.typeA, "A");
    if (failed(a))
      return failure();
    FailureOr<BlockArgument> b = addParam(target, target.typeB, "B");
    if (failed(b))
      return failure();
    // y + ((x @ A) @ B) * scaling, right after each matmul of the weight.
    for (WeightUse use : target.uses) {
      tg::MatmulOp matmul = use.matmul;
      builder.setInsertionPointAfter(matmul);
      Location loc = matmul.getLoc();
      Value y = matmul.getResult();
      auto type = cast<RankedTensorType>(y.getType());
      Value down = tg::MatmulOp::create(builder, loc, matmul.getLhs(), *a,
                                        matmul.getTransposeA(), false);
      Value up = tg::MatmulOp::create(builder, loc, type, down, *b,
                                      /*transpose_a=*/false,
                                      /*transpose_b=*/false);
      Value scale = tg::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(), scaling)));
      Value scaled = tg::MulOp::create(builder, loc, up, scale);
      auto sum = tg::AddOp::create(builder, loc, y, scaled);
      y.replaceAllUsesExcept(sum, sum);
    }
  }

  // PEFT trains the adapters only: the whole base model is frozen.
  for (unsigned i = 0; i < baseArguments; ++i)
    if (tg::getArgumentRole(func, i) == tg::Role::Param)
      func.setArgAttr(i, tg::TGDialect::kFrozenAttrName, builder.getUnitAttr());
  return success();
}

void TGLoraPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkSingleBlockFunctions(module, "tg-lora")))
    return signalPassFailure();
  // Module-wide problems are reported at the first function with a body.
  Operation *where = module;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal()) {
      where = func;
      break;
    }
  if (rank < 1) {
    where->emitError("tg-lora: the rank must be at least 1, got ")
        << int64_t(rank);
    return signalPassFailure();
  }
  if (!std::isfinite(alpha) || alpha < 0) {
    where->emitError("tg-lora: alpha must be a finite number >= 0, got ")
        << alpha;
    return signalPassFailure();
  }
  SmallVector<llvm::GlobPattern> globs;
  for (const std::string &pattern : targets) {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      where->emitError("tg-lora: invalid target glob '")
          << pattern << "': " << llvm::toString(glob.takeError());
      return signalPassFailure();
    }
    globs.push_back(std::move(*glob));
  }

  SmallVector<unsigned> adaptedPerGlob(globs.size(), 0);
  SmallVector<std::pair<func::FuncOp, SmallVector<LoraTarget>>> work;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<LoraTarget>> collected =
        collectTargets(func, globs, adaptedPerGlob);
    if (failed(collected))
      return signalPassFailure();
    if (!collected->empty())
      work.emplace_back(func, std::move(*collected));
  }
  for (auto [pattern, adapted] : llvm::zip_equal(targets, adaptedPerGlob))
    if (adapted == 0) {
      where->emitError("tg-lora: target '")
          << pattern
          << "' matches no parameter that is only used as a matmul weight";
      return signalPassFailure();
    }
  if (globs.empty() && work.empty()) {
    where->emitError("tg-lora: no parameter is only used as a matmul weight: "
                     "nothing to adapt");
    return signalPassFailure();
  }

  double scaling = alpha == 0.0 ? 1.0 : alpha / double(rank);
  for (auto &[func, funcTargets] : work)
    if (failed(addAdapters(func, funcTargets, scaling)))
      return signalPassFailure();
}

} // namespace
