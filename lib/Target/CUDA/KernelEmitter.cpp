//===- KernelEmitter.cpp - one kernel of a generated step -----------------===//
//
// The launches of a tg.fusion region (or one op), from its ops in order.
// Elementwise ops and views are formulas inside grid-stride loops, stored
// only where the region yields them or a runtime op kernel reads them; the
// other ops call the runtime's op kernels (tgc/runtime/OpKernels.h). Loops
// and grid-wise calls share a launch while each thread reads only the
// elements it wrote itself; a read of another thread's element starts a
// launch. lib/Eval is the reference for every formula.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::cuda;

FailureOr<StorageType> cuda::getStorageType(Type type, Location loc) {
  if (type.isF32())
    return StorageType{"float", "float", "F32", 4};
  if (type.isF64())
    return StorageType{"double", "double", "F64", 8};
  if (type.isBF16())
    return StorageType{"bf16", "float", "BF16", 2};
  if (type.isF16())
    return StorageType{"f16", "float", "F16", 2};
  if (isa<Float8E4M3FNType>(type))
    return StorageType{"f8e4m3fn", "float", "F8E4M3FN", 1};
  if (isa<Float8E5M2Type>(type))
    return StorageType{"f8e5m2", "float", "F8E5M2", 1};
  if (isa<Float8E4M3FNUZType>(type))
    return StorageType{"f8e4m3fnuz", "float", "F8E4M3FNUZ", 1};
  if (isa<Float8E5M2FNUZType>(type))
    return StorageType{"f8e5m2fnuz", "float", "F8E5M2FNUZ", 1};
  if (isa<Float4E2M1FNType>(type))
    return StorageType{"f4e2m1fn", "float", "F4E2M1FN", 1};
  if (isa<Float8E8M0FNUType>(type))
    return StorageType{"f8e8m0fnu", "float", "F8E8M0FNU", 1};
  // Integers compute in int64_t and wrap when stored. ui8 is a wrapper
  // struct: uint8_t holds i1.
  if (type.isInteger(1))
    return StorageType{"uint8_t", "int64_t",    "I1",
                       1,         "int64_t(0)", "int64_t(1)"};
  if (isa<IntegerType>(type) && !type.isSignedInteger()) {
    unsigned width = type.getIntOrFloatBitWidth();
    bool isUnsigned = type.isUnsignedInteger();
    std::string bits = std::to_string(width);
    std::string limits = isUnsigned ? "UINT" + bits : "INT" + bits;
    if (width == 8 && isUnsigned)
      return StorageType{"u8", "int64_t", "U8", 1, "int64_t(0)", "UINT8_MAX"};
    // i4, ui4, i2, ui2: one element a byte (Storage.h's narrow).
    if (width == 4 || width == 2) {
      int64_t low = isUnsigned ? 0 : -(int64_t(1) << (width - 1));
      int64_t high = isUnsigned ? (int64_t(1) << width) - 1
                                : (int64_t(1) << (width - 1)) - 1;
      return StorageType{(isUnsigned ? "u" : "i") + bits,
                         "int64_t",
                         (isUnsigned ? "U" : "I") + bits,
                         1,
                         "int64_t(" + std::to_string(low) + ")",
                         "int64_t(" + std::to_string(high) + ")"};
    }
    if ((width == 8 || width == 16 || width == 32 || width == 64) &&
        !(isUnsigned && width == 64))
      return StorageType{(isUnsigned ? "uint" : "int") + bits + "_t",
                         "int64_t",
                         (isUnsigned ? "U" : "I") + bits,
                         int64_t(width / 8),
                         isUnsigned ? "int64_t(0)" : limits + "_MIN",
                         "int64_t(" + limits + "_MAX)"};
  }
  return emitError(loc) << "the CUDA emitter has no storage for element type "
                        << type;
}

std::string cuda::formatLocation(Location loc) {
  std::string text = describeLocation(loc);
  if (text.empty())
    return "unknown";
  // A backslash ending a // comment would continue it on the next line: the
  // last (describeLocation shows one as two) is written \x5c.
  if (text.back() == '\\') {
    text.pop_back();
    text += "x5c";
  }
  return text;
}

