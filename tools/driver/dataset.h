// Training and evaluation data: the arrays of a .npz file named after a plan's data inputs,
// checked against their types, and the gathering of rows into a batch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dlc/session.h"

namespace dlc::driver {

struct Dataset {
  std::map<std::string, Tensor> arrays;  // one per data input, rows along the first axis
  int64_t rows = 0;
};

/// Reads `path` and keeps the arrays named after `inputs` (the session's inputs minus the
/// runtime scalars), each [rows, …] with the input's dtype and per-row shape. Throws dlc::Error
/// naming the file and array; fewer rows than `batch` is an error.
Dataset load_dataset(const std::string& path, const std::vector<Session::Signature>& inputs, int64_t batch);
/// Same, over the arrays of `path` already read (the ones it keeps are moved out of `arrays`).
Dataset select_dataset(std::map<std::string, Tensor>& arrays, const std::string& path,
                       const std::vector<Session::Signature>& inputs, int64_t batch);

/// Rows `indices` of an array whose leading dimension is the row, in that order.
Tensor take_rows(const Tensor& array, const std::vector<int64_t>& indices);

/// take_rows of every array of `data`: one batch, keyed by input name.
std::map<std::string, Tensor> gather_batch(const Dataset& data, const std::vector<int64_t>& indices);

}  // namespace dlc::driver
