// quickstart: two fused kernels written in the tilefuse DSL, their tile IR, a run,
// and a check against plain C++. Then the gallery's fused vs unfused log(relu(x + b))
// and how many bytes each moves through memory.
//
// Host buffers (std::vector) run on the CPU interpreter; device buffers
// (DeviceBuffer<T>) run on the GPU. The sample uses the GPU when gpu_available() says
// one can run kernels, the interpreter otherwise.
//
// Exit status: 0 when every result matches its reference, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <tilefuse/cuda/memory.hpp>
#include <tilefuse/cuda/stream.hpp>
#include <tilefuse/gpu.hpp>
#include <tilefuse/kernels/bias_relu_log.hpp>
#include <tilefuse/tilefuse.hpp>

using namespace tilefuse;

// ---- the kernels -----------------------------------------------------------------

// y = log(relu(x + b)) for x [rows, cols] and a per-column bias b [cols]:
// one program handles BLOCK consecutive elements; masked lanes never touch memory.
auto bias_relu_log = kernel("bias_relu_log", {"y", "x", "b", "n", "n_cols"},
    [](Ptr<float> y, Ptr<const float> x, Ptr<const float> b, I32 n, I32 n_cols, Meta<"BLOCK"> BLOCK) {
      auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
      auto mask = offs < n;
      auto v = load(x + offs, mask) + load(b + offs % n_cols, mask);
      store(y + offs, log(maximum(v, 0.0f)), mask);
    });

// Row softmax: one program per row, the whole row in one tile of BLOCK >= n_cols.
auto softmax = kernel("softmax", {"out", "in", "n_cols"},
    [](Ptr<float> out, Ptr<const float> in, I32 n_cols, Meta<"BLOCK"> BLOCK) {
      auto row = program_id(0);
      auto cols = arange(0, BLOCK);
      auto mask = cols < n_cols;
      auto x = load(in + row * n_cols + cols, mask, -inf);
      auto e = exp(x - max(x, 0));
      store(out + row * n_cols + cols, e / sum(e, 0), mask);
    });

// ---- plain C++ references ----------------------------------------------------------

std::vector<float> ref_bias_relu_log(const std::vector<float>& x, const std::vector<float>& b, int cols) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::log(std::max(x[i] + b[i % cols], 0.0f));
  return y;
}

std::vector<float> ref_softmax(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* in = &x[size_t(r) * cols];
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, double(in[c]));
    for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) y[size_t(r) * cols + c] = float(std::exp(in[c] - m) / s);
  }
  return y;
}

// ---- helpers -----------------------------------------------------------------------

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = dist(gen);
  return v;
}

// Largest |got - want|; equal values (both -inf, say) differ by 0. Fails on a NaN or
// an error above atol + rtol * |want|.
bool check(const char* what, const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol) {
  double max_err = 0;
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    double err = std::abs(double(got[i]) - double(want[i]));
    if (!(err <= atol + rtol * std::abs(double(want[i])))) ok = false;  // also catches NaN
    max_err = std::max(max_err, err);
  }
  std::printf("%-24s max abs error %.3g  %s\n", what, max_err, ok ? "OK" : "FAILED");
  return ok;
}

bool use_gpu = false;

// run(launch, buffers...): calls launch(buffers...) with the host vectors (the
// interpreter runs it) or, on the GPU, with device copies that are copied back after.
template <class Launch, class... V>
void run(Launch&& launch, V&... host) {
  if (!use_gpu) return launch(host...);
  auto dev = std::make_tuple(to_device(host)...);
  std::apply(launch, dev);
  std::apply([&](auto&... d) { (d.copy_to_host(std::span(host)), ...); }, dev);
}

// Milliseconds per call of `launch` on the GPU (mean of 20 after a warm-up).
template <class Launch>
double time_ms(Launch&& launch) {
  launch();
  auto start = cuda::Event::create(), end = cuda::Event::create();
  start.record();
  for (int i = 0; i < 20; ++i) launch();
  end.record();
  end.synchronize();
  return cuda::Event::elapsed_ms(start, end) / 20;
}