namespace {

/// Elementwise ops: one formula per element.
const llvm::StringSet<> kElementwise = {"tg.add",
                                        "tg.bitwise",
                                        "tg.bitwise_not",
                                        "tg.bitcast",
                                        "tg.sub",
                                        "tg.mul",
                                        "tg.div",
                                        "tg.max",
                                        "tg.min",
                                        "tg.pow",
                                        "tg.neg",
                                        "tg.abs",
                                        "tg.exp",
                                        "tg.log",
                                        "tg.sqrt",
                                        "tg.rsqrt",
                                        "tg.tanh",
                                        "tg.erf",
                                        "tg.sin",
                                        "tg.cos",
                                        "tg.sigmoid",
                                        "tg.relu",
                                        "tg.silu",
                                        "tg.gelu",
                                        "tg.select",
                                        "tg.mode_select",
                                        "tg.compare",
                                        "tg.convert",
                                        "tg.gelu_grad",
                                        "tg.scale_grad",
                                        "tg.fake_quant_grad",
                                        "tg.quantize_dequantize",
                                        "tg.quantize_dequantize_grad"};
/// Data movement.
const llvm::StringSet<> kShape = {"tg.constant", "tg.broadcast_in_dim",
                                  "tg.reshape",  "tg.transpose",
                                  "tg.slice",    "tg.pad",
                                  "tg.concat"};
/// Runtime op kernels.
const llvm::StringSet<> kCompound = {"tg.reduce",
                                     "tg.softmax",
                                     "tg.log_softmax",
                                     "tg.softmax_grad",
                                     "tg.layer_norm",
                                     "tg.rms_norm",
                                     "tg.layer_norm_grad",
                                     "tg.rms_norm_grad",
                                     "tg.cross_entropy",
                                     "tg.cross_entropy_grad",
                                     "tg.embedding",
                                     "tg.embedding_grad",
                                     "tg.expert_matmul",
                                     "tg.expert_matmul_grad",
                                     "tg.dropout",
                                     "tg.random",
                                     "tg.top_k",
                                     "tg.adamw",
                                     "tg.sgd",
                                     "tg.lamb",
                                     "tg.adafactor",
                                     "tg.fake_quant"};
/// Lowered by the step emitter, outside kernels (library calls, structure).
const llvm::StringSet<> kStep = {"tg.matmul",         "tg.attention",
                                 "tg.attention_grad", "tg.attention_bias_grad",
                                 "tg.fusion",         "tg.yield"};

} // namespace

std::string cuda::formatNumber(double value) {
  if (std::isnan(value))
    return "NAN";
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.17g", value);
  return text;
}

std::string cuda::formatDims(ArrayRef<int64_t> values) {
  std::string text = "Dims{{";
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + std::to_string(v);
  if (values.empty())
    text += "0";
  return text + "}}";
}

SmallVector<int64_t> cuda::getRowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t cuda::getNumElements(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements();
}
Type cuda::getElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

bool cuda::hasElementwiseFormula(StringRef name) {
  return kElementwise.contains(name);
}

bool cuda::hasKernelLowering(StringRef name) {
  return kElementwise.contains(name) || kShape.contains(name) ||
         kCompound.contains(name) || kStep.contains(name);
}

KernelEmitter::KernelEmitter(std::string name, int64_t scratchBase)
    : name(std::move(name)), scratchTop(scratchBase) {}

std::string KernelEmitter::declarePointer(StringRef cType, Place place) {
  std::string var = "v" + std::to_string(counter++);
  declarations.push_back(
      {var, "  " + cType.str() + " *" + var + " = reinterpret_cast<" +
                cType.str() + " *>(" + (place.scratch ? "scratch" : "arena") +
                " + " + std::to_string(place.offset) + ");\n"});
  return var;
}

Place KernelEmitter::takeScratch(int64_t bytes) {
  Place place{true, scratchTop};
  scratchTop += (bytes + 255) / 256 * 256;
  return place;
}

FailureOr<std::string> KernelEmitter::declare(Value value, Place place) {
  FailureOr<StorageType> type =
      getStorageType(getElementType(value), value.getLoc());
  if (failed(type))
    return failure();
  std::string var = declarePointer(type->cType, place);
  bound[value] = {var, *type};
  return var;
}

