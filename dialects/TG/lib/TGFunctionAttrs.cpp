//===- TGFunctionAttrs.cpp - verification of tg.role/tg.name/tg.aliases --===//
//
// The function conventions of a training step: what each argument and result
// is (`tg.role`), its stable name (`tg.name`), and which argument a result
// updates in place (`tg.aliases`).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc::tg;

// In the order the verifier lists them.
static constexpr Role kArgumentRoles[] = {Role::Param, Role::State, Role::Input,
                                          Role::Label, Role::Hyper};
static constexpr Role kResultRoles[] = {Role::Loss, Role::Grad, Role::Param,
                                        Role::State, Role::Output};

bool tgc::tg::isArgumentRole(Role role) {
  return llvm::is_contained(kArgumentRoles, role);
}

bool tgc::tg::isResultRole(Role role) {
  return llvm::is_contained(kResultRoles, role);
}

static std::optional<Role> symbolizeRoleAttr(StringAttr role) {
  return role ? symbolizeRole(role.getValue()) : std::nullopt;
}

std::optional<Role> tgc::tg::getArgumentRole(FunctionOpInterface function,
                                             unsigned index) {
  return symbolizeRoleAttr(
      function.getArgAttrOfType<StringAttr>(index, TGDialect::kRoleAttrName));
}

bool tgc::tg::isModelValue(FunctionOpInterface function, unsigned index) {
  std::optional<Role> role = getArgumentRole(function, index);
  return role == Role::Param ||
         (role == Role::State &&
          function.getArgAttr(index, TGDialect::kBufferAttrName));
}

std::optional<Role> tgc::tg::getResultRole(FunctionOpInterface function,
                                           unsigned index) {
  return symbolizeRoleAttr(function.getResultAttrOfType<StringAttr>(
      index, TGDialect::kRoleAttrName));
}

std::optional<Role> tgc::tg::getRole(DictionaryAttr attrs) {
  return attrs ? symbolizeRoleAttr(
                     attrs.getAs<StringAttr>(TGDialect::kRoleAttrName))
               : std::nullopt;
}

/// The value of `tg.role = role`: its spelling, as the textual IR has it.
static StringAttr getRoleValue(MLIRContext *context, Role role) {
  return StringAttr::get(context, stringifyRole(role));
}

NamedAttribute tgc::tg::getRoleAttr(Builder &builder, Role role) {
  return builder.getNamedAttr(TGDialect::kRoleAttrName,
                              getRoleValue(builder.getContext(), role));
}

void tgc::tg::setArgumentRole(FunctionOpInterface function, unsigned index,
                              Role role) {
  function.setArgAttr(index, TGDialect::kRoleAttrName,
                      getRoleValue(function.getContext(), role));
}

void tgc::tg::setResultRole(FunctionOpInterface function, unsigned index,
                            Role role) {
  function.setResultAttr(index, TGDialect::kRoleAttrName,
                         getRoleValue(function.getContext(), role));
}

/// Where to report a problem with argument `index`: its own location when
/// the function has a body, else the function.
static InFlightDiagnostic emitArgumentError(FunctionOpInterface func,
                                            unsigned index) {
  // The attributes are verified before the entry block is checked against
  // the function type, so the block may have fewer arguments than the type.
  if (!func.isExternal() && index < func.getFunctionBody().getNumArguments())
    return emitError(func.getArgument(index).getLoc())
           << "argument #" << index << " of '" << func.getName() << "': ";
  return func.emitError() << "argument #" << index << ": ";
}

static InFlightDiagnostic emitResultError(FunctionOpInterface func,
                                          unsigned index) {
  return func.emitError() << "result #" << index << ": ";
}

/// The attribute dictionary of entry `index` of a function's argument or
/// result attributes (`attrs`, null when no entry has any), or null.
static DictionaryAttr getEntry(ArrayAttr attrs, unsigned index) {
  if (!attrs || index >= attrs.size())
    return {};
  return dyn_cast<DictionaryAttr>(attrs[index]);
}

