//===- DiagnosticsTest.cpp - ConciseDiagnosticPrinter ---------------------===//

#include "tgc/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

class DiagnosticsTest : public ::testing::Test {
protected:
  /// A source manager holding `text` as the file "input.mlir".
  void addInput(StringRef text) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "input.mlir"),
        llvm::SMLoc());
  }

  Location fileLoc(unsigned line, unsigned column) {
    return FileLineColLoc::get(&context, "input.mlir", line, column);
  }

  /// Emits the diagnostics of `emit` through `Handler`: what it printed.
  template <typename Handler>
  std::string printWith(llvm::function_ref<void()> emit) {
    std::string text;
    llvm::raw_string_ostream os(text);
    Handler handler(sourceMgr, &context, os);
    emit();
    return text;
  }

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
};

// Short diagnostics read exactly as MLIR's handler prints them: the shown
// location, the call stack, notes at the same location without their line.
TEST_F(DiagnosticsTest, ShortDiagnosticsReadAsMlirPrintsThem) {
  addInput("module {\n  func.func @f() {\n\treturn\n  }\n}\n");
  auto emit = [&] {
    emitError(fileLoc(2, 3)) << "an error"
                             << "\nwith a second line";
    InFlightDiagnostic diag = emitWarning(fileLoc(3, 2), "a warning");
    diag.attachNote(fileLoc(3, 2)) << "a note at the same place";
    diag.attachNote(fileLoc(1, 1)) << "a note elsewhere";
    diag.report();
    emitRemark(NameLoc::get(StringAttr::get(&context, "name"), fileLoc(4, 3)),
               "a named location");
    emitError(CallSiteLoc::get(fileLoc(3, 2), fileLoc(2, 3)), "a call site");
    emitError(UnknownLoc::get(&context), "nowhere");
    emitError(FileLineColLoc::get(&context, "elsewhere.mlir", 7, 1),
              "a file that does not exist");
    emitError(fileLoc(0, 0), "an unknown line");
  };
  std::string mlir = printWith<SourceMgrDiagnosticHandler>(emit);
  std::string concise = printWith<ConciseDiagnosticHandler>(emit);
  EXPECT_EQ(concise, mlir);
  EXPECT_NE(mlir.find("input.mlir:2:3: error: an error"), std::string::npos);
}

// A long line is cut to 200 characters around the column, the caret still
// under the character the location names.
TEST_F(DiagnosticsTest, LongSourceLineIsCutAroundTheColumn) {
  std::string line(1000, 'a');
  line[499] = 'X';
  addInput("module {\n" + line + "\n}\n");
  std::string text = printWith<ConciseDiagnosticHandler>(
      [&] { emitError(fileLoc(2, 500), "here"); });
  std::string expected = "input.mlir:2:500: error: here\n...";
  expected += std::string(100, 'a') + "X" + std::string(99, 'a') + "...\n";
  expected += std::string(103, ' ') + "^\n";
  EXPECT_EQ(text, expected);

  // At the start of the line, nothing is cut before the column.
  text = printWith<ConciseDiagnosticHandler>(
      [&] { emitError(fileLoc(2, 1), "start"); });
  EXPECT_EQ(text, "input.mlir:2:1: error: start\n" + std::string(200, 'a') +
                      "...\n^\n");
}

// A note holding a printed operation keeps its first lines, each cut.
TEST_F(DiagnosticsTest, LongNoteIsCutToAFewLines) {
  addInput("module {\n}\n");
  std::string dump;
  for (int i = 0; i < 30; ++i)
    dump += "\n" + std::string(500, 'o');
  std::string text = printWith<ConciseDiagnosticHandler>([&] {
    emitError(fileLoc(1, 1), "failed").attachNote(fileLoc(1, 1))
        << "see current operation:" << dump;
  });
  std::string expected = "input.mlir:1:1: error: failed\nmodule {\n^\n"
                         "input.mlir:1:1: note: see current operation:";
  for (int i = 0; i < 11; ++i)
    expected += "\n" + std::string(300, 'o') + "...";
  expected += "\n... (19 more lines)\n";
  EXPECT_EQ(text, expected);
}

// printIfCut leaves a short diagnostic to the next handler.
TEST_F(DiagnosticsTest, PrintIfCutPrintsOnlyLongDiagnostics) {
  addInput("module {\n" + std::string(300, 'a') + "\n}\n");
  std::string text;
  llvm::raw_string_ostream os(text);
  ConciseDiagnosticPrinter printer(sourceMgr, os);
  Diagnostic shortDiag(fileLoc(1, 1), DiagnosticSeverity::Error);
  shortDiag << "short";
  EXPECT_FALSE(printer.printIfCut(shortDiag));
  EXPECT_EQ(text, "");
  Diagnostic longDiag(fileLoc(2, 1), DiagnosticSeverity::Error);
  longDiag << "on a long line";
  EXPECT_TRUE(printer.printIfCut(longDiag));
  EXPECT_EQ(text, "input.mlir:2:1: error: on a long line\n" +
                      std::string(200, 'a') + "...\n^\n");
}

} // namespace
