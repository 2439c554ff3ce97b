//===- StepEmitter.cpp - the compiled step as one CUDA C++ source ---------===//
//
// Walks the step in its scheduled order: a tg.fusion region becomes a kernel
// named after it (a gemm region: one cuBLASLt call with its epilogue, or
// where the runtime declines it the GEMM call, then kernels for the
// epilogue), a matmul a GEMM call, attention a runtime call, any other op a
// kernel of its own. Every value is read and written at its planned place
// in the arena; the step's description (arguments, results) goes into the
// source for the runtime's trainer.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/GemmEpilogue.h"
#include "tgc/Analysis/MemorySimulator.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/RankedInterpreter.h"
#include "tgc/Target/CUDA/CudaEmitter.h"
#include "tgc/Training/Trainer.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::cuda;

namespace {

std::string str(int64_t value) { return std::to_string(value); }

std::string cString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

int64_t getBytes(Value value, const StorageType &type) {
  return getNumElements(value) * type.bytes;
}

/// What the source holds besides the step: main() (a trainer, with or
/// without an evaluation in evaluate.cu), or the accessors of an
/// evaluation for the trainer's main().
enum class SourceKind { Trainer, TrainerWithEvaluation, Evaluation };

class StepEmitter {
public:
  StepEmitter(func::FuncOp step, SourceKind kind) : step(step), kind(kind) {}
  FailureOr<CudaProject> run();

private:
  LogicalResult placeResults(Operation *op);
  /// Fills the splat constant `constant` (a kernel) and forgets it.
  LogicalResult fillConstant(Operation *constant);
  /// Records the cost model's time of `op` for the kernels it launched,
  /// project.kernels[first...].
  void noteEstimate(Operation *op, size_t first);
  /// Fills the splat constants `op` (or an op nested in it) reads that are
  /// not filled yet, in the order they are read.
  LogicalResult fillConstantsReadBy(Operation *op);
  /// Whether `op` moves no bytes where the memory plan put its result: a
  /// reshape or a slice view at its operand's bytes, a concat whose inputs
  /// their producers wrote in place.
  bool isInPlace(Operation *op);
  FailureOr<std::string> address(Value value);
  LogicalResult emitGemm(tg::MatmulOp matmul, std::string a, std::string b,
                         std::string c, StringRef name);
  LogicalResult emitAttention(Operation *op);
  LogicalResult emitCollective(Operation *op);
  /// A shard.send or shard.recv between pipeline stages.
  LogicalResult emitTransfer(Operation *op);
  /// In a pipelined step, puts what was emitted for `op` since `from` under
  /// the test of its stage's pipeline device (merged with the test just
  /// before it when they are for the same device).
  void guardStage(Operation *op, size_t from);
  /// Sets up a pipelined step: its config, axis and group; checks it as
  /// the simulated ranks do.
  LogicalResult setUpPipeline();
  LogicalResult waitForCollectives(Operation *op);
  std::string emitMesh();
  LogicalResult emitKernel(Operation *op);
  LogicalResult emitFusion(tg::FusionOp fusion);
  /// The opening of the one gemmEpilogue call a gemm region makes, or ""
  /// when it makes none (the region is not a cuBLASLt epilogue chain, its
  /// types are not the runtime's, or what it writes overlaps what it reads).
  FailureOr<std::string> getEpilogueCall(tg::FusionOp fusion, StringRef kernel);
  /// A region's GEMM (gemm regions) and kernels.
  LogicalResult emitRegion(tg::FusionOp fusion, StringRef name,
                           StringRef description);
  LogicalResult launch(KernelEmitter &kernel, Operation *op, StringRef kind);
  std::string nextName(StringRef stem);
  LogicalResult emitDescription();

  func::FuncOp step;
  SourceKind kind;
  llvm::DenseMap<Value, Place> places;
  /// The splat constants seen and not yet filled.
  llvm::DenseSet<Operation *> unfilled;
  std::string kernels, host, description;
  int64_t scratchBytes = 0;
  /// The scratch of the code that runs only when a GEMM epilogue call
  /// declines (StepInfo::fallbackScratchBytes).
  int64_t fallbackScratchBytes = 0;
  unsigned counter = 0;
  CudaProject project;
  std::optional<DeviceSpec> device;
  /// A partitioned step's mesh, and the distinct grid_axes of its
  /// collectives (StepInfo::mesh.groups).
  std::optional<tg::Mesh> mesh;
  SmallVector<SmallVector<int16_t>> groups;
  /// A collective in flight on the communication stream: the bytes it
  /// reads and writes, until an op that touches them waits for it.
  struct Pending {
    int64_t id;
    int64_t in, inBytes, out, outBytes;
  };
  SmallVector<Pending> pending;
  int64_t numCollectives = 0;
  /// The kernels the op being emitted launches only when its gemmEpilogue
  /// call declines (noteEstimate records them).
  std::vector<std::string> fallbackKernels;
  /// The communication's staging (gathered blocks, the whole all-reduce of
  /// a reduce-scatter): its own buffer, since kernels run meanwhile.
  int64_t commScratchBytes = 0;
  /// A pipelined step's config, the index of its axis in the mesh and of
  /// the group along that axis alone (groups).
  std::optional<PipelineConfig> pipeline;
  int64_t pipelineAxis = -1, pipelineGroup = -1;
  /// The tag of each shard.send (its number in the step), which its
  /// shard.recv names.
  llvm::DenseMap<Operation *, int64_t> transferTags;
  /// Where the last stage test emitted ends, and its device.
  size_t guardEnd = std::string::npos;
  int64_t guardDevice = -1;
};

std::string StepEmitter::nextName(StringRef stem) {
  return stem.str() + "_" + str(counter++);
}

LogicalResult StepEmitter::fillConstant(Operation *constant) {
  unfilled.erase(constant);
  if (failed(waitForCollectives(constant)))
    return failure();
  size_t first = project.kernels.size(), from = host.size();
  if (failed(emitKernel(constant)))
    return failure();
  guardStage(constant, from);
  noteEstimate(constant, first);
  return success();
}

void StepEmitter::noteEstimate(Operation *op, size_t first) {
  std::vector<std::string> fallback = std::move(fallbackKernels);
  fallbackKernels.clear();
  if (!device || first == project.kernels.size())
    return;
  std::vector<std::string> launched(project.kernels.begin() + first,
                                    project.kernels.end());
  project.estimates.push_back({launched.back(), launched,
                               estimateOpTime(op, *device).time,
                               std::move(fallback)});
}

LogicalResult StepEmitter::fillConstantsReadBy(Operation *op) {
  SmallVector<Operation *> read;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && unfilled.contains(def) && !llvm::is_contained(read, def))
        read.push_back(def);
  });
  for (Operation *constant : read)
    if (failed(fillConstant(constant)))
      return failure();
  return success();
}

bool StepEmitter::isInPlace(Operation *op) {
  if (isa<tg::ReshapeOp>(op))
    return places[op->getOperand(0)].offset == places[op->getResult(0)].offset;
  if (std::optional<int64_t> offset = getSliceViewOffset(op))
    return places[op->getResult(0)].offset ==
           places[op->getOperand(0)].offset + *offset;
  SmallVector<std::optional<int64_t>> offsets = getInPlaceConcatOffsets(op);
  return !offsets.empty() &&
         llvm::all_of(llvm::zip(op->getOperands(), offsets), [&](auto pair) {
           auto [input, offset] = pair;
           return offset && places[input].offset ==
                                places[op->getResult(0)].offset + *offset;
         });
}

LogicalResult StepEmitter::placeResults(Operation *op) {
  if (op->getNumResults() == 0)
    return success();
  auto offsets =
      op->getAttrOfType<DenseI64ArrayAttr>(tg::TGDialect::kOffsetsAttrName);
  if (!offsets || offsets.size() != static_cast<int64_t>(op->getNumResults()))
    return op->emitError("the CUDA emitter needs the memory plan's ")
           << tg::TGDialect::kOffsetsAttrName
           << " on every op; emit the step tgc compile writes";
  for (auto [result, offset] :
       llvm::zip(op->getResults(), offsets.asArrayRef()))
    places[result] = {false, offset};
  return success();
}

