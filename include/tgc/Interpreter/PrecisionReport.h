//===- PrecisionReport.h - where f32 parts from exact arithmetic -*- C++ -*-=//
//
// `tgc run --precision-report`: a function run op by op three ways at once
// (its own numerics, f64, and each op's f64 kernel on the first run's
// operands) to say which ops lose precision: their own rounding, or the
// amplification of small differences in their operands (a cancellation, a
// max or an argmax whose two largest values are nearly tied).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_PRECISIONREPORT_H
#define TGC_INTERPRETER_PRECISIONREPORT_H

#include "tgc/Interpreter/Interpreter.h"

#include "llvm/ADT/SmallVector.h"

namespace tgc {

/// One result of one top-level op.
struct PrecisionRecord {
  mlir::Operation *op = nullptr;
  unsigned result = 0;
  /// An integer (or i1) result: the errors are the fraction of its elements
  /// that differ. A float result: the largest difference from the
  /// reference, relative to the reference's largest magnitude (absolute
  /// where that is 0; infinite where one side is not finite and the other
  /// differs).
  bool isInteger = false;
  /// Against the f64 run.
  double error = 0;
  /// The largest `error` of the op's operands (0 for arguments).
  double inputError = 0;
  /// Against the op's f64 kernel on this run's operands: what the op adds
  /// itself, its operands taken as exact.
  double localError = 0;
};

/// Runs `function` on `arguments` with `options` and in f64, comparing
/// every result of every op of its body (an op with regions, a tg.fusion,
/// as one) in the order they run. A partitioned function is refused (run
/// the unpartitioned one).
mlir::FailureOr<llvm::SmallVector<PrecisionRecord>>
measurePrecision(mlir::FunctionOpInterface function,
                 llvm::ArrayRef<Tensor> arguments, InterpreterOptions options);

/// Prints the `count` records whose error grows most over their inputs'
/// (error - inputError), in the order they run, then every result of the
/// function with its error.
void printPrecisionReport(llvm::raw_ostream &os,
                          mlir::FunctionOpInterface function,
                          llvm::ArrayRef<PrecisionRecord> records,
                          unsigned count);

} // namespace tgc

#endif // TGC_INTERPRETER_PRECISIONREPORT_H
