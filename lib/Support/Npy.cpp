//===- Npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// The format is described in numpy/lib/format.py. The header is a Python dict
// literal; it is parsed here by a small recursive-descent parser that accepts
// the subset of Python literals NumPy writes (strings, integers, True/False,
// tuples and lists), because files may come from other writers that space or
// order the keys differently. The writer reproduces NumPy's own header byte
// for byte, so that files written here and by np.save are identical.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Npy.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace tgc;
using namespace tgc::npy;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

constexpr StringRef kMagic("\x93NUMPY", 6);
/// Magic, then the major and minor version bytes.
constexpr size_t kPreludeSize = 8;
/// NumPy aligns the data to this many bytes.
constexpr size_t kDataAlignment = 64;
/// NumPy leaves room after the header for the first dimension to grow to
/// this many digits, so that appending can rewrite the header in place.
constexpr size_t kGrowthAxisMaxDigits = 21;
/// Deeper nesting than this is not a header NumPy would write; the limit
/// keeps the recursive parser's stack bounded on hostile input.
constexpr int kMaxNesting = 8;

Error makeError(StringRef name, const llvm::Twine &problem) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + problem);
}

/// A value of the Python literal subset found in .npy headers.
struct PyValue {
  enum class Kind { String, Integer, Boolean, None, Tuple, List };
  Kind kind = Kind::None;
  std::string string;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> elements;
};

/// Parses the header dict. On failure `getProblem()` says what is wrong.
class HeaderDictParser {
public:
  explicit HeaderDictParser(StringRef text) : text(text) {}

  /// Parses `{key: value, ...}` followed only by whitespace.
  std::optional<std::vector<std::pair<std::string, PyValue>>> parse() {
    std::vector<std::pair<std::string, PyValue>> entries;
    skipSpace();
    if (!consume('{'))
      return fail("header is not a dict");
    skipSpace();
    while (!consume('}')) {
      if (!entries.empty()) {
        if (!consume(','))
          return fail("expected ',' or '}' in header dict");
        skipSpace();
        if (consume('}'))
          break; // Trailing comma.
      }
      PyValue key;
      if (!parseValue(key, /*depth=*/0))
        return std::nullopt;
      if (key.kind != PyValue::Kind::String)
        return fail("header dict key is not a string");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + key.string + "'");
      PyValue value;
      if (!parseValue(value, /*depth=*/0))
        return std::nullopt;
      entries.emplace_back(std::move(key.string), std::move(value));
      skipSpace();
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after header dict");
    return entries;
  }

