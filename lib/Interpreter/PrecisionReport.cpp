//===- PrecisionReport.cpp - where f32 parts from exact arithmetic --------===//

#include "tgc/Interpreter/PrecisionReport.h"

#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Support/Diagnostics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace tgc;

/// How far `value` is from `reference` (PrecisionRecord's measures).
static double measureDifference(const Tensor &value, const Tensor &reference,
                                bool &isInteger) {
  int64_t count = value.getNumElements();
  isInteger = value.isIntStorage() && reference.isIntStorage();
  if (isInteger) {
    int64_t differ = 0;
    for (int64_t i = 0; i < count; ++i)
      differ += value.ints()[i] != reference.ints()[i];
    return count ? double(differ) / double(count) : 0.0;
  }
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double x = value.getAsDouble(i), y = reference.getAsDouble(i);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (x != y && !(std::isnan(x) && std::isnan(y)))
        return INFINITY;
      continue;
    }
    scale = std::max(scale, std::fabs(y));
    worst = std::max(worst, std::fabs(x - y));
  }
  return scale > 0 ? worst / scale : worst;
}

FailureOr<SmallVector<PrecisionRecord>>
tgc::measurePrecision(FunctionOpInterface function, ArrayRef<Tensor> arguments,
                      InterpreterOptions options) {
  if (isPartitioned(function))
    return function.emitError("--precision-report runs an unpartitioned "
                              "function; compile the model without --mesh");
  if (failed(Interpreter::checkCanRun(function)))
    return failure();
  ArrayRef<Type> types = function.getArgumentTypes();
  if (arguments.size() != types.size())
    return function.emitError("expected ")
           << types.size() << " arguments, got " << arguments.size();
  InterpreterOptions exact = options;
  exact.f64 = true;
  Interpreter low(options), high(exact);
  Block &block = function.getFunctionBody().front();
  // Each value in both runs, and its error, until its last use.
  llvm::DenseMap<Value, Tensor> lowValues, highValues;
  llvm::DenseMap<Value, double> errors;
  for (auto [value, argument, type] :
       llvm::zip(block.getArguments(), arguments, types)) {
    if (argument.getType() != type)
      return function.emitError("argument #")
             << value.getArgNumber() << " has type " << argument.getType()
             << ", expected " << type;
    lowValues[value] = convertTensor(argument, options);
    highValues[value] = convertTensor(argument, exact);
  }
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;

  SmallVector<PrecisionRecord> records;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      break;
    SmallVector<const Tensor *> lowOperands, highOperands;
    SmallVector<Tensor> promoted;
    double inputError = 0;
    for (Value operand : op.getOperands()) {
      auto lowIt = lowValues.find(operand), highIt = highValues.find(operand);
      if (lowIt == lowValues.end() || highIt == highValues.end())
        return op.emitError("the interpreter has no value for an operand "
                            "defined outside the block");
      lowOperands.push_back(&lowIt->second);
      highOperands.push_back(&highIt->second);
      promoted.push_back(convertTensor(lowIt->second, exact));
      inputError = std::max(inputError, errors.lookup(operand));
    }
    SmallVector<const Tensor *> promotedOperands;
    for (const Tensor &tensor : promoted)
      promotedOperands.push_back(&tensor);
    SmallVector<Tensor> lowResults, highResults, localResults;
    if (failed(low.runOp(&op, lowOperands, lowResults)) ||
        failed(high.runOp(&op, highOperands, highResults)) ||
        failed(high.runOp(&op, promotedOperands, localResults)))
      return failure();
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      PrecisionRecord record;
      record.op = &op;
      record.result = r;
      record.inputError = inputError;
      record.error =
          measureDifference(lowResults[r], highResults[r], record.isInteger);
      bool isInteger = false;
      record.localError =
          measureDifference(lowResults[r], localResults[r], isInteger);
      records.push_back(record);
      if (result.use_empty())
        continue;
      errors[result] = record.error;
      lowValues[result] = std::move(lowResults[r]);
      highValues[result] = std::move(highResults[r]);
    }
    // (The terminator's operands stay: their last use is never run.)
    for (Value operand : op.getOperands())
      if (lastUse.lookup(operand) == &op) {
        lowValues.erase(operand);
        highValues.erase(operand);
      }
  }
  return records;
}

static std::string formatError(double value) {
  if (std::isinf(value))
    return "inf";
  return value == 0 ? "0" : llvm::formatv("{0:e1}", value).str();
}

void tgc::printPrecisionReport(raw_ostream &os, FunctionOpInterface function,
                               ArrayRef<PrecisionRecord> records,
                               unsigned count) {
  os << "precision of @" << function.getName()
     << " against f64, op by op: the results that part most from f64 "
        "beyond their operands\n"
     << "(error: the largest difference relative to the largest magnitude; "
        "inputs: the operands' largest error;\n local: the op's own, its "
        "operands taken as exact; [ids]: an integer result, its errors the "
        "fraction of elements that differ)\n";
  SmallVector<size_t> order(records.size());
  std::iota(order.begin(), order.end(), 0);
  auto growth = [&](size_t i) {
    return records[i].error - records[i].inputError;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return growth(a) > growth(b); });
  order.resize(std::min<size_t>(order.size(), count));
  llvm::erase_if(order, [&](size_t i) { return !(growth(i) > 0); });
  std::sort(order.begin(), order.end());
  // The op's number in the body, as the table names it.
  llvm::DenseMap<Operation *, unsigned> numbers;
  for (Operation &op : function.getFunctionBody().front())
    numbers[&op] = numbers.size();
  os << llvm::format("  %-5s %-28s %-12s %-12s %-12s %s\n", "#", "op", "error",
                     "inputs", "local", "at");
  for (size_t i : order) {
    const PrecisionRecord &record = records[i];
    std::string name = record.op->getName().getStringRef().str();
    if (record.op->getNumResults() > 1)
      name += " #" + std::to_string(record.result);
    if (record.isInteger)
      name += " [ids]";
    os << llvm::format("  %-5u %-28s %-12s %-12s %-12s %s\n",
                       numbers.lookup(record.op), name.c_str(),
                       formatError(record.error).c_str(),
                       formatError(record.inputError).c_str(),
                       formatError(record.localError).c_str(),
                       describeLocation(record.op->getLoc()).c_str());
  }
  if (order.empty())
    os << "  (none: every result equals f64's)\n";
  os << "results:\n";
  Operation *terminator = function.getFunctionBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    const PrecisionRecord *found = nullptr;
    if (auto result = dyn_cast<OpResult>(value))
      for (const PrecisionRecord &record : records)
        if (record.op == result.getOwner() &&
            record.result == result.getResultNumber())
          found = &record;
    os << "  " << getResultName(function, i) << ": error "
       << formatError(found ? found->error : 0)
       << (found && found->isInteger ? " [ids]" : "") << "\n";
  }
}
