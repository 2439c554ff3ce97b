//===- AllClose.h - numpy's allclose, with the worst errors -----*- C++ -*-===//
//
// The one comparison of two arrays of numbers that tgc's tools use (`tgc run
// --compare`, the ONNX conformance runner): numpy's rule |a - b| <= atol +
// rtol * |b|, NaN matching NaN and infinities matching themselves.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_ALLCLOSE_H
#define TGC_SUPPORT_ALLCLOSE_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace tgc {

struct CloseComparison {
  /// Largest |a - b| and |a - b| / |b| over the elements that differ
  /// (infinity where exactly one is NaN).
  double maxAbsError = 0;
  double maxRelError = 0;
  /// Largest |a - b| among the elements beyond the tolerance.
  double maxErrorBeyond = 0;
  /// Elements beyond the tolerance.
  int64_t mismatches = 0;
  bool allClose() const { return mismatches == 0; }
};

/// Compares `actual(i)` with `expected(i)` for i in [0, count).
CloseComparison compareClose(int64_t count,
                             llvm::function_ref<double(int64_t)> actual,
                             llvm::function_ref<double(int64_t)> expected,
                             double rtol, double atol);

} // namespace tgc

#endif // TGC_SUPPORT_ALLCLOSE_H
