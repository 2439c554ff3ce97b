//===- Microbatch.cpp - tg-microbatch: gradient accumulation --------------===//
//
// Widen the batch arguments, then repeat the step's body once per
// micro-batch on slices of them, average the losses and gradients, and
// thread the state the step updates through the micro-batches.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

#define DEBUG_TYPE "tg-microbatch"

namespace tgc {
#define GEN_PASS_DEF_TGMICROBATCH
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The most ops the repeated bodies may hold together (a million-op
/// function takes minutes to schedule and plan).
constexpr int64_t kMaxUnrolledOps = int64_t(1) << 20;

struct TGMicrobatchPass : tgc::impl::TGMicrobatchBase<TGMicrobatchPass> {
  using TGMicrobatchBase::TGMicrobatchBase;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-microbatch")))
      return signalPassFailure();
    if (microBatches < 1) {
      getOperation().emitError("tg-microbatch: micro-batches must be >= 1");
      return signalPassFailure();
    }
    if (microBatches == 1)
      return;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(accumulate(func)))
        return signalPassFailure();
  }

  LogicalResult accumulate(func::FuncOp func);
};

LogicalResult TGMicrobatchPass::accumulate(func::FuncOp func) {
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  resultAttrs.resize(func.getNumResults());
  if (llvm::none_of(resultAttrs, [](DictionaryAttr a) {
        return tg::getRole(a) == tg::Role::Grad;
      }))
    return success(); // Not a differentiated step.
  // The body is repeated once per micro-batch: bound the program it makes.
  unsigned n = microBatches;
  int64_t bodyOps = 0;
  func.walk([&](Operation *) { ++bodyOps; });
  if (bodyOps * int64_t(n) > kMaxUnrolledOps)
    return func.emitError("tg-microbatch: ")
           << n << " micro-batches of a step of " << bodyOps
           << " ops would make " << bodyOps * int64_t(n) << " ops (at most "
           << kMaxUnrolledOps << "); use fewer micro-batches";

  // The batch arguments and their wider types.
  SmallVector<DictionaryAttr> argAttrs;
  func.getAllArgAttrs(argAttrs);
  SmallVector<Type> newTypes(func.getArgumentTypes());
  SmallVector<bool> isBatch(func.getNumArguments(), false);
  for (auto [i, attrs] : llvm::enumerate(argAttrs)) {
    std::optional<tg::Role> role = tg::getRole(attrs);
    if (role != tg::Role::Input && role != tg::Role::Label)
      continue;
    auto type = cast<RankedTensorType>(newTypes[i]);
    if (type.getRank() == 0)
      return func.emitError("tg-microbatch: batch argument #")
             << i << " is a scalar; its first dimension is the batch";
    SmallVector<int64_t> shape(type.getShape());
    shape[0] *= n;
    newTypes[i] = RankedTensorType::get(shape, type.getElementType());
    isBatch[i] = true;
  }
  SmallVector<int64_t> batchSizes;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (isBatch[i])
      batchSizes.push_back(cast<RankedTensorType>(type).getDimSize(0));

  // The loss and the gradients are means over the micro-batches. A forward
  // output whose first dimension is the batch's (logits, a reconstruction)
  // is the micro-batches' values one after the other: the whole batch's,
  // as one step over it returns. State the step updates (a training-mode
  // BatchNormalization's running statistics: a `state` result aliasing its
  // argument) is threaded through the micro-batches, each reading
  // the value the one before it wrote, as N forward calls update it in
  // PyTorch; the step returns the last one's.
  std::optional<PipelineConfig> pipeline = PipelineConfig::get(func);
  SmallVector<bool> isStacked(func.getNumResults(), false);
  SmallVector<std::optional<unsigned>> threads(func.getNumResults());
  for (auto [i, attrs] : llvm::enumerate(resultAttrs)) {
    std::optional<tg::Role> role = tg::getRole(attrs);
    if (role == tg::Role::Grad || role == tg::Role::Loss)
      continue;
    auto type = cast<RankedTensorType>(func.getResultTypes()[i]);
    if ((!role || role == tg::Role::Output) && type.getRank() > 0 &&
        llvm::is_contained(batchSizes, type.getDimSize(0))) {
      isStacked[i] = true;
      continue;
    }
    auto name = attrs ? attrs.getAs<StringAttr>(tg::TGDialect::kNameAttrName)
                      : StringAttr();
    // The verifier checked the aliased argument's index and type.
    auto aliased = func.getResultAttrOfType<IntegerAttr>(
        i, tg::TGDialect::kAliasesAttrName);
    if (role == tg::Role::State && aliased) {
      // In a pipeline a stage's forwards run in micro-batch order, so the
      // value one micro-batch writes reaches the next where one stage
      // both reads and updates it.
      if (pipeline) {
        auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
        SmallVector<Operation *> touching(
            func.getArgument(aliased.getInt()).getUsers());
        if (Operation *def = ret.getOperand(i).getDefiningOp())
          touching.push_back(def);
        std::optional<int64_t> stage;
        for (Operation *op : touching) {
          std::optional<int64_t> at = getStage(op);
          if (!at || (stage && *stage == *at))
            continue;
          if (stage) {
            InFlightDiagnostic diag =
                func.emitError("tg-microbatch: state result #") << i;
            if (name)
              diag << " ('" << name.getValue() << "')";
            return diag << " is read and updated on stages "
                        << std::min(*stage, *at) << " and "
                        << std::max(*stage, *at)
                        << "; a pipelined step threads state between its "
                           "micro-batches only within one stage";
          }
          stage = at;
        }
      }
      threads[i] = unsigned(aliased.getInt());
      continue;
    }
    InFlightDiagnostic diag = func.emitError("tg-microbatch: result #") << i;
    if (name)
      diag << " ('" << name.getValue() << "')";
    return diag << " is neither the loss, a gradient, an output whose "
                   "first dimension is the batch's nor state updated from "
                   "the argument it aliases; only steps that return those "
                   "can be split into micro-batches";
  }

  Block &oldBody = func.getBody().front();
  auto *newBody = new Block();
  func.getBody().push_back(newBody);
  for (auto [type, arg] : llvm::zip(newTypes, oldBody.getArguments()))
    newBody->addArgument(type, arg.getLoc());
  OpBuilder builder = OpBuilder::atBlockEnd(newBody);
  Location loc = func.getLoc();

  // The body, once per micro-batch, on its slice of the batch. In a
  // pipeline, each copy's ops carry their micro-batch.
  bool pipelined = pipeline.has_value();
  // Per result, the running sums: one per pipeline device whose ops add
  // terms to it (a tied weight's gradient sums on the first and the last
  // stage, and crosses once per step instead of once per micro-batch).
  SmallVector<llvm::MapVector<int64_t, Value>> sums;
  // Per stacked result, its value in each micro-batch.
  SmallVector<SmallVector<Value>> stacked;
  // Per threaded state result, the last micro-batch's value.
  SmallVector<Value> carried(func.getNumResults());
  auto deviceOf = [&](Value v) -> int64_t {
    Operation *def = pipelined ? v.getDefiningOp() : nullptr;
    return def ? pipeline->getDeviceOf(def) : -1;
  };
  // The terms of a returned `value`: in a pipeline, the operands of the
  // adds that joined terms from different devices (`joins`, now dead once
  // the terms are summed per device).
  std::function<void(Value, SmallVectorImpl<Value> &,
                     SmallVectorImpl<Operation *> &)>
      getTerms = [&](Value value, SmallVectorImpl<Value> &terms,
                     SmallVectorImpl<Operation *> &joins) {
        auto add = value.getDefiningOp<tg::AddOp>();
        if (add && (value.use_empty() || value.hasOneUse()) &&
            add.getLhs().getType() == value.getType() &&
            add.getRhs().getType() == value.getType() &&
            deviceOf(add.getLhs()) >= 0 && deviceOf(add.getRhs()) >= 0 &&
            deviceOf(add.getLhs()) != deviceOf(add.getRhs())) {
          joins.push_back(add);
          getTerms(add.getLhs(), terms, joins);
          getTerms(add.getRhs(), terms, joins);
          return;
        }
        terms.push_back(value);
      };
  // The dropout streams whose first op (the forward's; the backward's and
  // recomputations replay its mask) reads the batch: each micro-batch
  // draws its own part of the whole batch's mask, offset by the elements
  // of the micro-batches before it. A mask of values that do not depend on
  // the batch (a weight's) is the same for every micro-batch, as it is
  // once for the whole batch.
  DenseSet<Value> fromBatch;
  for (auto [i, arg] : llvm::enumerate(oldBody.getArguments()))
    if (isBatch[i])
      fromBatch.insert(arg);
  llvm::SmallDenseMap<int64_t, bool> batchStreams;
  for (Operation &op : oldBody.without_terminator()) {
    bool reads = llvm::any_of(op.getOperands(), [&](Value operand) {
      return fromBatch.contains(operand);
    });
    if (auto dropout = dyn_cast<tg::DropoutOp>(op))
      batchStreams.try_emplace(dropout.getStream(),
                               fromBatch.contains(dropout.getOperand()));
    // An attention's dropout covers its probabilities, the batch's when
    // its queries, keys, values or bias are.
    if (auto attention = dyn_cast<tg::AttentionOp>(op);
        attention && attention.drawsRandom())
      batchStreams.try_emplace(attention.getRandomStream(), reads);
    if (reads)
      fromBatch.insert(op.result_begin(), op.result_end());
  }
  // A random op's numbers are the batch's when its first dimension is the
  // batch's (per-sample noise: a VAE's, a diffusion model's, a per-sample
  // mask); the whole batch's tensor then has the micro-batches' parts one
  // after the other. Other shapes (a weight's noise, one row shared by the
  // samples) are drawn once per step: the same in every micro-batch.
  for (Operation &op : oldBody.without_terminator())
    if (auto random = dyn_cast<tg::RandomOp>(op)) {
      ArrayRef<int64_t> shape = random.getType().getShape();
      batchStreams.try_emplace(random.getStream(),
                               !shape.empty() &&
                                   llvm::is_contained(batchSizes, shape[0]));
    }
  auto offsetRandom = [&](tg::CounterRandomOpInterface random, unsigned k) {
    if (k == 0 || !random.drawsRandom() ||
        !batchStreams.lookup(random.getRandomStream()))
      return;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(random);
    Value offset = random.getRandomOffset();
    auto type = offset ? cast<RankedTensorType>(offset.getType())
                       : RankedTensorType::get({}, builder.getI64Type());
    int64_t elements = ShapedType::getNumElements(random.getRandomShape());
    Value before = tg::ConstantOp::create(
        builder, random.getLoc(),
        DenseElementsAttr::get(
            type, builder.getIntegerAttr(type.getElementType(), k * elements)));
    if (pipelined)
      copyPipelineAttrs(random, before.getDefiningOp());
    if (offset) {
      before = tg::AddOp::create(builder, random.getLoc(), offset, before);
      if (pipelined)
        copyPipelineAttrs(random, before.getDefiningOp());
    }
    random.getRandomOffsetMutable().assign(before);
  };

  for (unsigned k = 0; k < n; ++k) {
    auto microBatch = builder.getI64IntegerAttr(k);
    auto tag = [&](Operation *op) {
      if (pipelined)
        op->setAttr(kMicroBatchAttrName, microBatch);
      return op;
    };
    IRMapping mapping;
    for (auto [i, oldArg, newArg] :
         llvm::enumerate(oldBody.getArguments(), newBody->getArguments())) {
      if (!isBatch[i]) {
        mapping.map(oldArg, newArg);
        continue;
      }
      auto type = cast<RankedTensorType>(oldArg.getType());
      SmallVector<int64_t> start(type.getRank(), 0);
      SmallVector<int64_t> limit(type.getShape());
      SmallVector<int64_t> strides(type.getRank(), 1);
      start[0] = k * type.getDimSize(0);
      limit[0] = start[0] + type.getDimSize(0);
      mapping.map(oldArg,
                  tag(tg::SliceOp::create(builder, oldArg.getLoc(), newArg,
                                          start, limit, strides))
                      ->getResult(0));
    }
    // Threaded state: the value the micro-batch before wrote.
    for (auto [i, argument] : llvm::enumerate(threads))
      if (argument && carried[i])
        mapping.map(oldBody.getArgument(*argument), carried[i]);
    for (Operation &op : oldBody.without_terminator())
      if (auto random = dyn_cast<tg::CounterRandomOpInterface>(
              tag(builder.clone(op, mapping))))
        offsetRandom(random, k);
    Operation *ret = oldBody.getTerminator();
    sums.resize(ret->getNumOperands());
    stacked.resize(ret->getNumOperands());
    for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
      Value mapped = mapping.lookupOrDefault(value);
      if (isStacked[i]) {
        stacked[i].push_back(mapped);
        continue;
      }
      if (threads[i]) {
        carried[i] = mapped;
        continue;
      }
      SmallVector<Value> terms;
      SmallVector<Operation *> joins;
      getTerms(mapped, terms, joins);
      for (Value term : terms) {
        Value &sum = sums[i][deviceOf(term)];
        if (!sum) {
          sum = term;
          continue;
        }
        auto add = tg::AddOp::create(builder, loc, sum, term);
        // The running sum is part of the micro-batch's last unit on the
        // stage that produced its term.
        if (Operation *def = term.getDefiningOp(); pipelined && def) {
          copyPipelineAttrs(def, add);
          tag(add);
        }
        sum = add;
      }
      // The adds that joined the devices' terms are redone once, below.
      for (Operation *join : joins)
        if (join->use_empty())
          join->erase();
    }
  }

  // Means over the micro-batches; the stacked outputs joined.
  SmallVector<Value> results;
  for (auto [i, partials] : llvm::enumerate(sums)) {
    if (isStacked[i]) {
      results.push_back(
          tg::ConcatOp::create(builder, loc, stacked[i], /*dimension=*/0));
      continue;
    }
    if (threads[i]) {
      results.push_back(carried[i]);
      continue;
    }
    Value sum;
    for (auto [device, partial] : partials)
      sum = sum ? tg::AddOp::create(builder, loc, sum, partial).getResult()
                : partial;
    auto type = cast<RankedTensorType>(sum.getType());
    auto scale = DenseElementsAttr::get(
        type, builder.getFloatAttr(type.getElementType(), 1.0 / n));
    results.push_back(tg::MulOp::create(
        builder, loc, sum, tg::ConstantOp::create(builder, loc, scale)));
  }
  func::ReturnOp::create(builder, loc, results);
  oldBody.dropAllDefinedValueUses();
  oldBody.erase();
  func.setType(FunctionType::get(func.getContext(), newTypes,
                                 ValueRange(results).getTypes()));
  return success();
}

} // namespace
