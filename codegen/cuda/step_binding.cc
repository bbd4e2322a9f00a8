// The CUDA op table: step -> generated kernel, library call or host-side step.
#include "codegen/cuda/step_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "codegen/cuda/activation_programs.h"
#include "codegen/cuda/arg_extremum_emitter.h"
#include "codegen/cuda/attention_emitter.h"
#include "codegen/cuda/copy_emitter.h"
#include "codegen/cuda/copy_specs.h"
#include "codegen/cuda/cross_entropy_emitter.h"
#include "codegen/cuda/cumsum_emitter.h"
#include "codegen/cuda/dropout_emitter.h"
#include "codegen/cuda/elementwise_emitter.h"
#include "codegen/cuda/embedding_emitter.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/gather_elements_emitter.h"
#include "codegen/cuda/integer_elementwise_emitter.h"
#include "codegen/cuda/layer_norm_emitter.h"
#include "codegen/cuda/library_call_form.h"
#include "codegen/cuda/multi_tensor.h"
#include "codegen/cuda/optimizer_emitter.h"
#include "codegen/cuda/reduce_emitter.h"
#include "codegen/cuda/softmax_emitter.h"
#include "dlc/attention.h"
#include "dlc/error.h"
#include "dlc/expr_program.h"
#include "dlc/in_place_operands.h"
#include "dlc/multi_tensor_update.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_values.h"

namespace dlc::codegen::cuda {

namespace {

// A step with its operands' types and attributes, and the error every rule reports.
class StepView {
 public:
  StepView(const plan::Plan& plan, const plan::Stage& stage, const plan::Step& step)
      : plan_(plan), stage_(stage), step_(step) {
    attrs = plan::from_proto(step.attrs(), fmt::format("step '{}'", step.name()));
  }

  const std::string& op() const { return step_.kernel(); }
  int num_inputs() const { return step_.inputs_size(); }
  int num_outputs() const { return step_.outputs_size(); }
  bool has_input(int i) const { return i < num_inputs() && step_.inputs(i) >= 0; }
  bool has_output(int i) const { return i < num_outputs() && step_.outputs(i) >= 0; }
  TensorType input(int i) const { return plan::buffer_type(buffer(step_.inputs(i), "input", i)); }
  TensorType output(int i) const { return plan::buffer_type(buffer(step_.outputs(i), "output", i)); }
  const plan::Buffer& input_buffer(int i) const { return buffer(step_.inputs(i), "input", i); }
  const plan::Buffer& output_buffer(int i) const { return buffer(step_.outputs(i), "output", i); }

  /// The value of constant input `i` (a buffer with an initial value), as integers.
  std::vector<int64_t> constant_ints(int i) const {
    const plan::Buffer& b = input_buffer(i);
    if (b.kind() != plan::Buffer::CONSTANT || b.init() < 0)
      fail(fmt::format("input {} ('{}') is not a constant", i, b.name()));
    return plan::from_proto(plan_.initial_values(b.init()), b.name()).as_int64();
  }

  /// The dtypes of the inputs present.
  std::vector<DType> input_dtypes() const {
    std::vector<DType> dtypes;
    for (int i = 0; i < num_inputs(); ++i)
      if (has_input(i)) dtypes.push_back(input(i).dtype);
    return dtypes;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw NoCudaPathError(fmt::format("step '{}' (op {}) has no CUDA path: {}", step_.name(), op(), why),
                          why);
  }

  Attrs attrs;

 private:
  const plan::Buffer& buffer(int32_t index, const char* kind, int i) const {
    if (index < 0 || index >= stage_.buffers_size()) fail(fmt::format("{} {} is absent", kind, i));
    return stage_.buffers(index);
  }