FailureOr<std::string> StepEmitter::address(Value value) {
  auto it = places.find(value);
  if (it == places.end())
    return emitError(value.getLoc()) << "the CUDA emitter found no place for "
                                        "a value";
  return std::string(it->second.scratch ? "scratch" : "arena") + " + " +
         str(it->second.offset);
}

/// The runtime's GemmDesc of `matmul`, as C++ text; `output` names the
/// type of the matrix it writes when that is not the matmul's (an
/// epilogue's convert).
FailureOr<std::string> getGemmDesc(tg::MatmulOp matmul, StringRef output = "") {
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  bool transA = matmul.getTransposeA(), transB = matmul.getTransposeB();
  int64_t rank = lhs.getRank();
  int64_t m = lhs.getShape()[rank - (transA ? 1 : 2)];
  int64_t k = lhs.getShape()[rank - (transA ? 2 : 1)];
  int64_t n = rhs.getShape()[rhs.getRank() - (transB ? 2 : 1)];
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch *= lhs.getShape()[d];
  FailureOr<StorageType> ta =
      getStorageType(lhs.getElementType(), matmul.getLoc());
  FailureOr<StorageType> tb =
      getStorageType(rhs.getElementType(), matmul.getLoc());
  FailureOr<StorageType> tc =
      getStorageType(getElementType(matmul.getResult()), matmul.getLoc());
  if (failed(ta) || failed(tb) || failed(tc))
    return failure();
  return "GemmDesc{" + std::string(transA ? "true" : "false") + ", " +
         (transB ? "true" : "false") + ", " +
         (rhs.getRank() == 2 ? "true" : "false") + ", " + str(batch) + ", " +
         str(m) + ", " + str(n) + ", " + str(k) + ", DType::" + ta->dtype +
         ", DType::" + tb->dtype +
         ", DType::" + (output.empty() ? StringRef(tc->dtype) : output).str() +
         "}";
}

LogicalResult StepEmitter::emitGemm(tg::MatmulOp matmul, std::string a,
                                    std::string b, std::string c,
                                    StringRef name) {
  FailureOr<std::string> desc = getGemmDesc(matmul);
  if (failed(desc))
    return failure();
  host += "  // " + name.str() + ": tg.matmul at " +
          formatLocation(matmul.getLoc()) + "\n";
  host += "  gemm(context, " + *desc + ", " + a + ", " + b + ", " + c + ", " +
          cString(name) + ");\n";
  project.kernels.push_back(name.str());
  return success();
}

namespace {
/// What tg.attention, tg.attention_grad and tg.attention_bias_grad share:
/// the forward op's bias, soft cap, scale and dropout rate.
struct AttentionAttributes {
  Value bias;
  std::optional<APFloat> softcap, dropout;
  double scale;
};
template <typename Op> AttentionAttributes getAttentionAttributes(Op op) {
  return {op.getBias(), op.getSoftcap(), op.getDropout(),
          op.getScaleOrDefault()};
}
} // namespace

LogicalResult StepEmitter::emitAttention(Operation *op) {
  // Operands: [dout,] q, k, v[, out, logsumexp][, bias][, seed[, offset]];
  // the bias, the soft cap and the dropout travel in the descriptor.
  bool isGrad = !isa<tg::AttentionOp>(op);
  bool isBiasGrad = isa<tg::AttentionBiasGradOp>(op);
  AttentionAttributes attributes =
      TypeSwitch<Operation *, AttentionAttributes>(op)
          .Case<tg::AttentionOp, tg::AttentionGradOp, tg::AttentionBiasGradOp>(
              [](auto attention) { return getAttentionAttributes(attention); });
  Value bias = attributes.bias;
  unsigned q = isGrad ? 1 : 0;
  ArrayRef<int64_t> qs =
      cast<RankedTensorType>(op->getOperand(q).getType()).getShape();
  ArrayRef<int64_t> ks =
      cast<RankedTensorType>(op->getOperand(q + 1).getType()).getShape();
  ArrayRef<int64_t> vs =
      cast<RankedTensorType>(op->getOperand(q + 2).getType()).getShape();
  FailureOr<StorageType> type =
      getStorageType(getElementType(op->getOperand(q)), op->getLoc());
  Value lse = isGrad ? op->getOperand(5) : op->getResult(1);
  FailureOr<StorageType> lseType =
      getStorageType(getElementType(lse), op->getLoc());
  if (failed(type) || failed(lseType))
    return failure();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    return op->emitError("the CUDA emitter's attention takes rank-4 "
                         "[batch, heads, sequence, head size] operands");
  for (Value operand : op->getOperands())
    if (getElementType(operand) != getElementType(op->getOperand(q)) &&
        operand != lse && operand != bias &&
        !isa<IntegerType>(getElementType(operand)))
      return op->emitError("the CUDA emitter's attention needs q, k, v and "
                           "the output in one element type");
  std::string biasDesc;
  if (bias) {
    FailureOr<std::string> at = address(bias);
    if (failed(at))
      return failure();
    // Row-major strides over [B, H, Sq, Sk], 0 on a broadcast dimension.
    ArrayRef<int64_t> shape = cast<RankedTensorType>(bias.getType()).getShape();
    SmallVector<std::string> strides(4);
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      strides[d] = shape[d] == 1 ? "0" : str(stride);
      stride *= shape[d];
    }
    biasDesc = ", reinterpret_cast<const float *>(" + *at + "), {" +
               llvm::join(strides, ", ") + "}";
  }
  std::optional<APFloat> softcap = attributes.softcap;
  auto random = cast<tg::CounterRandomOpInterface>(op);
  Value seed = random.getRandomSeed(), offset = random.getRandomOffset();
  if (softcap || seed) {
    if (!bias)
      biasDesc = ", nullptr, {0, 0, 0, 0}";
    biasDesc += ", " + formatNumber(softcap ? softcap->convertToDouble() : 0.0);
  }
  // The dropout: rate, seed, offset, stream and the index levels that
  // place the device's probabilities in the whole tensor.
  if (seed) {
    std::optional<APFloat> rate = attributes.dropout;
    auto scalar = [&](Value v) -> FailureOr<std::string> {
      if (!v)
        return std::string("nullptr, DType::I64");
      FailureOr<std::string> at = address(v);
      FailureOr<StorageType> storage =
          getStorageType(getElementType(v), op->getLoc());
      if (failed(at) || failed(storage))
        return failure();
      return *at + ", DType::" + storage->dtype;
    };
    FailureOr<std::string> seedArg = scalar(seed), offsetArg = scalar(offset);
    if (failed(seedArg) || failed(offsetArg))
      return failure();
    SmallVector<std::array<int64_t, 3>> levels = random.getIndexLevels();
    if (levels.size() <= 1)
      levels.clear();
    SmallVector<std::string> levelText;
    for (auto [size, stride, wholeStride] : levels)
      levelText.push_back("{" + str(size) + ", " + str(stride) + ", " +
                          str(wholeStride) + "}");
    biasDesc += ", " + formatNumber(rate->convertToDouble()) + ", " + *seedArg +
                ", " + *offsetArg + ", " + str(random.getRandomStream()) +
                "u, " + str(levels.size()) + ", {" +
                llvm::join(levelText, ", ") + "}";
  }
  bool causal = op->hasAttr("causal");
  double scale = attributes.scale;
  StringRef function = isBiasGrad ? "attentionBiasGrad"
                       : isGrad   ? "attentionGrad"
                                  : "attention";
  std::string name = nextName(op->getName().stripDialect());
  std::string args;
  for (Value operand : op->getOperands()) {
    if (operand == bias || operand == seed || operand == offset)
      continue;
    FailureOr<std::string> at = address(operand);
    if (failed(at))
      return failure();
    args += ", " + *at;
  }
  for (Value result : op->getResults()) {
    FailureOr<std::string> at = address(result);
    if (failed(at))
      return failure();
    // The bias's gradient is f32, as the bias.
    args +=
        isBiasGrad ? ", reinterpret_cast<float *>(" + *at + ")" : ", " + *at;
  }
  host += "  // " + name + ": " + op->getName().getStringRef().str() + " at " +
          formatLocation(op->getLoc()) + "\n";
  host += "  " + function.str() + "(context, AttentionDesc{" + str(qs[0]) +
          ", " + str(qs[1]) + ", " + str(qs[2]) + ", " + str(qs[3]) + ", " +
          str(ks[1]) + ", " + str(ks[2]) + ", " + str(vs[3]) + ", " +
          (causal ? "true" : "false") + ", " + formatNumber(scale) +
          ", DType::" + type->dtype + ", DType::" + lseType->dtype + biasDesc +
          "}" + args + ", " + cString(name) + ");\n";
  project.kernels.push_back(name);
  return success();
}