  const std::string &getProblem() const { return problem; }

private:
  std::nullopt_t fail(const llvm::Twine &message) {
    if (problem.empty())
      problem = message.str();
    return std::nullopt;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool consume(char c) {
    if (peek() != c || atEnd())
      return false;
    ++pos;
    return true;
  }
  void skipSpace() {
    while (!atEnd() && llvm::isSpace(text[pos]))
      ++pos;
  }

  bool parseValue(PyValue &value, int depth) {
    skipSpace();
    if (depth > kMaxNesting) {
      fail("header nests too deeply");
      return false;
    }
    char c = peek();
    if (atEnd()) {
      fail("header dict ends early");
      return false;
    }
    if (c == '\'' || c == '"')
      return parseString(value);
    if (llvm::isDigit(c) || c == '-' || c == '+')
      return parseInteger(value);
    if (c == '(' || c == '[')
      return parseSequence(value, depth);
    if (llvm::isAlpha(c))
      return parseName(value);
    fail(llvm::Twine("unexpected character '") + llvm::Twine(c) +
         "' in header dict");
    return false;
  }

  bool parseString(PyValue &value) {
    char quote = text[pos++];
    value.kind = PyValue::Kind::String;
    while (!atEnd() && text[pos] != quote) {
      // Escapes do not occur in the descrs NumPy writes; take the escaped
      // character literally so that a quote inside does not end the string.
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      value.string.push_back(text[pos++]);
    }
    if (!consume(quote)) {
      fail("unterminated string in header dict");
      return false;
    }
    return true;
  }

  bool parseInteger(PyValue &value) {
    bool negative = false;
    if (peek() == '-' || peek() == '+')
      negative = text[pos++] == '-';
    if (!llvm::isDigit(peek())) {
      fail("expected a digit in header dict");
      return false;
    }
    uint64_t magnitude = 0;
    while (llvm::isDigit(peek())) {
      unsigned digit = text[pos++] - '0';
      if (magnitude > (uint64_t(INT64_MAX) - digit) / 10) {
        fail("integer too large in header dict");
        return false;
      }
      magnitude = magnitude * 10 + digit;
    }
    value.kind = PyValue::Kind::Integer;
    value.integer = negative ? -static_cast<int64_t>(magnitude)
                             : static_cast<int64_t>(magnitude);
    return true;
  }

  /// A tuple `(a, b)`, `(a,)`, `()`, or a list `[a, b]`. A parenthesized
  /// single value without a comma is that value, as in Python.
  bool parseSequence(PyValue &value, int depth) {
    char close = text[pos++] == '(' ? ')' : ']';
    bool isList = close == ']';
    std::vector<PyValue> elements;
    bool sawComma = false;
    skipSpace();
    while (!consume(close)) {
      if (!elements.empty()) {
        if (!consume(',')) {
          fail(llvm::Twine("expected ',' or '") + llvm::Twine(close) +
               "' in header dict");
          return false;
        }
        sawComma = true;
        skipSpace();
        if (consume(close))
          break;
      }
      PyValue element;
      if (!parseValue(element, depth + 1))
        return false;
      elements.push_back(std::move(element));
      skipSpace();
    }
    if (!isList && elements.size() == 1 && !sawComma) {
      value = std::move(elements.front());
      return true;
    }
    value.kind = isList ? PyValue::Kind::List : PyValue::Kind::Tuple;
    value.elements = std::move(elements);
    return true;
  }

  bool parseName(PyValue &value) {
    size_t start = pos;
    while (!atEnd() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
      ++pos;
    StringRef name = text.slice(start, pos);
    if (name == "True" || name == "False") {
      value.kind = PyValue::Kind::Boolean;
      value.boolean = name == "True";
      return true;
    }
    if (name == "None") {
      value.kind = PyValue::Kind::None;
      return true;
    }
    fail("unexpected name '" + name + "' in header dict");
    return false;
  }

  StringRef text;
  size_t pos = 0;
  std::string problem;
};

std::optional<DType> parseDescr(StringRef descr) {
  if (descr == "|b1")
    return DType::Bool;
  // One-byte types have no byte order ('|'); NumPy reads '<' and '=' too.
  if (descr == "|i1" || descr == "<i1" || descr == "=i1")
    return DType::I8;
  if (descr == "|u1" || descr == "<u1" || descr == "=u1")
    return DType::U8;
  // '=' is native order, which NumPy never writes but which means
  // little-endian everywhere tgc runs.
  if (!descr.consume_front("<") && !descr.consume_front("="))
    return std::nullopt;
  return llvm::StringSwitch<std::optional<DType>>(descr)
      .Case("f2", DType::F16)
      .Case("f4", DType::F32)
      .Case("f8", DType::F64)
      .Case("i2", DType::I16)
      .Case("i4", DType::I32)
      .Case("i8", DType::I64)
      .Case("u2", DType::U16)
      .Case("u4", DType::U32)
      .Case("u8", DType::U64)
      .Default(std::nullopt);
}

/// Python's repr of a shape tuple: "()", "(3,)", "(2, 3)".
std::string formatShape(const std::vector<int64_t> &shape) {
  std::string result = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      result += ", ";
    result += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    result += ",";
  return result + ")";
}

/// The element count of `shape`, or nothing if a dimension is negative or
/// the byte size overflows int64.
std::optional<int64_t> getCheckedNumElements(const std::vector<int64_t> &shape,
                                             size_t elementSize) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  }
  int64_t bytes;
  if (llvm::MulOverflow(count, static_cast<int64_t>(elementSize), bytes))
    return std::nullopt;
  return count;
}