  const plan::Plan& plan_;
  const plan::Stage& stage_;
  const plan::Step& step_;
};

StepBinding kernel_binding(KernelSource source) {
  StepBinding b;
  b.kind = StepBinding::Kind::Kernel;
  for (const KernelEntry& e : source.entries) b.launches.push_back(e.launch);
  b.kernel = std::move(source);
  return b;
}

using NamedOperands = std::vector<std::pair<std::string, OperandRef>>;

// Runs `emit`; `args` binds the kernel's parameters not named "inN" / "outN", or names them
// otherwise than positionally.
template <typename Emit>
StepBinding emitted(Emit&& emit, const NamedOperands& args = {}) {
  StepBinding b = kernel_binding(emit());
  for (const auto& [param, operand] : args) b.args[param] = operand;
  return b;
}

// "inN" / "outN": operand N.
std::optional<OperandRef> positional_operand(const std::string& param) {
  for (const auto& [prefix, kind] :
       {std::pair{"in", OperandRef::Kind::Input}, {"out", OperandRef::Kind::Output}}) {
    const std::string_view p(prefix);
    if (param.size() > p.size() && param.compare(0, p.size(), p) == 0 &&
        param.find_first_not_of("0123456789", p.size()) == std::string::npos)
      return OperandRef{kind, std::stoi(param.substr(p.size()))};
  }
  return std::nullopt;
}

// Completes a kernel binding's args: every entry parameter the runtime does not supply is bound,
// positionally where no rule named it, and names the kernel lacks (a rule's optional operands)
// are dropped; an absent operand is a null pointer (OperandRef::Kind::None). A parameter bound to nothing is
// a binding bug, reported as the step's error rather than a null pointer at run time.
void bind_positional_args(const StepView& s, StepBinding& b) {
  std::map<std::string, OperandRef> args;
  for (const KernelEntry& e : b.kernel->entries)
    for (const std::string& param : e.params) {
      if (plan::is_runtime_kernel_param(param)) continue;
      const auto named = b.args.find(param);
      const std::optional<OperandRef> operand =
          named != b.args.end() ? named->second : positional_operand(param);
      if (!operand) s.fail(fmt::format("kernel {} has a parameter '{}' bound to no operand", e.name, param));
      const bool present = operand->kind == OperandRef::Kind::Input    ? s.has_input(operand->index)
                           : operand->kind == OperandRef::Kind::Output ? s.has_output(operand->index)
                                                                       : false;
      args[param] = present ? *operand : OperandRef{};  // an absent optional operand is a null pointer
    }
  b.args = std::move(args);
}

// ---- generated kernels

// An elementwise step as an expression program: its operands as inputs (an absent Clip bound
// does not clip), `body` computing the result from them.
StepBinding elementwise_program(const StepView& s, bool clip,
                                const std::function<int(ExprProgram&, const std::vector<int>&)>& body) {
  if (!s.has_output(0) || s.num_outputs() != 1) s.fail("expected one output");
  const TensorType out = s.output(0);
  ExprProgram p(out.shape);
  std::vector<int> args;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (s.has_input(i)) {
      const TensorType t = s.input(i);
      args.push_back(p.input(fmt::format("in{}", i), t.dtype, t.shape));
    } else if (clip) {
      args.push_back(p.constant(i == 1 ? -INFINITY : INFINITY));
    } else {
      s.fail(fmt::format("input {} is absent", i));
    }
  }
  if (clip)
    while (args.size() < 3) args.push_back(p.constant(args.size() == 1 ? -INFINITY : INFINITY));
  p.output("out0", body(p, args), out.dtype);
  return emitted([&] {
    p.validate();
    return emit_elementwise(p);
  });
}

// An integer elementwise op (integer_elementwise_emitter.h): Mod's fmod attribute and Clip's present
// bounds as the kernel's. The kernel's operands are the present inputs in order (inK the K-th), so
// a Clip by its max alone reads input 2 as in1.
StepBinding integer_elementwise(const StepView& s) {
  IntegerElementwiseSpec spec{s.op(), {}, {}, s.attrs.i("fmod", 0) != 0};
  NamedOperands present;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (s.has_input(i)) {
      present.emplace_back(fmt::format("in{}", spec.operands.size()), input_operand(i));
      spec.operands.push_back(s.input(i));
    } else if (s.op() != "Clip") {  // Clip's bounds are optional
      s.fail(fmt::format("input {} is absent", i));
    }
  }
  spec.clip_min = s.has_input(1);
  spec.clip_max = s.has_input(2);
  if (s.num_outputs() != 1 || !s.has_output(0)) s.fail("expected one output");
  spec.out = s.output(0);
  return emitted([&] { return emit_integer_elementwise(spec); }, present);
}

// One IR elementwise op as a one-instruction expression program (integer operands take the integer
// kernels, bind_cuda_step).
StepBinding elementwise(const StepView& s, ExprOp op) {
  return elementwise_program(s, op == ExprOp::Clip, [&](ExprProgram& p, const std::vector<int>& args) {
    return op == ExprOp::Cast ? p.cast(args.at(0), s.output(0).dtype) : p.op(op, args);
  });
}

// LeakyRelu, Elu, HardSwish, …: their formula in program ops (activation_programs.h).
StepBinding activation(const StepView& s) {
  return elementwise_program(s, false, [&](ExprProgram& p, const std::vector<int>& args) {
    return activation_expr(p, s.op(), s.attrs, args);
  });
}

// The fusion pass's FusedElementwise: its program attribute over the step's operands.
StepBinding fused_elementwise(const StepView& s) {
  std::vector<ExprInput> inputs;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (!s.has_input(i)) s.fail(fmt::format("input {} is absent", i));
    const TensorType t = s.input(i);
    inputs.push_back({fmt::format("in{}", i), t.dtype, t.shape});
  }
  std::vector<std::string> names;
  for (int i = 0; i < s.num_outputs(); ++i) names.push_back(fmt::format("out{}", i));
  return emitted([&] { return emit_elementwise(parse_expr_program(s.attrs.s("program"), inputs, names)); });
}

// Expand: the input broadcast to the output's shape (an identity program).
StepBinding expand(const StepView& s) {
  const TensorType in = s.input(0), out = s.output(0);
  ExprProgram p(out.shape);
  p.output("out0", p.input("in0", in.dtype, in.shape), out.dtype);
  return emitted([&] {
    p.validate();
    return emit_elementwise(p);
  });
}

// A reduction step's axes (input 1 or the attribute), normalized; empty: every axis.
std::vector<int64_t> reduced_axes(const StepView& s, int64_t rank) {
  std::vector<int64_t> axes = s.has_input(1) ? s.constant_ints(1) : s.attrs.ints("axes", {});
  if (axes.empty() && s.attrs.i("noop_with_empty_axes", 0) != 0)
    s.fail("noop_with_empty_axes is not supported");
  for (int64_t& a : axes) a = normalized_axis(a, rank);
  return axes;
}

