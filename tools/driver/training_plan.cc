// Training plan files and fingerprints.
#include "tools/driver/training_plan.h"

#include <fmt/format.h>

#include <fstream>

#include "dlc/error.h"
#include "dlc/hash.h"
#include "runtime/plan/plan_file.h"

namespace dlc::driver {

bool is_plan_path(const std::string& path) {
  if (path.ends_with(".dlcplan")) return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(plan::kPlanMagic.size(), '\0');
  return in && in.read(head.data(), std::streamsize(head.size())) && head == plan::kPlanMagic;
}

plan::Plan read_training_plan(const std::string& path) {
  plan::Plan p = plan::read_plan_file(path);
  if (!p.has_training())
    throw Error(fmt::format("{}: not a training plan (compile it with `dlc compile MODEL --train`)", path));
  const plan::TrainingInfo& info = p.training();
  if (info.batch() <= 0 || info.micro_steps() < 1 || info.source_model().empty())
    throw Error(fmt::format("{}: corrupt plan (invalid training settings)", path));
  return p;
}

std::string plan_fingerprint(const plan::Plan& p) {
  plan::Plan identity = p;
  identity.clear_initial_values();
  identity.mutable_training()->clear_source_model();
  identity.mutable_training()->clear_source_name();
  identity.clear_producer();
  std::string bytes;
  // Without map fields, protobuf's serialization of one message is the same every time.
  if (!identity.SerializeToString(&bytes)) throw Error("cannot serialize the plan to fingerprint it");
  return hex64(fnv1a64(bytes));
}

}  // namespace dlc::driver