int quickstart() {
  bool ok = true;
  std::string why;
  use_gpu = gpu_available(&why);
  std::printf("executor: %s\n\n", use_gpu ? ("GPU, " + cuda::device_info().name).c_str()
                                          : ("CPU interpreter (" + why + ")").c_str());

  // 1. bias + relu + log, fused into one kernel.
  {
    const int rows = 64, cols = 1000, n = rows * cols;
    Config cfg{{"BLOCK", 1024}, num_warps(4)};
    std::printf("== %s, %s ==\n%s\n", bias_relu_log.name().c_str(), cfg.str().c_str(),
                ir::to_string(*bias_relu_log.specialize(cfg)).c_str());

    auto x = random_floats(n, 1), b = random_floats(cols, 2);
    std::vector<float> y(n);
    run([&](auto& y, auto& x, auto& b) { bias_relu_log.launch(grid(cdiv(n, 1024)), cfg, y, x, b, n, cols); }, y, x, b);
    ok &= check("bias_relu_log vs C++:", y, ref_bias_relu_log(x, b, cols), 1e-6, 1e-5);
  }

  // 2. Row softmax on rows that do not fill the tile (1000 of 1024 lanes used).
  {
    const int rows = 64, cols = 1000;
    Config cfg{{"BLOCK", 1024}, num_warps(4)};
    std::printf("\n== %s, %s ==\n%s\n", softmax.name().c_str(), cfg.str().c_str(),
                ir::to_string(*softmax.specialize(cfg)).c_str());

    auto x = random_floats(size_t(rows) * cols, 3);
    std::vector<float> y(x.size());
    run([&](auto& y, auto& x) { softmax.launch(grid(rows), cfg, y, x, cols); }, y, x);
    ok &= check("softmax vs C++:", y, ref_softmax(x, rows, cols), 1e-7, 1e-5);
  }

  // 3. Why fusion matters: the gallery's fused kernel against the same math as three
  //    kernels (t = x + b; u = relu(t); y = log(u)). Memory-bound kernels run at the
  //    speed of the bytes they move.
  {
    const int64_t rows = use_gpu ? 8192 : 256, cols = use_gpu ? 4096 : 1024, n = rows * cols;
    auto x = random_floats(n, 4), b = random_floats(cols, 5);
    std::vector<float> fused(n), unfused(n), t(n), u(n);
    std::printf("\n== gallery: log(relu(x + b)), %lld x %lld f32 ==\n", (long long)rows, (long long)cols);
    run([&](auto& y, auto& x, auto& b) { kernels::bias_relu_log(y, x, b, rows, cols); }, fused, x, b);
    run([&](auto& y, auto& x, auto& b, auto& t, auto& u) { kernels::bias_relu_log_unfused(y, x, b, t, u, rows, cols); },
        unfused, x, b, t, u);
    auto want = ref_bias_relu_log(x, b, int(cols));
    ok &= check("fused vs C++:", fused, want, 1e-6, 1e-5);
    ok &= check("unfused vs C++:", unfused, want, 1e-6, 1e-5);

    double tensor = double(n) * sizeof(float), bias = double(cols) * sizeof(float);
    double fused_bytes = tensor + bias + tensor;            // read x and b, write y
    double unfused_bytes = 3 * tensor + bias + 3 * tensor;  // per kernel: read one tensor, write one
    std::printf("bytes moved, fused   (1 kernel):  %8.2f MB  read x + b, write y\n", fused_bytes / 1e6);
    std::printf("bytes moved, unfused (3 kernels): %8.2f MB  6 tensor passes (read x, t, u; write t, u, y)\n",
                unfused_bytes / 1e6);
    if (use_gpu) {
      auto dx = to_device(x), db = to_device(b), dy = to_device(fused), dt = to_device(t), du = to_device(u);
      double f_ms = time_ms([&] { kernels::bias_relu_log(dy, dx, db, rows, cols); });
      double u_ms = time_ms([&] { kernels::bias_relu_log_unfused(dy, dx, db, dt, du, rows, cols); });
      std::printf("time, fused:   %.3f ms (%.0f GB/s)\n", f_ms, fused_bytes / f_ms / 1e6);
      std::printf("time, unfused: %.3f ms (%.0f GB/s), %.1fx slower\n", u_ms, unfused_bytes / u_ms / 1e6, u_ms / f_ms);
    } else {
      std::printf("fusion moves %.1fx fewer bytes (timings are measured when a GPU runs the kernels)\n",
                  unfused_bytes / fused_bytes);
    }
  }

  std::printf("\n%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
  return ok ? 0 : 1;
}

int main() {
  try {
    return quickstart();
  } catch (const std::exception& e) {  // UserError: what went wrong, where, and how to fix it
    std::fprintf(stderr, "quickstart: %s\n", e.what());
    return 1;
  }
}