/// A shard collective: a runtime call on the group of its grid axes. Its
/// staging uses the communication scratch (StepInfo::commScratchBytes),
/// which the collectives share: they run one after another on their
/// stream.
LogicalResult StepEmitter::emitCollective(Operation *op) {
  if (!mesh)
    return op->emitError("the CUDA emitter needs the mesh of a partitioned "
                         "step: its arguments' tg.sharding and the module's "
                         "shard.grid");
  auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  if (!grid || grid.getValue() != mesh->name)
    return op->emitError("runs on a grid other than the step's mesh @")
           << mesh->name;
  StringRef kind;
  std::string reduce = "Sum";
  auto reductionOf = [&](shard::ReductionKind reduction) -> LogicalResult {
    switch (reduction) {
    case shard::ReductionKind::Sum:
      reduce = "Sum";
      return success();
    case shard::ReductionKind::Max:
      reduce = "Max";
      return success();
    case shard::ReductionKind::Min:
      reduce = "Min";
      return success();
    case shard::ReductionKind::Average:
      reduce = "Average";
      return success();
    default:
      return op->emitError("the runtime's collectives reduce by sum, max, min "
                           "or average, not ")
             << shard::stringifyReductionKind(reduction);
    }
  };
  ArrayRef<int16_t> axes;
  int64_t dim = 0, concatDim = 0;
  if (auto reduceOp = dyn_cast<shard::AllReduceOp>(op)) {
    kind = "AllReduce";
    axes = reduceOp.getGridAxes();
    if (failed(reductionOf(reduceOp.getReduction())))
      return failure();
  } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
    kind = "AllGather";
    axes = gather.getGridAxes();
    dim = gather.getGatherAxis().getSExtValue();
  } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
    kind = "ReduceScatter";
    axes = scatter.getGridAxes();
    dim = scatter.getScatterAxis().getSExtValue();
    if (failed(reductionOf(scatter.getReduction())))
      return failure();
  } else if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
    kind = "AllSlice";
    axes = slice.getGridAxes();
    dim = slice.getSliceAxis().getSExtValue();
  } else if (auto exchange = dyn_cast<shard::AllToAllOp>(op)) {
    kind = "AllToAll";
    axes = exchange.getGridAxes();
    dim = exchange.getSplitAxis().getSExtValue();
    concatDim = exchange.getConcatAxis().getSExtValue();
  } else {
    return op->emitError("the CUDA emitter has no lowering for ")
           << op->getName() << " (it lowers all_reduce, all_gather, "
           << "reduce_scatter, all_to_all and all_slice)";
  }
  for (int16_t axis : axes)
    if (axis < 0 || axis >= static_cast<int16_t>(mesh->axisSizes.size()))
      return op->emitError("names mesh axis ")
             << axis << " of a mesh of " << mesh->axisSizes.size();
  auto it = llvm::find(groups, axes);
  int64_t group = it - groups.begin();
  if (it == groups.end())
    groups.emplace_back(axes);

  Value operand = op->getOperand(0);
  auto type = cast<RankedTensorType>(operand.getType());
  if (type.getRank() > 8)
    return op->emitError("has more than 8 dimensions, more than the runtime "
                         "takes");
  FailureOr<StorageType> storage =
      getStorageType(type.getElementType(), op->getLoc());
  if (failed(storage))
    return failure();
  int64_t groupSize = 1;
  for (int16_t axis : axes)
    groupSize *= mesh->axisSizes[axis];
  int64_t bytes = getBytes(operand, *storage);
  // The staging: the gathered blocks, the reduce-scatter's blocks put in
  // rank order, the all-to-all's blocks sent and received.
  if (kind == "AllGather" || kind == "ReduceScatter" || kind == "AllToAll")
    commScratchBytes =
        std::max(commScratchBytes, (kind == "AllGather"  ? groupSize
                                    : kind == "AllToAll" ? 2
                                                         : 1) *
                                       bytes);
  FailureOr<std::string> in = address(operand), out = address(op->getResult(0));
  if (failed(in) || failed(out))
    return failure();
  FailureOr<StorageType> resultStorage =
      getStorageType(getElementType(op->getResult(0)), op->getLoc());
  if (failed(resultStorage))
    return failure();
  int64_t id = numCollectives++;
  pending.push_back({id, places[operand].offset, bytes,
                     places[op->getResult(0)].offset,
                     getBytes(op->getResult(0), *resultStorage)});
  std::string shape = "{";
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    shape += (d ? ", " : "") + str(size);
  shape += "}";
  std::string location = formatLocation(op->getLoc());
  std::string name = nextName(op->getName().getStringRef().drop_front(6));
  host += "  // " + name + ": " + op->getName().getStringRef().str() + " at " +
          location + "\n";
  host += "  collective(context, CollectiveDesc{CollectiveKind::" + kind.str() +
          ", ReduceOp::" + reduce + ", DType::" + storage->dtype + ", " +
          str(group) + ", " + str(dim) + ", " + str(type.getRank()) + ", " +
          shape + ", " + str(concatDim) + "}, " + *in + ", " + *out + ", " +
          str(id) + ", " + cString(name) + ", " + cString(location) + ");\n";
  project.kernels.push_back(name);
  return success();
}

LogicalResult StepEmitter::emitTransfer(Operation *op) {
  bool isSend = isa<shard::SendOp>(op);
  // RankedInterpreter::checkCanRun checked the pair: over the pipeline
  // axis, static peers, a recv of a send's value in flight (which comes
  // before it in the block).
  int64_t peer, tag;
  Value value;
  if (auto send = dyn_cast<shard::SendOp>(op)) {
    peer = send.getDestination().front();
    tag = static_cast<int64_t>(transferTags.size());
    transferTags[op] = tag;
    value = send.getInput();
  } else {
    auto recv = cast<shard::RecvOp>(op);
    peer = recv.getSource()->front();
    tag = transferTags.at(recv.getInput().getDefiningOp());
    value = recv.getResult();
  }
  FailureOr<StorageType> storage =
      getStorageType(getElementType(value), op->getLoc());
  FailureOr<std::string> at = address(value);
  if (failed(storage) || failed(at))
    return failure();
  std::string location = formatLocation(op->getLoc());
  std::string name = nextName(isSend ? "send" : "recv");
  host += "  // " + name + ": " + op->getName().getStringRef().str() + " " +
          (isSend ? "to" : "from") + " pipeline device " + str(peer) + " at " +
          location + "\n";
  host += std::string("  ") + (isSend ? "sendToStage" : "recvFromStage") +
          "(context, " + str(peer) + ", " + *at + ", " +
          str(getBytes(value, *storage)) + ", " + str(tag) + ", " +
          cString(name) + ", " + cString(location) + ");\n";
  project.kernels.push_back(name);
  return success();
}

