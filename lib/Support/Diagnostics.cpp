//===- Diagnostics.cpp - diagnostics cut to a readable length -------------===//
//
// The printer follows mlir::SourceMgrDiagnosticHandler (which location is
// shown, the call stack, notes without a repeated source line) so that a
// short diagnostic reads exactly as MLIR prints it.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/InputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <limits>

using namespace mlir;
using namespace tgc;

/// The largest file a location may name whose lines are shown.
static constexpr uint64_t kMaxSourceLineFileBytes = uint64_t(1) << 30;

/// The length of the UTF-8 sequence starting at `text[i]`, 0 when it is not
/// a well-formed one (overlong, surrogate, beyond U+10FFFF, truncated).
static size_t getUtf8Length(llvm::StringRef text, size_t i,
                            uint32_t &codePoint) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = lead < 0x80           ? 1
                  : (lead >> 5) == 0x6  ? 2
                  : (lead >> 4) == 0xe  ? 3
                  : (lead >> 3) == 0x1e ? 4
                                        : 0;
  if (!length || i + length > text.size())
    return 0;
  codePoint = length == 1 ? lead : lead & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80)
      return 0;
    codePoint = (codePoint << 6) | (byte(i + k) & 0x3f);
  }
  static const uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (codePoint < kMinimum[length] || codePoint > 0x10ffff ||
      (codePoint >= 0xd800 && codePoint <= 0xdfff))
    return 0;
  return length;
}

/// Whether a terminal acts on `codePoint` instead of showing it.
static bool isUnsafeCodePoint(uint32_t codePoint) {
  return codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0) ||
         (codePoint >= 0x202a && codePoint <= 0x202e) ||
         (codePoint >= 0x2066 && codePoint <= 0x2069) || codePoint == 0x200e ||
         codePoint == 0x200f || codePoint == 0x061c;
}

/// Whether `line` holds something a terminal would act on (a tab is fine).
static bool hasTerminalControl(llvm::StringRef line) {
  for (size_t i = 0; i < line.size();) {
    uint32_t codePoint = 0;
    size_t length = getUtf8Length(line, i, codePoint);
    if (!length || (codePoint != '\t' && isUnsafeCodePoint(codePoint)))
      return true;
    i += length;
  }
  return false;
}

namespace {

llvm::SourceMgr::DiagKind getDiagKind(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Note:
    return llvm::SourceMgr::DK_Note;
  case DiagnosticSeverity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case DiagnosticSeverity::Error:
    return llvm::SourceMgr::DK_Error;
  case DiagnosticSeverity::Remark:
    return llvm::SourceMgr::DK_Remark;
  }
  llvm_unreachable("unknown diagnostic severity");
}

/// The first location inside `loc` that names a file position, the callee's
/// for a call site (the callers are shown as notes).
std::optional<Location> findLocToShow(Location loc) {
  return llvm::TypeSwitch<LocationAttr, std::optional<Location>>(loc)
      .Case([](CallSiteLoc callLoc) {
        return findLocToShow(callLoc.getCallee());
      })
      .Case([&](FileLineColRange) { return loc; })
      .Case([](FusedLoc fusedLoc) -> std::optional<Location> {
        for (Location child : fusedLoc.getLocations())
          if (std::optional<Location> shown = findLocToShow(child))
            return shown;
        return std::nullopt;
      })
      .Case(
          [](NameLoc nameLoc) { return findLocToShow(nameLoc.getChildLoc()); })
      .Case([](OpaqueLoc opaqueLoc) {
        return findLocToShow(opaqueLoc.getFallbackLocation());
      })
      .Default([](LocationAttr) { return std::nullopt; });
}

/// The name of the model node `loc` comes from: an ONNX node's location is
/// its name around the model file's position 0:0 (a binary file has no
/// line to show, so the message names the node).
std::optional<std::string> findNodeName(Location loc) {
  auto nameLoc = dyn_cast<NameLoc>(loc);
  if (auto callLoc = dyn_cast<CallSiteLoc>(loc))
    nameLoc = dyn_cast<NameLoc>(callLoc.getCallee());
  if (!nameLoc)
    return std::nullopt;
  auto fileLoc = dyn_cast<FileLineColRange>(nameLoc.getChildLoc());
  if (!fileLoc || fileLoc.getStartLine() != 0)
    return std::nullopt;
  return nameLoc.getName().str();
}

/// `text` in at most `messageLines` lines of at most `messageLineWidth`
/// characters: whether anything was cut.
bool cutMessage(StringRef text, const DiagnosticLimits &limits,
                std::string &result) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  size_t shown = std::min<size_t>(lines.size(), limits.messageLines);
  bool cut = false;
  for (size_t i = 0; i < shown; ++i) {
    if (i)
      result += '\n';
    StringRef line = lines[i];
    // A name from an input file may hold escape sequences: shown escaped.
    std::string escaped;
    if (hasTerminalControl(line)) {
      escaped = printableName(line, line.size());
      line = escaped;
      cut = true;
    }
    if (line.size() <= limits.messageLineWidth) {
      result += line;
      continue;
    }
    result += line.take_front(limits.messageLineWidth);
    result += "...";
    cut = true;
  }
  if (lines.size() > shown) {
    result += "\n... (" + std::to_string(lines.size() - shown) + " more lines)";
    cut = true;
  }
  return cut;
}