std::string KernelEmitter::scratchArray(StringRef cType, int64_t bytes,
                                        int64_t elements) {
  return declarePointer(cType, takeScratch(elements * bytes));
}

LogicalResult KernelEmitter::bind(Value value, Place place) {
  return failure(failed(declare(value, place)));
}

void KernelEmitter::requireOutput(Value value, Place place, bool direct) {
  if (direct && !outputs.count(value) && !isa<BlockArgument>(value))
    outputs[value] = place;
  else
    finalCopies.push_back({value, place});
}

FailureOr<std::string> KernelEmitter::pointer(Value value) {
  auto it = bound.find(value);
  if (it == bound.end())
    return emitError(value.getLoc())
           << "the CUDA emitter found no place for an operand";
  return it->second.name;
}

FailureOr<std::string> KernelEmitter::result(Value value) {
  auto it = outputs.find(value);
  if (it != outputs.end())
    return declare(value, it->second);
  FailureOr<StorageType> type =
      getStorageType(getElementType(value), value.getLoc());
  if (failed(type))
    return failure();
  return declare(value, takeScratch(getNumElements(value) * type->bytes));
}

void KernelEmitter::comment(Operation *op, StringRef indent) {
  body += indent.str() + "// " + op->getName().getStringRef().str() + " at " +
          formatLocation(op->getLoc()) + "\n";
}

/// How a forEachElement loop ends (an epilogue's loop ends otherwise).
static constexpr llvm::StringLiteral kForEachEnd = "  });\n";

void KernelEmitter::openLoop(int64_t count) {
  if (loopCount == count && loopEnd == kForEachEnd)
    return;
  closeLoop();
  body +=
      "  forEachElement(th, " + std::to_string(count) + ", [&](int64_t i) {\n";
  loopCount = count;
  loopEnd = kForEachEnd.str();
}

void KernelEmitter::closeLoop() {
  if (loopCount < 0)
    return;
  body += loopEnd;
  loopCount = -1;
  locals.clear();
}

void KernelEmitter::beginLaunch(Operation *op, int64_t elements, bool perRow) {
  closeLoop();
  if (steps++ > 0)
    done.push_back({std::move(body), stepElements, stepIsPerRow});
  body.clear();
  written.clear();
  stepElements = elements;
  stepIsPerRow = perRow;
}

void KernelEmitter::beginPart(Operation *op, int64_t elements, bool join) {
  if (!join || steps == 0 || stepIsPerRow) {
    beginLaunch(op, elements, /*perRow=*/false);
    return;
  }
  stepElements = std::max(stepElements, elements);
}

namespace {
/// Views: element i of the result is one element of the operand.
bool isView(Operation *op) {
  return isa<tg::BroadcastInDimOp, tg::TransposeOp, tg::SliceOp, tg::ReshapeOp,
             tg::PadOp, tg::ConcatOp>(op);
}
/// A view read at other indices recomputes the formula of its operand
/// there: at most this many ops, else the operand is stored.
constexpr int64_t kMaxRecomputed = 4;
} // namespace

bool KernelEmitter::needsMemory(Value value) {
  if (outputs.count(value))
    return true;
  for (auto &[copied, place] : finalCopies)
    if (copied == value)
      return true;
  for (Operation *user : value.getUsers()) {
    if (kElementwise.contains(user->getName().getStringRef()) ||
        isa<tg::ReshapeOp>(user))
      continue;
    if (isView(user) && getFormulaSize(value) <= kMaxRecomputed)
      continue;
    return true;
  }
  return false;
}

int64_t KernelEmitter::getFormulaSize(Value value) {
  if (bound.count(value))
    return 0;
  if (auto it = views.find(value); it != views.end())
    return getFormulaSize(it->second.source);
  if (auto it = pieces.find(value); it != pieces.end()) {
    int64_t size = 0;
    for (Value operand : it->second->getOperands())
      size += getFormulaSize(operand);
    return size;
  }
  auto it = formulas.find(value);
  if (it == formulas.end() || isa<tg::ConstantOp>(it->second))
    return 0;
  int64_t size = 1;
  for (Value operand : it->second->getOperands())
    size += getFormulaSize(operand);
  return size;
}