// ReduceLogSumExp over adjacent axes: the softmax forward's row statistics (softmax_emitter.h).
StepBinding reduce_log_sum_exp(const StepView& s) {
  const TensorType x = s.input(0);
  const int64_t rank = int64_t(x.shape.size());
  std::vector<int64_t> axes = reduced_axes(s, rank);
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (!axes.empty() && axes.back() - axes.front() + 1 != int64_t(axes.size()))
    s.fail("the reduced axes are not adjacent");
  SoftmaxSpec spec;
  spec.dtype = x.dtype;
  spec.lse = true;
  set_view(spec, axes_view(x.shape, axes.empty() ? 0 : axes.front(), axes.empty() ? -1 : axes.back()));
  return emitted([&] { return emit_softmax_forward(spec); },
                 {{"x", input_operand(0)}, {"y", output_operand(0)}});
}

StepBinding reduce(const StepView& s, ReduceOp op) {
  const TensorType x = s.input(0);
  const std::vector<int64_t> axes = reduced_axes(s, int64_t(x.shape.size()));
  const ReduceSpec spec = reduce_spec(op, x.dtype, x.shape, axes);
  return emitted([&] { return emit_reduce(spec); }, {{"x", input_operand(0)}, {"y", output_operand(0)}});
}

// The fusion pass's FusedReduce: the reduction kernel reading its program's result.
StepBinding fused_reduce(const StepView& s) {
  std::vector<ExprInput> inputs;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (!s.has_input(i)) s.fail(fmt::format("input {} is absent", i));
    const TensorType t = s.input(i);
    inputs.push_back({fmt::format("in{}", i), t.dtype, t.shape});
  }
  const std::string op = s.attrs.s("reduce", "");
  if (op != "ReduceSum" && op != "ReduceMean")
    s.fail(fmt::format("reduce '{}' is not ReduceSum or ReduceMean", op));
  return emitted(
      [&] {
        std::vector<std::string> names = {"y"};
        for (int i = 1; i < s.num_outputs(); ++i) names.push_back(fmt::format("out{}", i));
        const ExprProgram p = parse_expr_program(s.attrs.s("program"), inputs, names);
        ReduceSpec spec = reduce_spec(op == "ReduceSum" ? ReduceOp::Sum : ReduceOp::Mean, DType::F32, p.dims,
                                      s.attrs.ints("axes", {}));
        spec.prologue = &p;
        return emit_reduce(spec);
      },
      {{"y", output_operand(0)}});
}

// ArgMax / ArgMin over one axis: the index kernel (arg_extremum_emitter.h).
StepBinding arg_extremum(const StepView& s, bool max) {
  const TensorType x = s.input(0);
  if (s.output(0).dtype != DType::I64) s.fail("the result is not int64");
  const int64_t rank = int64_t(x.shape.size());
  const int64_t axis = normalized_axis(s.attrs.i("axis", 0), rank);
  ArgExtremumSpec spec;
  spec.dtype = x.dtype;
  spec.max = max;
  spec.last = s.attrs.i("select_last_index", 0) != 0;
  set_view(spec, axes_view(x.shape, axis, axis));
  return emitted([&] { return emit_arg_extremum(spec); },
                 {{"x", input_operand(0)}, {"y", output_operand(0)}});
}

// TopKIndices over one axis: the selection kernel (arg_extremum_emitter.h).
StepBinding top_k_indices(const StepView& s) {
  const TensorType x = s.input(0);
  const int64_t axis = normalized_axis(s.attrs.i("axis", -1), int64_t(x.shape.size()));
  TopKSpec spec;
  spec.dtype = x.dtype;
  spec.largest = s.attrs.i("largest", 1) != 0;
  spec.k = s.attrs.i("k", 1);
  set_view(spec, axes_view(x.shape, axis, axis));
  return emitted([&] { return emit_top_k_indices(spec); },
                 {{"x", input_operand(0)}, {"y", output_operand(0)}});
}

StepBinding cumsum(const StepView& s) {
  return emitted([&] { return emit_cumsum(cumsum_spec(s.attrs, s.input(0))); });
}

// Fails the step unless its first `count` outputs, which its kernels all write (`what`), are present.
void require_outputs(const StepView& s, int count, std::string_view what) {
  for (int i = 0; i < count; ++i)
    if (!s.has_output(i)) s.fail(fmt::format("output {} is absent (the kernels write {})", i, what));
}

// The [outer, extent, inner] view of a softmax step's first operand along its axis.
SoftmaxSpec softmax_spec(const StepView& s, bool log) {
  const TensorType x = s.input(0);
  const int64_t axis = normalized_axis(s.attrs.i("axis", -1), int64_t(x.shape.size()));
  SoftmaxSpec spec;
  spec.dtype = x.dtype;
  spec.log = log;
  set_view(spec, axes_view(x.shape, axis, axis));
  return spec;
}

StepBinding softmax(const StepView& s, bool log) {
  const SoftmaxSpec spec = softmax_spec(s, log);
  return emitted([&] { return emit_softmax_forward(spec); },
                 {{"x", input_operand(0)}, {"y", output_operand(0)}});
}

StepBinding softmax_grad(const StepView& s) {
  const SoftmaxSpec spec = softmax_spec(s, false);
  return emitted([&] { return emit_softmax_backward(spec); },
                 {{"dy", input_operand(0)}, {"y", input_operand(1)}, {"dx", output_operand(0)}});
}

// Attention's problem from q, k and v at inputs first… (dlc/attention.h).
AttentionSpec attention_spec(const StepView& s, int first) {
  const TensorType q = s.input(first);
  const AttentionShape shape =
      attention_shape(q.shape, s.input(first + 1).shape, s.input(first + 2).shape, s.attrs);
  AttentionSpec spec;
  spec.dtype = q.dtype;
  spec.groups = shape.groups;
  spec.rows = shape.rows;
  spec.keys = shape.keys;
  spec.depth = shape.depth;
  spec.value_depth = shape.value_depth;
  spec.scale = s.attrs.f("scale", 1.0);
  spec.causal = s.attrs.i("causal", 0) != 0;
  spec.seq_major = shape.seq_major;
  spec.heads = shape.heads;
  return spec;
}

