// libFuzzer target: arbitrary bytes as an ONNX ModelProto through the importer (with constant
// folding on the CPU kernels). A clean rejection is a dlc::Error; anything a sanitizer or libFuzzer
// reports (crash, leak, overflow, timeout, out-of-memory) is a bug.
//
// With DLC_FUZZ_STRICT=1 in the environment, a std::exception that is not a dlc::Error aborts
// too: the tool would print it, but its message names no file or node.
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "codegen/cpu_evaluator.h"
#include "dlc/error.h"
#include "frontend/onnx_import.h"

namespace {

bool strict() {
  static const bool s = [] {
    const char* v = std::getenv("DLC_FUZZ_STRICT");
    return v && *v && *v != '0';
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (size > size_t(INT32_MAX) || !model.ParseFromArray(data, int(size))) return 0;
  dlc::codegen::CpuEvaluator evaluator;
  dlc::frontend::ImportOptions options;
  options.evaluator = &evaluator;
  options.batch = 2;  // binds symbolic leading dims so that more models get past the signature
  try {
    dlc::frontend::import_onnx_model(model, "", options, "fuzz.onnx");
  } catch (const dlc::Error&) {
  } catch (const std::exception& e) {
    if (strict()) {
      std::fprintf(stderr, "non-dlc::Error exception escaped the importer: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
