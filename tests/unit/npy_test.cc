// .npy and .npz: round trips over dtypes and ranks, a numpy-written image, and rejection of
// truncated or malformed files with dlc::Error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/npy.h"

namespace dlc {
namespace {

namespace fs = std::filesystem;

Tensor iota(DType dtype, const Shape& shape) {
  Tensor t(TensorType{dtype, shape});
  for (size_t i = 0; i < t.bytes.size(); ++i) t.bytes[i] = uint8_t(i * 7 + 3);
  if (dtype == DType::Bool)
    for (auto& b : t.bytes) b &= 1;
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.type, b.type) << a.type.str() << " vs " << b.type.str();
  EXPECT_EQ(a.bytes, b.bytes);
}

// A fresh directory under the test temp dir, removed at the end of the test.
class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           fmt::format("dlc_npy_{}_{}", getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

struct Case {
  DType dtype;
  Shape shape;
};

const std::vector<Case> kCases = {
    {DType::F32, {}},        {DType::F32, {5}},      {DType::F32, {2, 3, 4}}, {DType::F64, {3}},
    {DType::F16, {2, 1, 3}}, {DType::I64, {}},       {DType::I64, {4}},       {DType::I32, {1, 2, 2}},
    {DType::I8, {6}},        {DType::U8, {2, 2, 2}}, {DType::Bool, {3}},      {DType::F32, {0}},
    {DType::I64, {2, 0, 3}},
};

TEST(Npy, RoundTripsEveryDtypeAndRank) {
  for (const Case& c : kCases) {
    Tensor t = iota(c.dtype, c.shape);
    std::string image = encode_npy(t);
    EXPECT_EQ(image.size() % 64, t.bytes.size() % 64) << "header is padded to 64 bytes";
    expect_same(parse_npy(image, "mem"), t);
  }
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // numpy.save(f, numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(117 - header.size(), ' ');
  header += '\n';
  std::string image = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header;
  for (float v : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) image.append(reinterpret_cast<const char*>(&v), 4);
  Tensor t = parse_npy(image, "numpy");
  ASSERT_EQ(t.type, (TensorType{DType::F32, {2, 3}}));
  EXPECT_EQ(t.data<float>()[5], 5.f);
}

TEST(Npy, RejectsTruncatedImages) {
  std::string image = encode_npy(iota(DType::F32, {2, 3}));
  for (size_t n = 0; n < image.size(); ++n)
    EXPECT_THROW(parse_npy(std::string_view(image).substr(0, n), "cut"), Error)
        << "prefix of " << n << " bytes";
}

TEST(Npy, RejectsMalformedHeaders) {
  std::string image = encode_npy(iota(DType::F32, {2}));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = image;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_THROW(parse_npy(with("<f4", "<c8"), "complex"), Error);
  EXPECT_THROW(parse_npy(with("<f4", ">f4"), "big-endian"), Error);
  EXPECT_THROW(parse_npy(with("False", "True "), "fortran"), Error);
  EXPECT_THROW(parse_npy(with("'shape'", "'shap_'"), "no shape"), Error);
  EXPECT_THROW(parse_npy(with("NUMPY", "NUMPX"), "magic"), Error);
}

TEST_F(NpyFiles, WriteThenReadFile) {
  Tensor t = iota(DType::F32, {3, 2, 2});
  write_npy(path("a.npy"), t);
  expect_same(read_npy(path("a.npy")), t);
  EXPECT_THROW(read_npy(path("missing.npy")), Error);
}

TEST_F(NpyFiles, NpzRoundTrip) {
  std::map<std::string, Tensor> arrays;
  for (size_t i = 0; i < kCases.size(); ++i)
    arrays[fmt::format("array_{}", i)] = iota(kCases[i].dtype, kCases[i].shape);
  arrays["label"] = Tensor::from_int64({1, 0, 2}, {3});
  write_npz(path("data.npz"), arrays);
  std::map<std::string, Tensor> back = read_npz(path("data.npz"));
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [name, t] : arrays) {
    ASSERT_TRUE(back.count(name)) << name;
    expect_same(back.at(name), t);
  }
}

TEST_F(NpyFiles, NpzEmptyArchive) {
  write_npz(path("empty.npz"), {});
  EXPECT_TRUE(read_npz(path("empty.npz")).empty());
}

TEST_F(NpyFiles, NpzRejectsTruncatedAndForeignFiles) {
  write_npz(path("data.npz"), {{"x", iota(DType::F32, {4, 4})}, {"y", iota(DType::I64, {4})}});
  std::string bytes = read_file(path("data.npz"));
  for (size_t n = 0; n < bytes.size(); n += 7) {
    write_file_atomic(path("cut.npz"), std::string_view(bytes).substr(0, n));
    EXPECT_THROW(read_npz(path("cut.npz")), Error) << "prefix of " << n << " bytes";
  }
  write_file_atomic(path("not.npz"), encode_npy(iota(DType::F32, {2})));
  EXPECT_THROW(read_npz(path("not.npz")), Error);
  EXPECT_THROW(read_npz(path("missing.npz")), Error);
}

TEST_F(NpyFiles, NpzRejectsCorruptMember) {
  // A stored member whose .npy image is cut: the zip is valid, the array is not.
  std::string image = encode_npy(iota(DType::F32, {8}));
  write_npz(path("ok.npz"), {{"x", iota(DType::F32, {8})}});
  std::string bytes = read_file(path("ok.npz"));
  size_t at = bytes.find(image);
  ASSERT_NE(at, std::string::npos) << "members are stored uncompressed";
  bytes[at + 1] = 'X';  // breaks the magic; the zip CRC check or the .npy parser must reject it
  write_file_atomic(path("bad.npz"), bytes);
  EXPECT_THROW(read_npz(path("bad.npz")), Error);
}

}  // namespace
}  // namespace dlc
