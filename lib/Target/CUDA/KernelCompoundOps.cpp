//===- KernelCompoundOps.cpp - ops that call the runtime's op kernels -----===//
//
// Reductions, normalizations, losses, embeddings, dropout, random numbers
// and optimizer updates: one call each to tgc/runtime/OpKernels.h with the
// shapes and attributes of the op.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Support/FloatFormats.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace tgc;
using namespace tgc::cuda;

namespace {
std::string str(int64_t value) { return std::to_string(value); }
std::string boolean(bool value) { return value ? "true" : "false"; }
ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}
int64_t getWidth(Value value) {
  ArrayRef<int64_t> shape = getShape(value);
  return shape.empty() ? 1 : shape.back();
}
int64_t getRows(Value value) {
  int64_t width = getWidth(value);
  return width ? getNumElements(value) / width : 0;
}
/// The `offset` argument of a dropout or random op whose offset operand is
/// operand `index` (a null pointer without one).
std::string getOffsetArgument(tg::CounterRandomOpInterface op,
                              ArrayRef<std::string> in, unsigned index) {
  return op.getRandomOffset()
             ? in[index]
             : std::string("static_cast<const int64_t *>(nullptr)");
}
/// The `indexOf` argument of a dropout or random op (with its leading
/// comma): where a block split on another dimension than its first lies in
/// the whole tensor; empty for a contiguous block.
std::string getIndexOf(tg::CounterRandomOpInterface op) {
  SmallVector<std::array<int64_t, 3>> levels = op.getIndexLevels();
  if (levels.size() <= 1)
    return "";
  std::string sum;
  for (auto [level, entry] : llvm::enumerate(levels)) {
    auto [size, stride, wholeStride] = entry;
    std::string term = stride == 1 ? "i" : "i / " + str(stride);
    if (level != 0)
      term = "(" + term + ") % " + str(size);
    if (wholeStride != 1)
      term = "(" + term + ") * " + str(wholeStride);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return ", [](int64_t i) -> int64_t { return " + sum + "; }";
}
/// `function(arguments...);`
std::string callOf(StringRef function, ArrayRef<std::string> arguments) {
  return function.str() + "(" + llvm::join(arguments, ", ") + ");";
}
} // namespace

SmallVector<Operation *> KernelEmitter::getEpilogue(Operation *op) {
  SmallVector<Operation *> run;
  if (!isa<tg::LayerNormGradOp, tg::RmsNormGradOp>(op) ||
      !isa_and_nonnull<tg::FusionOp>(op->getParentOp()))
    return run;
  Value dx = op->getResult(0);
  int64_t count = getNumElements(dx);
  llvm::DenseSet<Value> inRun = {dx};
  for (Operation *next = op->getNextNode();
       next && !next->hasTrait<OpTrait::IsTerminator>();
       next = next->getNextNode()) {
    if ((!hasElementwiseFormula(next->getName().getStringRef()) &&
         !isa<tg::ReshapeOp>(next)) ||
        getNumElements(next->getResult(0)) != count)
      break;
    // It reads the run's values and what the launch of `op` may read: all
    // but the op's other results.
    bool readsRun = false, readable = true;
    for (Value operand : next->getOperands()) {
      readsRun |= inRun.contains(operand);
      readable &= inRun.contains(operand) || operand.getDefiningOp() != op;
    }
    if (!readsRun || !readable)
      break;
    run.push_back(next);
    inRun.insert(next->getResult(0));
  }
  return run;
}

bool KernelEmitter::isReadOutside(Value value, ArrayRef<Operation *> run) {
  if (outputs.count(value) || llvm::any_of(finalCopies, [&](auto &copy) {
        return copy.first == value;
      }))
    return true;
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    return !llvm::is_contained(run, user);
  });
}

