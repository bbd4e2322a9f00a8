// Whole-file reads and atomic writes (temporary file + rename), shared by plans, checkpoints,
// models and tool outputs.
#pragma once

#include <string>
#include <string_view>

namespace dlc {

/// Throws dlc::Error naming the file if it cannot be read.
std::string read_file(const std::string& path);
/// Writes `path.tmp.PID` then renames it to `path`; on failure nothing is left behind.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace dlc
