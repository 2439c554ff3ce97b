//===- OpCostSummary.h - per-function totals of op costs -------*- C++ -*-===//
//
// Sums CostOpInterface over the ops of each function, by op name, for
// `tgc report` and for anyone who wants the FLOPs and bytes of a step.
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

/// The costs of one function's ops, grouped by op name, in order of first
/// appearance. Ops nested in a fusion region are counted in the fusion only.
struct FunctionCostSummary {
  std::string functionName;
  std::vector<OpKindCost> kinds;
  tg::OpCost total;
  int64_t numOps = 0;

  static FunctionCostSummary compute(mlir::Operation *function);
};

/// Summaries of every function in `module`, in order.
std::vector<FunctionCostSummary> summarizeModuleCosts(mlir::ModuleOp module);

/// Prints the summaries as aligned text tables.
void printCostTables(llvm::raw_ostream &os,
                     llvm::ArrayRef<FunctionCostSummary> summaries);

/// The summaries as JSON: {"functions": [{"name", "ops": [...], "total"}]}.
nlohmann::json
costSummariesToJson(llvm::ArrayRef<FunctionCostSummary> summaries);

} // namespace tgc

#endif // TGC_ANALYSIS_OPCOSTSUMMARY_H
