//===- LocalFunctions.h - model-local ONNX functions, inlined --*- C++ -*-===//
//
// Private to lib/Import/ONNX: a model's local functions (ModelProto.functions,
// which torch.onnx.export writes for `export_modules_as_functions` and
// other exporters for composite ops) expanded where they are called, before
// anything else reads the graph.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_IMPORT_ONNX_LOCALFUNCTIONS_H
#define TGC_LIB_IMPORT_ONNX_LOCALFUNCTIONS_H

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

namespace tgc::onnx_import {

/// Replaces every node of `model`'s graph (and of the graphs its nodes hold,
/// an If's branches, a Loop's body) that calls one of the model's local
/// functions by the function's nodes: the function's inputs and outputs
/// become the call's, its other names get a prefix of their own per call,
/// and each attribute that refers to one of the function's attributes
/// (`ref_attr_name`) takes the call's value, else the function's default,
/// else is left out. Calls inside functions are expanded too, at most 16
/// deep, and at most 2^20 nodes are made in all. An error names the call
/// and the function: a function defined twice, or that imports another
/// version of the default domain than the model, a call with more inputs or
/// outputs than the function declares, a name the function reads but
/// neither takes nor computes, an attribute of another type than the
/// function's reference.
llvm::Error inlineLocalFunctions(onnx::ModelProto &model);

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_LOCALFUNCTIONS_H