/// A source line cut to `width` characters around `column`, and the column
/// of the caret in it.
std::pair<std::string, size_t> cutSourceLine(StringRef line, size_t column,
                                             size_t width) {
  size_t begin = column > width / 2 ? column - width / 2 : 0;
  begin = std::min(begin, line.size() - width);
  size_t end = begin + width;
  std::string text = begin ? "..." : "";
  text += line.slice(begin, end);
  if (end < line.size())
    text += "...";
  // One character per column under the caret.
  std::replace(text.begin(), text.end(), '\t', ' ');
  return {text, column - begin + (begin ? 3 : 0)};
}

} // namespace

std::string tgc::printableName(StringRef name, size_t maxLength) {
  std::string result;
  llvm::raw_string_ostream os(result);
  size_t shown = 0, i = 0;
  for (; i < name.size() && shown < maxLength; ++shown) {
    uint32_t codePoint = 0;
    size_t length = getUtf8Length(name, i, codePoint);
    if (!length) {
      os << "\\x"
         << llvm::format_hex_no_prefix(static_cast<unsigned char>(name[i]), 2);
      i += 1;
      continue;
    }
    if (codePoint == '\\') {
      os << "\\\\";
    } else if (codePoint == '\n') {
      os << "\\n";
    } else if (codePoint == '\r') {
      os << "\\r";
    } else if (codePoint == '\t') {
      os << "\\t";
    } else if (codePoint < 0x100 && isUnsafeCodePoint(codePoint)) {
      os << "\\x" << llvm::format_hex_no_prefix(codePoint, 2);
    } else if (isUnsafeCodePoint(codePoint)) {
      os << "\\u{";
      os.write_hex(codePoint);
      os << "}";
    } else {
      os << name.substr(i, length);
    }
    i += length;
  }
  if (i < name.size())
    os << "... (" << name.size() << " bytes)";
  return result;
}

std::string tgc::describeLocation(Location loc) {
  constexpr size_t kWhole = std::numeric_limits<size_t>::max();
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string name = printableName(file.getFilename(), kWhole);
    // An importer's node: its file has no line to show.
    if (file.getLine() == 0)
      return name;
    return name + ":" + std::to_string(file.getLine()) + ":" +
           std::to_string(file.getColumn());
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string inner = describeLocation(name.getChildLoc());
    return "'" + printableName(name.getName()) + "'" +
           (inner.empty() ? "" : " " + inner);
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::string text = describeLocation(part); !text.empty())
        return text;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(callSite.getCallee());
  return "";
}

ConciseDiagnosticPrinter::ConciseDiagnosticPrinter(llvm::SourceMgr &sourceMgr,
                                                   llvm::raw_ostream &os,
                                                   DiagnosticLimits limits)
    : sourceMgr(sourceMgr), os(os), limits(limits) {}

void ConciseDiagnosticPrinter::print(Diagnostic &diag) {
  (void)printTo(diag, os);
}

bool ConciseDiagnosticPrinter::printIfCut(Diagnostic &diag) {
  std::string text;
  llvm::raw_string_ostream probe(text);
  if (!printTo(diag, probe))
    return false;
  // Printed again to `os` itself, in its colors.
  (void)printTo(diag, os);
  return true;
}

bool ConciseDiagnosticPrinter::printTo(Diagnostic &diag,
                                       llvm::raw_ostream &out) {
  SmallVector<std::pair<Location, StringRef>> locationStack;
  auto addLocToStack = [&](Location loc, StringRef context) {
    if (std::optional<Location> shown = findLocToShow(loc))
      locationStack.emplace_back(*shown, context);
  };
  Location loc = diag.getLocation();
  addLocToStack(loc, /*context=*/{});
  if (auto callLoc = dyn_cast<CallSiteLoc>(loc)) {
    loc = callLoc.getCaller();
    for (unsigned depth = 0; depth < 10; ++depth) {
      addLocToStack(loc, "called from");
      if (!(callLoc = dyn_cast<CallSiteLoc>(loc)))
        break;
      loc = callLoc.getCaller();
    }
  }

  bool cut = false;
  std::string message = diag.str();
  // An op imported from an ONNX node: the node's name (the importer's own
  // errors say it already).
  if (std::optional<std::string> node = findNodeName(diag.getLocation());
      node && !StringRef(message).starts_with("node '"))
    message = "node '" + printableName(*node) + "': " + message;
  if (locationStack.empty()) {
    cut |= printLocated(out, diag.getLocation(), message, diag.getSeverity(),
                        /*showSourceLine=*/true);
  } else {
    cut |= printLocated(out, locationStack.front().first, message,
                        diag.getSeverity(), /*showSourceLine=*/true);
    for (auto &[callerLoc, context] : llvm::drop_begin(locationStack))
      cut |= printLocated(out, callerLoc, context, DiagnosticSeverity::Note,
                          /*showSourceLine=*/true);
  }
  // A note at the location just shown does not show its line again.
  for (Diagnostic &note : diag.getNotes()) {
    cut |= printLocated(out, note.getLocation(), note.str(), note.getSeverity(),
                        loc != note.getLocation());
    loc = note.getLocation();
  }
  return cut;
}