StepBinding attention(const StepView& s) {
  const AttentionSpec spec = attention_spec(s, 0);
  return emitted([&] { return emit_attention_forward(spec); }, {{"q", input_operand(0)},
                                                                {"k", input_operand(1)},
                                                                {"v", input_operand(2)},
                                                                {"o", output_operand(0)},
                                                                {"lse", output_operand(1)}});
}

StepBinding attention_grad(const StepView& s) {
  const AttentionSpec spec = attention_spec(s, 1);
  require_outputs(s, 3, "dq, dk and dv");
  return emitted([&] { return emit_attention_backward(spec); }, {{"dout", input_operand(0)},
                                                                 {"q", input_operand(1)},
                                                                 {"k", input_operand(2)},
                                                                 {"v", input_operand(3)},
                                                                 {"o", input_operand(4)},
                                                                 {"lse", input_operand(5)},
                                                                 {"dq", output_operand(0)},
                                                                 {"dk", output_operand(1)},
                                                                 {"dv", output_operand(2)}});
}

// The layer-norm forward kernel on the step's x, scale and bias into y, its statistics to `mean`
// and `inv_std` (absent: not written).
StepBinding layer_norm_forward(const LayerNormSpec& spec, OperandRef mean, OperandRef inv_std) {
  return emitted([&] { return emit_layer_norm_forward(spec); }, {{"x", input_operand(0)},
                                                                 {"scale", input_operand(1)},
                                                                 {"bias", input_operand(2)},
                                                                 {"y", output_operand(0)},
                                                                 {"mean", mean},
                                                                 {"inv_std", inv_std}});
}

StepBinding layer_norm(const StepView& s) {
  const TensorType x = s.input(0);
  const int64_t rank = int64_t(x.shape.size());
  const int64_t axis = normalized_axis(s.attrs.i("axis", -1), rank);
  LayerNormSpec spec;
  spec.dtype = x.dtype;
  spec.cols = num_elements(Shape(x.shape.begin() + axis, x.shape.end()));
  spec.rows = spec.cols ? x.numel() / spec.cols : 0;
  spec.epsilon = s.attrs.f("epsilon", 1e-5);
  spec.has_bias = s.has_input(2);
  if (s.output(0).dtype != x.dtype) spec.y_dtype = s.output(0).dtype;
  for (int i = 1; i <= 2; ++i)
    if (s.has_input(i) && s.input(i).numel() != spec.cols)
      s.fail(fmt::format("input {} has {} elements, not one per normalized element ({})", i,
                         s.input(i).numel(), spec.cols));
  for (int i = 1; i <= 2; ++i)
    if (s.has_output(i) && s.output(i).dtype != DType::F32)
      s.fail(fmt::format("output {} (statistics) must be f32", i));
  return layer_norm_forward(spec, output_operand(1), output_operand(2));
}

// InstanceNormalization of [N, C, D…]: the layer-norm forward on [N · C, D…] rows, scale and
// bias per channel.
StepBinding instance_norm(const StepView& s) {
  const TensorType x = s.input(0);
  if (x.shape.size() < 3) s.fail("expects [N, C, D...], rank 3 or more");
  LayerNormSpec spec;
  spec.dtype = x.dtype;
  spec.channels = x.shape[1];
  spec.rows = x.shape[0] * x.shape[1];
  spec.cols = spec.rows ? x.numel() / spec.rows : 0;
  spec.epsilon = s.attrs.f("epsilon", 1e-5);
  for (int i = 1; i <= 2; ++i)
    if (!s.has_input(i) || s.input(i).numel() != spec.channels)
      s.fail(fmt::format("input {} does not have one element per channel ({})", i, spec.channels));
  return layer_norm_forward(spec, OperandRef{}, OperandRef{});
}

StepBinding layer_norm_grad(const StepView& s) {
  const TensorType x = s.input(1);
  LayerNormSpec spec;
  spec.dtype = x.dtype;
  spec.cols = s.input(2).numel();
  spec.rows = spec.cols ? x.numel() / spec.cols : 0;
  spec.epsilon = s.attrs.f("epsilon", 1e-5);
  if (s.input(0).dtype != x.dtype) spec.y_dtype = s.input(0).dtype;
  require_outputs(s, 3, "dx, dscale and dbias");
  return emitted([&] { return emit_layer_norm_backward(spec); }, {{"dy", input_operand(0)},
                                                                  {"x", input_operand(1)},
                                                                  {"scale", input_operand(2)},
                                                                  {"dx", output_operand(0)},
                                                                  {"dscale", output_operand(1)},
                                                                  {"dbias", output_operand(2)}});
}

// The losses' spec; class weights (the input after the labels) only where `weights` allows them.
CrossEntropySpec cross_entropy_spec(const StepView& s, int scores_input, bool weights) {
  const TensorType scores = s.input(scores_input), labels = s.input(scores_input + 1);
  if (s.has_input(scores_input + 2) && !weights)
    s.fail("class weights are not supported by this CUDA kernel");
  if (scores.shape.size() < 2) s.fail("scores must have a class axis (axis 1)");
  CrossEntropySpec spec;
  spec.dtype = scores.dtype;
  spec.label_dtype = labels.dtype;
  const AxisView v = axes_view(scores.shape, 1, 1);
  spec.batch = v.outer;
  spec.classes = v.extent;
  spec.inner = v.inner;
  spec.reduction = s.attrs.s("reduction", "mean");
  if (s.attrs.has("ignore_index")) spec.ignore_index = s.attrs.i("ignore_index");
  return spec;
}