void StepEmitter::guardStage(Operation *op, size_t from) {
  if (!pipeline || host.size() == from)
    return;
  int64_t device = pipeline->getDeviceOf(op);
  std::string body = host.substr(from);
  host.resize(from);
  const StringRef close = "  }\n";
  if (guardEnd == from && guardDevice == device)
    host.resize(from - close.size());
  else
    host += "  if (onPipelineDevice(context, " + str(device) + ")) {\n";
  for (StringRef line : llvm::split(StringRef(body).rtrim('\n'), '\n'))
    host += (line.empty() ? "" : "  ") + line.str() + "\n";
  host += close;
  guardEnd = host.size();
  guardDevice = device;
}

LogicalResult StepEmitter::setUpPipeline() {
  FailureOr<std::optional<PipelineConfig>> config =
      PipelineConfig::lookup(step);
  if (failed(config))
    return failure();
  if (!*config)
    return success();
  pipeline = **config;
  if (!mesh)
    return step.emitError("is pipelined but has no mesh (its arguments' "
                          "tg.sharding and the module's shard.grid)");
  if (pipeline->stages > 64)
    return step.emitError("has ")
           << pipeline->stages
           << " pipeline devices; a generated trainer takes up to 64";
  // The same checks as the simulated ranks that tgc train runs it on
  // (SimulatedPipeline::get: the pipeline axis is one of the mesh's).
  if (failed(RankedInterpreter::checkCanRun(
          step, SimulatedMesh{mesh->name, mesh->axisSizes})))
    return failure();
  pipelineAxis = *mesh->getAxisIndex(pipeline->axis);
  pipelineGroup = static_cast<int64_t>(groups.size());
  groups.push_back({static_cast<int16_t>(pipelineAxis)});
  return success();
}

/// Before `op` (null: the end of the step), the waits for the collectives
/// in flight whose result it reads or whose buffers it overwrites: the
/// memory plan counts a collective's buffers free once the op is past, in
/// the scheduled order, while the communication stream may still be at it.
LogicalResult StepEmitter::waitForCollectives(Operation *op) {
  if (pending.empty())
    return success();
  SmallVector<std::pair<int64_t, int64_t>> reads, writes;
  auto collect = [&](ValueRange values, auto &ranges) -> LogicalResult {
    for (Value value : values) {
      auto it = places.find(value);
      if (it == places.end() || it->second.scratch)
        continue;
      FailureOr<StorageType> type =
          getStorageType(getElementType(value), value.getLoc());
      if (failed(type))
        return failure();
      ranges.push_back({it->second.offset, getBytes(value, *type)});
    }
    return success();
  };
  if (op && (failed(collect(op->getOperands(), reads)) ||
             failed(collect(op->getResults(), writes))))
    return failure();
  auto meets = [](int64_t at, int64_t bytes,
                  ArrayRef<std::pair<int64_t, int64_t>> ranges) {
    return llvm::any_of(ranges, [&](auto range) {
      return at < range.first + range.second && range.first < at + bytes;
    });
  };
  for (auto *it = pending.begin(); it != pending.end();) {
    bool wait = !op || meets(it->out, it->outBytes, reads) ||
                meets(it->out, it->outBytes, writes) ||
                meets(it->in, it->inBytes, writes);
    if (!wait) {
      ++it;
      continue;
    }
    host += "  waitCollective(context, " + str(it->id) + ");\n";
    it = pending.erase(it);
  }
  return success();
}

/// The MeshInfo of the step and its groups (no axes for one device).
std::string StepEmitter::emitMesh() {
  std::string text = "const GroupInfo kGroups[] = {\n";
  for (ArrayRef<int16_t> axes : groups) {
    text += "    {" + str(axes.size()) + ", {";
    for (auto [i, axis] : llvm::enumerate(axes))
      text += (i ? ", " : "") + str(axis);
    text += "}},\n";
  }
  if (groups.empty())
    text += "    {0, {}},\n";
  text += "};\n";
  std::string names = "{", sizes = "{";
  if (mesh)
    for (auto [i, name] : llvm::enumerate(mesh->axisNames)) {
      names += (i ? ", " : "") + cString(name);
      sizes += (i ? ", " : "") + str(mesh->axisSizes[i]);
    }
  text += "const MeshInfo kMesh = {" + str(mesh ? mesh->axisNames.size() : 0) +
          ", " + names + "}, " + sizes + "}, kGroups, " + str(groups.size()) +
          ", " + str(pipelineAxis) + ", " + str(pipelineGroup) + "};\n";
  return text;
}

LogicalResult StepEmitter::launch(KernelEmitter &kernel, Operation *op,
                                  StringRef kind) {
  if (kernel.isEmpty())
    return success();
  std::string location = formatLocation(op->getLoc());
  std::string comment = "// " + kind.str() + " at " + location + "\n";
  kernels += kernel.finish(comment) + "\n";
  scratchBytes = std::max(scratchBytes, kernel.getScratchEnd());
  for (const KernelEmitter::Launch &launch : kernel.getLaunches()) {
    int64_t blocks = std::clamp<int64_t>(
        launch.perRow
            ? launch.elements
            : (launch.elements + 256 * rt::kChunk - 1) / (256 * rt::kChunk),
        1, 65535);
    host += "  TGC_LAUNCH(" + launch.kernel + ", " + str(blocks) +
            ", 256, arena, scratch);\n";
    host += "  checkLaunch(" + cString(launch.kernel) + ", " +
            cString(location) + ");\n";
    project.kernels.push_back(launch.kernel);
  }
  return success();
}

LogicalResult StepEmitter::emitKernel(Operation *op) {
  std::string stem = op->getName().getStringRef().drop_front(3).str();
  KernelEmitter kernel(nextName(stem), 0);
  for (Value operand : op->getOperands()) {
    auto it = places.find(operand);
    if (it == places.end() || failed(kernel.bind(operand, it->second)))
      return op->emitError("the CUDA emitter found no place for an operand");
  }
  for (Value result : op->getResults())
    kernel.requireOutput(result, places[result], /*direct=*/true);
  if (failed(kernel.emitOp(op)))
    return failure();
  return launch(kernel, op, op->getName().getStringRef());
}

/// Whether `result` may be written over the bytes of the region input
/// `input` while the region runs: the op that computes it is the only one
/// that reads the input, element i of the result from element i of the
/// input (an elementwise op, an optimizer update, dropout), so each thread
/// reads an element before it writes over it and nothing reads it after.
bool isReadOnlyInPlace(Value result, Value input) {
  Operation *op = result.getDefiningOp();
  if (!op)
    return false;
  bool pointwise = isa<tg::AdamWOp, tg::SgdOp, tg::DropoutOp>(op) ||
                   hasElementwiseFormula(op->getName().getStringRef());
  if (!pointwise)
    return false;
  return llvm::all_of(input.getUsers(),
                      [&](Operation *user) { return user == op; }) &&
         getNumElements(input) == getNumElements(result);
}

/// Whether the byte ranges of two places of the arena overlap.
bool overlaps(Place a, int64_t aBytes, Place b, int64_t bBytes) {
  return a.scratch == b.scratch && a.offset < b.offset + bBytes &&
         b.offset < a.offset + aBytes;
}

/// A gemm region read as cuBLASLt's epilogue stages after its matmul
/// (tg-fuse's `epilogue`), the values each stage reads and writes.
struct EpilogueStages {
  /// What D holds: the last stage's value, yielded.
  Value output;
  /// The region input read as the bias vector (through a convert and the
  /// broadcast), or null.
  Value bias;
  StringRef activation = "None";
  /// Relu/Gelu: the yielded pre-activation (null when nothing else reads
  /// it); DGelu: the region input read as the forward's pre-activation.
  Value aux;
  /// The region input added after the activation, or null.
  Value residual;
  /// "None", "Output" (the column sums of D after DGelu), or "" for those
  /// of a region input, `biasGradSource`, that must be the bytes of the
  /// matmul's A or B read along k.
  StringRef biasGradOf = "None";
  Value biasGrad, biasGradSource;
};

