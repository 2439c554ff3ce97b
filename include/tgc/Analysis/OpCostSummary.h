//===- OpCostSummary.h - per-function totals of op costs -------*- C++ -*-===//
//
// Sums CostOpInterface over the ops of each function, by op name, for
// `tgc report` and for anyone who wants the FLOPs and bytes of a step; the
// shard collectives of a partitioned step are their own category, with the
// bytes each device sends.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_OPCOSTSUMMARY_H
#define TGC_ANALYSIS_OPCOSTSUMMARY_H

#include "tgc/Dialect/TG/TGInterfaces.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tgc {

/// The total cost of the ops of one name in one function.
struct OpKindCost {
  std::string opName;
  int64_t count = 0;
  tg::OpCost cost;
};

/// The collectives of one kind in one function.
struct CollectiveKindTraffic {
  std::string opName;
  int64_t count = 0;
  /// Bytes each device sends (getCollectiveBytesPerDevice).
  int64_t bytesPerDevice = 0;
};

/// The costs of one function's ops, grouped by op name, in order of first
/// appearance. Ops nested in a fusion region are counted in the fusion only.
struct FunctionCostSummary {
  std::string functionName;
  std::vector<OpKindCost> kinds;
  /// The shard collectives, by op name in order of first appearance (not
  /// in `kinds`, `total` or `numOps`: they compute nothing).
  std::vector<CollectiveKindTraffic> collectives;
  tg::OpCost total;
  int64_t numOps = 0;

  static FunctionCostSummary compute(mlir::Operation *function);
};

/// Summaries of every function in `module`, in order.
std::vector<FunctionCostSummary> summarizeModuleCosts(mlir::ModuleOp module);

/// Prints the summaries as aligned text tables.
void printCostTables(llvm::raw_ostream &os,
                     llvm::ArrayRef<FunctionCostSummary> summaries);

/// The summaries as JSON: {"functions": [{"name", "ops": [...], "total",
/// and, with any, "collectives": [{"op", "count", "bytes_per_device"}]}]}.
nlohmann::json
costSummariesToJson(llvm::ArrayRef<FunctionCostSummary> summaries);

} // namespace tgc

#endif // TGC_ANALYSIS_OPCOSTSUMMARY_H
