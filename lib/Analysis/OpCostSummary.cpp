//===- OpCostSummary.cpp - per-function totals of op costs ---------------===//

#include "tgc/Analysis/OpCostSummary.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/CostModel.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

FunctionCostSummary FunctionCostSummary::compute(Operation *function) {
  FunctionCostSummary summary;
  if (auto symbol = dyn_cast<SymbolOpInterface>(function))
    summary.functionName = symbol.getName().str();
  llvm::StringMap<size_t> indexOf, collectiveIndexOf;
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function)
      return WalkResult::advance();
    if (FailureOr<CollectiveShape> shape = getCollectiveShape(op);
        succeeded(shape)) {
      StringRef name = op->getName().getStringRef();
      auto [it, inserted] =
          collectiveIndexOf.try_emplace(name, summary.collectives.size());
      if (inserted)
        summary.collectives.push_back({name.str()});
      CollectiveKindTraffic &kind = summary.collectives[it->second];
      ++kind.count;
      kind.bytesPerDevice += getCollectiveBytesPerDevice(
          shape->kind, shape->groupSize, shape->bytes);
      return WalkResult::advance();
    }
    auto costed = dyn_cast<tg::CostOpInterface>(op);
    if (!costed)
      return WalkResult::advance();
    StringRef name = op->getName().getStringRef();
    auto [it, inserted] = indexOf.try_emplace(name, summary.kinds.size());
    if (inserted)
      summary.kinds.push_back({name.str(), 0, {}});
    OpKindCost &kind = summary.kinds[it->second];
    tg::OpCost cost = getPlacedCost(costed);
    ++kind.count;
    kind.cost += cost;
    summary.total += cost;
    ++summary.numOps;
    // A fusion's cost already covers its body.
    return op->getNumRegions() ? WalkResult::skip() : WalkResult::advance();
  });
  return summary;
}

std::vector<FunctionCostSummary> tgc::summarizeModuleCosts(ModuleOp module) {
  std::vector<FunctionCostSummary> summaries;
  for (auto function : module.getOps<FunctionOpInterface>())
    summaries.push_back(FunctionCostSummary::compute(function));
  return summaries;
}

/// 1234567 -> "1.23M": three significant digits with an SI suffix.
static std::string formatQuantity(int64_t value) {
  static const char *suffixes[] = {"", "K", "M", "G", "T", "P", "E"};
  double scaled = static_cast<double>(value);
  int index = 0;
  while (std::abs(scaled) >= 1000.0 && index < 6) {
    scaled /= 1000.0;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (index == 0)
    os << value;
  else
    os << llvm::format(scaled >= 100  ? "%.0f%s"
                       : scaled >= 10 ? "%.1f%s"
                                      : "%.2f%s",
                       scaled, suffixes[index]);
  return text;
}

void tgc::printCostTables(llvm::raw_ostream &os,
                          ArrayRef<FunctionCostSummary> summaries) {
  for (const FunctionCostSummary &summary : summaries) {
    os << "function @" << summary.functionName << " (" << summary.numOps
       << " ops)\n";
    os << llvm::format("  %-22s %7s %12s %12s %12s %12s %21s\n", "op", "count",
                       "FLOPs", "transc.", "bytes read", "bytes written",
                       "exact FLOPs");
    auto printRow = [&](StringRef name, int64_t count, const tg::OpCost &c) {
      os << llvm::format("  %-22s %7lld %12s %12s %12s %12s %21lld\n",
                         name.str().c_str(), static_cast<long long>(count),
                         formatQuantity(c.flops).c_str(),
                         formatQuantity(c.transcendentals).c_str(),
                         formatQuantity(c.bytesRead).c_str(),
                         formatQuantity(c.bytesWritten).c_str(),
                         static_cast<long long>(c.flops));
    };
    for (const OpKindCost &kind : summary.kinds)
      printRow(kind.opName, kind.count, kind.cost);
    printRow("total", summary.numOps, summary.total);
    if (summary.collectives.empty())
      continue;
    os << llvm::format("  %-22s %7s %12s %21s\n", "collective", "count",
                       "sent/device", "exact bytes/device");
    for (const CollectiveKindTraffic &kind : summary.collectives)
      os << llvm::format("  %-22s %7lld %12s %21lld\n", kind.opName.c_str(),
                         static_cast<long long>(kind.count),
                         formatQuantity(kind.bytesPerDevice).c_str(),
                         static_cast<long long>(kind.bytesPerDevice));
  }
}

static nlohmann::json costToJson(const tg::OpCost &cost) {
  return {{"flops", cost.flops},
          {"transcendentals", cost.transcendentals},
          {"integer_ops", cost.integerOps},
          {"bytes_read", cost.bytesRead},
          {"bytes_written", cost.bytesWritten}};
}

nlohmann::json
tgc::costSummariesToJson(ArrayRef<FunctionCostSummary> summaries) {
  nlohmann::json functions = nlohmann::json::array();
  for (const FunctionCostSummary &summary : summaries) {
    nlohmann::json ops = nlohmann::json::array();
    for (const OpKindCost &kind : summary.kinds) {
      nlohmann::json entry = costToJson(kind.cost);
      entry["op"] = kind.opName;
      entry["count"] = kind.count;
      ops.push_back(std::move(entry));
    }
    nlohmann::json total = costToJson(summary.total);
    total["count"] = summary.numOps;
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveKindTraffic &kind : summary.collectives)
      collectives.push_back({{"op", kind.opName},
                             {"count", kind.count},
                             {"bytes_per_device", kind.bytesPerDevice}});
    nlohmann::json function = {
        {"name", summary.functionName}, {"ops", ops}, {"total", total}};
    // Only a partitioned step has collectives.
    if (!collectives.empty())
      function["collectives"] = std::move(collectives);
    functions.push_back(std::move(function));
  }
  return {{"functions", functions}};
}