// SoftmaxCrossEntropyLoss, or NegativeLogLikelihoodLoss (`log_probabilities`): the forward kernel.
StepBinding loss_forward(const StepView& s, bool log_probabilities) {
  CrossEntropySpec spec = cross_entropy_spec(s, 0, true);
  spec.log_probabilities = log_probabilities;
  if (s.has_input(2) && s.input(2).dtype != spec.dtype) s.fail("the class weights' dtype is not the scores'");
  return emitted([&] { return emit_cross_entropy_forward(spec); }, {{"scores", input_operand(0)},
                                                                    {"labels", input_operand(1)},
                                                                    {"weight", input_operand(2)},
                                                                    {"loss", output_operand(0)},
                                                                    {"log_prob", output_operand(1)}});
}

// Gather / GatherGrad on axis k: the embedding kernels on the table viewed as [outer, vocab, dim].
StepBinding embedding(const StepView& s, bool backward) {
  const EmbeddingSpec spec = gather_spec(s.attrs, backward ? s.output(0) : s.input(0), s.input(1));
  if (backward)
    return emitted([&] { return emit_embedding_backward(spec); },
                   {{"dy", input_operand(0)}, {"indices", input_operand(1)}, {"dtable", output_operand(0)}});
  return emitted([&] { return emit_embedding_gather(spec); },
                 {{"weight", input_operand(0)}, {"indices", input_operand(1)}, {"out", output_operand(0)}});
}

// The table rows and copies of tensor k's update. The kernels update in place, so each result
// (param', state'…) first gets the bytes of the operand it updates (dlc/in_place_operands.h); a
// row points at the results and the gradient: {param', grad, state 1', state 2'} (an absent state
// gives an absent result).
void optimizer_row(const StepView& s, const MultiTensorLayout& layout, int k,
                   const std::function<int(int, int)>& input_of, StepBinding& b) {
  std::array<OperandRef, 4> row;
  row[1] = input_operand(input_of(k, 1));
  size_t slot = 2;  // the present states' results
  for (int j = 0; j < layout.outputs; ++j) {
    const int out = layout.merged_output(k, j), in = input_of(k, in_place_operand(layout.update, s.attrs, j));
    if (!s.has_output(out)) continue;
    if (!s.has_input(in)) s.fail(fmt::format("result {} updates an absent operand {}", out, in));
    b.copies.emplace_back(in, out);
    if (j == 0) {
      row[0] = output_operand(out);
    } else {
      if (slot == row.size()) s.fail("more than two optimizer states (a table row holds two)");
      row[slot++] = output_operand(out);
    }
  }
  b.table.push_back(row);
}

// A multi-tensor launch over the tensors of an optimizer step: one for SgdUpdate and AdamUpdate,
// one per merged tensor for the fusion pass's MultiTensorUpdate (`layout` says where tensor k's
// single-update operands are; the launch's table has one entry per tensor). The kernel depends on
// the hyperparameters only (so all the optimizer's steps share it); the grid comes from the
// table's chunks.
StepBinding optimizer(const StepView& s, const MultiTensorLayout& layout, int tensors,
                      const std::function<int(int, int)>& input_of) {
  const bool adam = layout.update == "AdamUpdate", rmsprop = layout.update == "RmspropUpdate";
  if (!adam && !rmsprop && layout.update != "SgdUpdate")
    s.fail(fmt::format("{} has no CUDA kernel", layout.update));
  const DType dtype = s.input(input_of(0, 0)).dtype, grad_dtype = s.input(input_of(0, 1)).dtype;
  std::vector<MultiTensorEntry> entries(static_cast<size_t>(tensors));
  for (int k = 0; k < tensors; ++k) {
    for (int i = 2; i < layout.inputs; ++i)
      if (!layout.is_scalar(i) && s.has_input(input_of(k, i)) && s.input(input_of(k, i)).dtype != DType::F32)
        s.fail("optimizer state must be f32");
    const TensorType p = s.input(input_of(k, 0));
    if (p.dtype != dtype || s.input(input_of(k, 1)).dtype != grad_dtype)
      s.fail("the merged parameters or gradients have different dtypes");
    entries[size_t(k)].n = p.numel();
  }
  StepBinding b = emitted([&] {
    if (rmsprop) {
      RmspropSpec spec;
      spec.dtype = dtype;
      spec.grad_dtype = grad_dtype;
      spec.alpha = s.attrs.f("alpha", 0.99);
      spec.eps = s.attrs.f("eps", 1e-8);
      spec.weight_decay = s.attrs.f("weight_decay", 0);
      spec.momentum = s.attrs.f("momentum", 0);
      spec.centered = s.attrs.i("centered", 0) != 0;
      return emit_rmsprop_update(spec);
    }
    if (adam) {
      AdamSpec spec;
      spec.dtype = dtype;
      spec.grad_dtype = grad_dtype;
      spec.beta1 = s.attrs.f("beta1", 0.9);
      spec.beta2 = s.attrs.f("beta2", 0.999);
      spec.eps = s.attrs.f("eps", 1e-8);
      spec.weight_decay = s.attrs.f("weight_decay", 0);
      spec.decoupled = s.attrs.i("decoupled", 0) != 0;
      return emit_adam_update(spec);
    }
    SgdSpec spec;
    spec.dtype = dtype;
    spec.grad_dtype = grad_dtype;
    spec.momentum = s.attrs.f("momentum", 0);
    spec.dampening = s.attrs.f("dampening", 0);
    spec.weight_decay = s.attrs.f("weight_decay", 0);
    spec.nesterov = s.attrs.i("nesterov", 0) != 0;
    return emit_sgd_update(spec);
  });
  const int64_t chunks = assign_chunks(entries);
  for (LaunchConfig& l : b.launches) l.grid[0] = multi_tensor_grid(chunks);
  // The scalar operands: lr, Adam's step (the other kernels do not read theirs) and apply.
  std::vector<int> scalars;
  for (int i = 0; i < layout.apply_input(); ++i)
    if (layout.is_scalar(i)) scalars.push_back(input_of(0, i));
  b.args["lr"] = input_operand(scalars.at(0));
  b.args["step"] = scalars.size() > 1 ? input_operand(scalars[1]) : OperandRef{};
  const int apply = input_of(0, layout.apply_input());
  if (s.has_input(apply) && s.input(apply) != TensorType{DType::Bool, {}})
    s.fail("apply must be a bool scalar");
  b.args["apply"] = s.has_input(apply) ? input_operand(apply) : OperandRef{};
  for (int k = 0; k < tensors; ++k) optimizer_row(s, layout, k, input_of, b);
  return b;
}

