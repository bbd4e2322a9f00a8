// Shared oneDNN plumbing for the CPU kernels (see onednn.h).
#include "runtime/cpu/onednn.h"

#include <fmt/format.h>

namespace dlc::cpu::onednn {

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

dnnl::memory::data_type data_type(DType t) {
  switch (t) {
    case DType::F32:
      return dnnl::memory::data_type::f32;
    case DType::F16:
      return dnnl::memory::data_type::f16;
    case DType::BF16:
      return dnnl::memory::data_type::bf16;
    case DType::I32:
      return dnnl::memory::data_type::s32;
    case DType::I8:
      return dnnl::memory::data_type::s8;
    case DType::U8:
      return dnnl::memory::data_type::u8;
    default:
      throw Error(fmt::format("dtype {} has no oneDNN equivalent", dtype_name(t)));
  }
}

dnnl::memory::dims to_dims(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

Shape row_major_strides(const Shape& dims) {
  Shape st(dims.size(), 1);
  for (int64_t i = int64_t(dims.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * dims[i + 1];
  return st;
}

dnnl::memory::desc plain_desc(const Shape& dims, DType t) {
  return strided_desc(dims, row_major_strides(dims), t);
}

dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides, DType t) {
  return dnnl::memory::desc(to_dims(dims), data_type(t), to_dims(strides));
}

dnnl::memory::desc any_format(const dnnl::memory::desc& d) {
  return dnnl::memory::desc(d.dims(), d.data_type(), dnnl::memory::format_tag::any);
}

dnnl::memory::desc channel_blocked16(const dnnl::memory::desc& d) {
  using tag = dnnl::memory::format_tag;
  const tag t = d.dims().size() == 3 ? tag::nCw16c : d.dims().size() == 4 ? tag::nChw16c : tag::nCdhw16c;
  return dnnl::memory::desc(d.dims(), d.data_type(), t);
}

Arg::Arg(const dnnl::memory::desc& user, const dnnl::memory::desc& want)
    : user_(user, engine(), DNNL_MEMORY_NONE), reordered_(user != want) {
  if (!reordered_) return;
  scratch_ = dnnl::memory(want, engine());
  to_scratch_ = dnnl::reorder(user_, scratch_);
  from_scratch_ = dnnl::reorder(scratch_, user_);
}

dnnl::memory Arg::input(void* data, dnnl::stream& s) {
  user_.set_data_handle(data);
  if (!reordered_) return user_;
  to_scratch_.execute(s, user_, scratch_);
  return scratch_;
}

dnnl::memory Arg::output(void* data) {
  user_.set_data_handle(data);
  return reordered_ ? scratch_ : user_;
}

void Arg::finish_output(dnnl::stream& s) {
  if (reordered_) from_scratch_.execute(s, scratch_, user_);
}

void execute(PrimitiveState& st, const std::vector<std::pair<int, const void*>>& inputs,
             const std::vector<std::pair<int, void*>>& outputs) {
  dnnl::stream& s = stream();
  std::unordered_map<int, dnnl::memory> args;
  for (const auto& [id, ptr] : inputs)
    if (ptr) args[id] = st.args.at(id).input(const_cast<void*>(ptr), s);
  for (const auto& [id, ptr] : outputs)
    if (ptr) args[id] = st.args.at(id).output(ptr);
  st.prim.execute(s, args);
  for (const auto& [id, ptr] : outputs)
    if (ptr) st.args.at(id).finish_output(s);
  s.wait();
}

std::string describe(const dnnl::error& e) {
  return fmt::format("oneDNN: {} (status {})", e.what(), int(e.status));
}

}  // namespace dlc::cpu::onednn
