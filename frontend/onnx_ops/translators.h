// Declarations of the ONNX op translators, generated from the per-family tables.
#pragma once

#include "frontend/import_context.h"

namespace dlc::frontend {

#define DLC_ONNX_OP(onnx_name, translator) void translator(ImportContext& ctx);
#include "frontend/onnx_ops/training.def"
#include "frontend/onnx_ops/translators.def"
#undef DLC_ONNX_OP

}  // namespace dlc::frontend
