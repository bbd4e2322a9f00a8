// The auto | ON | OFF pass switches (pass_switch.h).
#include "passes/pass_switch.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::passes {

bool switched_on(std::string_view flag, const std::string& value, std::string_view on, std::string_view off,
                 const std::string& device, const std::string& precision) {
  if (value == on) return true;
  if (value == off) return false;
  if (value != "auto") throw Error(fmt::format("{} must be auto, {} or {}, got '{}'", flag, on, off, value));
  return device.rfind("cuda", 0) == 0 && precision != "fp32";
}

}  // namespace dlc::passes