LogicalResult KernelEmitter::emitCompound(Operation *op) {
  // A norm gradient's dx read by elementwise ops right after it: they run
  // in its epilogue, on dx in a register, and dx is stored only if
  // something else reads it.
  SmallVector<Operation *> epilogue = getEpilogue(op);
  bool dxInRegister =
      !epilogue.empty() && !isReadOutside(op->getResult(0), epilogue);
  // Operands first, then results (a result may take scratch).
  SmallVector<std::string> in, out;
  for (Value operand : op->getOperands()) {
    FailureOr<std::string> name = pointer(operand);
    if (failed(name))
      return failure();
    in.push_back(*name);
  }
  for (Value value : op->getResults()) {
    if (dxInRegister && value == op->getResult(0)) {
      out.push_back("");
      continue;
    }
    FailureOr<std::string> name = result(value);
    if (failed(name))
      return failure();
    out.push_back(*name);
  }
  auto typeOf = [&](Value value) {
    return getStorageType(getElementType(value), op->getLoc());
  };
  auto nullOf = [&](Value like, bool isConst) -> std::string {
    FailureOr<StorageType> type = typeOf(like);
    return "static_cast<" + std::string(isConst ? "const " : "") +
           (succeeded(type) ? type->cType : "float") + " *>(nullptr)";
  };
  // An optimizer update's grad_scale operand (its last), else null.
  std::string scale = "static_cast<const float *>(nullptr)";
  if (auto update = dyn_cast<tg::OptimizerOpInterface>(op);
      update && update.getParamGradScale())
    scale = in.back();
  // Working memory for `elements` values of `like`'s compute type.
  auto computeScratch = [&](Value like,
                            int64_t elements) -> FailureOr<std::string> {
    FailureOr<StorageType> type = typeOf(like);
    if (failed(type))
      return failure();
    return scratchArray(type->computeType,
                        type->computeType == "double" ? 8 : 4, elements);
  };
  // The call; when `callEnd` is set, the call is `call`, dx (its pointer
  // or the epilogue) and `callEnd`.
  std::string call, callEnd;
  int64_t outputElements = getNumElements(op->getResult(0));
  // An op of two calls: the second, a launch of its own when it reads what
  // the first wrote (anywhere), else in the first's launch, both calls
  // striding over the launch's blocks.
  std::string secondCall;
  int64_t secondElements = 1;
  bool secondPerRow = false, secondReadsFirst = true;
  // A row-wise op: a block per row (`outputElements` rows), its threads
  // sharing the row (RowThreads).
  bool perRow = false;
  LogicalResult status = success();
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](tg::ReduceOp reduce) {
        ArrayRef<int64_t> shape = getShape(reduce.getOperand());
        unsigned mask = 0;
        for (int64_t dim : reduce.getDimensions())
          mask |= 1u << dim;
        FailureOr<StorageType> type = typeOf(reduce.getOperand());
        if (failed(type) || shape.size() > 8) {
          status = op->emitError("the CUDA emitter reduces at most 8 "
                                 "dimensions of a known type");
          return;
        }
        std::string t = type->computeType, kind, init;
        bool isInt = t == "int64_t";
        switch (reduce.getKind()) {
        case tg::ReduceKind::Sum:
          kind = "Sum", init = t + "(0)";
          break;
        case tg::ReduceKind::Mean:
          kind = "Mean", init = t + "(0)";
          break;
        case tg::ReduceKind::Max:
          kind = "Max", init = isInt ? type->intMin : "-INFINITY";
          break;
        case tg::ReduceKind::Min:
          kind = "Min", init = isInt ? type->intMax : "INFINITY";
          break;
        }
        perRow = true;
        // The leading dimensions reduced, the rest kept: column sums (a
        // bias gradient), a block per chunk of 32 columns.
        int64_t leading = 0, rows = 1;
        while (leading < static_cast<int64_t>(shape.size()) &&
               (mask >> leading & 1))
          rows *= shape[leading++];
        if (leading > 0 && leading < static_cast<int64_t>(shape.size()) &&
            mask >> leading == 0) {
          const int64_t chunk = 32;
          call = "reduceColumns<ReduceKind::" + kind + ">(rowThreads(), " +
                 in[0] + ", " + out[0] + ", " + str(rows) + ", " +
                 str(outputElements) + ", " + init + ", " + str(chunk) + ");";
          outputElements = (outputElements + chunk - 1) / chunk;
          return;
        }
        call = "reduce<ReduceKind::" + kind + ">(rowThreads(), " + in[0] +
               ", " + out[0] + ", " + str(outputElements) + ", " +
               str(shape.size()) + ", " + formatDims(shape) + ", " + str(mask) +
               "u, " + init + ");";
      })
      .Case<tg::SoftmaxOp, tg::LogSoftmaxOp>([&](auto softmax) {
        ArrayRef<int64_t> shape = getShape(op->getOperand(0));
        int64_t dim = op->getAttrOfType<IntegerAttr>("dimension").getInt();
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
          inner *= shape[d];
        call = std::string("softmax<") +
               (isa<tg::LogSoftmaxOp>(op) ? "true" : "false") +
               ">(rowThreads(), " + in[0] + ", " + out[0] + ", " + str(outer) +
               ", " + str(shape[dim]) + ", " + str(inner) + ");";
        perRow = true;
        outputElements = outer * inner;
      })
      .Case([&](tg::SoftmaxGradOp grad) {
        ArrayRef<int64_t> shape = getShape(op->getOperand(0));
        int64_t dim = grad.getDimension(), outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
          inner *= shape[d];
        call = "softmaxGrad(rowThreads(), " + in[0] + ", " + in[1] + ", " +
               out[0] + ", " + str(outer) + ", " + str(shape[dim]) + ", " +
               str(inner) + ");";
        perRow = true;
        outputElements = outer * inner;
      })
      .Case<tg::LayerNormOp, tg::RmsNormOp>([&](auto norm) {
        bool isLayerNorm = isa<tg::LayerNormOp>(op);
        Value x = op->getOperand(0);
        double epsilon = norm.getEpsilon().convertToDouble();
        perRow = true;
        outputElements = getRows(x);
        call = std::string("norm<") + boolean(isLayerNorm) +
               ">(rowThreads(), " + in[0] + ", " + in[1] + ", " +
               (isLayerNorm ? in[2] : nullOf(op->getOperand(1), true)) + ", " +
               out[0] + ", " +
               (isLayerNorm ? out[1] : nullOf(op->getResults().back(), false)) +
               ", " + out.back() + ", " + str(getRows(x)) + ", " +
               str(getWidth(x)) + ", " + formatNumber(float(epsilon)) + "f);";
      })
      .Case<tg::LayerNormGradOp, tg::RmsNormGradOp>([&](auto) {
        bool isLayerNorm = isa<tg::LayerNormGradOp>(op);
        Value x = op->getOperand(1);
        // Operands: dy, x, [mean,] rstd, scale; results dx, dscale, [dbias].
        std::string mean =
            isLayerNorm ? in[2] : nullOf(op->getOperand(2), true);
        std::string rstd = in[isLayerNorm ? 3 : 2];
        std::string scale = in[isLayerNorm ? 4 : 3];
        // dx a block per row; dscale and dbias a block per chunk of 32
        // columns (a warp reads a row's chunk at once). Both read only the
        // op's operands: one launch, the first blocks taking a chunk of
        // columns after their row, while the others take the other rows.
        const int64_t chunk = 32;
        call = std::string("normGrad<") + boolean(isLayerNorm) +
               ">(rowThreads(), " + in[0] + ", " + in[1] + ", " + mean + ", " +
               rstd + ", " + scale + ", ";
        callEnd = ", " + str(getRows(x)) + ", " + str(getWidth(x)) + ");";
        perRow = true;
        outputElements = getRows(x);
        secondCall = std::string("normGradColumns<") + boolean(isLayerNorm) +
                     ">(rowThreads(), " + in[0] + ", " + in[1] + ", " + mean +
                     ", " + rstd + ", " + out[1] + ", " +
                     (isLayerNorm ? out[2] : nullOf(op->getResult(1), false)) +
                     ", " + str(getRows(x)) + ", " + str(getWidth(x)) + ", " +
                     str(chunk) + ");";
        secondPerRow = true;
        secondReadsFirst = false;
        secondElements = (getWidth(x) + chunk - 1) / chunk;
      })
      .Case([&](tg::CrossEntropyOp loss) {
        Value logits = loss.getLogits();
        auto ignore = loss.getIgnoreIndexAttr();
        // Each row's logsumexp, then the loss over the rows in order.
        perRow = true;
        call = "crossEntropyRows(rowThreads(), " + in[0] + ", " + out[1] +
               ", " + str(getRows(logits)) + ", " + str(getWidth(logits)) +
               ");";
        secondCall =
            "crossEntropyLoss(th, " + in[0] + ", " + in[1] + ", " + out[0] +
            ", " + out[1] + ", " + str(getRows(logits)) + ", " +
            str(getWidth(logits)) + ", " + boolean(bool(ignore)) + ", " +
            str(ignore ? ignore.getInt() : 0) + ", " +
            boolean(loss.getReduction() == tg::LossReduction::Mean) + ");";
        outputElements = getRows(logits);
      })
      .Case([&](tg::CrossEntropyGradOp grad) {
        Value logits = op->getOperand(1);
        auto ignore = grad.getIgnoreIndexAttr();
        // The rows' weight (dloss over the counted rows) once, in scratch,
        // then a block per row.
        FailureOr<std::string> weight = computeScratch(logits, 1);
        if (failed(weight)) {
          status = failure();
          return;
        }
        std::string rows = str(getRows(logits)),
                    classes = str(getWidth(logits));
        std::string ignored =
            boolean(bool(ignore)) + ", " + str(ignore ? ignore.getInt() : 0);
        call = "crossEntropyWeight(th, " + in[0] + ", " + in[2] + ", " +
               *weight + ", " + rows + ", " + classes + ", " + ignored + ", " +
               boolean(grad.getReduction() == tg::LossReduction::Mean) + ");";
        outputElements = 1;
        secondCall = "crossEntropyGrad(rowThreads(), " + in[1] + ", " + in[2] +
                     ", " + in[3] + ", " + *weight + ", " + out[0] + ", " +
                     rows + ", " + classes + ", " + ignored + ");";
        secondElements = getRows(logits);
        secondPerRow = true;
      })
      .Case([&](tg::EmbeddingOp embedding) {
        ArrayRef<int64_t> table = getShape(embedding.getTable());
        call = "embedding(th, " + in[0] + ", " + in[1] + ", " + out[0] + ", " +
               str(getNumElements(embedding.getIndices())) + ", " +
               str(table[1]) + ", " + str(table[0]) + ");";
      })
      .Case([&](tg::TopKOp topK) {
        ArrayRef<int64_t> shape = getShape(topK.getOperand());
        int64_t width = shape.empty() ? 1 : shape.back();
        int64_t rows =
            width == 0 ? 0 : getNumElements(topK.getOperand()) / width;
        // A stride coprime to the width, near its golden section.
        int64_t stride = std::max<int64_t>(1, width * 5 / 8);
        while (width > 1 && std::gcd(stride, width) != 1)
          ++stride;
        outputElements = rows * width;
        call = "topK(th, " + in[0] + ", " + out[0] + ", " + out[1] + ", " +
               str(rows) + ", " + str(width) + ", " + str(topK.getK()) + ", " +
               str(stride) + ", " + boolean(topK.getSmallest()) + ");";
      })
      .Case([&](tg::EmbeddingGradOp grad) {
        // The table zeroed and the ids' positions chained by id, then the
        // chains summed (O(ids x width), the interpreter's order).
        ArrayRef<int64_t> table = getShape(op->getResult(0));
        int64_t count = getNumElements(op->getOperand(1));
        std::string chains = scratchArray("int64_t", 8, count);
        call = callOf("embeddingGradChains",
                      {"th", in[1], chains, out[0], str(count), str(table[1]),
                       str(table[0])});
        outputElements = std::max(count, table[0] * table[1]);
        secondCall =
            callOf("embeddingGradSums", {"th", in[0], in[1], chains, out[0],
                                         str(count), str(table[1])});
        secondElements = count * table[1];
      })
      .Case<tg::ExpertMatmulOp, tg::ExpertMatmulGradOp>([&](auto product) {
        // Each expert's rows listed in order, then a block per tile of an
        // expert's product (OpKernels.h).
        bool isGrad = isa<tg::ExpertMatmulGradOp>(op);
        int64_t rows = getNumElements(product.getIds());
        int64_t experts = product.getNumExperts();
        int64_t global = product.getNumGlobalExperts();
        // A block of the experts (expert parallelism) lists the rows of the
        // others in one more slot.
        int64_t slots = experts + (global > experts ? 1 : 0);
        int64_t h = product.getInputWidth(), o = product.getOutputWidth();
        std::string offsets = scratchArray("int64_t", 8, slots + 1);
        std::string order = scratchArray("int64_t", 8, rows);
        call = callOf("expertRows", {"th", in[2], offsets, order, str(rows),
                                     str(experts), str(global)});
        outputElements = slots;
        FailureOr<StorageType> type = typeOf(product.getInput());
        if (failed(type)) {
          status = failure();
          return;
        }
        std::string transB = boolean(product.getTransposeB());
        secondCall =
            isGrad ? callOf("expertMatmulGrad",
                            {"rowThreads()", in[0], in[1], offsets, order,
                             out[0], str(experts), str(h), str(o), transB})
                   : callOf("expertMatmul",
                            {"rowThreads()", in[0], in[1], offsets, order,
                             out[0], str(rows), str(h), str(o), str(experts),
                             str(slots), transB});
        int64_t size =
            rt::expertTileSize(type->computeType == "double" ? 8 : 4);
        secondElements = std::max<int64_t>(
            1, isGrad ? rt::expertMatmulGradBlocks(size, experts, h, o)
                      : rt::expertMatmulBlocks(size, rows, o, slots));
        secondPerRow = true;
      })
      .Case([&](tg::FakeQuantOp quant) {
        bool e4m3 = isa<Float8E4M3FNType>(quant.getFormat());
        call = callOf(std::string("fakeQuant<") + boolean(e4m3) + ">",
                      {"th", in[0], in[1], out[0], str(outputElements),
                       str(getNumElements(quant.getAmaxHistory())),
                       formatNumber(getMaxFinite(e4m3 ? FloatFormat::F8E4M3FN
                                                      : FloatFormat::F8E5M2)),
                       str(static_cast<int64_t>(quant.getMargin()))});
      })
      .Case([&](tg::DropoutOp dropout) {
        call = "dropout(th, " + in[0] + ", " + in[1] + ", " +
               getOffsetArgument(dropout, in, 2) + ", " + out[0] + ", " +
               str(getNumElements(op->getResult(0))) + ", " +
               formatNumber(dropout.getRate()) + ", " +
               str(dropout.getStream()) + "u" + getIndexOf(dropout) + ");";
      })
      .Case([&](tg::RandomOp random) {
        bool normal =
            random.getDistribution() == tg::RandomDistribution::Normal;
        call = std::string("random<") + boolean(normal) + ">(th, " + in[0] +
               ", " + getOffsetArgument(random, in, 1) + ", " + out[0] + ", " +
               str(getNumElements(op->getResult(0))) + ", " +
               str(random.getStream()) + "u" + getIndexOf(random) + ");";
      })
      .Case<tg::AdamWOp, tg::LambOp>([&](auto adam) {
        // Operands: param, grad, m, v, lr, step, [grad_scale].
        SmallVector<std::string> arguments = {"th",   in[0],  in[1], in[2],
                                              in[3],  in[4],  in[5], scale,
                                              out[0], out[1], out[2]};
        if (isa<tg::LambOp>(op)) {
          // One block per tensor (its norms are the whole tensor's), the
          // update direction in scratch between its two passes.
          FailureOr<std::string> direction =
              computeScratch(adam.getParam(), outputElements);
          if (failed(direction)) {
            status = failure();
            return;
          }
          arguments.front() = "rowThreads()";
          arguments.push_back(*direction);
        }
        arguments.append({str(outputElements), formatNumber(adam.getBeta1()),
                          formatNumber(adam.getBeta2()),
                          formatNumber(adam.getEpsilon()),
                          formatNumber(adam.getWeightDecay())});
        call = callOf(isa<tg::LambOp>(op) ? "lamb" : "adamw", arguments);
        if (isa<tg::LambOp>(op)) {
          perRow = true;
          outputElements = 1;
        }
      })
      .Case([&](tg::AdafactorOp adafactor) {
        // One block per tensor (its RMS clipping is the whole tensor's);
        // operands: param, grad, states (row and column, or one), lr,
        // step, [grad_scale]. A factored parameter is [batches, rows,
        // columns]; an unfactored one a row.
        ArrayRef<int64_t> shape = getShape(adafactor.getParam());
        bool factored = adafactor.getState().size() == 2;
        int64_t rows = factored ? shape[shape.size() - 2] : 1;
        int64_t columns = factored ? shape.back() : outputElements;
        int64_t batches =
            factored && rows * columns ? outputElements / (rows * columns) : 1;
        FailureOr<std::string> work = computeScratch(
            adafactor.getParam(),
            outputElements + (factored ? batches * (rows + columns + 1) : 0));
        if (failed(work)) {
          status = failure();
          return;
        }
        Value param = adafactor.getParam();
        unsigned next = factored ? 4 : 3;
        call =
            callOf("adafactor", {"rowThreads()", in[0], in[1], in[2],
                                 factored ? in[3] : nullOf(param, true),
                                 in[next], in[next + 1], scale, out[0], out[1],
                                 factored ? out[2] : nullOf(param, false),
                                 *work, str(batches), str(rows), str(columns),
                                 formatNumber(adafactor.getDecayRate()),
                                 formatNumber(adafactor.getEpsilon1()),
                                 formatNumber(adafactor.getClipThreshold()),
                                 formatNumber(adafactor.getWeightDecay())});
        perRow = true;
        outputElements = 1;
      })
      .Case([&](tg::SgdOp sgd) {
        // Operands: param, grad, lr, [momentum_buffer], [grad_scale].
        std::string buffer =
            sgd.getMomentumBuffer() ? in[3] : nullOf(sgd.getParam(), true);
        std::string newBuffer =
            sgd.getMomentumBuffer() ? out[1] : nullOf(sgd.getParam(), false);
        call = "sgd(th, " + in[0] + ", " + in[1] + ", " + in[2] + ", " +
               buffer + ", " + scale + ", " + out[0] + ", " + newBuffer + ", " +
               str(outputElements) + ", " + formatNumber(sgd.getMomentum()) +
               ", " + formatNumber(sgd.getWeightDecay()) + ", " +
               boolean(sgd.getNesterov()) + ");";
      })
      .Default([&](Operation *) {
        status = op->emitError("the CUDA emitter has no lowering for ")
                 << op->getName();
      });
  if (failed(status))
    return failure();
  // Row-wise ops and two-phase ops are launches of their own. The others
  // loop over the grid: they join the current launch when they read
  // nothing it wrote, except the optimizer updates and dropout, whose
  // tensor operands are read at the thread's own indices.
  bool pointwise = isa<tg::AdamWOp, tg::SgdOp, tg::DropoutOp>(op);
  if (perRow || !secondCall.empty()) {
    beginLaunch(op, outputElements, perRow);
  } else {
    bool join = true;
    for (Value operand : op->getOperands())
      join &= isReadable(operand, pointwise && getNumElements(operand) ==
                                                   outputElements);
    beginPart(op, outputElements, join);
    closeLoop();
  }
  comment(op, "  ");
  if (!epilogue.empty()) {
    if (failed(emitEpilogue(op, epilogue, call, callEnd, out[0])))
      return failure();
  } else {
    body += "  " + call + (callEnd.empty() ? "" : out[0] + callEnd) + "\n";
  }
  if (!secondCall.empty()) {
    if (secondReadsFirst) {
      beginLaunch(op, secondElements, secondPerRow);
      comment(op, "  ");
    } else {
      stepElements = std::max(stepElements, secondElements);
    }
    body += "  " + secondCall + "\n";
  }
  for (const std::string &written : out)
    if (!written.empty())
      this->written[written] =
          pointwise ? Written::Pointwise : Written::Anywhere;
  return success();
}