bool KernelEmitter::isReadable(Value value, bool same) {
  if (same && locals.count(value))
    return true;
  if (auto it = bound.find(value); it != bound.end()) {
    auto w = written.find(it->second.name);
    return w == written.end() || (same && w->second == Written::Pointwise);
  }
  if (auto it = views.find(value); it != views.end())
    return isReadable(it->second.source, same && it->second.identity);
  if (auto it = pieces.find(value); it != pieces.end())
    return llvm::all_of(it->second->getOperands(), [&](Value operand) {
      return isReadable(operand, /*same=*/false);
    });
  if (auto it = formulas.find(value); it != formulas.end())
    return llvm::all_of(it->second->getOperands(), [&](Value operand) {
      return isReadable(operand, same);
    });
  return false;
}

FailureOr<std::string> KernelEmitter::piece(Value value, Operation *op,
                                            const std::string &index) {
  FailureOr<StorageType> type =
      getStorageType(getElementType(value), op->getLoc());
  if (failed(type))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  auto local = [&](const std::string &text) {
    std::string name = "j" + std::to_string(counter++);
    body += "    const int64_t " + name + " = " + text + ";\n";
    return name;
  };
  if (auto pad = dyn_cast<tg::PadOp>(op)) {
    SmallVector<int64_t> step;
    for (int64_t interior : pad.getInterior())
      step.push_back(interior + 1);
    std::string source = local(
        "padSource(" + index + ", " + std::to_string(shape.size()) + ", " +
        formatDims(shape) + ", " +
        formatDims(
            cast<RankedTensorType>(pad.getOperand().getType()).getShape()) +
        ", " + formatDims(pad.getLow()) + ", " + formatDims(step) + ")");
    FailureOr<std::string> inside =
        element(pad.getOperand(), source, /*same=*/false);
    if (failed(inside))
      return failure();
    return "(" + source + " >= 0 ? " + *inside + " : " + type->computeType +
           "(0))";
  }
  // A concat: the operand whose range along the dimension holds the
  // index's position there, at the same outer and inner indices.
  auto concat = cast<tg::ConcatOp>(op);
  int64_t dim = concat.getDimension(), inner = 1;
  for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  std::string row = std::to_string(shape[dim] * inner);
  std::string outer = local("(" + index + ") / " + row);
  std::string at = local("(" + index + ") % " + row);
  std::string text;
  int64_t start = 0;
  unsigned count = concat.getNumOperands();
  for (auto [k, operand] : llvm::enumerate(concat.getOperands())) {
    int64_t extent =
        cast<RankedTensorType>(operand.getType()).getShape()[dim] * inner;
    std::string source = local(outer + " * " + std::to_string(extent) + " + " +
                               at + " - " + std::to_string(start));
    FailureOr<std::string> part = element(operand, source, /*same=*/false);
    if (failed(part))
      return failure();
    start += extent;
    text += k + 1 < count ? "(" + at + " < " + std::to_string(start) + " ? " +
                                *part + " : "
                          : *part + std::string(count - 1, ')');
  }
  return text;
}

std::string KernelEmitter::mapIndex(const View &view,
                                    const std::string &index) {
  std::string text = view.offset ? std::to_string(view.offset) : "";
  int64_t inner = 1;
  for (int64_t d = static_cast<int64_t>(view.shape.size()) - 1; d >= 0; --d) {
    if (view.strides[d] != 0 && view.shape[d] != 1) {
      std::string term = index;
      if (inner != 1)
        term = "(" + term + " / " + std::to_string(inner) + ")";
      if (d > 0)
        term = "(" + term + " % " + std::to_string(view.shape[d]) + ")";
      if (view.strides[d] != 1)
        term += " * " + std::to_string(view.strides[d]);
      text += (text.empty() ? "" : " + ") + term;
    }
    inner *= view.shape[d];
  }
  return text.empty() ? "0" : "(" + text + ")";
}