StepBinding single_update(const StepView& s, std::string_view op) {
  return optimizer(s, *find_multi_tensor_layout(op), 1, [](int, int i) { return i; });
}

StepBinding multi_tensor_update(const StepView& s) {
  const MultiTensorLayout* layout = find_multi_tensor_layout(s.attrs.s("update", ""));
  if (!layout) s.fail(fmt::format("update '{}' is no optimizer update", s.attrs.s("update", "")));
  const int tensors = layout->tensors(s.num_inputs(), s.num_outputs());
  if (tensors < 1) s.fail("the operands do not fit the update's layout");
  return optimizer(s, *layout, tensors, [&](int k, int i) { return layout->merged_input(k, i); });
}

// The data-movement ops: copies of (mostly affinely) mapped input elements (copy_specs.h).
StepBinding copy(const StepView& s) {
  std::vector<TensorType> ins, outs;
  for (int i = 0; i < s.num_inputs(); ++i) {
    if (!s.has_input(i)) s.fail(fmt::format("input {} is absent", i));
    ins.push_back(s.input(i));
  }
  for (int i = 0; i < s.num_outputs(); ++i) {
    if (!s.has_output(i)) s.fail(fmt::format("output {} is absent", i));
    outs.push_back(s.output(i));
  }
  return emitted([&] { return emit_copy_op(s.op(), s.attrs, ins, outs); });
}

// GatherElementsGrad: the gather-elements backward on the forward's spec (dy has the indices' shape).
StepBinding gather_elements_grad(const StepView& s) {
  return emitted([&] {
    return emit_gather_elements_backward(gather_elements_spec(s.attrs, s.output(0), s.input(1), s.input(0)));
  });
}

// Training-mode Dropout on the CPU kernel's Philox stream.
StepBinding dropout(const StepView& s) {
  DropoutSpec spec;
  spec.dtype = s.input(0).dtype;
  spec.numel = s.input(0).numel();
  spec.ratio = s.attrs.f("ratio", 0.5);
  spec.seed = uint64_t(s.attrs.i("seed", 0));
  spec.mask = s.has_output(1);
  if (s.has_input(1)) spec.offset_dtype = s.input(1).dtype;
  return emitted([&] { return emit_dropout(spec); }, {{"x", input_operand(0)},
                                                      {"offset", input_operand(1)},
                                                      {"y", output_operand(0)},
                                                      {"mask", output_operand(1)}});
}

// ---- library calls and host-side steps

// A library call: the step's attributes plus the dtype and every operand's dims (and the inputs'
// dtypes).
StepBinding library(const StepView& s, std::string call) {
  StepBinding b;
  b.kind = StepBinding::Kind::Library;
  b.call = std::move(call);
  b.params = s.attrs;
  if (s.has_input(0)) b.params.set("dtype", std::string(dtype_name(s.input(0).dtype)));
  for (int i = 0; i < s.num_inputs(); ++i)
    if (s.has_input(i)) {
      b.params.set(fmt::format("input{}_dims", i), s.input(i).shape);
      b.params.set(fmt::format("input{}_dtype", i), std::string(dtype_name(s.input(i).dtype)));
    }
  for (int i = 0; i < s.num_outputs(); ++i)
    if (s.has_output(i)) b.params.set(fmt::format("output{}_dims", i), s.output(i).shape);
  return b;
}

// The folded activation of a library step (attribute `activation`): "none" or "relu", the one the
// library calls take here.
bool folded_relu(const StepView& s) {
  const std::string act = s.attrs.s("activation", "none");
  if (act != "none" && act != "relu") s.fail(fmt::format("activation '{}' has no library form", act));
  return act == "relu";
}

// A folded residual epilogue (input 3, of the result's type) as the scale `param` (1, or 0 without
// one) that the library call gives its added operand.
void record_residual(const StepView& s, const char* param, StepBinding* b) {
  const bool residual = s.has_input(3);
  if (residual && s.input(3) != s.output(0))
    s.fail(fmt::format("residual {} is not the result's type {}", s.input(3).str(), s.output(0).str()));
  b->params.set(param, residual ? 1.0 : 0.0);
}

