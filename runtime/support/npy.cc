// .npy encoding and decoding (.npz archives are in npz.cc).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstring>

#include "dlc/checked_shape.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/npy.h"

namespace dlc {

namespace {

std::optional<DType> dtype_from_descr(std::string_view d) {
  if (d.size() < 2) return std::nullopt;
  // '<' little-endian, '|' not applicable (one byte), '=' native (little-endian here).
  if (d[0] != '<' && d[0] != '|' && d[0] != '=') return std::nullopt;
  std::string_view t = d.substr(1);
  if (t == "f4") return DType::F32;
  if (t == "f8") return DType::F64;
  if (t == "f2") return DType::F16;
  if (t == "i8") return DType::I64;
  if (t == "i4") return DType::I32;
  if (t == "i1") return DType::I8;
  if (t == "u1") return DType::U8;
  if (t == "b1") return DType::Bool;
  return std::nullopt;
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::F16: return "<f2";
    case DType::BF16: return "<V2";  // numpy has no bfloat16; raw 2-byte values
    case DType::I64: return "<i8";
    case DType::I32: return "<i4";
    case DType::I8: return "|i1";
    case DType::U8: return "|u1";
    case DType::Bool: return "|b1";
  }
  return "";
}

// The value of `key` in the header dict, as raw text up to the next top-level comma or brace.
std::string_view header_field(std::string_view h, std::string_view key, const std::string& what) {
  std::string quoted = fmt::format("'{}'", key);
  size_t k = h.find(quoted);
  if (k == std::string_view::npos) throw Error(fmt::format("{}: .npy header has no '{}'", what, key));
  size_t colon = h.find(':', k + quoted.size());
  if (colon == std::string_view::npos) throw Error(fmt::format("{}: malformed .npy header", what));
  size_t start = h.find_first_not_of(' ', colon + 1);
  if (start == std::string_view::npos) throw Error(fmt::format("{}: malformed .npy header", what));
  size_t end = start;
  int depth = 0;
  for (; end < h.size(); ++end) {
    char c = h[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  if (h[start] == '(') {
    end = h.find(')', start);
    if (end == std::string_view::npos) throw Error(fmt::format("{}: malformed .npy shape", what));
    ++end;
  }
  return h.substr(start, end - start);
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
    throw Error(fmt::format("{}: not a .npy file (bad magic)", what));
  int major = uint8_t(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(fmt::format("{}: truncated .npy header", what));
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    throw Error(fmt::format("{}: unsupported .npy version {}", what, major));
  }
  if (header_start + header_len > bytes.size()) throw Error(fmt::format("{}: truncated .npy header", what));
  std::string_view h = bytes.substr(header_start, header_len);
  std::string_view descr = header_field(h, "descr", what);
  if (descr.size() < 2) throw Error(fmt::format("{}: malformed .npy descr", what));
  descr = descr.substr(1, descr.size() - 2);
  auto dtype = dtype_from_descr(descr);
  if (!dtype) throw Error(fmt::format("{}: unsupported .npy dtype '{}'", what, descr));
  if (header_field(h, "fortran_order", what) != "False")
    throw Error(fmt::format("{}: Fortran-ordered .npy arrays are not supported", what));
  std::string_view shape_text = header_field(h, "shape", what);
  Shape shape;
  for (size_t i = 0; i < shape_text.size();) {
    if (shape_text[i] < '0' || shape_text[i] > '9') {
      ++i;
      continue;
    }
    int64_t d = 0;
    auto [end, ec] = std::from_chars(shape_text.data() + i, shape_text.data() + shape_text.size(), d);
    if (ec != std::errc()) throw Error(fmt::format("{}: malformed .npy shape {}", what, shape_text));
    shape.push_back(d);
    i = size_t(end - shape_text.data());
  }
  TensorType type{*dtype, shape};
  if (!checked_num_elements(shape, dtype_size(*dtype)))
    throw Error(fmt::format("{}: .npy shape {} is too large", what, shape_text));
  std::string_view data = bytes.substr(header_start + header_len);
  if (data.size() != type.bytes())
    throw Error(
        fmt::format("{}: .npy data has {} bytes, {} needs {}", what, data.size(), type.str(), type.bytes()));
  Tensor t(type);
  copy_bytes(t.bytes.data(), data.data(), data.size());
  return t;
}

Tensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

std::string encode_npy(const Tensor& t) {
  // numpy's tuple syntax: (), (3,), (2, 3)
  std::string shape = t.type.shape.size() == 1 ? fmt::format("{},", t.type.shape[0])
                                                : fmt::format("{}", fmt::join(t.type.shape, ", "));
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr_of(t.type.dtype), shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) { write_file_atomic(path, encode_npy(t)); }

}  // namespace dlc
