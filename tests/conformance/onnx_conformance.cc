// Runs the cases of ONNX's backend test suite (libonnx-testdata) whose ops are all in dlc's
// training op set and whose tensors are f32/f64/f16/i64/i32/i8/u8/bool, and compares with the expected
// outputs (rtol 1e-3, atol 1e-4). Cases listed in known_failures/*.txt (with the reason) may fail;
// any other failure, or a pass rate under 95%, fails the run.
//
// On the GPU (CUDA plans): `--device cuda` compiles each case for CUDA; a step with no CUDA path
// runs on the host by its CPU kernel (the cases that have one are counted), or with
// --no-host-fallback the case is counted as refused, not failed. Where no GPU is (or the GPU machine has
// no build tools and no test data), `--device cuda --save-plans DIR` compiles only, writing a
// copy of each compiled case's folder with the plan of each data set beside its .pb files
// (`plan.dlcplan`); `--data DIR --precompiled` then runs those plans instead of compiling
// (scripts/gpu_bundle.sh and scripts/gpu_check.sh do this). On CUDA the known failures (the
// CPU's) may pass. Built with DLC_EMULATED_DEVICE (onnx_conformance_emulated), CUDA plans run on
// the emulated device (tests/emulation/emulated_session.h) instead of a GPU.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/session.h"
#include "frontend/onnx_tensor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "tools/driver/compile.h"
#ifdef DLC_EMULATED_DEVICE
#include "tests/emulation/emulated_session.h"
#endif

namespace fs = std::filesystem;
using namespace dlc;

namespace {

// The ONNX op types whose cases run: the training op set of the foundation issue (Gradient: the
// ai.onnx.preview.training op, differentiated by autodiff) and the ops imported as compositions
// of it (frontend/onnx_ops/composite.cc, resize.cc).
// clang-format off
const std::set<std::string> kOpSet = {
    "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
    "AveragePool", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Concat",
    "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "Cos", "Cosh", "CumSum", "DepthToSpace",
    "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten",
    "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gemm", "GlobalAveragePool",
    "GlobalMaxPool", "Gradient", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Hardmax",
    "Identity", "If", "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization",
    "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "MaxPool", "MaxUnpool", "Mean",
    "MeanVarianceNormalization", "Min", "Mish", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss",
    "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "RNN", "Range", "Reciprocal", "ReduceL1",
    "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
    "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence", "Round", "Scatter",
    "ScatterElements", "ScatterND", "Selu", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
    "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss", "Softplus", "Softsign", "SpaceToDepth",
    "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose",
    "Trilu", "Unsqueeze", "Upsample", "Where", "Xor"};
// clang-format on

// Element types of the cases run. Not BFLOAT16: this testdata (ONNX 1.12) stores the bf16 cases'
// tensors as UINT16, which no model declares; the other types dlc lacks (strings, u16/u32/u64, i16).
const std::set<int> kTypes = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE, onnx::TensorProto::FLOAT16,
                              onnx::TensorProto::INT64, onnx::TensorProto::INT32,  onnx::TensorProto::INT8,
                              onnx::TensorProto::UINT8, onnx::TensorProto::BOOL};

bool selected(const onnx::ModelProto& m, std::string* why) {
  for (const auto& n : m.graph().node()) {
    if (!kOpSet.count(n.op_type())) {
      *why = "op " + n.op_type();
      return false;
    }
  }
  auto type_ok = [&](const onnx::ValueInfoProto& vi) {
    return vi.type().has_tensor_type() && kTypes.count(vi.type().tensor_type().elem_type());
  };
  for (const auto& vi : m.graph().input())
    if (!type_ok(vi)) return *why = "input type", false;
  for (const auto& vi : m.graph().output())
    if (!type_ok(vi)) return *why = "output type", false;
  for (const auto& t : m.graph().initializer())
    if (!kTypes.count(t.data_type())) return *why = "initializer type", false;
  return true;
}

// Empty string when `got` matches `want`, else a description of the first mismatch.
std::string compare(const Tensor& want, const Tensor& got, const std::string& name) {
  if (want.type != got.type)
    return fmt::format("output '{}': expected {}, got {}", name, want.type.str(), got.type.str());
  std::vector<double> w = want.as_double(), g = got.as_double();
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (std::isinf(w[i]) && w[i] == g[i]) continue;
    if (!(std::abs(w[i] - g[i]) <= 1e-4 + 1e-3 * std::abs(w[i])))
      return fmt::format("output '{}'[{}]: expected {}, got {}", name, i, w[i], g[i]);
  }
  return "";
}