/// Whether `index` is the first entry of `attrs` that carries `name`. The
/// checks that compare entries with each other (a name or an aliased argument
/// used twice) run there, once per function and over all entries with a map:
/// checking every entry against the earlier ones was quadratic in the number
/// of arguments (llama 70b's step has 2,173 of them).
static bool isFirstWith(ArrayAttr attrs, unsigned index, StringRef name) {
  for (unsigned other = 0; other < index; ++other)
    if (DictionaryAttr entry = getEntry(attrs, other); entry && entry.get(name))
      return false;
  return true;
}

/// Checks a `tg.role` value against the allowed roles; returns the role.
static FailureOr<Role> verifyRole(Attribute value, ArrayRef<Role> roles,
                                  function_ref<InFlightDiagnostic()> emit) {
  auto name = dyn_cast<StringAttr>(value);
  if (!name)
    return emit() << "'tg.role' must be a string, got " << value;
  std::optional<Role> role = symbolizeRole(name.getValue());
  if (role && llvm::is_contained(roles, *role))
    return *role;
  InFlightDiagnostic diag = emit() << "unknown role '" << name.getValue()
                                   << "'; expected one of ";
  llvm::interleaveComma(
      roles, diag, [&](Role r) { diag << "'" << stringifyRole(r) << "'"; });
  return diag;
}

/// Checks a `tg.name` value; at the first named entry, that no two entries
/// share a name (reported at the later one).
static LogicalResult
verifyName(Attribute value, unsigned index, ArrayAttr all, StringRef kind,
           function_ref<InFlightDiagnostic(unsigned)> emitAt) {
  auto name = dyn_cast<StringAttr>(value);
  if (!name || name.getValue().empty())
    return emitAt(index) << "'tg.name' must be a non-empty string, got "
                         << value;
  if (!isFirstWith(all, index, TGDialect::kNameAttrName))
    return success();
  DenseMap<StringAttr, unsigned> firstOf;
  for (unsigned other = index; other < all.size(); ++other) {
    DictionaryAttr entry = getEntry(all, other);
    auto otherName =
        entry ? entry.getAs<StringAttr>(TGDialect::kNameAttrName) : nullptr;
    if (!otherName || otherName.getValue().empty())
      continue;
    auto [it, inserted] = firstOf.try_emplace(otherName, other);
    if (!inserted)
      return emitAt(other) << "'tg.name' \"" << otherName.getValue()
                           << "\" is already the name of " << kind << " #"
                           << it->second;
  }
  return success();
}

/// A byte offset or size of the memory plan, a stage or a micro-batch: a
/// non-negative integer.
static bool isNonNegativeInteger(Attribute value) {
  auto integer = dyn_cast<IntegerAttr>(value);
  return integer && !integer.getType().isInteger(1) && integer.getInt() >= 0;
}

/// Checks the `tg.pipeline_stages` of a pipelined function: a dictionary of the
/// fields docs/pipeline.md lists, each optional.
static LogicalResult verifyPipeline(Operation *op, Attribute value) {
  auto pipeline = dyn_cast<DictionaryAttr>(value);
  if (!pipeline)
    return op->emitError() << "'" << TGDialect::kPipelineStagesAttrName
                           << "' on a function must be a dictionary (axis, "
                              "stages, virtual_stages, micro_batches, "
                              "schedule), got "
                           << value;
  for (NamedAttribute field : pipeline) {
    StringRef key = field.getName().getValue();
    Attribute entry = field.getValue();
    auto emit = [&] {
      return op->emitError()
             << "'" << TGDialect::kPipelineStagesAttrName << "' " << key << " ";
    };
    if (key == "axis") {
      if (!isa<StringAttr>(entry))
        return emit() << "must be a mesh axis name, got " << entry;
    } else if (key == "stages" || key == "virtual_stages" ||
               key == "micro_batches") {
      auto count = dyn_cast<IntegerAttr>(entry);
      if (!count || count.getType().isInteger(1) || count.getInt() < 1)
        return emit() << "must be a positive integer, got " << entry;
    } else if (key == "schedule") {
      auto schedule = dyn_cast<StringAttr>(entry);
      if (!schedule || !tgc::symbolizePipelineScheduleKind(schedule.getValue()))
        return emit() << "must be \"gpipe\", \"1f1b\" or \"interleaved\", got "
                      << entry;
    } else {
      return op->emitError()
             << "'" << TGDialect::kPipelineStagesAttrName << "' has no field '"
             << key
             << "' (axis, stages, virtual_stages, micro_batches, schedule)";
    }
  }
  return success();
}

