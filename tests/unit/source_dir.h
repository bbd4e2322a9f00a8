// Where the tests find the checkout's data files (parity models, golden kernels): the folder named
// by $DLC_SOURCE_DIR, else the source folder the tests were built from. The override lets a test
// binary built on one machine run from another copy of the checkout (scripts/gpu_check.sh with a
// bundle from scripts/gpu_bundle.sh).
#pragma once

#include <cstdlib>
#include <string>

namespace dlc::test {

inline std::string source_dir() {
  const char* dir = std::getenv("DLC_SOURCE_DIR");
  return dir && *dir ? dir : DLC_SOURCE_DIR;
}

/// The folder of a parity model: model.onnx and data.npz (tests/parity/make_parity_models.py).
inline std::string parity_dir(const std::string& model) {
  return source_dir() + "/tests/parity/data/" + model;
}

}  // namespace dlc::test