// Print -> parse -> print of an imported graph: "" when both prints are identical, else where
// they first differ or why the printed text did not parse.
std::string ir_round_trip(const ir::Graph& graph) {
  std::string first = ir::print_graph(graph), second;
  try {
    second = ir::print_graph(*ir::parse_graph(first, "<printed IR>"));
  } catch (const Error& e) {
    return fmt::format("IR round trip: {}", e.what());
  }
  if (first == second) return "";
  size_t at = 0, line = 1;
  while (at < first.size() && at < second.size() && first[at] == second[at]) line += first[at++] == '\n';
  auto line_at = [&](const std::string& s) {
    size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
    b = b == std::string::npos ? 0 : b + 1;
    return s.substr(b, s.find('\n', b) - b);
  };
  return fmt::format("IR round trip: line {} prints as '{}', then as '{}'", line, line_at(first),
                     line_at(second));
}

struct RoundTripCount {
  int checked = 0, identical = 0;
};

// How cases are compiled and run (the command line's options).
struct RunMode {
  std::string device = "cpu";
  fs::path save_plans;        // compile only, writing each case's plans under this folder
  bool precompiled = false;   // run the plan.dlcplan of each data set instead of compiling
  bool host_fallback = true;  // CUDA: a step with no CUDA path runs by its CPU kernel (else: refused)
};

// A CUDA compile that met a step with no CUDA path: the case is refused, not failed.
bool refused_on_cuda(const std::string& message) {
  return message.find("has no CUDA path") != std::string::npos;
}

// Runs every test_data_set of one case; returns "" on success or the failure message. The first
// set's imported graph also goes through the IR round trip (not with precompiled plans). With
// save_plans, writes the case's model, data and plans under save_plans/SUITE/CASE and runs nothing.
std::string run_case(const fs::path& dir, const onnx::ModelProto& model, const RunMode& mode,
                     RoundTripCount& round_trips, int64_t& host_kernel_steps) {
  std::vector<std::string> input_names, output_names;
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  for (const auto& vi : model.graph().input())
    if (!inits.count(vi.name())) input_names.push_back(vi.name());
  for (const auto& vi : model.graph().output()) output_names.push_back(vi.name());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test data";
  std::vector<std::pair<fs::path, plan::Plan>> saved;  // written once every set has compiled
  for (const fs::path& set : sets) {
    driver::CompileOptions options;
    options.device = mode.device;
    options.host_fallback = mode.host_fallback;
    options.pipeline.verify_each = true;  // tests verify the IR after every pass, as debug builds do
    for (size_t i = 0; i < input_names.size(); ++i) {
      fs::path f = set / fmt::format("input_{}.pb", i);
      if (!fs::exists(f)) break;
      options.import.input_values[input_names[i]] = frontend::read_tensor_pb(f.string());
    }
    auto inputs = options.import.input_values;
    plan::Plan plan;
    if (mode.precompiled) {
      plan = plan::read_plan_file((set / "plan.dlcplan").string());
    } else {
      driver::Compiled c = driver::compile_model((dir / "model.onnx").string(), options);
      if (set == sets.front()) {
        ++round_trips.checked;
        std::string msg = ir_round_trip(*c.graph);
        if (!msg.empty()) return msg;
        ++round_trips.identical;
      }
      plan = std::move(c.plan);
    }
    host_kernel_steps += plan::count_cuda_steps(plan).host_kernel_steps;
    if (!mode.save_plans.empty()) {
      saved.emplace_back(set, std::move(plan));
      continue;
    }
    auto session = Session::create(plan);
    for (const auto& sig : session->inputs()) session->set_input(sig.name, inputs.at(sig.name));
    session->run();
    for (size_t i = 0; i < output_names.size(); ++i) {
      fs::path f = set / fmt::format("output_{}.pb", i);
      if (!fs::exists(f)) continue;
      Tensor want = frontend::read_tensor_pb(f.string());
      std::string msg = compare(want, session->output(output_names[i]), output_names[i]);
      if (!msg.empty()) return fmt::format("{}: {}", set.filename().string(), msg);
    }
  }
  if (!mode.save_plans.empty()) {
    const fs::path out = mode.save_plans / dir.parent_path().filename() / dir.filename();
    fs::create_directories(out);
    fs::copy_file(dir / "model.onnx", out / "model.onnx", fs::copy_options::overwrite_existing);
    for (const auto& [set, plan] : saved) {
      fs::create_directories(out / set.filename());
      for (const auto& e : fs::directory_iterator(set))
        if (e.path().extension() == ".pb")
          fs::copy_file(e.path(), out / set.filename() / e.path().filename(),
                        fs::copy_options::overwrite_existing);
      plan::write_plan_file(plan, (out / set.filename() / "plan.dlcplan").string());
    }
  }
  return "";
}

