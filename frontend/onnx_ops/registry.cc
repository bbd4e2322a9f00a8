// Op type -> translator lookup over translators.def.
#include <string_view>
#include <utility>

#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {
const std::pair<std::string_view, Translator> kTranslators[] = {
#define DLC_ONNX_OP(onnx_name, translator) {#onnx_name, &translator},
#include "frontend/onnx_ops/translators.def"
#undef DLC_ONNX_OP
};
}  // namespace

Translator find_translator(const std::string& op_type) {
  for (const auto& [name, fn] : kTranslators)
    if (name == op_type) return fn;
  return nullptr;
}

}  // namespace dlc::frontend