/// The stages of the gemm region `fusion`, or nullopt when its ops are not
/// exactly such a chain (then it runs as its GEMM and its kernels).
std::optional<EpilogueStages> matchEpilogueStages(tg::FusionOp fusion,
                                                  tg::MatmulOp matmul) {
  Block &body = fusion.getBody().front();
  auto isInput = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == &body;
  };
  int64_t columns =
      cast<RankedTensorType>(matmul.getResult().getType()).getShape().back();
  llvm::DenseSet<Operation *> matched = {matmul};
  // A broadcast along the rows of a vector of `columns` (a region input,
  // or its convert) read only by the add.
  auto matchBias = [&](Value value) -> Value {
    auto broadcast = value.getDefiningOp<tg::BroadcastInDimOp>();
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    if (!broadcast || !value.hasOneUse() ||
        broadcast.getBroadcastDimensions() != ArrayRef<int64_t>{rank - 1})
      return {};
    Value source = broadcast.getOperand();
    auto convert = source.getDefiningOp<tg::ConvertOp>();
    if (convert) {
      if (!source.hasOneUse())
        return {};
      source = convert.getOperand();
    }
    if (!isInput(source) || getNumElements(source) != columns ||
        !isa<FloatType>(getElementType(source)))
      return {};
    matched.insert(broadcast);
    if (convert)
      matched.insert(convert);
    return source;
  };

  EpilogueStages stages;
  enum { None, Bias, Activation, Residual, Cast } stage = None;
  Value value = matmul.getResult();
  while (true) {
    SmallVector<Operation *> readers;
    bool yielded = false;
    for (Operation *user : value.getUsers()) {
      if (isa<tg::YieldOp>(user))
        yielded = true;
      else
        readers.push_back(user);
    }
    if (readers.empty())
      break;
    if (readers.size() != 1)
      return std::nullopt;
    Operation *op = readers.front();
    auto other = [&]() -> Value {
      return op->getOperand(0) == value ? op->getOperand(1) : op->getOperand(0);
    };
    if (stages.activation == "DGelu") {
      // DGELU_BGRAD: D's column sums, D yielded.
      if (!yielded || !isColumnSum(op) || stages.biasGradOf != "None")
        return std::nullopt;
      stages.biasGradOf = "Output";
      stages.biasGrad = op->getResult(0);
      matched.insert(op);
      break;
    }
    StringRef activation = getCublasLtActivation(op);
    if (!activation.empty() && stage < Activation) {
      stages.activation = activation == "GELU" ? "Gelu" : "Relu";
      if (yielded)
        stages.aux = value;
      stage = Activation;
    } else if (yielded) {
      return std::nullopt; // only the pre-activation is read besides D
    } else if (auto grad = dyn_cast<tg::GeluGradOp>(op)) {
      if (stage != None || grad.getGradOutput() != value ||
          grad.getApproximation() != tg::GeluApproximation::Tanh ||
          !isInput(grad.getInput()))
        return std::nullopt;
      stages.activation = "DGelu";
      stages.aux = grad.getInput();
      stage = Activation;
    } else if (isa<tg::AddOp>(op) && op->getOperand(0) != op->getOperand(1)) {
      if (Value bias = stage < Bias ? matchBias(other()) : Value()) {
        stages.bias = bias;
        stage = Bias;
      } else if (stage < Residual && isInput(other())) {
        stages.residual = other();
        stage = Residual;
      } else {
        return std::nullopt;
      }
    } else if (auto convert = dyn_cast<tg::ConvertOp>(op)) {
      if (stage >= Cast || !isa<FloatType>(getElementType(convert)))
        return std::nullopt;
      stage = Cast;
    } else {
      return std::nullopt;
    }
    matched.insert(op);
    value = op->getResult(0);
  }
  stages.output = value;

  // BGRADA/BGRADB: the column sums of a region input that is the matmul's
  // 2-D operand read along k.
  for (Operation &op : body.without_terminator()) {
    if (matched.contains(&op))
      continue;
    if (!isColumnSum(&op) || stages.biasGradOf != "None" || stage != None ||
        !isInput(op.getOperand(0)))
      return std::nullopt;
    // Which operand it sums ("A" or "B") is where its bytes lie: the
    // caller's to say.
    stages.biasGradSource = op.getOperand(0);
    stages.biasGrad = op.getResult(0);
    stages.biasGradOf = "";
    matched.insert(&op);
  }
  // Nothing but D, the pre-activation and the bias gradient leaves.
  auto yield = cast<tg::YieldOp>(body.getTerminator());
  for (Value out : yield.getOperands())
    if (out != stages.output && out != stages.aux && out != stages.biasGrad)
      return std::nullopt;
  if (!llvm::is_contained(yield.getOperands(), stages.output) ||
      (stages.biasGrad &&
       !llvm::is_contained(yield.getOperands(), stages.biasGrad)))
    return std::nullopt;
  if (stage == None && stages.biasGradOf == "None")
    return std::nullopt; // a GEMM alone
  return stages;
}

LogicalResult StepEmitter::emitFusion(tg::FusionOp fusion) {
  StringRef kind = fusion.getKind() ? *fusion.getKind() : "loop";
  std::string name = nextName("fusion_" + kind.str());
  std::string description = "tg.fusion kind " + kind.str();
  if (auto epilogue = fusion.getEpilogue())
    description += ", epilogue " + epilogue->str();
  FailureOr<std::string> call = getEpilogueCall(fusion, name + "_gemm");
  if (failed(call))
    return failure();
  if (call->empty())
    return emitRegion(fusion, name, description);
  // One cuBLASLt call, else (declined at run time) the GEMM and the
  // region's kernels.
  host += "  // " + name + ": " + description + " at " +
          formatLocation(fusion.getLoc()) + "\n" + *call;
  size_t hostFrom = host.size(), kernelsFrom = project.kernels.size();
  // The fallback's scratch is its own, allocated at the first decline.
  int64_t stepScratch = std::exchange(scratchBytes, 0);
  if (failed(emitRegion(fusion, name, description)))
    return failure();
  std::string fallback = host.substr(hostFrom);
  host.resize(hostFrom);
  if (scratchBytes > 0)
    fallback = "  char *scratch = getFallbackScratch(context, " +
               cString(name + "_gemm") + ");\n" + fallback;
  fallbackScratchBytes = std::max(fallbackScratchBytes, scratchBytes);
  scratchBytes = stepScratch;
  for (StringRef line : llvm::split(StringRef(fallback).rtrim('\n'), '\n'))
    host += "    " + line.str() + "\n";
  host += "    }\n  }\n";
  // The call's mark is the GEMM's name; the fallback's kernels launch only
  // when it declines.
  fallbackKernels.assign(project.kernels.begin() + kernelsFrom + 1,
                         project.kernels.end());
  project.kernels.resize(kernelsFrom + 1);
  return success();
}

