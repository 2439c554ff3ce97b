//===- LineLayout.h - a tensor seen as lines along one dimension -*- C++
//-*-===//
//
// Shared by the interpreter's kernels and the CUDA emitter, which index a
// row-major tensor the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_EVAL_LINELAYOUT_H
#define TGC_EVAL_LINELAYOUT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace tgc {

/// The sizes around dimension `dim` of `shape`: the product of the dims
/// before it, its own, and the product of those after it (a line along
/// `dim` is `size` elements at stride `inner`).
struct LineLayout {
  int64_t outer = 1, size = 1, inner = 1;
};
inline LineLayout getLineLayout(llvm::ArrayRef<int64_t> shape, int64_t dim) {
  LineLayout layout;
  for (int64_t d = 0; d < dim; ++d)
    layout.outer *= shape[d];
  layout.size = shape[dim];
  for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
    layout.inner *= shape[d];
  return layout;
}

} // namespace tgc

#endif // TGC_EVAL_LINELAYOUT_H
