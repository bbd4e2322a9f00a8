// The one error type of dlc: every user-facing failure (bad model, bad data, bad plan) is a
// dlc::Error whose message names the file, node or array. The tool prints it as `error: …`;
// the C API turns it into a status code.
#pragma once

#include <stdexcept>
#include <string>

namespace dlc {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dlc