LogicalResult KernelEmitter::emitEpilogue(Operation *op,
                                          ArrayRef<Operation *> run,
                                          StringRef call, StringRef callEnd,
                                          StringRef dxPointer) {
  Value dx = op->getResult(0);
  FailureOr<StorageType> type =
      getStorageType(getElementType(dx), op->getLoc());
  if (failed(type))
    return failure();
  // The lambda is the launch's loop: its statements are the loop body,
  // element i in the row-wise op's threads.
  body +=
      "  " + call.str() + "[&](int64_t i, " + type->computeType + " value) {\n";
  loopCount = getNumElements(dx);
  loopEnd = "  }" + callEnd.str() + "\n";
  std::string local = "t" + std::to_string(counter++);
  body += "    const " + type->computeType + " " + local + " = ld(st<" +
          type->cType + ">(value));\n";
  locals[dx] = local;
  if (!dxPointer.empty())
    body +=
        "    " + dxPointer.str() + "[i] = st<" + type->cType + ">(value);\n";
  for (Operation *next : run) {
    Value value = next->getResult(0);
    if (isa<tg::ReshapeOp>(next))
      views[value] = View{next->getOperand(0), {}, {}, 0, /*identity=*/true};
    else
      formulas[value] = next;
    if (isReadOutside(value, run)) {
      FailureOr<std::string> text = element(value, "i", /*same=*/true);
      if (failed(text))
        return failure();
      if (isa<tg::ReshapeOp>(next))
        comment(next, "    ");
      formulas.erase(value);
      views.erase(value);
      FailureOr<StorageType> storage =
          getStorageType(getElementType(value), value.getLoc());
      FailureOr<std::string> var = result(value);
      if (failed(storage) || failed(var))
        return failure();
      body +=
          "    " + *var + "[i] = st<" + storage->cType + ">(" + *text + ");\n";
      written[*var] = Written::Anywhere;
    }
    emitted.insert(next);
  }
  closeLoop();
  return success();
}
