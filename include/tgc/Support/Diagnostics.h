//===- Diagnostics.h - diagnostics cut to a readable length -----*- C++ -*-===//
//
// The tools' diagnostic printer: MLIR's `file:line:col: error: message`
// format, with the source line cut around the column and long messages and
// notes (an operation printed on a diagnostic) cut to a bounded length, so
// that a located error never echoes a whole function or module.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_DIAGNOSTICS_H
#define TGC_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tgc {

/// The longest name (of a node, tensor or file taken from an input) that a
/// diagnostic shows; a longer one is cut, "..." marking the cut.
constexpr size_t kMaxShownNameLength = 120;

/// `name`, which comes from an input file, as a diagnostic may show it:
/// control characters (C0, DEL, C1), bidirectional overrides and bytes that
/// are not UTF-8 escaped (`\n`, `\x1b`, `\u{202e}`), and cut after
/// `maxLength` characters with "..." and the full length in bytes, so that
/// a name can neither move the terminal's cursor, recolor it, nor fill it.
std::string printableName(llvm::StringRef name,
                          size_t maxLength = kMaxShownNameLength);

/// Where `loc` points, for a listing (a report's table, a generated
/// kernel's comment): `file:line:col`; an importer's node (a name around its
/// file's position 0:0) as its name and file, `'/fc1/Gemm' model.onnx`;
/// through fused locations (the first that names a place) and call sites
/// (the callee). Names and files are shown as printableName makes them (a
/// name cut, a file whole). Empty when `loc` names no place.
std::string describeLocation(mlir::Location loc);

/// How much of a diagnostic is shown.
struct DiagnosticLimits {
  /// The widest source line shown under a location; a longer one is cut
  /// around the column, "..." marking each cut end.
  unsigned sourceLineWidth = 200;
  /// The widest line of a message or note (an operation printed in a note
  /// is one line per op, and a function's first line holds its signature).
  unsigned messageLineWidth = 300;
  /// The most lines of one message or note; the rest is counted, not shown.
  unsigned messageLines = 12;
};

/// Prints diagnostics as mlir::SourceMgrDiagnosticHandler does (the same
/// text when nothing is long), within `limits`. Source lines come from the
/// buffers of `sourceMgr` named like the location's file, or else from the
/// file itself, read once.
class ConciseDiagnosticPrinter {
public:
  ConciseDiagnosticPrinter(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os,
                           DiagnosticLimits limits = {});

  /// Prints `diag` with its notes.
  void print(mlir::Diagnostic &diag);
  /// Prints `diag` only if some of it had to be cut: whether it did.
  bool printIfCut(mlir::Diagnostic &diag);

private:
  /// Prints `diag` to `out`: whether anything was cut.
  bool printTo(mlir::Diagnostic &diag, llvm::raw_ostream &out);
  /// Prints one location's line: whether anything was cut.
  bool printLocated(llvm::raw_ostream &out, mlir::Location loc,
                    llvm::StringRef message, mlir::DiagnosticSeverity severity,
                    bool showSourceLine);
  /// The buffer of `filename` in the source manager (0 when unavailable).
  unsigned getBufferId(llvm::StringRef filename);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  DiagnosticLimits limits;
  llvm::StringMap<unsigned> bufferIds;
};

/// Prints every diagnostic of a context with a ConciseDiagnosticPrinter
/// while it lives: use it where a tool would use an
/// mlir::SourceMgrDiagnosticHandler.
class ConciseDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  ConciseDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                           mlir::MLIRContext *context,
                           llvm::raw_ostream &os = llvm::errs(),
                           DiagnosticLimits limits = {});

private:
  ConciseDiagnosticPrinter printer;
};

/// For drivers that create their own contexts and handlers (MlirOptMain):
/// every context made from `registry` gets, once the func dialect loads in
/// it, a handler that prints to stderr the diagnostics that need cutting
/// and leaves the others to the driver's handler. Source lines are read from
/// the files (none under a diagnostic about stdin that needs cutting).
void registerConciseDiagnostics(mlir::DialectRegistry &registry,
                                DiagnosticLimits limits = {});

} // namespace tgc

#endif // TGC_SUPPORT_DIAGNOSTICS_H