FailureOr<std::string> StepEmitter::getEpilogueCall(tg::FusionOp fusion,
                                                    StringRef kernel) {
  Block &body = fusion.getBody().front();
  auto yield = cast<tg::YieldOp>(body.getTerminator());
  auto matmuls = body.getOps<tg::MatmulOp>();
  if (fusion.getKind() != "gemm" || !llvm::hasSingleElement(matmuls))
    return std::string();
  tg::MatmulOp matmul = *matmuls.begin();
  std::optional<EpilogueStages> stages = matchEpilogueStages(fusion, matmul);
  if (!stages || !isa<BlockArgument>(matmul.getLhs()) ||
      !isa<BlockArgument>(matmul.getRhs()))
    return std::string();
  // A value's place, its bytes and its runtime type (F32, BF16 or F16).
  struct Operand {
    Place place;
    int64_t bytes = 0;
    std::string dtype;
  };
  auto operand = [&](Value value) -> FailureOr<Operand> {
    Operand found;
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == &body) {
      found.place = places[fusion.getInputs()[arg.getArgNumber()]];
    } else {
      auto it = llvm::find(yield.getOperands(), value);
      found.place = places[fusion.getResult(it - yield.getOperands().begin())];
    }
    FailureOr<StorageType> type =
        getStorageType(getElementType(value), fusion.getLoc());
    if (failed(type))
      return failure();
    found.bytes = getBytes(value, *type);
    found.dtype = type->dtype;
    return found;
  };
  SmallVector<Operand> reads, writes;
  std::string fields;
  auto add = [&](StringRef field, Value value, bool written,
                 StringRef typeField) -> LogicalResult {
    FailureOr<Operand> found = operand(value);
    if (failed(found))
      return failure();
    (written ? writes : reads).push_back(*found);
    if (!field.empty())
      fields += "    epilogue." + field.str() + " = " +
                (found->place.scratch ? "scratch" : "arena") + " + " +
                str(found->place.offset) + ";\n";
    if (!typeField.empty())
      fields += "    epilogue." + typeField.str() +
                " = DType::" + found->dtype + ";\n";
    return success();
  };
  FailureOr<StorageType> product =
      getStorageType(getElementType(matmul.getResult()), matmul.getLoc());
  if (failed(product) || failed(add("", matmul.getLhs(), false, "")) ||
      failed(add("", matmul.getRhs(), false, "")) ||
      failed(add("", stages->output, true, "")))
    return failure();
  Operand a = reads[0], b = reads[1], d = writes[0];
  fields += "    epilogue.product = DType::" + product->dtype + ";\n";
  if (stages->bias && failed(add("bias", stages->bias, false, "biasType")))
    return failure();
  if (stages->activation != "None")
    fields += "    epilogue.activation = GemmActivation::" +
              stages->activation.str() + ";\n";
  if (stages->aux &&
      failed(add("aux", stages->aux, stages->activation != "DGelu", "auxType")))
    return failure();
  std::optional<Operand> residual;
  if (stages->residual) {
    FailureOr<Operand> found = operand(stages->residual);
    if (failed(found))
      return failure();
    residual = *found;
    fields +=
        "    epilogue.residual = arena + " + str(found->place.offset) + ";\n";
  }
  StringRef biasGradOf = stages->biasGradOf;
  if (stages->biasGradSource) {
    // BGRADA/BGRADB: the sum reads the bytes of an operand read along k.
    FailureOr<Operand> source = operand(stages->biasGradSource);
    if (failed(source))
      return failure();
    auto isSummed = [&](const Operand &input) {
      return source->place.offset == input.place.offset &&
             source->place.scratch == input.place.scratch &&
             source->bytes == input.bytes && source->dtype == input.dtype;
    };
    if (matmul.getTransposeA() && isSummed(a))
      biasGradOf = "A";
    else if (!matmul.getTransposeB() && isSummed(b))
      biasGradOf = "B";
    else
      return std::string();
  }
  if (stages->biasGrad) {
    fields +=
        "    epilogue.biasGradOf = GemmBiasGrad::" + biasGradOf.str() + ";\n";
    if (failed(add("biasGrad", stages->biasGrad, true, "biasGradType")))
      return failure();
  }
  // The runtime takes f32, bf16 and f16; what it writes overlaps nothing
  // it reads (D may be the residual itself) nor anything else it writes.
  auto isTaken = [](StringRef dtype) {
    return dtype == "F32" || dtype == "BF16" || dtype == "F16";
  };
  if (!isTaken(product->dtype) ||
      llvm::any_of(llvm::concat<Operand>(reads, writes),
                   [&](const Operand &value) { return !isTaken(value.dtype); }))
    return std::string();
  if (residual && residual->dtype != product->dtype)
    return std::string();
  for (auto [i, write] : llvm::enumerate(writes)) {
    for (const Operand &read : reads)
      if (overlaps(write.place, write.bytes, read.place, read.bytes))
        return std::string();
    for (const Operand &other : ArrayRef(writes).drop_front(i + 1))
      if (overlaps(write.place, write.bytes, other.place, other.bytes))
        return std::string();
    if (residual &&
        overlaps(write.place, write.bytes, residual->place, residual->bytes) &&
        (i != 0 || write.place.offset != residual->place.offset ||
         write.place.scratch != residual->place.scratch))
      return std::string();
  }
  FailureOr<std::string> desc = getGemmDesc(matmul, d.dtype);
  if (failed(desc))
    return failure();
  auto text = [](Place place) {
    return std::string(place.scratch ? "scratch" : "arena") + " + " +
           str(place.offset);
  };
  return "  {\n    GemmEpilogue epilogue;\n" + fields +
         "    if (!gemmEpilogue(context, " + *desc + ", epilogue, " +
         text(a.place) + ", " + text(b.place) + ", " + text(d.place) + ", " +
         cString(kernel) + ")) {\n";
}

LogicalResult StepEmitter::emitRegion(tg::FusionOp fusion, StringRef name,
                                      StringRef description) {
  Block &body = fusion.getBody().front();
  auto yield = cast<tg::YieldOp>(body.getTerminator());
  StringRef kind = fusion.getKind() ? *fusion.getKind() : "loop";
  auto inputPlace = [&](Value blockValue) {
    return places
        [fusion.getInputs()[cast<BlockArgument>(blockValue).getArgNumber()]];
  };
  auto text = [](Place place) {
    return std::string(place.scratch ? "scratch" : "arena") + " + " +
           str(place.offset);
  };

  // The GEMM of a gemm region runs first: its operands are region inputs
  // (cuBLASLt has no prologue), its result goes where the region yields it
  // or to the start of the kernel's scratch for the epilogue.
  tg::MatmulOp matmul;
  for (Operation &op : body.without_terminator())
    if (auto found = dyn_cast<tg::MatmulOp>(op)) {
      if (matmul || kind != "gemm")
        return found.emitError("the CUDA emitter takes one matmul per gemm "
                               "region, and none in other regions");
      matmul = found;
    }
  Place product;
  int64_t scratchBase = 0;
  if (matmul) {
    if (!isa<BlockArgument>(matmul.getLhs()) ||
        !isa<BlockArgument>(matmul.getRhs()))
      return matmul.emitError("the CUDA emitter needs a gemm region's matmul "
                              "to read region inputs (no prologue)");
    auto it = llvm::find(yield.getOperands(), matmul.getResult());
    if (it != yield.getOperands().end()) {
      product = places[fusion.getResult(it - yield.getOperands().begin())];
    } else {
      FailureOr<StorageType> type =
          getStorageType(getElementType(matmul.getResult()), matmul.getLoc());
      if (failed(type))
        return failure();
      product = {true, 0};
      scratchBase = (getBytes(matmul.getResult(), *type) + 255) / 256 * 256;
      scratchBytes = std::max(scratchBytes, scratchBase);
    }
    if (failed(emitGemm(matmul, text(inputPlace(matmul.getLhs())),
                        text(inputPlace(matmul.getRhs())), text(product),
                        (name + "_gemm").str())))
      return failure();
  }

  KernelEmitter kernel(name.str(), scratchBase);
  for (auto [arg, input] : llvm::zip(body.getArguments(), fusion.getInputs()))
    if (failed(kernel.bind(arg, places[input])))
      return failure();
  if (matmul && failed(kernel.bind(matmul.getResult(), product)))
    return failure();
  // Region outputs are written in place, unless one would overwrite an
  // input that a later step still reads: then it is copied at the end.
  bool severalSteps =
      llvm::count_if(body.without_terminator(),
                     [](Operation &op) { return !isa<tg::MatmulOp>(op); }) > 1;
  llvm::DenseSet<Value> yielded;
  if (matmul)
    yielded.insert(matmul.getResult());
  for (auto [value, result] :
       llvm::zip(yield.getOperands(), fusion.getResults())) {
    FailureOr<StorageType> type =
        getStorageType(getElementType(result), fusion.getLoc());
    if (failed(type))
      return failure();
    if (matmul && value == matmul.getResult() &&
        places[result].offset == product.offset && !product.scratch)
      continue;
    bool hazard = false;
    for (auto [input, arg] :
         llvm::zip(fusion.getInputs(), body.getArguments())) {
      FailureOr<StorageType> inType =
          getStorageType(getElementType(input), fusion.getLoc());
      if (failed(inType))
        return failure();
      hazard |= severalSteps && !isReadOnlyInPlace(value, arg) &&
                overlaps(places[result], getBytes(result, *type), places[input],
                         getBytes(input, *inType));
    }
    bool direct = !hazard && yielded.insert(value).second;
    kernel.requireOutput(value, places[result], direct);
  }
  for (Operation &op : body.without_terminator())
    if (&op != matmul.getOperation() && failed(kernel.emitOp(&op)))
      return failure();
  return launch(kernel, fusion, description);
}

