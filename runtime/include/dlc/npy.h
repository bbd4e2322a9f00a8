// NumPy .npy and .npz files: the data format of `dlc run` outputs and of `--data`.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "dlc/tensor.h"

namespace dlc {

/// Decodes a .npy image (format 1.0–3.0, little-endian, C order); `what` names it in errors.
Tensor parse_npy(std::string_view bytes, const std::string& what);
Tensor read_npy(const std::string& path);
std::string encode_npy(const Tensor& t);
/// Writes atomically (temporary file + rename).
void write_npy(const std::string& path, const Tensor& t);

/// Every array of a .npz archive (stored or deflated), keyed by name without ".npy".
std::map<std::string, Tensor> read_npz(const std::string& path);
void write_npz(const std::string& path, const std::map<std::string, Tensor>& arrays);

}  // namespace dlc
