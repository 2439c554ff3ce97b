//===- Npy.h - reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The NumPy array file format (versions 1.0, 2.0 and 3.0; C order only),
// for the arrays tgc exchanges with users: little-endian f16, f32, f64,
// i8, i16, i32, i64, u8, u16, u32 and bool.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_NPY_H
#define TGC_SUPPORT_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::npy {

enum class DType { F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool };

/// The NumPy descr of `dtype`: "<f2", "<f4", "<f8", "|i1", "<i2", "<i4",
/// "<i8", "|u1", "<u2", "<u4", "<u8", "|b1".
llvm::StringRef getDescr(DType dtype);
/// Bytes per element.
size_t getElementSize(DType dtype);
/// Whether `dtype` holds integers (not bool).
bool isInteger(DType dtype);

/// An array: its element type, shape (empty for a scalar) and raw
/// little-endian element bytes in C order.
struct Array {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t getNumElements() const;
};

/// Reads `path`. Errors name the file and say what is wrong (not an .npy
/// file, unsupported version or dtype, Fortran order, truncated data...).
llvm::Expected<Array> readNpy(llvm::StringRef path);

/// Parses an .npy file already in memory; `name` is used in errors.
llvm::Expected<Array> parseNpy(llvm::StringRef bytes, llvm::StringRef name);

/// Writes `array` to `path` with the bytes np.save would write: version 1.0
/// (2.0 if the header outgrows 1.0's 16-bit length), data aligned to 64
/// bytes. The file is written under a temporary name and renamed, so that on
/// error no file is left behind. Errors name `path`.
llvm::Error writeNpy(llvm::StringRef path, const Array &array);
/// The file's bytes to `os`; errors (a shape that does not match the data)
/// name `path`.
llvm::Error writeNpy(llvm::raw_ostream &os, const Array &array,
                     llvm::StringRef path);

} // namespace tgc::npy

#endif // TGC_SUPPORT_NPY_H