/// Everything NumPy writes before `array`'s data: magic, version, header
/// length, dict, padding and newline (numpy.lib.format._write_array_header).
std::string buildHeader(const Array &array) {
  std::string dict =
      "{'descr': '" + getDescr(array.dtype).str() +
      "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  if (!array.shape.empty()) {
    size_t digits = std::to_string(array.shape.front()).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Version 1.0 stores the header length in 16 bits; 2.0 in 32 bits.
  size_t headerLength = dict.size() + 1; // With the final newline.
  auto paddingFor = [&](size_t lengthFieldSize) {
    return kDataAlignment -
           (kPreludeSize + lengthFieldSize + headerLength) % kDataAlignment;
  };
  bool useVersion2 = headerLength + paddingFor(2) > UINT16_MAX;
  size_t lengthFieldSize = useVersion2 ? 4 : 2;
  size_t padding = paddingFor(lengthFieldSize);
  uint32_t storedLength = static_cast<uint32_t>(headerLength + padding);

  std::string result(kMagic);
  result.push_back(useVersion2 ? 2 : 1);
  result.push_back(0);
  char lengthBytes[4];
  llvm::support::endian::write32le(lengthBytes, storedLength);
  result.append(lengthBytes, lengthFieldSize);
  result += dict;
  result.append(padding, ' ');
  result.push_back('\n');
  return result;
}

} // namespace

StringRef npy::getDescr(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::Bool:
    return "|b1";
  }
  llvm_unreachable("unknown dtype");
}

size_t npy::getElementSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

