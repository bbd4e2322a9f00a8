// Data files and batches.
#include "tools/driver/dataset.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "dlc/npy.h"

namespace dlc::driver {

Dataset load_dataset(const std::string& path, const std::vector<Session::Signature>& inputs, int64_t batch) {
  std::map<std::string, Tensor> arrays = read_npz(path);
  return select_dataset(arrays, path, inputs, batch);
}

Dataset select_dataset(std::map<std::string, Tensor>& all, const std::string& path,
                       const std::vector<Session::Signature>& inputs, int64_t batch) {
  Dataset d;
  for (const Session::Signature& sig : inputs) {
    auto it = all.find(sig.name);
    if (it == all.end())
      throw Error(fmt::format("{}: no array named '{}' (the model needs {} per batch)", path, sig.name,
                              sig.type.str()));
    const Tensor& t = it->second;
    Shape row(sig.type.shape.begin() + (sig.type.shape.empty() ? 0 : 1), sig.type.shape.end());
    Shape have(t.type.shape.begin() + (t.type.shape.empty() ? 0 : 1), t.type.shape.end());
    if (t.type.dtype != sig.type.dtype || t.type.shape.empty() || have != row)
      throw Error(fmt::format("{}: array '{}' is {}, but the model needs {} rows shaped {}", path, sig.name,
                              t.type.str(), dtype_name(sig.type.dtype), shape_str(row)));
    if (!d.arrays.empty() && t.type.shape[0] != d.rows)
      throw Error(
          fmt::format("{}: array '{}' has {} rows, others have {}", path, sig.name, t.type.shape[0], d.rows));
    d.rows = t.type.shape[0];
    d.arrays[sig.name] = std::move(it->second);
  }
  if (d.rows < batch)
    throw Error(fmt::format("{}: {} rows is fewer than one batch of {}", path, d.rows, batch));
  return d;
}

Tensor take_rows(const Tensor& array, const std::vector<int64_t>& indices) {
  const size_t row_bytes = array.type.shape[0] ? array.bytes.size() / size_t(array.type.shape[0]) : 0;
  Shape shape = array.type.shape;
  shape[0] = int64_t(indices.size());
  Tensor t(TensorType{array.type.dtype, shape});
  for (size_t r = 0; r < indices.size(); ++r)
    copy_bytes(t.bytes.data() + r * row_bytes, array.bytes.data() + size_t(indices[r]) * row_bytes,
               row_bytes);
  return t;
}

std::map<std::string, Tensor> gather_batch(const Dataset& data, const std::vector<int64_t>& indices) {
  std::map<std::string, Tensor> batch;
  for (const auto& [name, array] : data.arrays) batch[name] = take_rows(array, indices);
  return batch;
}

}  // namespace dlc::driver
