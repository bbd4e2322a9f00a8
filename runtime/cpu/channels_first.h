// Channels-last nodes on the CPU (dlc/channels_last.h): the kernels are written for channels-first
// operands, so a channels-last step runs its kernel on channels-first copies of its operands of
// rank 3 or more and transposes the results back. Exact (the same arithmetic on the same values),
// and slow: the CPU backend's plans are channels-first unless a layout is asked for (tests do).
#pragma once

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

/// When `ctx`'s attributes ask for channels-last operands, runs `kernel` on channels-first copies
/// (the attribute dropped) and returns true; otherwise does nothing and returns false.
bool run_channels_first(const KernelContext& ctx, KernelFn kernel);

}  // namespace dlc::cpu