bool npy::isInteger(DType dtype) {
  switch (dtype) {
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

int64_t Array::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

Expected<Array> npy::parseNpy(StringRef bytes, StringRef name) {
  if (!bytes.starts_with(kMagic))
    return makeError(name, "not an .npy file (bad magic)");
  if (bytes.size() < kPreludeSize)
    return makeError(name, "truncated header (no version)");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  unsigned minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return makeError(name, "unsupported .npy version " + llvm::Twine(major) +
                               "." + llvm::Twine(minor));
  size_t lengthFieldSize = major == 1 ? 2 : 4;
  size_t headerStart = kPreludeSize + lengthFieldSize;
  if (bytes.size() < headerStart)
    return makeError(name, "truncated header (no header length)");
  const char *lengthField = bytes.data() + kPreludeSize;
  uint64_t headerLength = major == 1
                              ? llvm::support::endian::read16le(lengthField)
                              : llvm::support::endian::read32le(lengthField);
  if (headerLength > bytes.size() - headerStart)
    return makeError(name, "truncated header (header length " +
                               llvm::Twine(headerLength) + ", but only " +
                               llvm::Twine(bytes.size() - headerStart) +
                               " bytes follow)");
  // Version 3.0 headers are UTF-8, but every character of a valid header is
  // ASCII, so the same parser serves.
  StringRef headerText = bytes.substr(headerStart, headerLength);
  StringRef data = bytes.substr(headerStart + headerLength);

  HeaderDictParser parser(headerText);
  auto entries = parser.parse();
  if (!entries)
    return makeError(name, "bad header: " + parser.getProblem());

  const PyValue *descr = nullptr;
  const PyValue *fortranOrder = nullptr;
  const PyValue *shape = nullptr;
  for (const auto &[key, value] : *entries) {
    const PyValue **slot = llvm::StringSwitch<const PyValue **>(key)
                               .Case("descr", &descr)
                               .Case("fortran_order", &fortranOrder)
                               .Case("shape", &shape)
                               .Default(nullptr);
    if (!slot)
      return makeError(name, "bad header: unexpected key '" + key + "'");
    if (*slot)
      return makeError(name, "bad header: duplicate key '" + key + "'");
    *slot = &value;
  }
  for (auto [value, key] :
       {std::pair(descr, "descr"), std::pair(fortranOrder, "fortran_order"),
        std::pair(shape, "shape")}) {
    if (!value)
      return makeError(name,
                       llvm::Twine("bad header: missing key '") + key + "'");
  }

  Array array;
  if (descr->kind != PyValue::Kind::String)
    return makeError(name, "unsupported dtype: descr is not a string "
                           "(structured arrays are not supported)");
  std::optional<DType> dtype = parseDescr(descr->string);
  if (!dtype) {
    const char *why = StringRef(descr->string).starts_with(">")
                          ? " (big-endian data is not supported)"
                          : "";
    return makeError(name, "unsupported dtype '" + descr->string + "'" + why +
                               "; expected one of <f2, <f4, <f8, |i1, <i2, "
                               "<i4, <i8, |u1, <u2, <u4, |b1");
  }
  array.dtype = *dtype;

  if (fortranOrder->kind != PyValue::Kind::Boolean)
    return makeError(name, "bad header: 'fortran_order' is not True or False");
  if (fortranOrder->boolean)
    return makeError(name, "Fortran-order arrays are not supported");

  if (shape->kind != PyValue::Kind::Tuple)
    return makeError(name, "bad shape: not a tuple");
  for (const PyValue &dim : shape->elements) {
    if (dim.kind != PyValue::Kind::Integer)
      return makeError(name, "bad shape: a dimension is not an integer");
    if (dim.integer < 0)
      return makeError(name, "bad shape: negative dimension " +
                                 llvm::Twine(dim.integer));
    array.shape.push_back(dim.integer);
  }
  size_t elementSize = getElementSize(array.dtype);
  std::optional<int64_t> numElements =
      getCheckedNumElements(array.shape, elementSize);
  if (!numElements)
    return makeError(name, "bad shape: " + formatShape(array.shape) +
                               " has too many elements");
  // Both sides fit in int64 and size_t here.
  uint64_t expectedBytes = static_cast<uint64_t>(*numElements) * elementSize;
  if (data.size() != expectedBytes)
    return makeError(
        name,
        "data is " + llvm::Twine(data.size()) + " bytes, but shape " +
            formatShape(array.shape) + " of " + getDescr(array.dtype) +
            " needs " + llvm::Twine(expectedBytes) +
            (data.size() < expectedBytes ? " (truncated)" : " (extra data)"));
  array.data.assign(data.begin(), data.end());
  return array;
}

Expected<Array> npy::readNpy(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readInputFile(path);
  if (!buffer)
    return buffer.takeError();
  return parseNpy((*buffer)->getBuffer(), path);
}

Error npy::writeNpy(StringRef path, const Array &array) {
  Expected<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file)
    return file.takeError();
  if (Error error = writeNpy((*file)->os(), array, path))
    return error;
  return (*file)->commit();
}

Error npy::writeNpy(llvm::raw_ostream &os, const Array &array, StringRef path) {
  size_t elementSize = getElementSize(array.dtype);
  std::optional<int64_t> numElements =
      getCheckedNumElements(array.shape, elementSize);
  if (!numElements)
    return makeError(path,
                     "cannot write: bad shape " + formatShape(array.shape));
  uint64_t expectedBytes = static_cast<uint64_t>(*numElements) * elementSize;
  if (array.data.size() != expectedBytes)
    return makeError(path, "cannot write: data is " +
                               llvm::Twine(array.data.size()) +
                               " bytes, but shape " + formatShape(array.shape) +
                               " of " + getDescr(array.dtype) + " needs " +
                               llvm::Twine(expectedBytes));

  os << buildHeader(array);
  os.write(array.data.data(), array.data.size());
  return Error::success();
}
