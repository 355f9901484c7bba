#include "sweeps.hpp"

#include <array>
#include <cstdio>
#include <type_traits>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/tuned.hpp"

namespace tilefuse::tune_tool {
namespace {

// Device buffers of random values, or placeholder addresses (256-byte aligned like
// real allocations, so the specialization matches) when there is no device.
class Holder {
 public:
  explicit Holder(bool dev) : dev_(dev) {}
  template <class U>
  DevicePtr<U> make(size_t n, float lo, float hi) {
    if (!dev_) {
      auto p = DevicePtr<U>::from_address(fake_, n);
      fake_ += (n * sizeof(U) + 511) / 256 * 256;
      return p;
    }
    std::vector<U> host(n);
    uint64_t s = 0x9E3779B97F4A7C15ull + owned_.size();
    for (auto& x : host) {  // xorshift: fast enough for 10^8 elements, never zeros
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      x = U(lo + (hi - lo) * float(s >> 40) / float(1 << 24));
    }
    auto b = std::make_shared<DeviceBuffer<U>>(to_device(host));
    owned_.push_back(b);
    return b->view();
  }

 private:
  bool dev_;
  uint64_t fake_ = uint64_t(1) << 32;
  std::vector<std::shared_ptr<void>> owned_;
};

struct Rows {
  int64_t rows, cols;
};
Rows parse_rows(const std::string& s) {
  long long r = 0, c = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%lldx%lld%c", &r, &c, &extra) != 2 || r < 1 || c < 1)
    user_error("shape '" + s + "' is not ROWSxCOLS", SourceLoc{}, "Write shapes like 16384x4096");
  return {r, c};
}

struct Attn {
  int64_t bh, seq, dim;
  bool causal;
};
Attn parse_attn(const std::string& s) {
  long long b = 0, h = 0, n = 0, d = 0;
  char c = 0, extra = 0;
  int got = std::sscanf(s.c_str(), "%lldx%lldx%lldx%lld%c%c", &b, &h, &n, &d, &c, &extra);
  if (got < 4 || got > 5 || (got == 5 && c != 'c') || b < 1 || h < 1 || n < 1 || d < 1)
    user_error("attention shape '" + s + "' is not BxHxNxD (append c for causal)", SourceLoc{},
               "Write shapes like 4x16x4096x64 or 1x16x16384x128c");
  return {b * h, n, d, got == 5};
}

template <class T>
struct RowSweep : Sweep {
  explicit RowSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<T> out, in, w, b;
  int64_t rows = 0, cols = 0;
  float eps = 1e-5f;
};

template <class T>
std::unique_ptr<Sweep> row_sweep(const std::string& kernel, const std::string& shape, bool dev) {
  Rows r = parse_rows(shape);
  auto s = std::make_unique<RowSweep<T>>(dev);
  size_t n = size_t(r.rows) * r.cols, es = sizeof(T);
  s->rows = r.rows, s->cols = r.cols;
  s->in = s->h.template make<T>(n, -4, 4);
  s->out = s->h.template make<T>(n, -1, 1);
  s->bytes = 2.0 * n * es;
  auto* p = s.get();
  if (kernel == "softmax") {
    auto& t = kernels::softmax_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(p->out, p->in, p->rows, p->cols);
    s->tune = [p, &t](const tuning::TuneSettings& st) { return t.tune(st, p->out, p->in, p->rows, p->cols); };
  } else if (kernel == "bias_relu_log") {
    auto& t = kernels::bias_relu_log_tuner<T>();
    s->b = s->h.template make<T>(r.cols, -1, 1);
    s->bytes += r.cols * es;
    s->space = &t.space();
    s->problem = t.problem(p->out, p->in, p->b, p->rows, p->cols);
    s->tune = [p, &t](const tuning::TuneSettings& st) { return t.tune(st, p->out, p->in, p->b, p->rows, p->cols); };
  } else {
    s->w = s->h.template make<T>(r.cols, 0.5f, 1.5f);
    s->bytes += r.cols * es;
    if (kernel == "rmsnorm") {
      auto& t = kernels::rmsnorm_tuner<T>();
      s->eps = 1e-6f;
      s->space = &t.space();
      s->problem = t.problem(p->out, p->in, p->w, p->rows, p->cols, p->eps);
      s->tune = [p, &t](const tuning::TuneSettings& st) {
        return t.tune(st, p->out, p->in, p->w, p->rows, p->cols, p->eps);
      };
    } else {
      auto& t = kernels::layernorm_tuner<T>();
      s->b = s->h.template make<T>(r.cols, -1, 1);
      s->bytes += r.cols * es;
      s->space = &t.space();
      s->problem = t.problem(p->out, p->in, p->w, p->b, p->rows, p->cols, p->eps);
      s->tune = [p, &t](const tuning::TuneSettings& st) {
        return t.tune(st, p->out, p->in, p->w, p->b, p->rows, p->cols, p->eps);
      };
    }
  }
  return s;
}

// SwiGLU forward/backward and softmax backward: up to five [rows, cols] tensors.
template <class T>
struct TrainingSweep : Sweep {
  explicit TrainingSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<T> t[5];
  int64_t rows = 0, cols = 0;
  bool packed = false;  // a member: problems reference their arguments
};

template <class T>
std::unique_ptr<Sweep> training_sweep(const std::string& kernel, const std::string& shape, bool dev) {
  Rows r = parse_rows(shape);
  auto s = std::make_unique<TrainingSweep<T>>(dev);
  s->rows = r.rows, s->cols = r.cols;
  size_t n = size_t(r.rows) * r.cols;
  int tensors = kernel == "swiglu_bwd" ? 5 : 3;  // inputs read once, outputs written once
  for (int i = 0; i < tensors; ++i) s->t[i] = s->h.template make<T>(n, -4, 4);
  s->bytes = double(tensors) * n * sizeof(T);
  auto* p = s.get();
  auto& x = p->t;
  if (kernel == "swiglu") {  // y, a, b
    auto& t = kernels::swiglu_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(x[0], x[1], x[2], p->rows, p->cols, p->packed);
    s->tune = [p, &t](const tuning::TuneSettings& st) {
      return t.tune(st, p->t[0], p->t[1], p->t[2], p->rows, p->cols, p->packed);
    };
  } else if (kernel == "swiglu_bwd") {  // da, db, dy, a, b
    auto& t = kernels::swiglu_backward_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(x[0], x[1], x[2], x[3], x[4], p->rows, p->cols, p->packed);
    s->tune = [p, &t](const tuning::TuneSettings& st) {
      return t.tune(st, p->t[0], p->t[1], p->t[2], p->t[3], p->t[4], p->rows, p->cols, p->packed);
    };
  } else {  // softmax_bwd: dx, dy, y
    auto& t = kernels::softmax_backward_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(x[0], x[1], x[2], p->rows, p->cols);
    s->tune = [p, &t](const tuning::TuneSettings& st) { return t.tune(st, p->t[0], p->t[1], p->t[2], p->rows, p->cols); };
  }
  return s;
}

// rmsnorm_bwd, add_rmsnorm_bwd, layernorm_bwd: t = dx, dy, x, dres_out; dw, db.
template <class T>
struct NormBackwardSweep : Sweep {
  explicit NormBackwardSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<T> t[4], w, dw, db;
  DevicePtr<float> mean, rstd;  // layernorm_bwd_saved: the forward's row statistics
  int64_t rows = 0, cols = 0;
  float eps = 1e-6f;
};

template <class T>
std::unique_ptr<Sweep> norm_backward_sweep(const std::string& kernel, const std::string& shape, bool dev) {
  Rows r = parse_rows(shape);
  auto s = std::make_unique<NormBackwardSweep<T>>(dev);
  s->rows = r.rows, s->cols = r.cols;
  size_t n = size_t(r.rows) * r.cols, es = sizeof(T);
  bool residual = kernel == "add_rmsnorm_bwd", saved = kernel == "layernorm_bwd_saved";
  bool layer = saved || kernel == "layernorm_bwd";
  for (int i = 0; i < (residual ? 4 : 3); ++i) s->t[i] = s->h.template make<T>(n, -3, 3);
  s->w = s->h.template make<T>(r.cols, 0.5f, 1.5f);
  s->dw = s->h.template make<T>(r.cols, -1, 1);
  s->db = s->h.template make<T>(r.cols, -1, 1);
  // x, dy read and dx written (+ dres_out read), the weight read, dw (and db) written.
  s->bytes = (residual ? 4.0 : 3.0) * n * es + (layer ? 3.0 : 2.0) * r.cols * es + (saved ? 8.0 * r.rows : 0.0);
  auto* p = s.get();
  auto& x = p->t;
  if (saved) {
    p->mean = s->h.template make<float>(r.rows, -1, 1);
    p->rstd = s->h.template make<float>(r.rows, 0.5f, 2);
    auto& t = kernels::layernorm_backward_saved_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(x[0], p->dw, p->db, x[1], x[2], p->w, p->mean, p->rstd, p->rows, p->cols);
    s->tune = [p, &t](const tuning::TuneSettings& st) {
      return t.tune(st, p->t[0], p->dw, p->db, p->t[1], p->t[2], p->w, p->mean, p->rstd, p->rows, p->cols);
    };
  } else if (layer) {
    p->eps = 1e-5f;
    auto& t = kernels::layernorm_backward_tuner<T>();
    s->space = &t.space();
    s->problem = t.problem(x[0], p->dw, p->db, x[1], x[2], p->w, p->rows, p->cols, p->eps);
    s->tune = [p, &t](const tuning::TuneSettings& st) {
      return t.tune(st, p->t[0], p->dw, p->db, p->t[1], p->t[2], p->w, p->rows, p->cols, p->eps);
    };
  } else {
    auto setup = [&](auto& t) {
      // Without a residual dres_out is never read; dy stands in.
      auto& res = residual ? x[3] : x[1];
      s->space = &t.space();
      s->problem = t.problem(x[0], p->dw, x[1], res, x[2], p->w, p->rows, p->cols, p->eps);
      s->tune = [p, &t, &res](const tuning::TuneSettings& st) {
        return t.tune(st, p->t[0], p->dw, p->t[1], res, p->t[2], p->w, p->rows, p->cols, p->eps);
      };
    };
    if (residual) setup(kernels::rmsnorm_backward_tuner<T, true>());
    else setup(kernels::rmsnorm_backward_tuner<T, false>());
  }
  return s;
}

template <class T>
struct AttnSweep : Sweep {
  explicit AttnSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<T> out, q, k, v;
  DevicePtr<float> lse;
  Attn a{};
  float scale = 0;
  int64_t kv_group = 1;  // the sweep tunes one key/value head per query head
};

template <class T>
std::unique_ptr<Sweep> attention_sweep(const std::string& shape, bool dev) {
  auto s = std::make_unique<AttnSweep<T>>(dev);
  Attn& a = s->a;
  a = parse_attn(shape);
  size_t n = size_t(a.bh) * a.seq * a.dim;
  s->q = s->h.template make<T>(n, -1, 1);
  s->k = s->h.template make<T>(n, -1, 1);
  s->v = s->h.template make<T>(n, -1, 1);
  s->out = s->h.template make<T>(n, -1, 1);
  s->lse = s->h.template make<float>(size_t(a.bh) * a.seq, -1, 1);
  s->bytes = 4.0 * n * sizeof(T) + 4.0 * a.bh * a.seq;
  s->flops = 4.0 * a.bh * double(a.seq) * a.seq * a.dim * (a.causal ? 0.5 : 1.0);
  auto& t = kernels::attention_tuner<T>();
  auto* p = s.get();
  s->space = &t.space();
  s->problem = t.problem(p->out, p->lse, p->q, p->k, p->v, p->a.bh, p->kv_group, p->a.seq, p->a.dim, p->a.causal,
                         p->scale);
  s->tune = [p, &t](const tuning::TuneSettings& st) {
    return t.tune(st, p->out, p->lse, p->q, p->k, p->v, p->a.bh, p->kv_group, p->a.seq, p->a.dim, p->a.causal,
                  p->scale);
  };
  return s;
}

template <class T>
struct MatmulSweep : Sweep {
  explicit MatmulSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<T> c, a, b;
  int64_t M = 0, N = 0, K = 0;
  kernels::MatmulOptions options;
};

// Points sweep `s` at tuner `t` for the problem `args`: members of `s`, which outlives the
// closure that reads them.
template <class Tuner, class... Args>
void use_tuner(Sweep& s, const Tuner& t, const Args&... args) {
  s.space = &t.space();
  s.problem = t.problem(args...);
  s.tune = [&t, &args...](const tuning::TuneSettings& st) { return t.tune(st, args...); };
}

// M, N, K of a GEMM shape "MxNxK".
std::array<long long, 3> parse_mnk(const std::string& kernel, const std::string& shape) {
  long long m = 0, n = 0, k = 0;
  char extra = 0;
  if (std::sscanf(shape.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &extra) != 3 || m < 1 || n < 1 || k < 1)
    user_error(kernel + " shape '" + shape + "' is not MxNxK", SourceLoc{}, "Write shapes like 4096x4096x4096");
  return {m, n, k};
}

template <class T>
std::unique_ptr<Sweep> matmul_sweep(const std::string& shape, bool dev) {
  auto [m, n, k] = parse_mnk("matmul", shape);
  auto s = std::make_unique<MatmulSweep<T>>(dev);
  s->M = m, s->N = n, s->K = k;
  s->a = s->h.template make<T>(size_t(m) * k, -1, 1);
  s->b = s->h.template make<T>(size_t(k) * n, -1, 1);
  s->c = s->h.template make<T>(size_t(m) * n, -1, 1);
  s->bytes = double(m * k + k * n + m * n) * sizeof(T);
  s->flops = 2.0 * m * n * k;
  use_tuner(*s, kernels::matmul_tuner<T, T>(), s->c, s->a, s->b, s->M, s->N, s->K, s->options);
  return s;
}

// scaled_matmul: 8-bit A (the dtype) times e4m3 B [N, K], unit scales, bf16 out.
template <class TA>
struct ScaledMatmulSweep : Sweep {
  explicit ScaledMatmulSweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<bfloat16> c;
  DevicePtr<TA> a;
  DevicePtr<float8_e4m3> b;
  DevicePtr<float> scale_a, scale_b;
  int64_t M = 0, N = 0, K = 0;
  kernels::ScaledMatmulOptions options;
};

template <class TA>
std::unique_ptr<Sweep> scaled_matmul_sweep(const std::string& shape, bool dev) {
  auto [m, n, k] = parse_mnk("scaled_matmul", shape);
  auto s = std::make_unique<ScaledMatmulSweep<TA>>(dev);
  s->M = m, s->N = n, s->K = k;
  s->a = s->h.template make<TA>(size_t(m) * k, -4, 4);
  s->b = s->h.template make<float8_e4m3>(size_t(n) * k, -4, 4);
  s->c = s->h.template make<bfloat16>(size_t(m) * n, -1, 1);
  s->scale_a = s->h.template make<float>(1, 1, 1);
  s->scale_b = s->h.template make<float>(1, 1, 1);
  s->bytes = double(m * k + k * n + 2 * m * n);
  s->flops = 2.0 * m * n * k;
  use_tuner(*s, kernels::scaled_matmul_tuner<TA, float8_e4m3, bfloat16>(), s->c, s->a, s->b, s->scale_a, s->scale_b,
            s->M, s->N, s->K, s->options);
  return s;
}

// cross_entropy: loss (mean) and dlogits of MxV logits, targets in [0, V).
template <class T>
struct CrossEntropySweep : Sweep {
  explicit CrossEntropySweep(bool dev) : h(dev) {}
  Holder h;
  DevicePtr<float> loss;
  DevicePtr<T> dlogits, logits;
  DevicePtr<int64_t> targets;
  int64_t rows = 0, cols = 0;
  kernels::CrossEntropyOptions opts;
};

template <class T>
std::unique_ptr<Sweep> cross_entropy_sweep(const std::string& shape, bool dev) {
  Rows r = parse_rows(shape);
  auto s = std::make_unique<CrossEntropySweep<T>>(dev);
  size_t n = size_t(r.rows) * r.cols;
  s->rows = r.rows, s->cols = r.cols;
  s->logits = s->h.template make<T>(n, -8, 8);
  s->dlogits = s->h.template make<T>(n, -1, 1);
  s->targets = s->h.template make<int64_t>(r.rows, 0, float(r.cols));
  s->loss = s->h.template make<float>(1, 0, 1);
  s->bytes = 2.0 * n * sizeof(T);  // logits read once, dlogits written once
  auto& t = kernels::cross_entropy_tuner<T>();
  auto* p = s.get();
  s->space = &t.space();
  s->problem = t.problem(p->loss, p->dlogits, p->logits, p->targets, p->rows, p->cols, p->opts);
  s->tune = [p, &t](const tuning::TuneSettings& st) {
    return t.tune(st, p->loss, p->dlogits, p->logits, p->targets, p->rows, p->cols, p->opts);
  };
  return s;
}

}  // namespace

std::vector<std::string> sweep_kernels() {
  return {"cross_entropy", "softmax", "rmsnorm", "layernorm", "bias_relu_log", "attention_fwd", "matmul", "scaled_matmul",
          "swiglu", "swiglu_bwd", "softmax_bwd", "rmsnorm_bwd", "add_rmsnorm_bwd", "layernorm_bwd",
          "layernorm_bwd_saved"};
}

int shape_dims(const std::string& kernel) {
  return kernel == "attention_fwd" ? 4 : kernel == "matmul" || kernel == "scaled_matmul" ? 3 : 2;
}

std::vector<std::string> default_shapes(const std::string& kernel) {
  if (kernel == "cross_entropy") return {"8192x32000", "4096x128256", "2048x151936", "16384x50304"};
  if (kernel == "attention_fwd") return {"4x16x4096x64", "4x16x4096x128", "1x16x16384x128c"};
  if (kernel == "matmul" || kernel == "scaled_matmul") return {"4096x4096x4096", "8192x8192x1024", "4000x4000x4000"};
  return {"8192x4096", "8192x16384", "2048x65536", "16384x5000"};
}

std::vector<DType> default_dtypes(const std::string& kernel) {
  if (kernel == "attention_fwd") return {DType::f16};
  if (kernel == "scaled_matmul") return {DType::f8e4m3};
  return {DType::bf16};
}

std::unique_ptr<Sweep> make_sweep(const std::string& kernel, DType dtype, const std::string& shape, bool on_device) {
  auto known = sweep_kernels();
  if (std::find(known.begin(), known.end(), kernel) == known.end()) {
    std::string names;
    for (auto& k : known) names += (names.empty() ? "" : ", ") + k;
    user_error("tilefuse-tune has no kernel named '" + kernel + "'", SourceLoc{}, "Known kernels: " + names + ", all");
  }
  auto build = [&](auto tag) -> std::unique_ptr<Sweep> {
    using T = typename decltype(tag)::type;
    if (kernel.ends_with("norm_bwd") || kernel == "layernorm_bwd_saved")
      return norm_backward_sweep<T>(kernel, shape, on_device);
    if (kernel == "cross_entropy") return cross_entropy_sweep<T>(shape, on_device);
    if (kernel == "swiglu" || kernel == "swiglu_bwd" || kernel == "softmax_bwd")
      return training_sweep<T>(kernel, shape, on_device);
    if (kernel != "attention_fwd" && kernel != "matmul") return row_sweep<T>(kernel, shape, on_device);
    if constexpr (std::is_same_v<T, float>)
      user_error(kernel + " runs on f16 or bf16, not f32", SourceLoc{}, "Use --dtype f16 or bf16");
    else if (kernel == "matmul")
      return matmul_sweep<T>(shape, on_device);
    else
      return attention_sweep<T>(shape, on_device);
  };
  std::unique_ptr<Sweep> s;
  if (kernel == "scaled_matmul" || is_float8(dtype)) {
    if (kernel != "scaled_matmul" || !is_float8(dtype))
      user_error(std::string("8-bit floats are scaled_matmul's dtypes; ") + kernel + " on " + name(dtype) +
                     " is not a sweep", SourceLoc{}, "Use scaled_matmul with --dtype f8e4m3 or f8e5m2");
    if (dtype == DType::f8e4m3) s = scaled_matmul_sweep<float8_e4m3>(shape, on_device);
    else s = scaled_matmul_sweep<float8_e5m2>(shape, on_device);
  }
  if (!s) switch (dtype) {
    case DType::f32: s = build(std::type_identity<float>{}); break;
    case DType::f16: s = build(std::type_identity<half>{}); break;
    case DType::bf16: s = build(std::type_identity<bfloat16>{}); break;
    default:
      user_error(std::string("tilefuse-tune sweeps f32, f16 or bf16, not ") + name(dtype), SourceLoc{},
                 "Use --dtype f32, f16 or bf16");
  }
  s->kernel = kernel;
  s->shape = shape;
  s->dtype = dtype;
  return s;
}

}  // namespace tilefuse::tune_tool
