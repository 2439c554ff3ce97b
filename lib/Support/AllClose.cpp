//===- AllClose.cpp - numpy's allclose, with the worst errors -------------===//

#include "tgc/Support/AllClose.h"

#include <algorithm>
#include <cmath>

using namespace tgc;

CloseComparison tgc::compareClose(int64_t count,
                                  llvm::function_ref<double(int64_t)> actual,
                                  llvm::function_ref<double(int64_t)> expected,
                                  double rtol, double atol) {
  CloseComparison result;
  for (int64_t i = 0; i < count; ++i) {
    double a = actual(i), b = expected(i);
    if ((std::isnan(a) && std::isnan(b)) || a == b)
      continue;
    double error = std::abs(a - b);
    if (std::isnan(error))
      error = INFINITY;
    result.maxAbsError = std::max(result.maxAbsError, error);
    result.maxRelError =
        std::max(result.maxRelError, error / std::max(std::abs(b), 1e-300));
    if (!(error <= atol + rtol * std::abs(b))) {
      ++result.mismatches;
      result.maxErrorBeyond = std::max(result.maxErrorBeyond, error);
    }
  }
  return result;
}
