// ONNX RNN, GRU and LSTM imported unrolled over their (static) sequence: one MatMul projects the
// whole input sequence per direction, then every time step is a MatMul of the hidden state with
// the recurrence weights and the cell's gates as elementwise ops (which fusion merges). So
// torch.nn.RNN/GRU/LSTM models train through the core ops' gradient rules and compile for CUDA.
// Supported: forward, reverse and bidirectional; layout 0 and 1; initial_h/initial_c; LSTM
// peepholes; clip; GRU's linear_before_reset both ways; the activations Sigmoid, Tanh and Relu.
// Refused, naming the node: other activations, activation_alpha/beta, LSTM's input_forget, and
// sequence_lens shorter than the sequence.
#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

enum class Cell { Rnn, Gru, Lstm };

// What every step of one node needs.
struct Recurrence {
  Cell cell = Cell::Rnn;
  int64_t gates = 1, hidden = 0, seq = 0, batch = 0, input = 0, directions = 1;
  DType dtype = DType::F32;
  double clip = 0;  // 0: none
  bool linear_before_reset = false;
  std::vector<std::string> activations;  // per direction: f (, g (, h))
  ir::Value* initial_hidden = nullptr;   // [directions, batch, hidden], where given
  ir::Value* initial_cell = nullptr;     // the same, LSTM
};

ir::Value* concat(ImportContext& ctx, std::vector<ir::Value*> parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  Attrs a;
  a.set("axis", axis);
  return ctx.emit(ir::OpKind::Concat, std::move(parts), std::move(a));
}

// a @ b^T.
ir::Value* matmul_transposed(ImportContext& ctx, ir::Value* a, ir::Value* b) {
  Attrs attrs;
  attrs.set("transpose_a", int64_t(0));
  attrs.set("transpose_b", int64_t(1));
  return ctx.emit(ir::OpKind::MatMul, {a, b}, std::move(attrs));
}

// The `count` equal parts of v along axis 1.
std::vector<ir::Value*> split(ImportContext& ctx, ir::Value* v, int64_t count) {
  if (count == 1) return {v};
  Attrs a;
  a.set("axis", int64_t(1));
  a.set("split", Shape(size_t(count), v->type.shape[1] / count));
  return ctx.emit_multi(ir::OpKind::Split, {v}, std::move(a), std::vector<bool>(size_t(count), true));
}

// activation(clip(v)).
ir::Value* activate(ImportContext& ctx, const Recurrence& r, const std::string& activation, ir::Value* v) {
  if (r.clip > 0)
    v = ctx.emit(ir::OpKind::Clip, {v, ctx.scalar(r.dtype, -r.clip), ctx.scalar(r.dtype, r.clip)});
  if (activation == "Sigmoid") return ctx.emit(ir::OpKind::Sigmoid, {v});
  if (activation == "Tanh") return ctx.emit(ir::OpKind::Tanh, {v});
  if (activation == "Relu") return ctx.emit(ir::OpKind::Relu, {v});
  ctx.fail("activation '{}' is not supported (Sigmoid, Tanh, Relu)", activation);
}

// Direction d's [rows, cols] slice of a [directions, rows, cols] input.
ir::Value* direction_of(ImportContext& ctx, ir::Value* v, int64_t d) {
  Shape s = v->type.shape;
  s.erase(s.begin());
  return reshape(ctx, slice(ctx, v, 0, d, d + 1), s);
}

// The hidden (and LSTM cell) state sequence of one direction.
struct DirectionResult {
  std::vector<ir::Value*> hidden;  // by time step, [batch, hidden] each
  ir::Value* last_hidden = nullptr;
  ir::Value* last_cell = nullptr;
};

