//===- GlobalStep.cpp - a step run on global values -----------------------===//
//
// Resolves a partitioned function's mesh and the layouts of its arguments
// and results from their tg.sharding, splits the global arguments, runs the
// ranks and assembles the global results (of a pipelined function, from the
// devices of the stage that produces each).
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/GlobalStep.h"

#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Interpreter/Collectives.h"
#include "tgc/Interpreter/Inputs.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tgc;

static bool isShardOp(Operation *op) {
  return isa_and_nonnull<shard::ShardDialect>(op->getDialect());
}

static ModuleOp getModuleOf(FunctionOpInterface function) {
  if (auto module = dyn_cast<ModuleOp>(function.getOperation()))
    return module;
  return function->getParentOfType<ModuleOp>();
}

bool tgc::isPartitioned(FunctionOpInterface function) {
  if (ModuleOp module = getModuleOf(function))
    if (!module.getOps<shard::GridOp>().empty())
      return true;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (tg::getArgSharding(function, i))
      return true;
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    if (tg::getResultSharding(function, i))
      return true;
  return function
      ->walk([](Operation *op) {
        return isShardOp(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The grid `function` runs on: the one its shardings and collectives name,
/// else the module's only grid.
static FailureOr<StringRef> findGridName(FunctionOpInterface function) {
  llvm::SetVector<StringRef> names;
  auto note = [&](tg::ShardingAttr sharding) {
    if (sharding)
      names.insert(sharding.getMesh().getValue());
  };
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    note(tg::getArgSharding(function, i));
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    note(tg::getResultSharding(function, i));
  function->walk([&](Operation *op) {
    if (!isShardOp(op))
      return;
    if (auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid"))
      names.insert(grid.getValue());
  });
  if (names.size() > 1)
    return function.emitError("the simulated ranks run one grid; @")
           << function.getName() << " uses @" << names[0] << " and @"
           << names[1];
  if (names.size() == 1)
    return names[0];
  ModuleOp module = getModuleOf(function);
  SmallVector<shard::GridOp> grids;
  if (module)
    grids = llvm::to_vector(module.getOps<shard::GridOp>());
  if (grids.size() != 1)
    return function.emitError("a partitioned function runs on one "
                              "shard.grid; the module of @")
           << function.getName() << " has " << grids.size();
  return grids.front().getSymName();
}

/// The layout `sharding` (null: replicated) gives a tensor of `rank`
/// dimensions on `mesh`, or a located error on `function` naming `what`.
static FailureOr<ShardedLayout> getLayout(FunctionOpInterface function,
                                          const Twine &what, unsigned rank,
                                          tg::ShardingAttr sharding,
                                          const tg::Mesh &mesh) {
  ShardedLayout layout = ShardedLayout::getReplicated(rank);
  if (!sharding)
    return layout;
  if (sharding.getMesh().getValue() != mesh.name)
    return function.emitError()
           << what << " is sharded on @" << sharding.getMesh().getValue()
           << ", the function runs on @" << mesh.name;
  auto resolve = [&](StringRef axis) -> FailureOr<unsigned> {
    std::optional<unsigned> index = mesh.getAxisIndex(axis);
    if (!index)
      return function.emitError()
             << what << " is sharded on axis \"" << axis << "\", which mesh @"
             << mesh.name << " does not have";
    return *index;
  };
  for (unsigned dim = 0; dim < rank; ++dim)
    for (StringRef axis : sharding.getDimAxes(dim)) {
      FailureOr<unsigned> index = resolve(axis);
      if (failed(index))
        return failure();
      layout.dimAxes[dim].push_back(*index);
    }
  for (StringRef axis : sharding.getUnreducedAxes()) {
    FailureOr<unsigned> index = resolve(axis);
    if (failed(index))
      return failure();
    layout.unreducedAxes.push_back(*index);
  }
  return layout;
}

namespace {
/// How a caller's global value becomes a function's argument or result.
struct ResolvedValue {
  ShardedLayout layout;
  /// The caller's type.
  RankedTensorType globalType;
  /// The function's global type where it is padded (tg.unpadded_shape).
  RankedTensorType paddedType;
};
} // namespace

/// The layout and global type of the value `what` of `type` with
/// `sharding`; replicated, of `type` itself, without a mesh.
static FailureOr<ResolvedValue> resolveValue(FunctionOpInterface function,
                                             const std::string &what, Type type,
                                             tg::ShardingAttr sharding,
                                             DenseI64ArrayAttr unpadded,
                                             const tg::Mesh *mesh) {
  auto local = dyn_cast<RankedTensorType>(type);
  if (!local)
    return function.emitError() << what << " has type " << type
                                << ", which the interpreter cannot hold";
  ResolvedValue resolved{
      ShardedLayout::getReplicated(local.getRank()), local, {}};
  if (mesh) {
    FailureOr<ShardedLayout> layout =
        getLayout(function, what, local.getRank(), sharding, *mesh);
    if (failed(layout))
      return failure();
    ArrayRef<int64_t> meshShape = mesh->axisSizes;
    resolved.globalType =
        local.clone(layout->getGlobalShape(local.getShape(), meshShape));
    std::string error =
        layout->verify(resolved.globalType.getShape(), meshShape);
    if (!error.empty())
      return function.emitError() << what << ": " << error;
    resolved.layout = std::move(*layout);
  }
  std::string error;
  FailureOr<SmallVector<int64_t>> caller =
      tg::getCallerShape(resolved.globalType.getShape(), unpadded, error);
  if (failed(caller))
    return function.emitError() << what << ": " << error;
  if (*caller != resolved.globalType.getShape()) {
    resolved.paddedType = resolved.globalType;
    resolved.globalType = local.clone(*caller);
  }
  return resolved;
}

FailureOr<GlobalStepRunner>
GlobalStepRunner::create(FunctionOpInterface function,
                         InterpreterOptions options) {
  GlobalStepRunner runner(function, options);
  if (failed(Interpreter::checkCanRun(function)))
    return failure();
  std::optional<tg::Mesh> mesh;
  if (tgc::isPartitioned(function)) {
    FailureOr<StringRef> gridName = findGridName(function);
    if (failed(gridName))
      return failure();
    FailureOr<tg::Mesh> found = tg::Mesh::lookup(function, *gridName);
    if (failed(found))
      return failure();
    mesh = std::move(*found);
    // Every device's values live in this process: a mesh from a hostile
    // file (a grid of 2^31 devices) is an error, not an allocation.
    constexpr int64_t kMaxSimulatedDevices = 4096;
    int64_t devices = 1;
    for (int64_t size : mesh->axisSizes) {
      if (size < 1 || size > kMaxSimulatedDevices ||
          devices * size > kMaxSimulatedDevices)
        return function.emitError("the simulated ranks run at most ")
               << kMaxSimulatedDevices << " devices; the mesh @" << mesh->name
               << " is " << mesh->str();
      devices *= size;
    }
    runner.mesh = SimulatedMesh{mesh->name, mesh->axisSizes};
  }
  const tg::Mesh *meshOrNull = mesh ? &*mesh : nullptr;
  for (auto [i, type] : llvm::enumerate(function.getArgumentTypes())) {
    std::string what = "argument '" + getArgumentName(function, i) + "'";
    FailureOr<ResolvedValue> resolved =
        resolveValue(function, what, type, tg::getArgSharding(function, i),
                     tg::getArgUnpaddedShape(function, i), meshOrNull);
    if (failed(resolved))
      return failure();
    // A caller holds whole values: partial sums have no global value to
    // split.
    if (!resolved->layout.unreducedAxes.empty())
      return function.emitError()
             << what << " is unreduced; the simulated ranks take only "
             << "arguments whose global value can be split";
    runner.argumentLayouts.push_back(std::move(resolved->layout));
    runner.argumentTypes.push_back(resolved->globalType);
    runner.argumentPadded.push_back(resolved->paddedType);
  }
  for (auto [i, type] : llvm::enumerate(function.getResultTypes())) {
    std::string what = "result '" + getResultName(function, i) + "'";
    FailureOr<ResolvedValue> resolved =
        resolveValue(function, what, type, tg::getResultSharding(function, i),
                     tg::getResultUnpaddedShape(function, i), meshOrNull);
    if (failed(resolved))
      return failure();
    runner.resultLayouts.push_back(std::move(resolved->layout));
    runner.resultTypes.push_back(resolved->globalType);
    runner.resultPadded.push_back(resolved->paddedType);
  }
  if (!runner.mesh)
    return runner;
  if (failed(RankedInterpreter::checkCanRun(function, *runner.mesh)))
    return failure();
  FailureOr<std::optional<SimulatedPipeline>> pipeline =
      SimulatedPipeline::get(function, *runner.mesh);
  if (failed(pipeline))
    return failure();
  runner.pipeline = std::move(*pipeline);
  if (!runner.pipeline)
    return runner;
  // A result lives on the devices of one stage: one position on the
  // pipeline axis, which therefore cannot split it.
  Operation *terminator = function.getFunctionBody().front().getTerminator();
  for (auto [i, layout] : llvm::enumerate(runner.resultLayouts)) {
    if (llvm::any_of(layout.dimAxes,
                     [&](ArrayRef<unsigned> axes) {
                       return llvm::is_contained(axes,
                                                 runner.pipeline->getAxis());
                     }) ||
        llvm::is_contained(layout.unreducedAxes, runner.pipeline->getAxis()))
      return function.emitError()
             << "result '" << getResultName(function, i)
             << "' is sharded over the pipeline axis \""
             << runner.pipeline->getAxisName()
             << "\"; a result lives on the devices of one stage";
    runner.resultHolders.push_back(
        runner.pipeline->getHolder(terminator->getOperand(i)));
  }
  return runner;
}

FailureOr<SmallVector<Tensor>>
GlobalStepRunner::run(ArrayRef<Tensor> arguments) {
  if (arguments.size() != argumentTypes.size())
    return function.emitError("expected ")
           << argumentTypes.size() << " arguments, got " << arguments.size();
  for (auto [i, argument, type] : llvm::enumerate(arguments, argumentTypes))
    if (argument.getType() != type)
      return function.emitError("argument '")
             << getArgumentName(function, i) << "' has type "
             << argument.getType() << ", expected " << type;
  // What ZeRO or a padded vocabulary padded is padded with zeros on the way
  // in and cut on the way out (a copy of the arguments only then).
  SmallVector<Tensor> paddedArguments;
  if (llvm::any_of(argumentPadded, [](RankedTensorType type) { return type; }))
    for (auto [argument, padded] : llvm::zip_equal(arguments, argumentPadded))
      paddedArguments.push_back(
          padded ? resizeTensor(argument, padded.getShape()) : argument);
  ArrayRef<Tensor> inputs =
      paddedArguments.empty() ? arguments : ArrayRef<Tensor>(paddedArguments);
  auto cut = [&](SmallVector<Tensor> results) {
    for (auto [result, padded, type] :
         llvm::zip_equal(results, resultPadded, resultTypes))
      if (padded)
        result = resizeTensor(result, type.getShape());
    return results;
  };
  if (!mesh) {
    FailureOr<SmallVector<Tensor>> results =
        Interpreter(options).run(function, inputs);
    if (failed(results))
      return failure();
    return cut(std::move(*results));
  }

  int64_t numDevices = mesh->getNumDevices();
  SmallVector<SmallVector<Tensor>> local(numDevices);
  for (auto [argument, layout] : llvm::zip_equal(inputs, argumentLayouts))
    for (auto [device, block] :
         llvm::enumerate(splitTensor(argument, layout, mesh->shape)))
      local[device].push_back(std::move(block));
  paddedArguments.clear();
  FailureOr<SmallVector<SmallVector<Tensor>>> localResults =
      RankedInterpreter(options).run(function, *mesh, local);
  if (failed(localResults))
    return failure();
  local.clear();

  SmallVector<Tensor> results;
  for (auto [r, layout] : llvm::enumerate(resultLayouts)) {
    // The devices that hold the result: all of them, or in a pipelined
    // function those of its stage, a mesh whose pipeline axis has size 1.
    std::optional<int64_t> holder = pipeline ? resultHolders[r] : std::nullopt;
    SmallVector<int64_t> shape(mesh->shape);
    if (holder)
      shape[pipeline->getAxis()] = 1;
    SmallVector<Tensor> pieces;
    for (auto [device, deviceResults] : llvm::enumerate(*localResults))
      if (!holder || getDeviceCoordinates(
                         mesh->shape, device)[pipeline->getAxis()] == *holder)
        pieces.push_back(std::move(deviceResults[r]));
    llvm::Expected<Tensor> global =
        assembleTensor(pieces, layout, shape, options);
    if (!global)
      return function.emitError("internal error: on the simulated ranks of @")
             << mesh->gridName << ", result '" << getResultName(function, r)
             << "': " << llvm::toString(global.takeError());
    results.push_back(std::move(*global));
  }
  return cut(std::move(results));
}

FailureOr<SmallVector<Tensor>> tgc::runGlobalStep(FunctionOpInterface function,
                                                  ArrayRef<Tensor> arguments,
                                                  InterpreterOptions options) {
  FailureOr<GlobalStepRunner> runner =
      GlobalStepRunner::create(function, options);
  if (failed(runner))
    return failure();
  return runner->run(arguments);
}

FailureOr<SmallVector<RankedTensorType>>
tgc::getGlobalArgumentTypes(FunctionOpInterface function) {
  FailureOr<GlobalStepRunner> runner = GlobalStepRunner::create(function);
  if (failed(runner))
    return failure();
  return SmallVector<RankedTensorType>(runner->getArgumentTypes());
}
