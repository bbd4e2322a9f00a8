// Expression programs: the description of a fused elementwise kernel, shared by the fusion pass
// (which builds them), the IR and plan (which store them as the `program` attribute of
// FusedElementwise), the CPU kernel (which interprets them) and the CUDA emitter (which turns
// them into source). A program computes one or more outputs of one shape from inputs that
// broadcast to it (numpy rules), through a list of instructions in SSA form: instruction k
// defines value k, and its operands are earlier values. Arithmetic is f32; inputs and outputs may
// be stored as f32, f16, bf16 or bool. The ops are named after the IR ops they implement
// (expr_op_from_name("Add")).
//
//   ExprProgram p({64, 128});
//   int x = p.input("x", DType::F16, {64, 128});
//   int b = p.input("b", DType::F16, {128});
//   p.output("y", p.op(ExprOp::Relu, {p.op(ExprOp::Add, {x, b})}), DType::F16);
//
// The attribute form (body()) leaves out what the operands of the node or step already say —
// input names, dtypes and dims, output names — and keeps the instructions and output dtypes:
//
//   %0 = input 0; %1 = input 1; %2 = Add %0, %1; %3 = Relu %2; output %3 f16
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc {

// X(Name, number of operands). Input and Constant take none (their data is in the instruction).
// Semantics follow the CPU kernels and PyTorch: Max/Min return a NaN operand (the first when both
// are); Relu(x) = x < 0 ? 0 : x (NaN passes); Where(c, a, b) = c != 0 ? a : b; Clip(x, lo, hi)
// (a NaN x or bound gives NaN); ReluGrad(dy, y) = y > 0 ? dy : 0 (0 for a NaN y); Cast(x) rounds to
// ExprInstr::to (f32, f16, bf16, or bool: x != 0); Reciprocal(x) = 1 / x; the comparisons (Equal,
// Greater, GreaterOrEqual, Less, LessOrEqual) give 1 where they hold and 0 elsewhere (a NaN
// operand compares false), so a bool output stores the IR op's result. The math functions (Sin …
// Atanh, Floor, Ceil, and Expm1 = exp(x) - 1 without cancellation) are libm's and CUDA's float
// ones; Round rounds half to even; Sign passes 0 and NaN through; Softplus(x) = x > 0 ?
// x + log1p(exp(-x)) : log1p(exp(x)); Softsign(x) = x / (1 + |x|). The logical ops (And, Or, Xor,
// Not) read a nonzero operand as true and give 1 or 0. Fmod(a, b) is C's fmod (the sign of a; no
// IR op has the name: the CUDA backend writes Mod with it).
// clang-format off
#define DLC_EXPR_OPS(X) \
  X(Input, 0)           \
  X(Constant, 0)        \
  X(Add, 2)             \
  X(Sub, 2)             \
  X(Mul, 2)             \
  X(Div, 2)             \
  X(Pow, 2)             \
  X(Max, 2)             \
  X(Min, 2)             \
  X(Neg, 1)             \
  X(Abs, 1)             \
  X(Relu, 1)            \
  X(Sigmoid, 1)         \
  X(Tanh, 1)            \
  X(Exp, 1)             \
  X(Log, 1)             \
  X(Sqrt, 1)            \
  X(Erf, 1)             \
  X(Where, 3)           \
  X(Cast, 1)            \
  X(Clip, 3)            \
  X(ReluGrad, 2)        \
  X(Reciprocal, 1)      \
  X(Equal, 2)           \
  X(Greater, 2)         \
  X(GreaterOrEqual, 2)  \
  X(Less, 2)            \
  X(LessOrEqual, 2)     \
  X(Sin, 1)             \
  X(Cos, 1)             \
  X(Tan, 1)             \
  X(Asin, 1)            \
  X(Acos, 1)            \
  X(Atan, 1)            \
  X(Sinh, 1)            \
  X(Cosh, 1)            \
  X(Asinh, 1)           \
  X(Acosh, 1)           \
  X(Atanh, 1)           \
  X(Floor, 1)           \
  X(Ceil, 1)            \
  X(Round, 1)           \
  X(Sign, 1)            \
  X(Softplus, 1)        \
  X(Softsign, 1)        \
  X(Expm1, 1)           \
  X(And, 2)             \
  X(Or, 2)              \
  X(Xor, 2)             \
  X(Not, 1)             \
  X(Fmod, 2)
// clang-format on

enum class ExprOp : uint8_t {
#define DLC_EXPR_OP_ENUM(name, arity) name,
  DLC_EXPR_OPS(DLC_EXPR_OP_ENUM)
#undef DLC_EXPR_OP_ENUM
};

std::string_view expr_op_name(ExprOp op);
int expr_op_arity(ExprOp op);
/// The op named `name` (an IR op name such as "Add" or "ReluGrad"), if programs have it.
std::optional<ExprOp> expr_op_from_name(std::string_view name);
/// Whether programs load and store `t`: f32, f16, bf16 or bool.
bool is_expr_storage(DType t);

struct ExprInput {
  std::string name;
  DType dtype = DType::F32;
  Shape dims;  // broadcastable to the program's dims
};

struct ExprInstr {
  ExprOp op = ExprOp::Constant;
  std::vector<int> args;  // earlier values
  int input = -1;         // Input: index into ExprProgram::inputs
  double value = 0;       // Constant
  DType to = DType::F32;  // Cast
};

struct ExprOutput {
  std::string name;
  int value = -1;
  DType dtype = DType::F32;
};

struct ExprProgram {
  Shape dims;  // every output's shape
  std::vector<ExprInput> inputs;
  std::vector<ExprInstr> instrs;
  std::vector<ExprOutput> outputs;

  ExprProgram() = default;
  explicit ExprProgram(Shape d) : dims(std::move(d)) {}

  /// Declares an input and returns the value that loads it.
  int input(std::string name, DType dtype, Shape input_dims);
  int constant(double v);
  /// An arithmetic op over earlier values (arity checked by validate()).
  int op(ExprOp op, std::vector<int> args);
  int cast(int value, DType to);
  void output(std::string name, int value, DType dtype);

  /// Throws dlc::Error naming the first problem: an operand that is not an earlier value, a wrong
  /// operand count, an input that does not broadcast to `dims`, an unsupported dtype, no output.
  void validate() const;
  /// One line per input, instruction and output ("%2 = Add %0, %1"); the kernel's header comment.
  std::string str() const;
  /// The attribute form: instructions and output dtypes, "; "-separated (see the file comment).
  std::string body() const;
  /// The same program with each distinct instruction (op, operands, input, constant, cast type)
  /// computed once: a producer inlined twice into its reader leaves two copies of its
  /// instructions. Every instruction is pure, so the outputs keep their bits.
  ExprProgram deduplicated() const;
};

/// Rebuilds a program from its attribute form and the operands of its node or step: `inputs`
/// in operand order, `output_names` one per output. The dims are the broadcast of the inputs'
/// dims. Throws dlc::Error naming the problem; the result is validated.
ExprProgram parse_expr_program(std::string_view body, std::vector<ExprInput> inputs,
                               const std::vector<std::string>& output_names);

}  // namespace dlc