// A cuBLASLt GEMM: the operand transposes are its operation flags and the fused epilogue
// (act(alpha * product + bias + residual)) its alpha, beta = 1 with the residual as matrix C
// (D = alpha * A B + beta * C), and CUBLASLT_EPILOGUE_BIAS (one value per result column), _RELU or
// _RELU_BIAS, all recorded explicitly in the parameters ("default", "bias", "relu", "bias_relu";
// cuBLASLt adds C before the bias, so a residual and a bias sum in another order than on the CPU). The
// runtime must keep NaN through the Relu as the CPU kernel does (cuBLASLt's own RELU epilogue is not
// documented to; if it does not, it applies the Relu as a kernel of its own).
StepBinding matmul(const StepView& s) {
  StepBinding b = library(s, "cublasLt.matmul");
  b.params.set("transpose_a", s.attrs.i("transpose_a", 0) != 0 ? int64_t(1) : int64_t(0));
  b.params.set("transpose_b", s.attrs.i("transpose_b", 0) != 0 ? int64_t(1) : int64_t(0));
  b.params.set("alpha", s.attrs.f("alpha", 1.0));
  record_residual(s, "beta", &b);
  const bool bias = s.has_input(2);
  if (bias && (s.output(0).shape.empty() || s.input(2).numel() != s.output(0).shape.back() ||
               s.input(2).dtype != s.output(0).dtype))
    s.fail(fmt::format("bias {} is not one value per column of the result {}", s.input(2).str(),
                       s.output(0).str()));
  const bool relu = folded_relu(s);
  b.params.set("epilogue", std::string(relu ? (bias ? "bias_relu" : "relu") : (bias ? "bias" : "default")));
  return b;
}

// A cuDNN forward convolution; a folded Relu (and the bias input) is recorded as `activation`
// ("relu" or "none") for cudnnConvolutionBiasActivationForward with CUDNN_ACTIVATION_RELU (the
// same NaN caveat as the GEMM's epilogue), and a folded residual as its z operand with `alpha2`
// = 1: y = act(conv + alpha2 * z + bias).
StepBinding conv(const StepView& s) {
  StepBinding b = library(s, "cudnn.convolution_forward");
  b.params.set("activation", std::string(folded_relu(s) ? "relu" : "none"));
  record_residual(s, "alpha2", &b);
  return b;
}

// A cuDNN batch normalization, forward (training or inference statistics) or backward; a folded
// Relu (BatchNormalization's activation, BatchNormGrad's folded ReluGrad reading the Relu's
// result as input 3) is `ops` = "bn_activation": cudnnBatchNormalizationForwardTrainingEx /
// BackwardEx with CUDNN_BATCHNORM_OPS_BN_ACTIVATION and a ReLU descriptor ("bn" without; with
// inference statistics, which have no such call, the runtime applies the Relu itself).
StepBinding batch_norm(const StepView& s, std::string call) {
  const bool training = call == "cudnn.batch_norm_forward_training";
  StepBinding b = library(s, std::move(call));
  b.params.set("ops", std::string(folded_relu(s) ? "bn_activation" : "bn"));
  // cuDNN updates the running statistics in place: the results start as the statistics.
  if (training)
    for (int i = 1; i <= 2; ++i)
      if (s.has_output(i)) b.copies.emplace_back(in_place_operand("BatchNormalization", s.attrs, i), i);
  return b;
}

// A pooling call, its `mode` ("max" or "average") recorded.
StepBinding pooling(const StepView& s, std::string call, const char* mode) {
  StepBinding b = library(s, std::move(call));
  b.params.set("mode", std::string(mode));
  return b;
}

// A transposed convolution is cuDNN's backward-data convolution, dx = conv_bwd_data + beta * dx:
// a folded residual is `beta` = 1 over dx first holding the residual (the runtime copies it in).
StepBinding conv_transpose(const StepView& s) {
  StepBinding b = library(s, "cudnn.convolution_backward_data");
  record_residual(s, "beta", &b);
  if (s.has_input(3)) b.copies.emplace_back(3, 0);
  return b;
}

// A reshape: the same bytes under new dims; nothing to do when the memory plan aliased them.
StepBinding reshape(const StepView& s) {
  StepBinding b;
  b.kind = StepBinding::Kind::Host;
  b.call = s.input_buffer(0).offset() == s.output_buffer(0).offset() ? "alias" : "copy";
  return b;
}

using Rule = std::function<StepBinding(const StepView&)>;

