// dlc_bench_forward: import+compile time and forward latency of an ONNX model on the CPU runtime.
//
//   dlc_bench_forward MODEL.onnx --batch 8 --threads 2 --iters 10 --warmup 2
//       [--input NAME=FILE.npy] [--dump-output DIR]
//
// Prints one JSON object: compile_s, forward_ms_median, forward_ms_mean, batch, threads,
// param_bytes, arena_bytes, peak_bytes, max_rss_bytes. Inputs not given with --input are filled
// with a fixed-seed standard normal sample, so repeated runs measure the same work.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <thread>

#include "dlc/error.h"
#include "dlc/npy.h"
#include "dlc/session.h"
#include "tools/driver/compile.h"

namespace dlc::bench {

namespace {

struct Args {
  std::string model;
  int64_t batch = 8;
  int threads = 0;
  int iters = 10;
  int warmup = 2;
  std::vector<std::string> inputs;
  std::string dump_dir;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Tensor random_input(const Session::Signature& sig, std::mt19937& rng) {
  Tensor t(sig.type);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (sig.type.dtype == DType::F32) {
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.type.numel(); ++i) p[i] = normal(rng);
  } else if (sig.type.dtype == DType::F64) {
    double* p = t.data<double>();
    for (int64_t i = 0; i < t.type.numel(); ++i) p[i] = normal(rng);
  } else {
    throw Error(
        fmt::format("input '{}' ({}): only f32/f64 inputs get random values; pass --input {}=FILE.npy",
                    sig.name, sig.type.str(), sig.name));
  }
  return t;
}

std::map<std::string, Tensor> read_inputs(const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> values;
  for (const std::string& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("--input '{}': expected NAME=FILE.npy", spec));
    values[spec.substr(0, eq)] = read_npy(spec.substr(eq + 1));
  }
  return values;
}

int64_t max_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

nlohmann::json run(const Args& args) {
  std::map<std::string, Tensor> given = read_inputs(args.inputs);

  driver::CompileOptions options;
  options.import.batch = args.batch;
  auto start = Clock::now();
  driver::Compiled compiled = driver::compile_model(args.model, options);
  double compile_s = seconds_since(start);

  auto session = Session::create(compiled.plan, {args.threads});
  std::mt19937 rng(0);
  for (const auto& sig : session->inputs()) {
    auto it = given.find(sig.name);
    session->set_input(sig.name, it != given.end() ? it->second : random_input(sig, rng));
  }

  for (int i = 0; i < args.warmup; ++i) session->run();
  std::vector<double> ms;
  for (int i = 0; i < args.iters; ++i) {
    auto t0 = Clock::now();
    session->run();
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(n);

  if (!args.dump_dir.empty()) {
    for (const auto& sig : session->outputs()) {
      std::filesystem::path file = std::filesystem::path(args.dump_dir) / (sig.name + ".npy");
      std::filesystem::create_directories(file.parent_path());
      write_npy(file.string(), session->output(sig.name));
    }
  }

  int64_t arena = 0, peak = 0;
  for (const auto& stage : compiled.plan.stages()) {
    arena += stage.arena_bytes();
    peak += stage.peak_bytes();
  }
  nlohmann::json out;
  out["framework"] = "dlc";
  out["compile_s"] = compile_s;
  out["forward_ms_median"] = median;
  out["forward_ms_mean"] = mean;
  out["forward_ms_all"] = ms;
  out["batch"] = args.batch;
  out["threads"] = args.threads;
  out["iters"] = args.iters;
  out["warmup"] = args.warmup;
  out["param_bytes"] = compiled.plan.param_bytes();
  out["arena_bytes"] = arena;
  out["peak_bytes"] = peak;
  out["max_rss_bytes"] = max_rss_bytes();
  return out;
}

}  // namespace

}  // namespace dlc::bench

int main(int argc, char** argv) {
  dlc::bench::Args args;
  CLI::App app{"dlc_bench_forward: compile time and forward latency of an ONNX model on dlc's CPU runtime"};
  app.add_option("model", args.model, "MODEL.onnx")->required();
  app.add_option("--batch", args.batch, "binds the symbolic batch dimension")->check(CLI::PositiveNumber);
  app.add_option("--threads", args.threads, "CPU threads (0: all cores)")->check(CLI::NonNegativeNumber);
  app.add_option("--iters", args.iters, "timed runs")->check(CLI::PositiveNumber);
  app.add_option("--warmup", args.warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--input", args.inputs, "NAME=FILE.npy instead of the random input");
  app.add_option("--dump-output", args.dump_dir, "write every output of the last run as DIR/NAME.npy");
  CLI11_PARSE(app, argc, argv);
  if (args.threads == 0) args.threads = int(std::max(1u, std::thread::hardware_concurrency()));
  try {
    std::printf("%s\n", dlc::bench::run(args).dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
