// The training loop.
#include "tools/driver/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "dlc/error.h"
#include "dlc/session.h"
#include "frontend/onnx_export.h"
#include "passes/loss_scaling.h"
#include "passes/optimizer.h"
#include "tools/driver/batch_prefetcher.h"
#include "tools/driver/batch_sampler.h"
#include "tools/driver/checkpoint.h"
#include "tools/driver/evaluate.h"
#include "tools/driver/training_plan.h"

namespace dlc::driver {

namespace {

using Clock = std::chrono::steady_clock;

Tensor bool_scalar(bool v) {
  Tensor t(TensorType{DType::Bool, {}});
  t.bytes[0] = v ? 1 : 0;
  return t;
}

// The plan's inputs that come from the data (not the runtime scalars).
std::vector<Session::Signature> data_inputs(const Session& session) {
  std::vector<Session::Signature> inputs;
  for (const Session::Signature& sig : session.inputs())
    if (!is_runtime_scalar(sig.name)) inputs.push_back(sig);
  return inputs;
}

bool has_input(const Session& session, const std::string& name) {
  for (const Session::Signature& sig : session.inputs())
    if (sig.name == name) return true;
  return false;
}

std::map<std::string, Tensor> read_all_state(const Session& session) {
  std::map<std::string, Tensor> state;
  for (const std::string& name : session.state_names()) state[name] = session.read_state(name);
  return state;
}

// What stays fixed over one run: the plan's identity, the schedule, the shape of the loop.
struct RunLayout {
  int64_t micro_steps = 1;        // micro-batches per optimizer step
  int64_t batches_per_epoch = 0;  // micro-batches
  std::string fingerprint;
  std::string schedule;
};

TrainingCheckpoint make_checkpoint(const Session& session, const BatchSampler& sampler,
                                   const RunLayout& layout, int64_t steps_done) {
  TrainingCheckpoint c;
  c.state = read_all_state(session);
  c.step = steps_done;
  c.micro_step = steps_done * layout.micro_steps;
  c.epoch = c.micro_step / layout.batches_per_epoch;
  c.sampler = sampler.state();
  c.plan_fingerprint = layout.fingerprint;
  c.lr_schedule = layout.schedule;
  return c;
}

// Loads `path` into the session and the sampler; returns the optimizer steps it had done.
int64_t resume_from(const std::string& path, Session& session, BatchSampler& sampler,
                    const RunLayout& layout) {
  TrainingCheckpoint c = read_checkpoint(path);
  if (c.plan_fingerprint != layout.fingerprint)
    throw Error(
        fmt::format("{}: the checkpoint belongs to another plan (fingerprint {}, this run's {}); resume "
                    "with the model and training options it was made with",
                    path, c.plan_fingerprint, layout.fingerprint));
  if (c.lr_schedule != layout.schedule)
    throw Error(
        fmt::format("{}: the checkpoint was made with the learning-rate schedule '{}', this run's is '{}'",
                    path, c.lr_schedule, layout.schedule));
  if (c.micro_step != c.step * layout.micro_steps)
    throw Error(fmt::format("{}: corrupt checkpoint (micro-step {} at step {})", path, c.micro_step, c.step));
  try {
    sampler.restore(c.sampler);
    for (const std::string& name : session.state_names()) {
      auto it = c.state.find(name);
      if (it == c.state.end()) throw Error(fmt::format("no state '{}'", name));
      session.write_state(name, it->second);
    }
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  return c.step;
}

// Runs the micro-batches of optimizer steps: feeds each prefetched batch, asks for the next
// one, sets the runtime scalars and runs the plan.
class StepRunner {
 public:
  StepRunner(Session& session, BatchSampler& sampler, BatchPrefetcher& prefetcher, int64_t micro_steps,
             int64_t total_micro_batches)
      : session_(session),
        sampler_(sampler),
        prefetcher_(prefetcher),
        micro_steps_(micro_steps),
        total_micro_batches_(total_micro_batches),
        loss_name_(session.outputs().at(0).name),
        feeds_step_(has_input(session, passes::kStepInput)),
        feeds_apply_(has_input(session, passes::kApplyInput)) {}

  /// Starts gathering the first micro-batch of optimizer step `step` (0-based).
  void start_at(int64_t step) {
    if (step * micro_steps_ < total_micro_batches_) prefetcher_.request(sampler_.draw(step * micro_steps_));
  }

  /// Runs optimizer step `step` (0-based) with learning rate `lr`; returns the mean loss of its
  /// micro-batches.
  double run(int64_t step, double lr) {
    double loss_sum = 0;
    for (int64_t k = 0; k < micro_steps_; ++k) {
      for (const auto& [name, t] : prefetcher_.take()) session_.set_input(name, t);
      const int64_t next = step * micro_steps_ + k + 1;
      if (next < total_micro_batches_) prefetcher_.request(sampler_.draw(next));
      session_.set_input(passes::kLearningRateInput, Tensor::scalar_f32(float(lr)));
      if (feeds_step_) session_.set_input(passes::kStepInput, Tensor::scalar_f32(float(step + 1)));
      if (feeds_apply_) session_.set_input(passes::kApplyInput, bool_scalar(k == micro_steps_ - 1));
      session_.run();
      loss_sum += session_.output(loss_name_).as_double()[0];
    }
    return loss_sum / double(micro_steps_);
  }

 private:
  Session& session_;
  BatchSampler& sampler_;
  BatchPrefetcher& prefetcher_;
  const int64_t micro_steps_, total_micro_batches_;
  const std::string loss_name_;
  const bool feeds_step_, feeds_apply_;
};

// A checkpoint path whose folder does not exist would fail only at the first save: fail now.
void check_writable_folder(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder))
    throw Error(fmt::format("{}: the folder {} does not exist", path, folder.string()));
}

void check_batch(int64_t requested, int64_t planned, const std::string& what) {
  if (requested < 0) throw Error("--batch must be positive");
  if (requested > 0 && requested != planned)
    throw Error(fmt::format("{}: --batch {} does not match the batch of {} it was compiled for", what,
                            requested, planned));
}

}  // namespace

