// dlc_bench_conv_formats: which memory format the CPU Conv kernel (runtime/cpu/kernels/conv.cc)
// should ask oneDNN for. For each convolution shape, times oneDNN's forward convolution with the
// format oneDNN picks itself (`any`) and with the 16-channel blocked format (nChw16c), each with
// the reorders from and to the plain NCHW tensors that dlc holds: best of 10 runs, milliseconds.
//
// usage: dlc_bench_conv_formats   (OMP_NUM_THREADS sets the threads)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>

namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct ConvShape {
  int mb, ic, oc, hw, k, stride;
};

template <typename F>
double best_ms(dnnl::stream& s, F&& run) {
  run();
  s.wait();
  double best = 1e30;
  for (int r = 0; r < 10; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    s.wait();
    best = std::min(best,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Times one shape in format `fmt` for x and y; prints the implementation and both times.
void time_conv(const dnnl::engine& eng, dnnl::stream& s, const ConvShape& c, tag fmt) {
  const int pad = c.k / 2, out = (c.hw + 2 * pad - c.k) / c.stride + 1;
  const memory::dims x{c.mb, c.ic, c.hw, c.hw}, w{c.oc, c.ic, c.k, c.k}, y{c.mb, c.oc, out, out}, b{c.oc};
  const auto f32 = memory::data_type::f32;
  const memory::desc x_plain(x, f32, tag::nchw), y_plain(y, f32, tag::nchw), bias(b, f32, tag::a);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      memory::desc(x, f32, fmt), memory::desc(w, f32, tag::any), bias,
                                      memory::desc(y, f32, fmt), {c.stride, c.stride}, {pad, pad},
                                      {pad, pad}),
      eng);
  memory xu(x_plain, eng), yu(y_plain, eng), xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng),
      bm(bias, eng), ym(pd.dst_desc(), eng);
  const dnnl::convolution_forward conv(pd);
  const dnnl::reorder to_x(xu, xm), to_y(ym, yu);
  const auto run_conv = [&] {
    conv.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
  };
  const double with_reorders = best_ms(s, [&] {
    to_x.execute(s, xu, xm);
    run_conv();
    to_y.execute(s, ym, yu);
  });
  const double alone = best_ms(s, run_conv);
  std::printf("| %d | %d | %d | %d | %dx%d/%d | %s | %s | %.3f | %.3f |\n", c.mb, c.ic, c.oc, c.hw, c.k, c.k,
              c.stride, fmt == tag::any ? "any" : "nChw16c", pd.impl_info_str(), with_reorders, alone);
}

}  // namespace

int main() {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  std::printf(
      "| batch | in ch | out ch | size | kernel | format | oneDNN kernel | ms with reorders | ms alone |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  // The main job's second convolution, ResNet's 3x3 and 1x1 shapes (batch 8), a small one.
  for (const ConvShape& c :
       {ConvShape{64, 32, 64, 14, 3, 1}, ConvShape{8, 64, 64, 56, 3, 1}, ConvShape{8, 64, 128, 56, 3, 2},
        ConvShape{8, 128, 128, 28, 3, 1}, ConvShape{8, 256, 256, 14, 3, 1}, ConvShape{8, 512, 512, 7, 3, 1},
        ConvShape{8, 64, 256, 56, 1, 1}, ConvShape{8, 256, 64, 56, 1, 1}, ConvShape{16, 16, 32, 16, 3, 1}})
    for (tag fmt : {tag::any, tag::nChw16c}) time_conv(eng, s, c, fmt);
}
