// Evaluation with an inference plan.
#include "tools/driver/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/npy.h"
#include "tools/driver/compile.h"
#include "tools/driver/dataset.h"

namespace dlc::driver {

namespace {

// Sums the cross-entropy of logits [B, C] against class labels [B] and counts the hits.
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

std::unique_ptr<Session> inference_session(const plan::TrainingInfo& info, int threads) {
  CompileOptions options;
  options.device = info.device();
  options.import.batch = info.batch();
  for (const plan::NamedShape& s : info.input_shapes())
    options.import.shapes[s.name()] = Shape(s.dims().begin(), s.dims().end());
  std::unique_ptr<ir::Graph> g = import_and_optimize_bytes(info.source_model(), info.source_name(), options);
  return Session::create(codegen::lower_to_plan(*g, {info.device()}), {threads});
}

}  // namespace

EvalReport evaluate(const plan::TrainingInfo& info, const Session& trained, const std::string& data_path,
                    int threads) {
  std::unique_ptr<Session> eval = inference_session(info, threads);
  for (const std::string& name : eval->state_names()) eval->write_state(name, trained.read_state(name));
  const int64_t batch = info.batch();
  // Labels are not an input of the inference plan: they are read beside the inputs.
  std::map<std::string, Tensor> arrays = read_npz(data_path);
  auto label = arrays.find(info.label());
  Tensor labels = label == arrays.end() ? Tensor() : std::move(label->second);
  Dataset data = select_dataset(arrays, data_path, eval->inputs(), batch);
  if (labels.type.shape.empty() || labels.type.shape[0] != data.rows || is_floating(labels.type.dtype))
    throw Error(
        fmt::format("{}: needs an integer array '{}' of {} labels", data_path, info.label(), data.rows));
  const std::string output = eval->outputs().at(0).name;
  EvalReport report;
  double loss_sum = 0;
  int64_t correct = 0;
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  for (int64_t first = 0; first + batch <= data.rows; first += batch) {
    std::iota(rows.begin(), rows.end(), first);
    for (const auto& [name, t] : gather_batch(data, rows)) eval->set_input(name, t);
    eval->run();
    score(eval->output(output), take_rows(labels, rows), &loss_sum, &correct);
    report.samples += batch;
  }
  report.loss = loss_sum / double(report.samples);
  report.accuracy = double(correct) / double(report.samples);
  return report;
}

}  // namespace dlc::driver
