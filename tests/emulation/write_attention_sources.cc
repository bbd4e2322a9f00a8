// Writes the emulated attention kernels (cuda_shim.h) of the specs in attention_specs.h as one C++
// file: per spec, the emitted forward and backward sources, each in a namespace of its own, and a
// registration of their launchers. Run at build time.
//   write_attention_sources OUT.cc
#include <stdexcept>
#include <string>

#include "codegen/cuda/attention_emitter.h"
#include "tests/emulation/attention_specs.h"
#include "tests/emulation/emulated_source.h"

namespace dlc::emulation {
namespace {

// Where each kernel parameter lives in the launcher's argument array (AttentionBuffers' order).
int slot(const std::string& param) {
  static const char* const order[] = {"q", "k", "v", "o", "lse", "dout", "workspace", "dq", "dk", "dv"};
  for (int i = 0; i < 10; ++i)
    if (param == order[i]) return i;
  throw std::runtime_error("no slot for kernel parameter " + param);
}

// The launcher's argument for kernel parameter `param`.
std::string argument(const std::string& param) {
  const char* type = param == "lse" || param == "workspace" ? "float" : "T";
  return std::string("static_cast<") + type + "*>(a[" + std::to_string(slot(param)) + "])";
}

}  // namespace
}  // namespace dlc::emulation

int main(int argc, char** argv) {
  using namespace dlc::emulation;
  return write_generated(
      argc, argv, "write_attention_sources", "tests/emulation/attention_registry.h", [](std::ostream& out) {
        for (size_t i = 0; i < std::size(kAttentionSpecs); ++i) {
          const std::string tag = "spec" + std::to_string(i);
          const auto& spec = kAttentionSpecs[i];
          out << emulated(dlc::codegen::cuda::emit_attention_forward(spec), tag + "_fwd", argument)
              << emulated(dlc::codegen::cuda::emit_attention_backward(spec), tag + "_bwd", argument)
              << "const bool " << tag << "_registered = register_attention(" << i << ", " << tag
              << "_fwd::run, " << tag << "_bwd::run);\n";
        }
      });
}
