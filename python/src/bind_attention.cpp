// Attention forward: softmax(q k^T * scale [+ causal mask]) v over [..., seq, head_dim]
// tensors, all leading dimensions being (batch, heads), k and v with the same or fewer
// heads (grouped-query attention); also writes the row logsumexp.
#include "bind_util.hpp"
#include "tilefuse/kernels/tuned.hpp"

namespace tilefuse::python {

namespace {

void attention_fwd(Output out_a, Output lse_a, Input q_a, Input k_a,
                   Input v_a, bool causal, float scale, uintptr_t stream) {
  TensorView out = view(out_a), lse = view(lse_a), q = view(q_a), k = view(k_a), v = view(v_a);
  bool device = same_side({&q, &k, &v, &out, &lse}, {"q", "k", "v", "out", "lse"});
  if (q.shape.size() < 2)
    user_error("attention: q is " + q.describe() + "; expected [..., seq_len, head_dim]", SourceLoc{});
  // Grouped-query attention: k and v may hold fewer heads (dimension -3) than q, a
  // divisor of q's; query head h then reads key/value head h / (q heads / k heads).
  std::vector<int64_t> kv_shape = q.shape;
  int64_t kv_group = 1;
  if (q.shape.size() >= 3 && k.shape.size() == q.shape.size()) {
    const size_t h = q.shape.size() - 3;
    bool same_elsewhere = true;
    for (size_t i = 0; i < q.shape.size(); ++i) same_elsewhere = same_elsewhere && (i == h || k.shape[i] == q.shape[i]);
    if (same_elsewhere && k.shape[h] > 0 && q.shape[h] % k.shape[h] == 0) {
      kv_group = q.shape[h] / k.shape[h];
      kv_shape[h] = k.shape[h];
    }
  }
  expect_shape(k, kv_shape, "k");
  expect_shape(v, kv_shape, "v");
  expect_shape(out, q.shape, "out");
  std::vector<int64_t> lse_shape(q.shape.begin(), q.shape.end() - 1);
  expect_shape(lse, lse_shape, "lse");
  int64_t head_dim = q.shape.back(), seq = q.shape[q.shape.size() - 2];
  int64_t batch_heads = seq * head_dim == 0 ? 0 : q.numel() / (seq * head_dim);
  if (batch_heads == 0 || seq == 0) return;
  if (q.dtype == DType::f32)
    user_error("attention: dtype f32 is not supported", SourceLoc{}, "Use float16 or bfloat16");
  dispatch_float(q.dtype, "attention", [&]<class T>(std::type_identity<T>) {
    if constexpr (!std::is_same_v<T, float>) {
      KernelCall call(stream);
      on_side(device, [&](auto side) {
        kernels::tuned_attention_fwd(buffer<T>(side, out, "out"), buffer<float>(side, lse, "lse"),
                                     buffer<const T>(side, q, "q"), buffer<const T>(side, k, "k"),
                                     buffer<const T>(side, v, "v"), batch_heads, seq, head_dim, causal, scale,
                                     kv_group);
      });
    }
  });
}

}  // namespace

void bind_attention(nb::module_& m) {
  using namespace nb::literals;
  m.def("attention_fwd", &attention_fwd, "out"_a, "lse"_a, "q"_a, "k"_a, "v"_a, "causal"_a, "scale"_a, "stream"_a);
}

}  // namespace tilefuse::python