bool ConciseDiagnosticPrinter::printLocated(llvm::raw_ostream &out,
                                            Location loc, StringRef message,
                                            DiagnosticSeverity severity,
                                            bool showSourceLine) {
  std::string text;
  bool cut = cutMessage(message, limits, text);
  llvm::SourceMgr::DiagKind kind = getDiagKind(severity);
  auto fileLoc = loc->findInstanceOf<FileLineColRange>();
  if (!fileLoc) {
    std::string located;
    llvm::raw_string_ostream locatedOs(located);
    if (!isa<UnknownLoc>(loc))
      locatedOs << loc << ": ";
    locatedOs << text;
    sourceMgr.PrintMessage(out, llvm::SMLoc(), kind, located);
    return cut;
  }

  // Line or column 0 means unknown (an ONNX file's locations): no line.
  unsigned bufferId =
      showSourceLine && fileLoc.getStartLine() && fileLoc.getStartColumn()
          ? getBufferId(fileLoc.getFilename().getValue())
          : 0;
  llvm::SMLoc smLoc =
      bufferId ? sourceMgr.FindLocForLineAndColumn(
                     bufferId, fileLoc.getStartLine(), fileLoc.getStartColumn())
               : llvm::SMLoc();
  std::string position;
  llvm::raw_string_ostream positionOs(position);
  positionOs << fileLoc.getFilename().getValue() << ":"
             << fileLoc.getStartLine() << ":" << fileLoc.getStartColumn();
  if (!smLoc.isValid()) {
    llvm::SMDiagnostic(position, kind, text).print(nullptr, out);
    return cut;
  }

  StringRef buffer = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  size_t offset = smLoc.getPointer() - buffer.data();
  size_t lineBegin = buffer.rfind('\n', offset);
  lineBegin = lineBegin == StringRef::npos ? 0 : lineBegin + 1;
  StringRef line =
      buffer.slice(lineBegin, buffer.find_first_of("\r\n", offset));
  if (line.size() <= limits.sourceLineWidth) {
    sourceMgr.PrintMessage(out, smLoc, kind, text);
    return cut;
  }
  llvm::SMDiagnostic(position, kind, text).print(nullptr, out);
  auto [shown, caret] =
      cutSourceLine(line, offset - lineBegin, limits.sourceLineWidth);
  out << shown << '\n' << std::string(caret, ' ') << "^\n";
  return true;
}

unsigned ConciseDiagnosticPrinter::getBufferId(StringRef filename) {
  auto [it, inserted] = bufferIds.try_emplace(filename, 0);
  if (!inserted)
    return it->second;
  for (unsigned id = 1, e = sourceMgr.getNumBuffers(); id <= e; ++id)
    if (sourceMgr.getMemoryBuffer(id)->getBufferIdentifier() == filename)
      return it->second = id;
  // A location may name any file: only a regular one of a source file's
  // size is read (never a FIFO or /dev/zero).
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(filename, kMaxSourceLineFileBytes);
  if (!file) {
    llvm::consumeError(file.takeError());
    return it->second = 0;
  }
  return it->second =
             sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
}

ConciseDiagnosticHandler::ConciseDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                                                   MLIRContext *context,
                                                   llvm::raw_ostream &os,
                                                   DiagnosticLimits limits)
    : ScopedDiagnosticHandler(context), printer(sourceMgr, os, limits) {
  setHandler([this](Diagnostic &diag) { printer.print(diag); });
}

namespace {

/// Installs, in each context where the func dialect loads, a handler that
/// the context owns: MlirOptMain makes a context per input (per chunk with
/// --split-input-file) and registers its own handler before parsing, so this
/// one, registered later, sees each diagnostic first.
struct ConciseDiagnosticsExtension
    : DialectExtension<ConciseDiagnosticsExtension, func::FuncDialect> {
  explicit ConciseDiagnosticsExtension(DiagnosticLimits limits)
      : limits(limits) {}

  void apply(MLIRContext *context, func::FuncDialect *) const final {
    struct OwnedPrinter {
      explicit OwnedPrinter(DiagnosticLimits limits)
          : printer(sourceMgr, llvm::errs(), limits) {}
      llvm::SourceMgr sourceMgr;
      ConciseDiagnosticPrinter printer;
    };
    context->getDiagEngine().registerHandler(
        [owned = std::make_unique<OwnedPrinter>(limits)](Diagnostic &diag) {
          return success(owned->printer.printIfCut(diag));
        });
  }

  DiagnosticLimits limits;
};

} // namespace

void tgc::registerConciseDiagnostics(DialectRegistry &registry,
                                     DiagnosticLimits limits) {
  static char extensionId;
  registry.addExtension(TypeID::getFromOpaquePointer(&extensionId),
                        std::make_unique<ConciseDiagnosticsExtension>(limits));
}