Compiled compile_for_training(const std::string& model_path, TrainCompileOptions compile,
                              const TrainOptions& options) {
  compile.compile.import.batch = options.batch > 0 ? options.batch : kDefaultBatch;
  Compiled c = compile_training(model_path, compile);
  if (!c.stopped && options.batch > 0 && c.plan.training().batch() != options.batch)
    throw Error(fmt::format("{}: the model fixes its batch at {}; --batch {} does not apply", model_path,
                            c.plan.training().batch(), options.batch));
  return c;
}

TrainReport train_plan(const plan::Plan& plan, const std::string& plan_name, const TrainOptions& options) {
  const plan::TrainingInfo& info = plan.training();
  check_batch(options.batch, info.batch(), plan_name);
  const int64_t batch = info.batch();
  SessionOptions session_options;
  session_options.threads = options.threads;
  session_options.cuda_graph = options.cuda_graph;
  session_options.cudnn_benchmark = options.cudnn_benchmark;
  auto session = Session::create(plan, session_options);
  Dataset data = load_dataset(options.data, data_inputs(*session), batch);
  BatchSampler sampler(data.rows, batch, options.shuffle, options.seed);

  RunLayout layout;
  layout.micro_steps = info.micro_steps();
  layout.batches_per_epoch = sampler.batches_per_epoch();
  layout.fingerprint = plan_fingerprint(plan);
  const int64_t total =
      options.steps > 0 ? options.steps : layout.batches_per_epoch * options.epochs / layout.micro_steps;
  if (total <= 0)
    throw Error(fmt::format("{}: {} epoch(s) of {} batches make no optimizer step of {} micro-batches",
                            options.data, options.epochs, layout.batches_per_epoch, layout.micro_steps));
  LrScheduleOptions schedule_options = options.schedule;
  if (schedule_options.total_steps == 0) schedule_options.total_steps = total;
  const LrSchedule schedule(schedule_options);
  layout.schedule = schedule.describe();

  if (!options.save.empty()) check_writable_folder(options.save);
  TrainReport report;
  report.memory = session->memory_report();
  if (!options.resume.empty()) report.first_step = resume_from(options.resume, *session, sampler, layout);
  if (report.first_step > total)
    throw Error(fmt::format("{}: the checkpoint is at step {}, past the {} steps of this run", options.resume,
                            report.first_step, total));
  std::ofstream log;
  if (!options.log.empty()) {
    log.open(options.log, options.resume.empty() ? std::ios::trunc : std::ios::app);
    if (!log) throw Error(fmt::format("{}: cannot write the log", options.log));
  }
  auto save = [&](int64_t steps_done) {
    write_checkpoint(options.save, make_checkpoint(*session, sampler, layout, steps_done));
  };

  BatchPrefetcher prefetcher(data);
  StepRunner runner(*session, sampler, prefetcher, layout.micro_steps, total * layout.micro_steps);
  runner.start_at(report.first_step);
  const std::vector<std::string> state_names = session->state_names();
  // fp16 (passes/loss_scaling.h): the graph counts the steps it skipped for an inf or NaN.
  const bool has_loss_scale =
      std::find(state_names.begin(), state_names.end(), passes::kLossScaleSkippedSteps) != state_names.end();
  auto skipped_so_far = [&] {
    return has_loss_scale ? int64_t(*session->read_state(passes::kLossScaleSkippedSteps).data<float>()) : 0;
  };
  int64_t skipped_before = skipped_so_far(), nonfinite_losses_in_a_row = 0;
  const auto start = Clock::now();
  for (int64_t step = report.first_step; step < total; ++step) {
    const auto t0 = Clock::now();
    // The schedule follows the iterations, skipped or not, as PyTorch's scheduler.step() called
    // every iteration does.
    const double lr = schedule.at(step);
    report.last_loss = runner.run(step, lr);
    const int64_t skipped_now = skipped_so_far();
    const bool skipped = skipped_now > skipped_before;
    skipped_before = skipped_now;
    report.skipped_steps += skipped;
    if (std::isfinite(report.last_loss)) {
      nonfinite_losses_in_a_row = 0;
    } else if (!has_loss_scale) {
      throw Error(fmt::format("step {}: the loss is {}; lower --lr", step + 1, report.last_loss));
    } else if (!skipped) {
      throw Error(fmt::format("step {}: the loss is {} and the loss scaling did not skip the step", step + 1,
                              report.last_loss));
    } else if (++nonfinite_losses_in_a_row >= kMaxNonfiniteLossesInARow) {
      throw Error(fmt::format(
          "step {}: the loss has been inf or NaN for {} steps in a row (each skipped by the fp16 loss "
          "scaling); the forward pass overflows: lower --lr or use --precision bf16",
          step + 1, nonfinite_losses_in_a_row));
    }
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    const double sps = double(batch * layout.micro_steps) / dt;
    if (log) {
      // A non-finite loss is written as null.
      nlohmann::json line{{"step", step + 1}, {"loss", report.last_loss}, {"lr", lr}, {"samples_per_s", sps}};
      // fp16: whether the step was skipped, and the loss scale the next step uses (halved after a
      // skipped step).
      if (has_loss_scale) {
        line["skipped"] = skipped;
        line["loss_scale"] = *session->read_state(passes::kLossScale).data<float>();
      }
      log << line.dump() << "\n";
    }
    if (options.on_step) options.on_step(step + 1, total, report.last_loss, sps);
    if (!options.save.empty() && options.save_every > 0 && (step + 1) % options.save_every == 0 &&
        step + 1 < total)
      save(step + 1);
  }
  report.steps = total - report.first_step;
  report.train_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report.samples_per_s =
      report.train_seconds > 0 ? double(report.steps * batch * layout.micro_steps) / report.train_seconds : 0;
  if (!options.save.empty()) save(total);

  if (!options.export_path.empty())
    frontend::export_trained_onnx_bytes(info.source_model(), info.source_name(), read_all_state(*session),
                                        options.export_path);
  if (!options.eval_data.empty()) {
    EvalReport eval = evaluate(info, *session, options.eval_data, options.threads);
    report.eval_loss = eval.loss;
    report.eval_accuracy = eval.accuracy;
    report.eval_samples = eval.samples;
  }
  return report;
}

}  // namespace dlc::driver