/// Checks a `#tg.sharding` of a value of `type`: its rank, and that its mesh
/// is a `shard.grid` with named axes holding every axis it names.
static LogicalResult verifySharding(Operation *anchor, Attribute value,
                                    Type type,
                                    function_ref<InFlightDiagnostic()> emit) {
  auto sharding = dyn_cast<ShardingAttr>(value);
  if (!sharding)
    return emit() << "'" << kShardingAttrName
                  << "' must be a #tg.sharding, got " << value;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != sharding.getRank())
    return emit() << "sharding " << sharding << " has " << sharding.getRank()
                  << " dimension(s), the value's type is " << type;
  FailureOr<Mesh> mesh = Mesh::lookup(anchor, sharding.getMesh().getValue());
  if (failed(mesh))
    return failure();
  for (StringRef axis : sharding.getUsedAxes())
    if (!mesh->getAxisIndex(axis))
      return emit() << "sharding " << sharding << " names axis \"" << axis
                    << "\", which mesh " << mesh->str() << " does not have";
  return success();
}

LogicalResult TGDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  // The memory plan of tg-memory-plan.
  if (name == kOffsetsAttrName) {
    auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
    if (!offsets ||
        offsets.size() != static_cast<int64_t>(op->getNumResults()) ||
        llvm::any_of(offsets.asArrayRef(), [](int64_t o) { return o < 0; }))
      return op->emitError() << "'tg.offsets' must be an array<i64> of one "
                                "non-negative offset per result ("
                             << op->getNumResults() << "), got " << value;
    return success();
  }
  if (name == kWorkspaceOffsetAttrName) {
    if (!isNonNegativeInteger(value))
      return op->emitError()
             << "'" << name << "' must be a non-negative integer, got "
             << value;
    return success();
  }
  if (name == kArenaSizeAttrName || name == kGemmWorkspaceOffsetAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name << "' belongs on a function";
    if (!isNonNegativeInteger(value))
      return op->emitError()
             << "'" << name << "' must be a non-negative integer, got "
             << value;
    return success();
  }
  if (name == kPipelineStagesAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << name << "' belongs on a function";
    return verifyPipeline(op, value);
  }
  if (name == kStageAttrName || name == kMicroBatchAttrName) {
    if (!isNonNegativeInteger(value))
      return op->emitError()
             << "'" << name << "' must be a non-negative integer, got "
             << value;
    return success();
  }
  if (name == kBackwardAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError()
             << "'" << name << "' must be a unit attribute, got " << value;
    return success();
  }
  if (name == kDeviceAttrName || name == kPipelineAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name << "' belongs on the module";
    if (name == kDeviceAttrName ? !isa<DictionaryAttr>(value)
                                : !isa<StringAttr>(value))
      return op->emitError()
             << "'" << name << "' must be a "
             << (name == kDeviceAttrName ? "dictionary of device fields"
                                         : "string (a pass pipeline)")
             << ", got " << value;
    return success();
  }
  if (name == kShardingsAttrName) {
    auto shardings = dyn_cast<ArrayAttr>(value);
    if (!shardings || shardings.size() != op->getNumResults())
      return op->emitError()
             << "'" << name << "' must hold one #tg.sharding per result ("
             << op->getNumResults() << "), got " << value;
    for (auto [sharding, type] : llvm::zip(shardings, op->getResultTypes()))
      if (failed(verifySharding(op, sharding, type,
                                [&] { return op->emitError(); })))
        return failure();
    return success();
  }
  if (name == kShardingPrioritiesAttrName) {
    auto priorities = dyn_cast<DenseI64ArrayAttr>(value);
    if (!priorities ||
        priorities.size() != static_cast<int64_t>(op->getNumResults()) ||
        llvm::any_of(priorities.asArrayRef(), [](int64_t p) { return p < -1; }))
      return op->emitError()
             << "'" << name << "' must hold one priority (>= -1) per result ("
             << op->getNumResults() << "), got " << value;
    return success();
  }
  if (name == kVocabParallelAttrName) {
    if (!isa<EmbeddingOp>(op) || !isa<UnitAttr>(value))
      return op->emitError()
             << "'" << name << "' is a unit attribute of tg.embedding";
    return success();
  }
  if (name == kIdBoundAttrName) {
    auto bound = dyn_cast<IntegerAttr>(value);
    if (!isa<SubOp, EmbeddingOp, CrossEntropyOp, CrossEntropyGradOp>(op) ||
        !bound || bound.getType().isIndex() || bound.getInt() <= 0)
      return op->emitError()
             << "'" << name
             << "' is a positive integer on a tg.sub, tg.embedding, "
                "tg.cross_entropy or tg.cross_entropy_grad";
    return success();
  }
  if (name == kUnpaddedRandomShapeAttrName) {
    auto shape = dyn_cast<DenseI64ArrayAttr>(value);
    auto random = dyn_cast<CounterRandomOpInterface>(op);
    if (!shape || !random || !random.drawsRandom())
      return op->emitError() << "'" << name
                             << "' is an array of sizes on an op that draws "
                                "random numbers";
    SmallVector<int64_t> numbers = random.getRandomShape();
    if (shape.size() != static_cast<int64_t>(numbers.size()) ||
        llvm::any_of(llvm::zip(shape.asArrayRef(), numbers), [](auto pair) {
          return std::get<0>(pair) < 1 || std::get<0>(pair) > std::get<1>(pair);
        }))
      return op->emitError()
             << "'" << name << "' must have a size from 1 to the numbers' "
             << "for each of their " << numbers.size() << " dimensions";
    return success();
  }
  if (name == kMeshAxesAttrName) {
    auto grid = dyn_cast<shard::GridOp>(op);
    auto names = dyn_cast<ArrayAttr>(value);
    if (!grid || !names ||
        static_cast<int64_t>(names.size()) != grid.getRank() ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError()
             << "'" << name
             << "' belongs on a shard.grid: one axis name per grid dimension";
    return success();
  }
  // Catching unknown tg attributes keeps a misplaced role or name from being
  // silently ignored.
  InFlightDiagnostic diag = op->emitError() << "unknown attribute '" << name
                                            << "' on an operation";
  if (name == kRoleAttrName || name == kNameAttrName ||
      name == kAliasesAttrName || name == kOffsetAttrName)
    diag << "; it belongs on function arguments and results";
  return diag;
}

