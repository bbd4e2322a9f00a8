// The `auto | ON | OFF` switches of optional training passes (--layout, --attention): ON and OFF
// say, auto turns the pass on for a CUDA plan in bf16 or fp16, where torch.compile's own
// defaults do the same (channels-last convolutions, fused attention).
#pragma once

#include <string>
#include <string_view>

namespace dlc::passes {

/// Whether `value` of switch `flag` turns its pass on for a plan of `device` and `precision`;
/// anything but auto, `on` and `off` is an error naming the flag.
bool switched_on(std::string_view flag, const std::string& value, std::string_view on, std::string_view off,
                 const std::string& device, const std::string& precision);

}  // namespace dlc::passes