DirectionResult run_direction(ImportContext& ctx, const Recurrence& r, ir::Value* x, int64_t d,
                              bool reverse) {
  const int64_t h = r.hidden, gh = r.gates * h;
  ir::Value* w = direction_of(ctx, ctx.input(1), d);    // [gates * hidden, input]
  ir::Value* rec = direction_of(ctx, ctx.input(2), d);  // [gates * hidden, hidden]
  // The input's projection for every step at once, with the biases that do not sit inside GRU's
  // reset gate: Wb, plus Rb except GRU's candidate gate under linear_before_reset.
  ir::Value* xw = matmul_transposed(ctx, reshape(ctx, x, {r.seq * r.batch, r.input}), w);
  ir::Value* inner_bias = nullptr;  // GRU with linear_before_reset: Rbh, inside the reset gate
  if (ctx.has_input(3)) {
    ir::Value* b = reshape(ctx, slice(ctx, ctx.input(3), 0, d, d + 1), {2 * gh});
    ir::Value* rb = slice(ctx, b, 0, gh, 2 * gh);
    if (r.cell == Cell::Gru && r.linear_before_reset) {
      inner_bias = slice(ctx, rb, 0, 2 * h, 3 * h);
      rb = concat(ctx, {slice(ctx, rb, 0, 0, 2 * h), filled(ctx, r.dtype, {h}, 0.0, "zero_bias")}, 0);
    }
    xw = binary(ctx, ir::OpKind::Add, xw, binary(ctx, ir::OpKind::Add, slice(ctx, b, 0, 0, gh), rb));
  }
  xw = reshape(ctx, xw, {r.seq, r.batch, gh});
  auto initial = [&](ir::Value* given) {
    if (given) return direction_of(ctx, given, d);
    return filled(ctx, r.dtype, {r.batch, h}, 0.0, "initial_state");
  };
  ir::Value* state = initial(r.initial_hidden);
  ir::Value* cell = r.cell == Cell::Lstm ? initial(r.initial_cell) : nullptr;
  std::vector<ir::Value*> peephole;  // LSTM: p_i, p_o, p_f
  if (r.cell == Cell::Lstm && ctx.has_input(7)) {
    ir::Value* p = reshape(ctx, slice(ctx, ctx.input(7), 0, d, d + 1), {3 * h});
    for (int64_t k = 0; k < 3; ++k) peephole.push_back(slice(ctx, p, 0, k * h, (k + 1) * h));
  }
  const std::vector<std::string> act(
      r.activations.begin() + d * int64_t(r.activations.size()) / r.directions,
      r.activations.begin() + (d + 1) * int64_t(r.activations.size()) / r.directions);
  ir::Value* rec_gates = rec;  // GRU: the update and reset gates' rows; the candidate's apart
  ir::Value* rec_candidate = nullptr;
  if (r.cell == Cell::Gru) {
    rec_gates = slice(ctx, rec, 0, 0, 2 * h);
    rec_candidate = slice(ctx, rec, 0, 2 * h, 3 * h);
  }
  DirectionResult out;
  out.hidden.resize(size_t(r.seq));
  for (int64_t k = 0; k < r.seq; ++k) {
    const int64_t t = reverse ? r.seq - 1 - k : k;
    ir::Value* x_t = reshape(ctx, slice(ctx, xw, 0, t, t + 1), {r.batch, gh});
    if (r.cell == Cell::Rnn) {
      state = activate(ctx, r, act[0], binary(ctx, ir::OpKind::Add, x_t, matmul_transposed(ctx, state, rec)));
    } else if (r.cell == Cell::Lstm) {
      const std::vector<ir::Value*> g =
          split(ctx, binary(ctx, ir::OpKind::Add, x_t, matmul_transposed(ctx, state, rec)), 4);
      auto peep = [&](ir::Value* gate, int k, ir::Value* c) {
        return peephole.empty()
                   ? gate
                   : binary(ctx, ir::OpKind::Add, gate, binary(ctx, ir::OpKind::Mul, peephole[size_t(k)], c));
      };
      ir::Value* i = activate(ctx, r, act[0], peep(g[0], 0, cell));
      ir::Value* f = activate(ctx, r, act[0], peep(g[2], 2, cell));
      ir::Value* candidate = activate(ctx, r, act[1], g[3]);
      cell = binary(ctx, ir::OpKind::Add, binary(ctx, ir::OpKind::Mul, f, cell),
                    binary(ctx, ir::OpKind::Mul, i, candidate));
      ir::Value* o = activate(ctx, r, act[0], peep(g[1], 1, cell));
      state = binary(ctx, ir::OpKind::Mul, o, activate(ctx, r, act[2], cell));
    } else {
      const std::vector<ir::Value*> xg = split(ctx, x_t, 3);
      const std::vector<ir::Value*> zr = split(ctx, matmul_transposed(ctx, state, rec_gates), 2);
      ir::Value* z = activate(ctx, r, act[0], binary(ctx, ir::OpKind::Add, xg[0], zr[0]));
      ir::Value* reset = activate(ctx, r, act[0], binary(ctx, ir::OpKind::Add, xg[1], zr[1]));
      ir::Value* recurrent = nullptr;
      if (r.linear_before_reset) {
        recurrent = matmul_transposed(ctx, state, rec_candidate);
        if (inner_bias) recurrent = binary(ctx, ir::OpKind::Add, recurrent, inner_bias);
        recurrent = binary(ctx, ir::OpKind::Mul, reset, recurrent);
      } else {
        recurrent = matmul_transposed(ctx, binary(ctx, ir::OpKind::Mul, reset, state), rec_candidate);
      }
      ir::Value* candidate = activate(ctx, r, act[1], binary(ctx, ir::OpKind::Add, xg[2], recurrent));
      ir::Value* keep = binary(ctx, ir::OpKind::Sub, ctx.scalar(r.dtype, 1.0), z);
      state = binary(ctx, ir::OpKind::Add, binary(ctx, ir::OpKind::Mul, keep, candidate),
                     binary(ctx, ir::OpKind::Mul, z, state));
    }
    out.hidden[size_t(t)] = state;
  }
  out.last_hidden = state;
  out.last_cell = cell;
  return out;
}