/// Checks a `tg.unpadded_shape` of a value of `type`: one positive size per
/// dimension. (Whether it fits the global shape is checked where a mesh
/// gives the global shape: tgc::tg::getCallerShape.)
static LogicalResult
verifyUnpaddedShape(Attribute value, Type type,
                    function_ref<InFlightDiagnostic()> emit) {
  auto shape = dyn_cast<DenseI64ArrayAttr>(value);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!shape || !tensor || shape.size() != tensor.getRank() ||
      llvm::any_of(shape.asArrayRef(), [](int64_t size) { return size < 1; }))
    return emit() << "'" << kUnpaddedShapeAttrName
                  << "' must be an array<i64> of one positive size per "
                     "dimension of "
                  << type << ", got " << value;
  return success();
}

LogicalResult TGDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attribute) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attribute.getName().getValue()
                           << "' is only valid on function arguments";
  auto emit = [&] { return emitArgumentError(func, argIndex); };
  StringRef name = attribute.getName().getValue();
  if (name == kRoleAttrName)
    return verifyRole(attribute.getValue(), kArgumentRoles, emit);
  if (name == kNameAttrName)
    return verifyName(
        attribute.getValue(), argIndex, func.getArgAttrsAttr(), "argument",
        [&](unsigned index) { return emitArgumentError(func, index); });
  if (name == kAliasesAttrName)
    return emit() << "'tg.aliases' belongs on a result, naming the argument "
                     "it updates";
  if (name == kDefaultAttrName) {
    auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex]);
    Attribute value = attribute.getValue();
    bool matches =
        type && type.getRank() == 0 &&
        ((isa<FloatType>(type.getElementType()) && isa<FloatAttr>(value)) ||
         (isa<IntegerType>(type.getElementType()) && isa<IntegerAttr>(value)));
    if (!matches)
      return emit() << "'tg.default' must be a value of the argument's "
                       "element type on a scalar argument, got "
                    << value << " for " << func.getArgumentTypes()[argIndex];
    return success();
  }
  if (name == kOffsetAttrName) {
    if (!isNonNegativeInteger(attribute.getValue()))
      return emit() << "'tg.offset' must be a non-negative integer, got "
                    << attribute.getValue();
    return success();
  }
  if (name == kShardingAttrName)
    return verifySharding(op, attribute.getValue(),
                          func.getArgumentTypes()[argIndex], emit);
  if (name == kUnpaddedShapeAttrName)
    return verifyUnpaddedShape(attribute.getValue(),
                               func.getArgumentTypes()[argIndex], emit);
  if (name == kInitAttrName) {
    auto init = dyn_cast<StringAttr>(attribute.getValue());
    if (!init ||
        !llvm::is_contained({"normal", "zeros", "ones"}, init.getValue()))
      return emit() << "'tg.init' must be \"normal\", \"zeros\" or "
                       "\"ones\", got "
                    << attribute.getValue();
    if (!isa<FloatType>(
            getElementTypeOrSelf(func.getArgumentTypes()[argIndex])))
      return emit() << "'tg.init' is for float arguments";
    return success();
  }
  if (name == kFrozenAttrName) {
    if (!isa<UnitAttr>(attribute.getValue()))
      return emit() << "'tg.frozen' is a unit attribute, got "
                    << attribute.getValue();
    if (getArgumentRole(func, argIndex) != Role::Param)
      return emit() << "'tg.frozen' is for 'param' arguments";
    return success();
  }
  if (name == kBufferAttrName) {
    if (!isa<UnitAttr>(attribute.getValue()))
      return emit() << "'tg.buffer' is a unit attribute, got "
                    << attribute.getValue();
    if (getArgumentRole(func, argIndex) != Role::State)
      return emit() << "'tg.buffer' is for 'state' arguments";
    return success();
  }
  return emit() << "unknown argument attribute '" << name << "'";
}

