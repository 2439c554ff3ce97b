//===- InitAll.h - register everything tgc provides -------------*- C++ -*-===//
//
// Entry points for tools and for compilers that embed tgc: the dialects tgc
// reads and writes, and every pass and pipeline tgc registers.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INITALL_H
#define TGC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tgc {

/// Adds the tg dialect and the upstream dialects tgc programs use (func,
/// arith, tensor, shard), with their interface extensions, to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers tgc's passes and pipelines (`tg-training-pipeline`) and the
/// upstream passes users expect beside them (canonicalize, cse, inline,
/// symbol-dce), for textual pipelines and command lines.
void registerAllPasses();

} // namespace tgc

#endif // TGC_INITALL_H