// Lines "CASE_NAME  # reason" from every *.txt file in `dir`.
std::map<std::string, std::string> read_known_failures(const std::string& dir) {
  std::map<std::string, std::string> known;
  if (dir.empty()) return known;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".txt") continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      auto hash = line.find('#');
      std::string name = line.substr(0, line.find_first_of(" \t#"));
      known[name] = hash == std::string::npos ? "" : line.substr(hash + 1);
    }
  }
  return known;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef DLC_EMULATED_DEVICE
  Session::set_cuda_session_factory(emulation::create_emulated_cuda_session);
#endif
  std::string data = "/usr/share/libonnx-testdata/data", known_path, filter;
  bool verbose = false;
  RunMode mode;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--data" && i + 1 < argc)
      data = argv[++i];
    else if (a == "--known-failures" && i + 1 < argc)
      known_path = argv[++i];
    else if (a == "--filter" && i + 1 < argc)
      filter = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      mode.device = argv[++i];
    else if (a == "--save-plans" && i + 1 < argc)
      mode.save_plans = argv[++i];
    else if (a == "--precompiled")
      mode.precompiled = true;
    else if (a == "--no-host-fallback")
      mode.host_fallback = false;
    else if (a == "-v")
      verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: onnx_conformance [--data DIR] [--known-failures DIR] [--filter SUBSTR]\n"
                   "                        [--device cpu|cuda] [--no-host-fallback]\n"
                   "                        [--save-plans DIR | --precompiled] [-v]\n");
      return 2;
    }
  }
  if (mode.precompiled && !mode.save_plans.empty()) {
    std::fprintf(stderr, "error: --precompiled runs saved plans and does not take --save-plans\n");
    return 2;
  }
  auto known = read_known_failures(known_path);
  int selected_count = 0, passed = 0, known_failed = 0, unexpected = 0, now_passing = 0, refused = 0;
  int on_host = 0;  // cases with a step run on the host by its CPU kernel
  RoundTripCount round_trips;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path suite_dir = fs::path(data) / suite;
    if (!fs::exists(suite_dir)) continue;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(suite_dir)) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    for (const fs::path& dir : cases) {
      std::string name = dir.filename().string();
      if (!filter.empty() && name.find(filter) == std::string::npos) continue;
      onnx::ModelProto model;
      std::string why;
      if (!model.ParseFromString(read_file((dir / "model.onnx").string())) || !selected(model, &why)) {
        if (verbose) std::printf("skip %s (%s)\n", name.c_str(), why.c_str());
        continue;
      }
      ++selected_count;
      std::string msg;
      int64_t host_kernel_steps = 0;
      try {
        msg = run_case(dir, model, mode, round_trips, host_kernel_steps);
      } catch (const std::exception& e) {
        msg = e.what();
      }
      if (host_kernel_steps > 0) {
        ++on_host;
        if (verbose) std::printf("host steps in %s: %lld\n", name.c_str(), (long long)host_kernel_steps);
      }
      if (mode.device != "cpu" && refused_on_cuda(msg)) {
        ++refused;
        if (verbose) std::printf("refused %s: %s\n", name.c_str(), msg.c_str());
        continue;
      }
      bool is_known = known.count(name) != 0;
      if (msg.empty()) {
        ++passed;
        if (is_known && mode.device == "cpu" && mode.save_plans.empty()) {
          ++now_passing;
          std::printf("NOW PASSING %s (remove it from the known failures)\n", name.c_str());
        } else if (verbose) {
          std::printf("pass %s\n", name.c_str());
        }
      } else if (is_known) {
        ++known_failed;
        if (verbose) std::printf("known failure %s: %s\n", name.c_str(), msg.c_str());
      } else {
        ++unexpected;
        std::printf("FAIL %s: %s\n", name.c_str(), msg.c_str());
      }
    }
  }
  const int counted = selected_count - refused;  // refused on CUDA: no plan to run
  double rate = counted ? 100.0 * passed / counted : 0.0;
  std::printf(
      "conformance (%s%s): %d of %d selected cases %s (%.1f%%); %d known failures, %d unexpected failures\n",
      mode.device.c_str(), mode.precompiled ? ", precompiled plans" : "", passed, counted,
      mode.save_plans.empty() ? "pass" : "compiled and saved", rate, known_failed, unexpected);
  if (mode.device != "cpu") {
    std::printf("%d selected cases refused: a step has no CUDA path\n", refused);
    std::printf("%d selected cases ran a step on the host by its CPU kernel (no CUDA path)\n", on_host);
  }
  std::printf("%d passed, %d failed\n", passed, known_failed + unexpected);
  std::printf("IR round trip: %d of %d imported graphs print -> parse -> print identically\n",
              round_trips.identical, round_trips.checked);
  bool ok = unexpected == 0 && now_passing == 0 && (!filter.empty() || rate >= 95.0);
  return ok ? 0 : 1;
}