namespace {
/// What is wrong with a `tg.aliases` value, if anything.
enum class AliasProblem {
  None,
  NotAnIndex,
  OutOfRange,
  TypeMismatch,
  NotState
};
} // namespace

/// Whether result `index` may alias argument `value` on its own (the checks
/// that compare results with each other aside).
static AliasProblem getAliasProblem(FunctionOpInterface func, unsigned index,
                                    Attribute value) {
  // An index (any integer type but i1, whose `true` would read as -1).
  auto target = dyn_cast<IntegerAttr>(value);
  if (!target || !(target.getType().isIndex() ||
                   (target.getType().isSignlessInteger() &&
                    target.getType().getIntOrFloatBitWidth() > 1)))
    return AliasProblem::NotAnIndex;
  int64_t arg = target.getInt();
  if (arg < 0 || arg >= static_cast<int64_t>(func.getNumArguments()))
    return AliasProblem::OutOfRange;
  if (func.getArgumentTypes()[arg] != func.getResultTypes()[index])
    return AliasProblem::TypeMismatch;
  std::optional<Role> role = getArgumentRole(func, arg);
  if (role != Role::Param && role != Role::State)
    return AliasProblem::NotState;
  return AliasProblem::None;
}

/// Checks that result `index` may alias argument `value`; at the first
/// aliasing result, that no argument is aliased twice (reported at the later
/// result).
static LogicalResult verifyAliases(FunctionOpInterface func, unsigned index,
                                   Attribute value,
                                   function_ref<InFlightDiagnostic()> emit) {
  AliasProblem problem = getAliasProblem(func, index, value);
  if (problem == AliasProblem::NotAnIndex)
    return emit() << "'tg.aliases' must be an integer argument index, got "
                  << value;
  int64_t arg = cast<IntegerAttr>(value).getInt();
  if (problem == AliasProblem::OutOfRange)
    return emit() << "'tg.aliases' = " << arg
                  << " is not an argument index (the "
                  << "function has " << func.getNumArguments()
                  << " argument(s))";
  if (problem == AliasProblem::TypeMismatch)
    return emit() << "aliases argument #" << arg << " of type "
                  << func.getArgumentTypes()[arg] << ", but has type "
                  << func.getResultTypes()[index];
  if (problem == AliasProblem::NotState)
    return emit() << "aliases argument #" << arg
                  << ", which is not a 'param' or 'state'";
  ArrayAttr all = func.getResAttrsAttr();
  if (!isFirstWith(all, index, TGDialect::kAliasesAttrName))
    return success();
  // Compare indices, not attributes: `0 : i32` and `0 : i64` are the same.
  // A result that is wrong on its own is reported by its own check.
  DenseMap<int64_t, unsigned> firstOf;
  for (unsigned other = index; other < all.size(); ++other) {
    DictionaryAttr entry = getEntry(all, other);
    Attribute alias =
        entry ? entry.get(TGDialect::kAliasesAttrName) : Attribute();
    if (!alias || getAliasProblem(func, other, alias) != AliasProblem::None)
      continue;
    int64_t otherArg = cast<IntegerAttr>(alias).getValue().getSExtValue();
    auto [it, inserted] = firstOf.try_emplace(otherArg, other);
    if (!inserted)
      return emitResultError(func, other)
             << "argument #" << otherArg << " is already aliased by result #"
             << it->second;
  }
  return success();
}