LogicalResult StepEmitter::emitDescription() {
  Block &body = step.getBody().front();
  // A pipelined step: the pipeline devices whose ops read each argument
  // (the memory plan places it on those only), and the device whose op
  // computes each result.
  SmallVector<uint64_t> holders(step.getNumArguments(), ~uint64_t(0));
  if (pipeline) {
    for (BlockArgument arg : step.getArguments()) {
      uint64_t mask = 0;
      for (Operation *user : arg.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (top && top != body.getTerminator())
          mask |= uint64_t(1) << pipeline->getDeviceOf(top);
      }
      holders[arg.getArgNumber()] = mask;
      std::vector<int64_t> &listed =
          project.argumentPipelineHolders.emplace_back();
      for (int64_t d = 0; d < pipeline->stages; ++d)
        if ((mask >> d) & 1)
          listed.push_back(d);
    }
  }
  auto resultHolder = [&](Value value) -> int64_t {
    Operation *producer = value.getDefiningOp();
    return pipeline && producer ? pipeline->getDeviceOf(producer) : -1;
  };
  std::string arguments = "const ArgumentInfo kArguments[] = {\n";
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    Value arg = step.getArgument(i);
    auto type = cast<RankedTensorType>(arg.getType());
    FailureOr<StorageType> storage =
        getStorageType(type.getElementType(), arg.getLoc());
    if (failed(storage))
      return failure();
    if (type.getRank() > 8)
      return step.emitError("argument ")
             << i << " has more than 8 dimensions, more than the runtime takes";
    rt::RandomSpec spec = getRandomSpec(step, i);
    // The trainer fills an integer input with the data, its default or the
    // value its name says (rt::getNamedInput); nothing else, as `tgc train`.
    if (spec.role == rt::ArgRole::Input && !spec.isFloat && !spec.hasDefault &&
        rt::getNamedInput(getArgumentName(step, i)) == rt::NamedInput::None &&
        !feedsIdsOrLabels(arg))
      return step.emitError("the generated trainer cannot fill input '")
             << getArgumentName(step, i)
             << "': it is no token ids or labels (read by an embedding or a "
                "loss), no attention mask, token type ids or position ids";
    // A partitioned step's argument is a block of its global value.
    SmallVector<int64_t> global(type.getShape());
    std::string dimAxes = "{";
    tg::ShardingAttr sharding = tg::getArgSharding(step, i);
    if (sharding && !sharding.getUnreducedAxes().empty())
      return step.emitError("argument ")
             << i
             << " is a partial sum (unreduced); a generated trainer "
                "starts every argument from its whole value";
    // The caller's shape: ZeRO's padding is cut off (Ranks.cpp).
    FailureOr<SmallVector<int64_t>> caller =
        tg::getCallerArgShape(step, i, mesh ? &*mesh : nullptr);
    if (failed(caller))
      return failure();
    global = std::move(*caller);
    if (!mesh && global != type.getShape())
      return step.emitError("argument ")
             << i << " is padded (tg.unpadded_shape) in a step of one "
             << "device; only a partitioned step cuts padding off";
    for (int64_t d = 0; d < type.getRank(); ++d) {
      SmallVector<StringRef> axes;
      if (sharding && mesh)
        axes = sharding.getDimAxes(d);
      if (axes.size() > 4)
        return step.emitError("argument ")
               << i << " splits a dimension over more than 4 mesh axes";
      dimAxes += (d ? ", {" : "{");
      for (unsigned a = 0; a < 4; ++a)
        dimAxes += (a ? ", " : "") + (a < axes.size()
                                          ? str(*mesh->getAxisIndex(axes[a]))
                                          : std::string("-1"));
      dimAxes += "}";
    }
    dimAxes += "}";
    std::string globalShape = "{";
    for (auto [d, size] : llvm::enumerate(global))
      globalShape += (d ? ", " : "") + str(size);
    globalShape += "}";
    const char *roles[] = {"Param", "State", "Input", "Label", "Hyper"};
    const char *inits[] = {"Normal", "Zeros", "Ones"};
    std::string ignoredIds;
    for (int k = 0; k < spec.numIgnoredIds; ++k)
      ignoredIds += (k ? ", " : "") + str(spec.ignoredIds[k]);
    std::string shape = "{";
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      shape += (d ? ", " : "") + str(size);
    shape += "}";
    arguments +=
        "    {" + cString(getArgumentName(step, i)) +
        ", DType::" + storage->dtype + ", " + str(type.getRank()) + ", " +
        shape + ", " + str(places[arg].offset) +
        ",\n     RandomSpec{ArgRole::" + roles[static_cast<int>(spec.role)] +
        ", " + (spec.isFloat ? "true" : "false") + ", " +
        (spec.isI1 ? "true" : "false") +
        ", RandomSpec::Init::" + inits[static_cast<int>(spec.init)] + ", " +
        (spec.hasDefault ? "true" : "false") + ", " +
        formatNumber(spec.defaultValue) + ", " + str(spec.idBound) + ", " +
        str(spec.numIgnoredIds) + ", {" + ignoredIds + "}},\n     " +
        globalShape + ", " + dimAxes + ", " +
        (tg::isModelValue(step, i) ? "true" : "false") + ", " +
        (pipeline ? "0x" + llvm::utohexstr(holders[i]) + "ull"
                  : std::string("~0ull")) +
        ", " +
        (step.getArgAttr(i, tg::TGDialect::kFrozenAttrName) ? "true"
                                                            : "false") +
        "},\n";
  }
  arguments += "};\n";
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  std::string results = "const ResultInfo kResults[] = {\n";
  for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
    FailureOr<StorageType> storage =
        getStorageType(getElementType(value), ret.getLoc());
    if (failed(storage))
      return failure();
    auto aliases = step.getResultAttrOfType<IntegerAttr>(
        r, tg::TGDialect::kAliasesAttrName);
    bool isLoss = tg::getResultRole(step, r) == tg::Role::Loss;
    // A new value for an argument no stage reads would be lost: no rank
    // holds the argument.
    if (pipeline && aliases && aliases.getInt() >= 0 &&
        aliases.getInt() < static_cast<int64_t>(holders.size()) &&
        holders[aliases.getInt()] == 0)
      return step.emitError("result ")
             << r << " updates argument " << aliases.getInt()
             << ", which no pipeline stage reads; a generated trainer keeps "
                "an argument on the stages that read it";
    // The trainer reads the loss on rank 0: it must be whole there.
    if (tg::ShardingAttr sharding = tg::getResultSharding(step, r);
        isLoss && sharding && !sharding.isReplicated())
      return step.emitError("the loss (result ")
             << r << ") is " << sharding
             << " on the mesh; a generated trainer needs it whole on every "
                "rank";
    results += "    {" + cString(getResultName(step, r)) +
               ", DType::" + storage->dtype + ", " + str(places[value].offset) +
               ", " + str(getBytes(value, *storage)) + ", " +
               str(aliases ? aliases.getInt() : -1) + ", " +
               (isLoss ? "true" : "false") + ", " + str(resultHolder(value)) +
               "},\n";
    if (pipeline)
      project.resultPipelineHolders.push_back(resultHolder(value));
  }
  results += "};\n";
  std::optional<CopyTask> task = CopyTask::find(step);
  int64_t arena =
      step->getAttrOfType<IntegerAttr>(tg::TGDialect::kArenaSizeAttrName)
          .getInt();
  // The GEMM library's workspace, where the memory plan put it (the
  // device's size, when the step has GEMMs).
  int64_t workspaceOffset = -1, workspaceBytes = 0;
  if (auto offset = step->getAttrOfType<IntegerAttr>(
          tg::TGDialect::kGemmWorkspaceOffsetAttrName);
      offset && device) {
    workspaceOffset = offset.getInt();
    workspaceBytes = device->gemmWorkspaceBytes;
  }
  description = arguments + "\n" + results + "\n" + emitMesh() +
                "\nconst StepInfo kStep = {" +
                cString("@" + step.getName().str() + " (" +
                        formatLocation(step.getLoc()) + ")") +
                ", " + str(arena) + ", " + str(scratchBytes) + ", " +
                str(fallbackScratchBytes) + ", kArguments, " +
                str(step.getNumArguments()) + ", kResults, " +
                str(ret.getNumOperands()) + ", " +
                str(task ? int64_t(task->ids) : -1) + ", " +
                str(task ? int64_t(task->labels) : -1) + ", " +
                (task && task->labelsShifted ? "true" : "false") + ", " +
                str(task ? task->vocabulary : 0) + ", kMesh, " +
                str(numCollectives) + ", " + str(commScratchBytes) +
                ", kFingerprint,\n"
                "#ifdef TGC_IMPORTED_PARAMS\n"
                "    TGC_IMPORTED_PARAMS\n"
                "#else\n"
                "    nullptr\n"
                "#endif\n"
                "    , " +
                str(workspaceOffset) + ", " + str(workspaceBytes) + "};\n";
  return success();
}

