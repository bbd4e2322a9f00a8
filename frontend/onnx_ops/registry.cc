// (domain, op type) -> translator lookup over translators.def (the default domain) and
// training.def (ai.onnx.preview.training).
#include <string_view>
#include <utility>

#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

using Table = std::pair<std::string_view, Translator>;

const Table kTranslators[] = {
#define DLC_ONNX_OP(onnx_name, translator) {#onnx_name, &translator},
#include "frontend/onnx_ops/translators.def"
#undef DLC_ONNX_OP
};

const Table kTrainingTranslators[] = {
#define DLC_ONNX_OP(onnx_name, translator) {#onnx_name, &translator},
#include "frontend/onnx_ops/training.def"
#undef DLC_ONNX_OP
};

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

template <size_t N>
Translator find_in(const Table (&table)[N], const std::string& op_type) {
  for (const auto& [name, fn] : table)
    if (name == op_type) return fn;
  return nullptr;
}

}  // namespace

bool is_supported_domain(const std::string& domain) {
  return is_default_domain(domain) || domain == kTrainingDomain;
}

Translator find_translator(const std::string& domain, const std::string& op_type) {
  if (is_default_domain(domain)) return find_in(kTranslators, op_type);
  if (domain == kTrainingDomain) return find_in(kTrainingTranslators, op_type);
  return nullptr;
}

}  // namespace dlc::frontend
