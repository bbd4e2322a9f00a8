// The training loop.
#include "tools/driver/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "dlc/error.h"
#include "dlc/npy.h"
#include "frontend/onnx_export.h"
#include "passes/optimizer.h"

namespace dlc::driver {

namespace {

using Clock = std::chrono::steady_clock;

// Arrays of a data file, checked against the session's inputs (all but the runtime scalars).
struct Dataset {
  std::map<std::string, Tensor> arrays;
  int64_t rows = 0;
};

bool is_runtime_scalar(const std::string& name) {
  return name == passes::kLearningRateInput || name == passes::kStepInput;
}

Dataset load_dataset(const std::string& path, const Session& session, int64_t batch) {
  Dataset d;
  std::map<std::string, Tensor> all = read_npz(path);
  for (const auto& sig : session.inputs()) {
    if (is_runtime_scalar(sig.name)) continue;
    auto it = all.find(sig.name);
    if (it == all.end())
      throw Error(fmt::format("{}: no array named '{}' (the model needs {} per batch)", path, sig.name,
                              sig.type.str()));
    const Tensor& t = it->second;
    Shape row(sig.type.shape.begin() + 1, sig.type.shape.end());
    Shape have(t.type.shape.begin() + (t.type.shape.empty() ? 0 : 1), t.type.shape.end());
    if (t.type.dtype != sig.type.dtype || t.type.shape.empty() || have != row)
      throw Error(fmt::format("{}: array '{}' is {}, but the model needs {} rows of {}{}", path, sig.name,
                              t.type.str(), dtype_name(sig.type.dtype), dtype_name(sig.type.dtype),
                              shape_str(row)));
    if (d.rows && t.type.shape[0] != d.rows)
      throw Error(
          fmt::format("{}: array '{}' has {} rows, others have {}", path, sig.name, t.type.shape[0], d.rows));
    d.rows = t.type.shape[0];
    d.arrays[sig.name] = std::move(it->second);
  }
  if (d.rows < batch)
    throw Error(fmt::format("{}: {} rows is fewer than one batch of {}", path, d.rows, batch));
  return d;
}

// Rows order[first … first+batch) of an array whose leading dimension is the row.
Tensor take_rows(const Tensor& array, const std::vector<int64_t>& order, int64_t first, int64_t batch) {
  const size_t row_bytes = array.bytes.size() / size_t(array.type.shape[0]);
  Shape shape = array.type.shape;
  shape[0] = batch;
  Tensor t(TensorType{array.type.dtype, shape});
  for (int64_t r = 0; r < batch; ++r)
    copy_bytes(t.bytes.data() + size_t(r) * row_bytes,
                array.bytes.data() + size_t(order[first + r]) * row_bytes, row_bytes);
  return t;
}

void feed_batch(Session& session, const Dataset& d, const std::vector<int64_t>& order, int64_t first,
                int64_t batch) {
  for (const auto& [name, array] : d.arrays) session.set_input(name, take_rows(array, order, first, batch));
}

Tensor scalar(float v) { return Tensor::scalar_f32(v); }

// Mean cross-entropy and accuracy of logits [B, C] against class labels [B].
void score(const Tensor& logits, const Tensor& labels, double* loss_sum, int64_t* correct) {
  const int64_t b = logits.type.shape[0], c = logits.type.numel() / std::max<int64_t>(b, 1);
  const float* x = logits.data<float>();
  std::vector<int64_t> y = labels.as_int64();
  for (int64_t i = 0; i < b; ++i) {
    if (y[i] < 0 || y[i] >= c) throw Error(fmt::format("eval label {} is outside [0, {})", y[i], c));
    const float* row = x + i * c;
    const int64_t best = std::max_element(row, row + c) - row;
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(double(row[j] - row[best]));
    *loss_sum += std::log(sum) - double(row[y[i]] - row[best]);
    *correct += best == y[i];
  }
}

}  // namespace

TrainReport train(const std::string& model_path, TrainCompileOptions compile, const TrainOptions& options) {
  if (options.batch <= 0) throw Error("--batch must be positive");
  compile.compile.import.batch = options.batch;
  Compiled c = compile_training(model_path, compile);
  auto session = Session::create(c.plan, {options.threads});
  Dataset data = load_dataset(options.data, *session, options.batch);

  const int64_t per_epoch = data.rows / options.batch;  // the last partial batch is dropped
  const int64_t total = options.steps > 0 ? options.steps : per_epoch * options.epochs;
  std::vector<int64_t> order(size_t(data.rows));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(options.seed);
  std::ofstream log;
  if (!options.log.empty()) {
    log.open(options.log);
    if (!log) throw Error(fmt::format("{}: cannot write the log", options.log));
  }
  const std::string loss_name = session->outputs().at(0).name;
  TrainReport report;
  const auto start = Clock::now();
  for (int64_t step = 0; step < total; ++step) {
    const int64_t in_epoch = step % per_epoch;
    if (in_epoch == 0 && options.shuffle) std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = Clock::now();
    feed_batch(*session, data, order, in_epoch * options.batch, options.batch);
    session->set_input(passes::kLearningRateInput, scalar(float(options.lr)));
    session->set_input(passes::kStepInput, scalar(float(step + 1)));
    session->run();
    report.last_loss = session->output(loss_name).as_double()[0];
    if (!std::isfinite(report.last_loss))
      throw Error(fmt::format("step {}: the loss is {}; lower --lr", step + 1, report.last_loss));
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    const double sps = double(options.batch) / dt;
    if (log)
      log << nlohmann::json{{"step", step + 1},
                            {"loss", report.last_loss},
                            {"lr", options.lr},
                            {"samples_per_s", sps}}
                 .dump()
          << "\n";
    if (options.on_step) options.on_step(step + 1, total, report.last_loss, sps);
  }
  report.steps = total;
  report.train_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report.samples_per_s = report.train_seconds > 0 ? double(total * options.batch) / report.train_seconds : 0;

  if (!options.export_path.empty()) {
    std::map<std::string, Tensor> trained;
    for (const std::string& name : session->state_names()) trained[name] = session->read_state(name);
    frontend::export_trained_onnx(model_path, trained, options.export_path);
  }
  if (!options.eval_data.empty()) {
    Compiled inference = compile_model(model_path, compile.compile);
    auto eval = Session::create(inference.plan, {options.threads});
    for (const std::string& name : eval->state_names()) eval->write_state(name, session->read_state(name));
    // Labels are not an input of the inference plan: read them beside the inputs.
    Dataset eval_data = load_dataset(options.eval_data, *eval, options.batch);
    std::map<std::string, Tensor> all = read_npz(options.eval_data);
    auto label = all.find(compile.loss.label);
    if (label == all.end() || label->second.type.shape.empty() ||
        label->second.type.shape[0] != eval_data.rows)
      throw Error(fmt::format("{}: needs an array '{}' of {} labels", options.eval_data, compile.loss.label,
                              eval_data.rows));
    const int64_t batches = eval_data.rows / options.batch;
    double loss_sum = 0;
    int64_t correct = 0;
    std::vector<int64_t> sequential(size_t(eval_data.rows));
    std::iota(sequential.begin(), sequential.end(), 0);
    for (int64_t b = 0; b < batches; ++b) {
      feed_batch(*eval, eval_data, sequential, b * options.batch, options.batch);
      eval->run();
      score(eval->output(eval->outputs().at(0).name),
            take_rows(label->second, sequential, b * options.batch, options.batch), &loss_sum, &correct);
    }
    report.eval_samples = batches * options.batch;
    report.eval_loss = loss_sum / double(report.eval_samples);
    report.eval_accuracy = double(correct) / double(report.eval_samples);
  }
  return report;
}

}  // namespace dlc::driver
