#include "dlc/in_place_operands.h"

#include <string>

#include "dlc/multi_tensor_update.h"

namespace dlc {

int in_place_operand(std::string_view op, const Attrs& attrs, int output) {
  if (op == "BatchNormalization")
    return attrs.i("training_mode", 0) != 0 && (output == 1 || output == 2) ? output + 2 : -1;
  if (op == "MultiTensorUpdate") {
    const std::string update = attrs.s("update", "");
    const MultiTensorLayout* layout = find_multi_tensor_layout(update);
    if (!layout) return -1;
    const int input = in_place_operand(update, attrs, output % layout->outputs);
    return input < 0 ? -1 : layout->merged_input(output / layout->outputs, input);
  }
  // An optimizer update: result 0 is the parameter (operand 0); result r >= 1 the r-th state,
  // the r-th non-scalar operand after the gradient (operand 1).
  const MultiTensorLayout* layout = find_multi_tensor_layout(op);
  if (!layout || output < 0 || output >= layout->outputs) return -1;
  if (output == 0) return 0;
  int states = 0;
  for (int i = 2; i < layout->inputs; ++i)
    if (!layout->is_scalar(i) && ++states == output) return i;
  return -1;
}

}  // namespace dlc