std::vector<std::string> default_activations(Cell cell) {
  if (cell == Cell::Lstm) return {"Sigmoid", "Tanh", "Tanh"};
  if (cell == Cell::Gru) return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

// [dirs, batch, hidden] (layout 0) or [batch, dirs, hidden] (layout 1) of the last states.
ir::Value* stacked_last(ImportContext& ctx, const Recurrence& r, const std::vector<ir::Value*>& last,
                        bool batch_first) {
  std::vector<ir::Value*> parts;
  for (ir::Value* v : last) parts.push_back(reshape(ctx, v, {1, r.batch, r.hidden}));
  ir::Value* y = concat(ctx, parts, 0);
  return batch_first ? transpose(ctx, y, {1, 0, 2}) : y;
}

void translate_recurrent(ImportContext& ctx, Cell cell) {
  Recurrence r;
  r.cell = cell;
  r.gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  r.hidden = ctx.attr_int("hidden_size", 0);
  if (r.hidden <= 0) ctx.fail("attribute 'hidden_size' must be positive, got {}", r.hidden);
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail("direction must be forward, reverse or bidirectional, got '{}'", direction);
  r.directions = direction == "bidirectional" ? 2 : 1;
  r.clip = ctx.attr_float("clip", 0.0);
  r.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  if (ctx.has_attr("activation_alpha") || ctx.has_attr("activation_beta"))
    ctx.fail("activation_alpha and activation_beta are not supported");
  if (ctx.attr_int("input_forget", 0) != 0) ctx.fail("input_forget is not supported");
  const std::vector<std::string> defaults = default_activations(cell);
  r.activations = ctx.attr_strings("activations");
  if (r.activations.empty())
    for (int64_t d = 0; d < r.directions; ++d)
      r.activations.insert(r.activations.end(), defaults.begin(), defaults.end());
  if (r.activations.size() != defaults.size() * size_t(r.directions))
    ctx.fail("expects {} activations, got {}", defaults.size() * size_t(r.directions), r.activations.size());
  const bool batch_first = ctx.attr_int("layout", 0) != 0;
  ir::Value* x = ctx.input(0);
  if (x->type.rank() != 3) ctx.fail("X must have rank 3, got {}", x->type.str());
  if (!is_floating(x->type.dtype)) ctx.fail("X must be floating point, got {}", x->type.str());
  if (batch_first) x = transpose(ctx, x, {1, 0, 2});
  r.dtype = x->type.dtype;
  r.seq = x->type.shape[0];
  r.batch = x->type.shape[1];
  r.input = x->type.shape[2];
  // Every operand's shape, initial states before layout 1's transpose.
  const int64_t dirs = r.directions, gh = r.gates * r.hidden;
  const Shape state = batch_first ? Shape{r.batch, dirs, r.hidden} : Shape{dirs, r.batch, r.hidden};
  const std::vector<std::pair<int, Shape>> operands = {
      {1, {dirs, gh, r.input}}, {2, {dirs, gh, r.hidden}}, {3, {dirs, 2 * gh}}, {5, state}, {6, state},
      {7, {dirs, 3 * r.hidden}}};
  const char* names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (const auto& [input, shape] : operands) {
    if (!ctx.has_input(input) || (input >= 6 && cell != Cell::Lstm)) continue;
    if (ctx.input_type(input).shape != shape)
      ctx.fail("{} must be {}, got {}", names[input], shape_str(shape), ctx.input_type(input).str());
    if (ctx.input_type(input).dtype != r.dtype)
      ctx.fail("{} must be {} as X, got {}", names[input], dtype_name(r.dtype), ctx.input_type(input).str());
  }
  if (ctx.has_input(4)) {
    for (int64_t len : ctx.required_constant(4, "sequence_lens").as_int64())
      if (len != r.seq)
        ctx.fail("sequence_lens other than the sequence length ({}) are not supported, got {}", r.seq, len);
  }
  auto initial_state = [&](int input) -> ir::Value* {  // given as [batch, dirs, hidden] under layout 1
    if (!ctx.has_input(input)) return nullptr;
    return batch_first ? transpose(ctx, ctx.input(input), {1, 0, 2}) : ctx.input(input);
  };
  r.initial_hidden = initial_state(5);
  r.initial_cell = cell == Cell::Lstm ? initial_state(6) : nullptr;
  std::vector<DirectionResult> results;
  for (int64_t d = 0; d < r.directions; ++d)
    results.push_back(run_direction(ctx, r, x, d, direction == "reverse" || d == 1));
  if (ctx.has_output(0)) {
    std::vector<ir::Value*> per_direction;
    for (const DirectionResult& res : results) {
      std::vector<ir::Value*> steps;
      for (ir::Value* s : res.hidden) steps.push_back(reshape(ctx, s, {1, 1, r.batch, r.hidden}));
      per_direction.push_back(concat(ctx, steps, 0));
    }
    ir::Value* y = concat(ctx, per_direction, 1);  // [seq, dirs, batch, hidden]
    ctx.set_output(0, batch_first ? transpose(ctx, y, {2, 0, 1, 3}) : y);
  }
  std::vector<ir::Value*> last_hidden, last_cell;
  for (const DirectionResult& res : results) {
    last_hidden.push_back(res.last_hidden);
    last_cell.push_back(res.last_cell);
  }
  if (ctx.has_output(1)) ctx.set_output(1, stacked_last(ctx, r, last_hidden, batch_first));
  if (cell == Cell::Lstm && ctx.has_output(2))
    ctx.set_output(2, stacked_last(ctx, r, last_cell, batch_first));
}

}  // namespace

void translate_rnn(ImportContext& ctx) { translate_recurrent(ctx, Cell::Rnn); }
void translate_gru(ImportContext& ctx) { translate_recurrent(ctx, Cell::Gru); }
void translate_lstm(ImportContext& ctx) { translate_recurrent(ctx, Cell::Lstm); }

}  // namespace dlc::frontend