LogicalResult TGDialect::verifyRegionResultAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned resultIndex,
                                                     NamedAttribute attribute) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attribute.getName().getValue()
                           << "' is only valid on function results";
  auto emit = [&] { return emitResultError(func, resultIndex); };
  StringRef name = attribute.getName().getValue();
  ArrayAttr resultAttrs = func.getResAttrsAttr();
  if (name == kRoleAttrName) {
    FailureOr<Role> role = verifyRole(attribute.getValue(), kResultRoles, emit);
    if (failed(role))
      return failure();
    if (*role != Role::Loss)
      return success();
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[resultIndex]);
    if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      return emit() << "the loss must be a floating-point scalar tensor, got "
                    << func.getResultTypes()[resultIndex];
    for (unsigned other = 0; other < resultIndex; ++other)
      if (getRole(getEntry(resultAttrs, other)) == Role::Loss)
        return emit() << "result #" << other
                      << " is already the loss; a step has one loss";
    return success();
  }
  if (name == kNameAttrName)
    return verifyName(
        attribute.getValue(), resultIndex, resultAttrs, "result",
        [&](unsigned index) { return emitResultError(func, index); });
  if (name == kAliasesAttrName)
    return verifyAliases(func, resultIndex, attribute.getValue(), emit);
  if (name == kShardingAttrName)
    return verifySharding(op, attribute.getValue(),
                          func.getResultTypes()[resultIndex], emit);
  if (name == kUnpaddedShapeAttrName)
    return verifyUnpaddedShape(attribute.getValue(),
                               func.getResultTypes()[resultIndex], emit);
  return emit() << "unknown result attribute '" << name << "'";
}
