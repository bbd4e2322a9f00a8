// Checkpoint files.
#include "tools/driver/checkpoint.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dlc/error.h"
#include "dlc/npy.h"

namespace dlc::driver {

namespace {

constexpr const char* kMetadataEntry = "__dlc.checkpoint";
constexpr const char* kOrderEntry = "__dlc.order";
constexpr const char* kFormat = "dlc-checkpoint";
constexpr int kVersion = 1;

bool is_reserved(const std::string& name) { return name.starts_with("__dlc."); }

Tensor bytes_tensor(const std::string& text) {
  Tensor t(TensorType{DType::U8, {int64_t(text.size())}});
  copy_bytes(t.bytes.data(), text.data(), text.size());
  return t;
}

TrainingCheckpoint from_archive(std::map<std::string, Tensor> arrays, const std::string& path) {
  auto metadata = arrays.find(kMetadataEntry);
  if (metadata == arrays.end())
    throw Error(fmt::format("{}: not a dlc checkpoint (no '{}' entry)", path, kMetadataEntry));
  const Tensor& text = metadata->second;
  nlohmann::json meta = nlohmann::json::parse(text.bytes.begin(), text.bytes.end(), nullptr, false);
  if (meta.is_discarded() || !meta.is_object())
    throw Error(fmt::format("{}: corrupt checkpoint (its metadata is not JSON)", path));
  if (meta.value("format", "") != kFormat || meta.value("version", 0) != kVersion)
    throw Error(fmt::format("{}: not a version-{} dlc checkpoint", path, kVersion));
  TrainingCheckpoint c;
  try {
    c.step = meta.at("step").get<int64_t>();
    c.micro_step = meta.at("micro_step").get<int64_t>();
    c.epoch = meta.at("epoch").get<int64_t>();
    c.sampler.rng = meta.at("rng").get<std::string>();
    c.sampler.order_epoch = meta.at("order_epoch").get<int64_t>();
    c.sampler.shuffle = meta.at("shuffle").get<bool>();
    c.plan_fingerprint = meta.at("plan_fingerprint").get<std::string>();
    c.lr_schedule = meta.at("lr_schedule").get<std::string>();
    for (const std::string& name : meta.at("state").get<std::vector<std::string>>()) {
      auto it = arrays.find(name);
      if (it == arrays.end() || is_reserved(name))
        throw Error(fmt::format("{}: corrupt checkpoint (state '{}' is missing)", path, name));
      c.state[name] = std::move(it->second);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: corrupt checkpoint (metadata: {})", path, e.what()));
  }
  if (c.step < 0 || c.micro_step < c.step)
    throw Error(fmt::format("{}: corrupt checkpoint (step {}, micro-step {})", path, c.step, c.micro_step));
  auto order = arrays.find(kOrderEntry);
  if (order == arrays.end() || order->second.type.dtype != DType::I64 || order->second.type.rank() != 1)
    throw Error(fmt::format("{}: corrupt checkpoint (no int64 row order '{}')", path, kOrderEntry));
  c.sampler.order = order->second.as_int64();
  return c;
}

}  // namespace

void write_checkpoint(const std::string& path, const TrainingCheckpoint& c) {
  std::map<std::string, Tensor> arrays;
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [name, value] : c.state) {
    if (is_reserved(name)) throw Error(fmt::format("{}: state '{}' uses a reserved name", path, name));
    arrays[name] = value;
    names.push_back(name);
  }
  nlohmann::json meta = {{"format", kFormat},
                         {"version", kVersion},
                         {"step", c.step},
                         {"micro_step", c.micro_step},
                         {"epoch", c.epoch},
                         {"rng", c.sampler.rng},
                         {"order_epoch", c.sampler.order_epoch},
                         {"shuffle", c.sampler.shuffle},
                         {"plan_fingerprint", c.plan_fingerprint},
                         {"lr_schedule", c.lr_schedule},
                         {"state", names}};
  arrays[kMetadataEntry] = bytes_tensor(meta.dump());
  arrays[kOrderEntry] = Tensor::from_int64(c.sampler.order, {int64_t(c.sampler.order.size())});
  write_npz(path, arrays);
}

TrainingCheckpoint read_checkpoint(const std::string& path) { return from_archive(read_npz(path), path); }

}  // namespace dlc::driver
