// .npz archives (a zip of .npy files, as numpy.savez writes them), read and written with libzip.
#include <fmt/format.h>
#include <zip.h>

#include <memory>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/npy.h"

namespace dlc {

namespace {

constexpr std::string_view kNpySuffix = ".npy";

struct ZipError {
  zip_error_t e;
  ZipError() { zip_error_init(&e); }
  ~ZipError() { zip_error_fini(&e); }
  ZipError(const ZipError&) = delete;
  ZipError& operator=(const ZipError&) = delete;
  const char* str() { return zip_error_strerror(&e); }
};

struct SourceFree {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};
struct ArchiveDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct FileClose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using SourcePtr = std::unique_ptr<zip_source_t, SourceFree>;
using ArchivePtr = std::unique_ptr<zip_t, ArchiveDiscard>;

// An archive over an in-memory source; `source` holds its own reference, so it outlives the archive.
struct MemoryArchive {
  SourcePtr source;
  ArchivePtr archive;

  MemoryArchive(const void* data, size_t size, int flags, const std::string& path) {
    ZipError err;
    source.reset(zip_source_buffer_create(data, size, 0, &err.e));
    if (!source) throw Error(fmt::format("{}: cannot create a zip buffer: {}", path, err.str()));
    archive.reset(zip_open_from_source(source.get(), flags, &err.e));
    if (!archive) throw Error(fmt::format("{}: not a valid .npz (zip) archive: {}", path, err.str()));
    zip_source_keep(source.get());  // the archive took our reference; keep one for `source`
  }
};

std::string read_entry(zip_t* z, zip_uint64_t index, const std::string& what) {
  std::unique_ptr<zip_file_t, FileClose> f(zip_fopen_index(z, index, 0));
  if (!f) throw Error(fmt::format("{}: cannot open: {}", what, zip_strerror(z)));
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    zip_int64_t n = zip_fread(f.get(), chunk, sizeof chunk);
    if (n < 0) throw Error(fmt::format("{}: read failed: {}", what, zip_file_strerror(f.get())));
    if (n == 0) break;
    bytes.append(chunk, size_t(n));
  }
  return bytes;
}

// The bytes of a finished in-memory archive (after zip_close wrote it into the kept source).
std::string source_bytes(zip_source_t* src, const std::string& path) {
  auto fail = [&] {
    return Error(fmt::format("{}: cannot read back the zip buffer: {}", path,
                             zip_error_strerror(zip_source_error(src))));
  };
  if (zip_source_open(src) < 0) throw fail();
  std::string out;
  bool ok = zip_source_seek(src, 0, SEEK_END) == 0;
  zip_int64_t size = ok ? zip_source_tell(src) : -1;
  ok = ok && size >= 0 && zip_source_seek(src, 0, SEEK_SET) == 0;
  if (ok) {
    out.resize(size_t(size));
    ok = zip_source_read(src, out.data(), zip_uint64_t(size)) == size;
  }
  zip_source_close(src);
  if (!ok) throw fail();
  return out;
}

}  // namespace

std::map<std::string, Tensor> read_npz(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.empty()) throw Error(fmt::format("{}: empty file, not a .npz archive", path));
  MemoryArchive a(bytes.data(), bytes.size(), ZIP_RDONLY | ZIP_CHECKCONS, path);
  std::map<std::string, Tensor> arrays;
  zip_int64_t n = zip_get_num_entries(a.archive.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* entry = zip_get_name(a.archive.get(), zip_uint64_t(i), 0);
    if (!entry) throw Error(fmt::format("{}: entry {}: {}", path, i, zip_strerror(a.archive.get())));
    std::string name = entry;
    if (name.ends_with('/')) continue;  // a directory entry
    std::string what = fmt::format("{}: array '{}'", path, name);
    if (name.ends_with(kNpySuffix)) name.resize(name.size() - kNpySuffix.size());
    Tensor t = parse_npy(read_entry(a.archive.get(), zip_uint64_t(i), what), what);
    if (!arrays.emplace(name, std::move(t)).second)
      throw Error(fmt::format("{}: array '{}' appears twice", path, name));
  }
  return arrays;
}

void write_npz(const std::string& path, const std::map<std::string, Tensor>& arrays) {
  if (arrays.empty()) {
    // libzip writes nothing for an empty archive; numpy writes the bare end-of-directory record.
    write_file_atomic(path, std::string("PK\x05\x06", 4) + std::string(18, '\0'));
    return;
  }
  MemoryArchive a(nullptr, 0, ZIP_CREATE | ZIP_TRUNCATE, path);
  // libzip reads the entries' bytes at zip_close, so they must live until then.
  std::vector<std::string> images;
  images.reserve(arrays.size());
  for (const auto& [name, tensor] : arrays) {
    if (name.empty()) throw Error(fmt::format("{}: an array has an empty name", path));
    const std::string& image = images.emplace_back(encode_npy(tensor));
    ZipError err;
    SourcePtr src(zip_source_buffer_create(image.data(), image.size(), 0, &err.e));
    if (!src) throw Error(fmt::format("{}: array '{}': {}", path, name, err.str()));
    std::string entry = name + std::string(kNpySuffix);
    zip_int64_t index = zip_file_add(a.archive.get(), entry.c_str(), src.get(), ZIP_FL_ENC_UTF_8);
    if (index < 0) throw Error(fmt::format("{}: array '{}': {}", path, name, zip_strerror(a.archive.get())));
    src.release();  // owned by the archive now
    // Stored, like numpy.savez: arrays of floats rarely compress and reading stays fast.
    zip_set_file_compression(a.archive.get(), zip_uint64_t(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(a.archive.get()) < 0)
    throw Error(fmt::format("{}: cannot write the archive: {}", path, zip_strerror(a.archive.get())));
  a.archive.release();  // zip_close freed it
  write_file_atomic(path, source_bytes(a.source.get(), path));
}

}  // namespace dlc
