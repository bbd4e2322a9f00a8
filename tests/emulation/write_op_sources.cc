// Writes the emulated kernels (cuda_shim.h) of the cases in op_cases.h as one C++ file:
// per case, the emitted source in a namespace of its own and a registration of its launcher. Run
// at build time.
//   write_op_sources OUT.cc
#include <string>

#include "codegen/cuda/emit_util.h"
#include "tests/emulation/emulated_source.h"
#include "tests/emulation/op_cases.h"
#include "tests/emulation/op_registry.h"

int main(int argc, char** argv) {
  using namespace dlc::emulation;
  return write_generated(
      argc, argv, "write_op_sources", "tests/emulation/op_registry.h", [](std::ostream& out) {
        const std::vector<OpCase> cases = op_cases();
        for (size_t i = 0; i < cases.size(); ++i) {
          // Launcher slots: the inputs from 0, the outputs from kOpOutputSlot.
          auto argument = [&](const std::string& name) {
            const std::string param = positional_param(name);
            const bool input = param.rfind("in", 0) == 0;
            const int k = std::stoi(param.substr(input ? 2 : 3));
            const std::string type(dlc::codegen::cuda::cuda_type(input ? input_dtype(cases[i], size_t(k))
                                                                       : output_dtype(cases[i])));
            return "static_cast<" + type + "*>(a[" + std::to_string(k + (input ? 0 : kOpOutputSlot)) + "])";
          };
          const std::string tag = "case" + std::to_string(i);
          out << emulated(case_kernels(cases[i]), tag, argument) << "const bool " << tag
              << "_registered = register_op(" << i << ", " << tag << "::run);\n";
        }
      });
}
