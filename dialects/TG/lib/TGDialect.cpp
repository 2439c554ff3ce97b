//===- TGDialect.cpp - the tg dialect ------------------------------------===//
//
// Dialect registration, constant materialization and the generated
// definitions of the dialect, its enums and its interfaces.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace tgc::tg;

#include "tgc/Dialect/TG/TGDialect.cpp.inc"
#include "tgc/Dialect/TG/TGEnums.cpp.inc"
#include "tgc/Dialect/TG/TGInterfaces.cpp.inc"

namespace {
/// Every tg op is side-effect free, so a call to a function of tg ops can be
/// inlined anywhere, and a fusion body can absorb any tg op.
struct TGInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tgc/Dialect/TG/TGOps.cpp.inc"
      >();
  addInterfaces<TGInlinerInterface>();
  registerAttributes();
}

Operation *TGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