FailureOr<CudaProject> StepEmitter::run() {
  // The estimates are for the device the step was planned for; a module
  // without a readable one gets none (the step itself does not need them).
  if (llvm::Expected<DeviceSpec> planned = getDeviceOf(step)) {
    device = *planned;
    project.device = device->name;
  } else {
    llvm::consumeError(planned.takeError());
  }
  if (!step->getAttrOfType<IntegerAttr>(tg::TGDialect::kArenaSizeAttrName))
    return step.emitError("is not a compiled step (it has no ")
           << tg::TGDialect::kArenaSizeAttrName
           << "): the CUDA emitter takes what tgc compile writes, after "
              "tg-memory-plan";
  FailureOr<std::optional<tg::Mesh>> found = tg::lookupFunctionMesh(step);
  if (failed(found))
    return failure();
  mesh = *found;
  // A pipelined step (docs/pipeline.md) runs each op on its stage's ranks
  // only (a test of the rank's pipeline coordinate around its code) and
  // moves values between stages with send/recv pairs.
  if (failed(setUpPipeline()))
    return failure();
  for (BlockArgument arg : step.getArguments()) {
    auto offset = step.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), tg::TGDialect::kOffsetAttrName);
    if (!offset)
      return step.emitError("argument ") << arg.getArgNumber() << " has no "
                                         << tg::TGDialect::kOffsetAttrName;
    places[arg] = {false, offset.getInt()};
  }
  for (Operation &op : step.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (failed(placeResults(&op)))
      return failure();
    // A splat constant's buffer is planned from just before its first use
    // (docs/memory.md): it is filled there, not where it stands.
    if (isFilledAtFirstUse(&op)) {
      unfilled.insert(&op);
      continue;
    }
    if (failed(fillConstantsReadBy(&op)))
      return failure();
    size_t first = project.kernels.size();
    LogicalResult status = success();
    bool isView = isInPlace(&op);
    // Collectives run in order on one stream: they wait for none.
    if (!isa<shard::ShardDialect>(op.getDialect()) && !isView &&
        failed(waitForCollectives(&op)))
      return failure();
    size_t from = host.size();
    if (pipeline && isa<shard::SendOp, shard::RecvOp>(op)) {
      status = emitTransfer(&op);
    } else if (isa<shard::ShardDialect>(op.getDialect())) {
      status = emitCollective(&op);
    } else if (auto fusion = dyn_cast<tg::FusionOp>(op)) {
      status = emitFusion(fusion);
    } else if (auto matmul = dyn_cast<tg::MatmulOp>(op)) {
      FailureOr<std::string> a = address(matmul.getLhs()),
                             b = address(matmul.getRhs()),
                             c = address(matmul.getResult());
      status = failed(a) || failed(b) || failed(c)
                   ? failure()
                   : emitGemm(matmul, *a, *b, *c, nextName("matmul"));
    } else if (isa<tg::AttentionOp, tg::AttentionGradOp,
                   tg::AttentionBiasGradOp>(op)) {
      status = emitAttention(&op);
    } else if (isView) {
      continue; // a view of its operand's buffer
    } else {
      status = emitKernel(&op);
    }
    if (failed(status))
      return failure();
    guardStage(&op, from);
    noteEstimate(&op, first);
  }
  // Splat constants nothing reads but the return, or nothing at all.
  for (Operation &op : step.getBody().front())
    if (unfilled.contains(&op) && failed(fillConstant(&op)))
      return failure();
  if (failed(waitForCollectives(nullptr)) || failed(emitDescription()))
    return failure();
  std::string header =
      "// Generated by tgc from @" + step.getName().str() + " (" +
      formatLocation(step.getLoc()) + "): the compiled " +
      (kind == SourceKind::Evaluation ? "evaluation (tg-evaluation)" : "step") +
      " as CUDA C++.\n// One kernel per tg.fusion region "
      "or remaining op, in the scheduled order,\n// over one arena at the "
      "planned offsets. Builds for the GPU (nvcc) and, with\n// "
      "-DTGC_TARGET=host, for the CPU from this same source.\n\n"
      "#include \"tgc/runtime/Kernels.h\"\n#include "
      "\"tgc/runtime/Runtime.h\"\n\nnamespace {\n\nusing namespace "
      "tgc::rt;\nusing namespace tgc::rt::k;\n\n";
  // Ranks must run one compiled step: its text and mesh identify it.
  std::string body = kernels +
                     "void step(Context &context) {\n  char *arena = "
                     "context.arena;\n  char *scratch = "
                     "context.scratch;\n" +
                     host + "}\n\n";
  std::string fingerprint = llvm::utohexstr(
      llvm::xxh3_64bits(body + description), /*LowerCase=*/true);
  project.stepSource = header + body + "const char kFingerprint[] = \"" +
                       fingerprint + "\";\n\n" + description +
                       "\n} // namespace\n\n";
  switch (kind) {
  case SourceKind::Trainer:
    project.stepSource += "int main(int argc, char **argv) {\n  return "
                          "tgc::rt::trainMain(argc, argv, kStep, step);\n}\n";
    break;
  case SourceKind::TrainerWithEvaluation:
    project.stepSource +=
        "// The evaluation (evaluate.cu), for train --val-data.\n"
        "const tgc::rt::StepInfo &tgcEvaluationInfo();\n"
        "void tgcEvaluate(tgc::rt::Context &context);\n\n"
        "int main(int argc, char **argv) {\n  return "
        "tgc::rt::trainMain(argc, argv, kStep, step, &tgcEvaluationInfo(),\n"
        "                             tgcEvaluate);\n}\n";
    break;
  case SourceKind::Evaluation:
    project.stepSource +=
        "// For the trainer's main() (step.cu).\n"
        "const tgc::rt::StepInfo &tgcEvaluationInfo() { return kStep; }\n"
        "void tgcEvaluate(tgc::rt::Context &context) { step(context); }\n";
    break;
  }
  return std::move(project);
}

} // namespace

FailureOr<CudaProject> tgc::emitCudaProject(func::FuncOp step,
                                            bool withEvaluation) {
  return StepEmitter(step, withEvaluation ? SourceKind::TrainerWithEvaluation
                                          : SourceKind::Trainer)
      .run();
}

FailureOr<CudaProject> tgc::emitCudaEvaluation(func::FuncOp evaluation) {
  return StepEmitter(evaluation, SourceKind::Evaluation).run();
}

bool tgc::hasCudaLowering(StringRef opName) {
  return hasKernelLowering(opName);
}