const std::map<std::string, Rule, std::less<>>& rules() {
  static const std::map<std::string, Rule, std::less<>> table = {
      {"FusedElementwise", fused_elementwise},
      {"FusedReduce", fused_reduce},
      {"Expand", expand},
      {"Slice", copy},
      {"SliceGrad", copy},
      {"Pad", copy},
      {"Concat", copy},
      {"Split", copy},
      {"Tile", copy},
      {"Dropout", dropout},
      {"ReduceSum", [](const StepView& s) { return reduce(s, ReduceOp::Sum); }},
      {"ReduceMean", [](const StepView& s) { return reduce(s, ReduceOp::Mean); }},
      {"ReduceMax", [](const StepView& s) { return reduce(s, ReduceOp::Max); }},
      {"ReduceMin", [](const StepView& s) { return reduce(s, ReduceOp::Min); }},
      {"ArgMax", [](const StepView& s) { return arg_extremum(s, true); }},
      {"TopKIndices", top_k_indices},
      {"CumSum", cumsum},
      {"ArgMin", [](const StepView& s) { return arg_extremum(s, false); }},
      {"ReduceL1", [](const StepView& s) { return reduce(s, ReduceOp::L1); }},
      {"ReduceL2", [](const StepView& s) { return reduce(s, ReduceOp::L2); }},
      {"ReduceSumSquare", [](const StepView& s) { return reduce(s, ReduceOp::SumSquare); }},
      {"ReduceLogSum", [](const StepView& s) { return reduce(s, ReduceOp::LogSum); }},
      {"ReduceProd", [](const StepView& s) { return reduce(s, ReduceOp::Prod); }},
      {"ReduceLogSumExp", reduce_log_sum_exp},
      {"Softmax", [](const StepView& s) { return softmax(s, false); }},
      {"SoftmaxGrad", softmax_grad},
      {"Attention", attention},
      {"AttentionGrad", attention_grad},
      {"LogSoftmax", [](const StepView& s) { return softmax(s, true); }},
      {"LayerNormalization", layer_norm},
      {"LayerNormGrad", layer_norm_grad},
      {"InstanceNormalization", instance_norm},
      {"SoftmaxCrossEntropyLoss", [](const StepView& s) { return loss_forward(s, false); }},
      {"NegativeLogLikelihoodLoss", [](const StepView& s) { return loss_forward(s, true); }},
      {"SoftmaxCrossEntropyGrad",
       [](const StepView& s) {
         const CrossEntropySpec spec = cross_entropy_spec(s, 1, false);
         return emitted([&] { return emit_cross_entropy_backward(spec); }, {{"dloss", input_operand(0)},
                                                                            {"scores", input_operand(1)},
                                                                            {"labels", input_operand(2)},
                                                                            {"dscores", output_operand(0)}});
       }},
      {"Gather", [](const StepView& s) { return embedding(s, false); }},
      {"GatherElements", copy},
      {"GatherElementsGrad", gather_elements_grad},
      {"GatherGrad", [](const StepView& s) { return embedding(s, true); }},
      {"SgdUpdate", [](const StepView& s) { return single_update(s, "SgdUpdate"); }},
      {"AdamUpdate", [](const StepView& s) { return single_update(s, "AdamUpdate"); }},
      {"RmspropUpdate", [](const StepView& s) { return single_update(s, "RmspropUpdate"); }},
      {"MultiTensorUpdate", multi_tensor_update},
      {"MatMul", matmul},
      {"Conv", conv},
      {"ConvTranspose", conv_transpose},
      {"ConvGradFilter",
       [](const StepView& s) {
         if (s.num_outputs() > 1) s.fail("a bias gradient output is the CPU plans' (conv_bias_grad.h)");
         return library(s, "cudnn.convolution_backward_filter");
       }},
      {"MaxPool", [](const StepView& s) { return pooling(s, "cudnn.pooling_forward", "max"); }},
      {"AveragePool", [](const StepView& s) { return pooling(s, "cudnn.pooling_forward", "average"); }},
      {"MaxPoolGrad", [](const StepView& s) { return pooling(s, "cudnn.pooling_backward", "max"); }},
      {"AveragePoolGrad", [](const StepView& s) { return pooling(s, "cudnn.pooling_backward", "average"); }},
      {"BatchNormalization",
       [](const StepView& s) {
         return batch_norm(s, s.attrs.i("training_mode", 0) != 0 ? "cudnn.batch_norm_forward_training"
                                                                 : "cudnn.batch_norm_forward_inference");
       }},
      {"BatchNormGrad", [](const StepView& s) { return batch_norm(s, "cudnn.batch_norm_backward"); }},
      {"Transpose", copy},
      {"Trilu", copy},
      {"Reshape", reshape},
      {"Identity", reshape},
  };
  return table;
}

}  // namespace

NoCudaPathError::NoCudaPathError(const std::string& message, std::string reason)
    : Error(message), why(std::move(reason)) {}

StepBinding host_kernel_binding() {
  StepBinding b;
  b.kind = StepBinding::Kind::Host;
  b.call = plan::kHostKernelCall;
  return b;
}

StepBinding bind_cuda_step(const plan::Plan& plan, const plan::Stage& stage, int step_index) {
  const plan::Step& step = stage.steps(step_index);
  const StepView s(plan, stage, step);
  StepBinding b;
  try {
    if (takes_integer_kernel(s.op(), s.input_dtypes(), s.has_output(0) ? s.output(0).dtype : DType::F32)) {
      b = integer_elementwise(s);
    } else if (const std::optional<ExprOp> op =
                   expr_op_from_name(step.kernel())) {  // never Input or Constant
      b = elementwise(s, *op);
    } else if (is_activation_with_attributes(step.kernel())) {
      b = activation(s);
    } else {
      const auto& table = rules();
      const auto it = table.find(step.kernel());
      if (it == table.end()) s.fail("no generated kernel or library call implements this op");
      b = it->second(s);
    }
    // A library call the runtime would refuse has no CUDA path.
    if (b.kind == StepBinding::Kind::Library) check_library_call(b.call, b.params, "library call");
  } catch (const NoCudaPathError&) {
    throw;
  } catch (const Error& e) {
    s.fail(e.what());
  }
  if (b.kind == StepBinding::Kind::Kernel) bind_positional_args(s, b);
  return b;
}

}  // namespace dlc::codegen::cuda
