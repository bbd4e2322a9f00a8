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

// Running sums of one evaluation: the loss summed over the units the loss averages (rows for
// cross-entropy, elements otherwise) and the hits among `scored` predictions.
struct Score {
  double loss_sum = 0;
  int64_t units = 0, correct = 0, scored = 0;
};

// Cross-entropy of logits [B, C] against class labels [B], and top-1 hits.
void score_cross_entropy(const Tensor& logits, const Tensor& labels, Score* s) {
  const int64_t b = logits.type.shape[0], c = logits.type.numel() / std::max<int64_t>(b, 1);
  const float* x = logits.data<float>();
  std::vector<int64_t> y = labels.as_int64();
  for (int64_t i = 0; i < b; ++i) {
    if (y[i] < 0 || y[i] >= c) throw Error(fmt::format("eval label {} is outside [0, {})", y[i], c));
    const float* row = x + i * c;
    const int64_t best = std::max_element(row, row + c) - row;
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(double(row[j] - row[best]));
    s->loss_sum += std::log(sum) - double(row[y[i]] - row[best]);
    s->correct += best == y[i];
  }
  s->units += b;
  s->scored += b;
}

// The elementwise losses --eval scores against float targets of the prediction's shape.
enum class ElementwiseLoss { Mse, L1, BceLogits };

ElementwiseLoss elementwise_loss(const std::string& kind) {
  return kind == "mse"  ? ElementwiseLoss::Mse
         : kind == "l1" ? ElementwiseLoss::L1
                        : ElementwiseLoss::BceLogits;
}

// Adds the loss of each element to `s`; bce_logits also counts the hits of sign(x) against
// target > 0.5.
void score_elementwise(ElementwiseLoss loss, const Tensor& prediction, const Tensor& target, Score* s) {
  const std::vector<double> x = prediction.as_double(), y = target.as_double();
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - y[i];
    switch (loss) {
      case ElementwiseLoss::Mse:
        s->loss_sum += d * d;
        break;
      case ElementwiseLoss::L1:
        s->loss_sum += std::abs(d);
        break;
      case ElementwiseLoss::BceLogits:
        s->loss_sum += std::max(x[i], 0.0) - x[i] * y[i] + std::log1p(std::exp(-std::abs(x[i])));
        s->correct += (x[i] > 0) == (y[i] > 0.5);
        ++s->scored;
        break;
    }
  }
  s->units += int64_t(x.size());
}

std::unique_ptr<Session> inference_session(const plan::TrainingInfo& info, int threads) {
  CompileOptions options;
  options.device = info.device();
  options.import.batch = info.batch();
  for (const plan::NamedShape& s : info.input_shapes())
    options.import.shapes[s.name()] = Shape(s.dims().begin(), s.dims().end());
  std::unique_ptr<ir::Graph> g = import_and_optimize_bytes(info.source_model(), info.source_name(), options);
  return Session::create(codegen::lower_to_plan(*g, {info.device(), {}}), {threads});
}

}  // namespace

EvalReport evaluate(const plan::TrainingInfo& info, const Session& trained, const std::string& data_path,
                    int threads) {
  const std::string kind = info.loss().empty() ? "cross_entropy" : info.loss();
  if (kind != "cross_entropy" && kind != "mse" && kind != "l1" && kind != "bce_logits")
    throw Error(
        fmt::format("--eval scores a model against labels; --loss {} has none (use cross_entropy, mse, l1 "
                    "or bce_logits)",
                    kind));
  std::unique_ptr<Session> eval = inference_session(info, threads);
  for (const std::string& name : eval->state_names()) eval->write_state(name, trained.read_state(name));
  const int64_t batch = info.batch();
  // Labels are not an input of the inference plan: they are read beside the inputs.
  std::map<std::string, Tensor> arrays = read_npz(data_path);
  auto label = arrays.find(info.label());
  Tensor labels = label == arrays.end() ? Tensor() : std::move(label->second);
  Dataset data = select_dataset(arrays, data_path, eval->inputs(), batch);
  const bool classes = kind == "cross_entropy";
  if (labels.type.shape.empty() || labels.type.shape[0] != data.rows ||
      classes == is_floating(labels.type.dtype))
    throw Error(fmt::format("{}: needs {} array '{}' of {} labels", data_path,
                            classes ? "an integer" : "a float", info.label(), data.rows));
  const std::string output = info.loss_output().empty() ? eval->outputs().at(0).name : info.loss_output();
  EvalReport report;
  Score score;
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  for (int64_t first = 0; first + batch <= data.rows; first += batch) {
    std::iota(rows.begin(), rows.end(), first);
    for (const auto& [name, t] : gather_batch(data, rows)) eval->set_input(name, t);
    eval->run();
    Tensor prediction = eval->output(output);
    Tensor target = take_rows(labels, rows);
    if (classes) {
      score_cross_entropy(prediction, target, &score);
    } else {
      if (target.type.shape != prediction.type.shape)
        throw Error(fmt::format("{}: a batch of label array '{}' is {}, output '{}' is {}", data_path,
                                info.label(), target.type.str(), output, prediction.type.str()));
      score_elementwise(elementwise_loss(kind), prediction, target, &score);
    }
    report.samples += batch;
  }
  report.loss = score.loss_sum / double(std::max<int64_t>(score.units, 1));
  if (score.scored > 0) report.accuracy = double(score.correct) / double(score.scored);
  return report;
}

}  // namespace dlc::driver
