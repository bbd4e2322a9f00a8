// Session: the embedding API. Loads a compiled plan and runs it.
//
//   auto session = dlc::Session::load("model.dlcplan");
//   session->set_input("x", x);
//   session->run();
//   dlc::Tensor y = session->output("y");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dlc/tensor.h"

namespace dlc {

namespace plan {
class Plan;
}

struct SessionOptions {
  int threads = 0;          // CPU plans: OpenMP threads, 0 for the machine's cores
  bool cuda_graph = false;  // CUDA plans: capture a whole run once as a CUDA Graph and replay it
  // CUDA plans: time cuDNN's convolution algorithms once per problem when the session starts
  // (cudnnFind*, as PyTorch's cudnn.benchmark) instead of taking its heuristics' first choice.
  bool cudnn_benchmark = false;
};

class Session {
 public:
  /// Reads and validates a .dlcplan file; throws dlc::Error naming the file on failure.
  static std::unique_ptr<Session> load(const std::string& path, SessionOptions options = {});
  /// Takes a plan already in memory.
  static std::unique_ptr<Session> create(const plan::Plan& plan, SessionOptions options = {});
  /// How create() makes the session of a CUDA plan: the CUDA runtime's, unless replaced (the test
  /// suite's emulated device, tests/emulation/emulated_session.h); null restores it.
  using CudaSessionFactory = std::unique_ptr<Session> (*)(const plan::Plan& plan, SessionOptions options);
  static void set_cuda_session_factory(CudaSessionFactory factory);
  virtual ~Session() = default;

  struct Signature {
    std::string name;
    TensorType type;
  };
  virtual const std::vector<Signature>& inputs() const = 0;
  virtual const std::vector<Signature>& outputs() const = 0;

  /// Copies a value into a graph input; checks its dtype and shape.
  virtual void set_input(const std::string& name, const Tensor& value) = 0;
  /// Executes every step once.
  virtual void run() = 0;
  /// Copies a graph output out.
  virtual Tensor output(const std::string& name) const = 0;

  /// Names of the parameters and state the session keeps between runs (weights, optimizer
  /// moments, running statistics), in plan order.
  virtual std::vector<std::string> state_names() const = 0;
  /// Copies a parameter or state value out / in (checks dtype and shape).
  virtual Tensor read_state(const std::string& name) const = 0;
  virtual void write_state(const std::string& name, const Tensor& value) = 0;

  /// One line on the memory the session holds: its device, the plan's arena and planned peak,
  /// and (CUDA) the workspace, tables, input staging and what the GPU has free.
  virtual std::string memory_report() const = 0;
};

/// Version of the plan format this runtime writes (2: all-zero initial values as a flag), and the
/// oldest it reads.
constexpr uint32_t kPlanFormatVersion = 2;
constexpr uint32_t kOldestPlanFormatVersion = 1;

}  // namespace dlc