FailureOr<std::string>
KernelEmitter::element(Value value, const std::string &index, bool same) {
  if (same)
    if (auto it = locals.find(value); it != locals.end())
      return it->second;
  if (auto it = bound.find(value); it != bound.end())
    return "ld(" + it->second.name + "[" + index + "])";
  if (auto it = views.find(value); it != views.end()) {
    const View &view = it->second;
    if (view.identity)
      return element(view.source, index, same);
    // The source's index, once, in a local of the loop.
    std::string local = "j" + std::to_string(counter++);
    body +=
        "    const int64_t " + local + " = " + mapIndex(view, index) + ";\n";
    return element(view.source, local, /*same=*/false);
  }
  if (auto it = pieces.find(value); it != pieces.end())
    return piece(value, it->second, index);
  auto it = formulas.find(value);
  if (it == formulas.end())
    return emitError(value.getLoc())
           << "the CUDA emitter found no place for an operand";
  Operation *op = it->second;
  FailureOr<StorageType> type =
      getStorageType(getElementType(value), op->getLoc());
  FailureOr<std::string> text = formula(op, index, same);
  if (failed(type) || failed(text))
    return failure();
  // Rounded to the result's storage type, as the interpreter stores it.
  std::string rounded = "ld(st<" + type->cType + ">(" + *text + "))";
  if (!same)
    return rounded;
  std::string local = "t" + std::to_string(counter++);
  comment(op, "    ");
  body +=
      "    const " + type->computeType + " " + local + " = " + rounded + ";\n";
  locals[value] = local;
  return local;
}

/// Whether `text` names the variable `var` (v12, not v123).
static bool mentions(StringRef text, StringRef var) {
  for (size_t at = text.find(var); at != StringRef::npos;
       at = text.find(var, at + 1)) {
    size_t end = at + var.size();
    if (end == text.size() || !llvm::isDigit(text[end]))
      return true;
  }
  return false;
}

LogicalResult KernelEmitter::emitOp(Operation *op) {
  if (emitted.contains(op))
    return success();
  StringRef opName = op->getName().getStringRef();
  if (kElementwise.contains(opName))
    return emitElementwise(op);
  if (kShape.contains(opName))
    return emitShape(op);
  if (kCompound.contains(opName))
    return emitCompound(op);
  return op->emitError("the CUDA emitter has no lowering for ")
         << opName << " inside a kernel";
}

std::string KernelEmitter::finish(StringRef comment) {
  closeLoop();
  if (steps)
    done.push_back({std::move(body), stepElements, stepIsPerRow});
  // The results copied to their planned places, after every step.
  if (!finalCopies.empty()) {
    Step copies{"  // the results, to their planned places\n", 1, false};
    for (auto &[value, place] : finalCopies) {
      const Bound &source = bound[value];
      int64_t count = getNumElements(value);
      copies.text +=
          "  gather(th, " + source.name + ", reinterpret_cast<" +
          source.type.cType + " *>(" + (place.scratch ? "scratch" : "arena") +
          " + " + std::to_string(place.offset) + "), " + std::to_string(count) +
          ", 1, Dims{{" + std::to_string(count) + "}}, Dims{{1}}, 0);\n";
      copies.elements = std::max(copies.elements, count);
    }
    done.push_back(std::move(copies));
  }
  std::string text;
  for (auto [index, step] : llvm::enumerate(done)) {
    std::string kernel =
        done.size() == 1 ? name : name + "_s" + std::to_string(index);
    text += comment.str();
    if (done.size() > 1)
      text += "// step " + std::to_string(index + 1) + " of " +
              std::to_string(done.size()) + "\n";
    text += "__global__ void " + kernel + "(char *arena, char *scratch) {\n";
    // The arena and scratch are 256-byte aligned: with the planned offsets
    // the compiler knows each tensor's alignment and merges a thread's
    // chunk of elements into 128-bit loads and stores.
    text +=
        "  arena = alignedArena(arena);\n  scratch = alignedArena(scratch);\n"
        "  const Threads th = gridThreads();\n";
    for (auto &[var, declaration] : declarations)
      if (mentions(step.text, var))
        text += declaration;
    text += step.text + "}\n";
    if (index + 1 < done.size())
      text += "\n";
    launches.push_back(
        {kernel, std::max<int64_t>(step.elements, 1), step.perRow});
  }
  return text;
}
