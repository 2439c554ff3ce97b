//===- ZeroPadding.h - ZeRO over dimensions dp does not divide --*- C++ -*-===//
//
// ZeRO splits a parameter, its gradient and its optimizer state on a
// dimension dp divides. When none does (LLaMA's 4096 and 11008 on dp=3 or
// dp=6), tg-shard-annotate pads: the parameter's dimension grows to the next
// multiple of dp with zeros at its end, so that dp cuts it into equal blocks
// (DeepSpeed pads its flat buffers the same way). The padding is zeros and
// stays zeros: an update that acts elementwise keeps a zero parameter with a
// zero gradient and zero state at zero (SGD, AdamW), and the readers of the
// gradient that also see the padding add squares or products of it into
// sums (the norm of gradient clipping, fp16's finiteness check). Every
// other reader sees the caller's shape through a tg.slice. The function's
// signature records the caller's shape in tg.unpadded_shape.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_ZEROPADDING_H
#define TGC_LIB_TRANSFORMS_ZEROPADDING_H

#include "tgc/Dialect/TG/TGInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace tgc {

/// How to pad `param` so that `count` devices split one of its dimensions
/// the layout leaves whole (`wholeDims`): the dimension that needs the
/// fewest padding elements; nullopt when no dimension has at least `count`
/// elements.
std::optional<unsigned> choosePaddedDim(mlir::RankedTensorType param,
                                        llvm::ArrayRef<bool> wholeDims,
                                        int64_t count);

/// Pads dimension `dim` of the parameter `param` that `update` updates to
/// the next multiple of `count`, with its optimizer state, its gradient and
/// the update's results (see the file comment). `storeSharded`: the
/// parameter argument itself is padded (ZeRO-3, or the f32 master weights of
/// mixed precision); otherwise it stays whole and the update reads a padded
/// copy. Returns why it cannot (the IR untouched), or an empty string.
std::string padForZero(mlir::func::FuncOp function,
                       tg::OptimizerOpInterface update,
                       mlir::BlockArgument param, unsigned dim, int64_t count,
                       bool storeSharded);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_ZEROPADDING_H
