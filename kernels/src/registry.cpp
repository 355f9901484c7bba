#include "tilefuse/kernels/registry.hpp"

#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::kernels {
namespace {

// Instantiates `Make<T>()` for the requested dtype.
template <template <class> class Make>
std::function<const KernelBase&(DType)> by_dtype() {
  return [](DType d) -> const KernelBase& {
    switch (d) {
      case DType::f32: return Make<float>::get();
      case DType::f16: return Make<half>::get();
      case DType::bf16: return Make<bfloat16>::get();
      default: break;
    }
    user_error(std::string("gallery kernels support f32, f16 and bf16, not ") + name(d), SourceLoc{},
               "Pick --dtype f32, f16 or bf16");
  };
}

#define TF_GALLERY_MAKER(maker, fn) \
  template <class T>                \
  struct maker {                    \
    static const KernelBase& get() { return fn<T>(); } \
  };
TF_GALLERY_MAKER(SoftmaxRow, softmax_row_kernel)
TF_GALLERY_MAKER(SoftmaxLooped, softmax_looped_kernel)
TF_GALLERY_MAKER(SoftmaxRows, softmax_rows_kernel)
TF_GALLERY_MAKER(RmsRow, rmsnorm_row_kernel)
TF_GALLERY_MAKER(RmsRows, rmsnorm_rows_kernel)
TF_GALLERY_MAKER(RmsLooped, rmsnorm_looped_kernel)
TF_GALLERY_MAKER(LnRow, layernorm_row_kernel)
TF_GALLERY_MAKER(LnRows, layernorm_rows_kernel)
TF_GALLERY_MAKER(LnLooped, layernorm_looped_kernel)
TF_GALLERY_MAKER(RmsBwdRow, rmsnorm_bwd_row_kernel)
TF_GALLERY_MAKER(RmsBwdLooped, rmsnorm_bwd_looped_kernel)
TF_GALLERY_MAKER(LnBwdRow, layernorm_bwd_row_kernel)
TF_GALLERY_MAKER(LnBwdLooped, layernorm_bwd_looped_kernel)
TF_GALLERY_MAKER(RmsBwdCluster, rmsnorm_bwd_cluster_kernel)
TF_GALLERY_MAKER(LnBwdCluster, layernorm_bwd_cluster_kernel)
TF_GALLERY_MAKER(NormBwdReduce, norm_partials_reduce_kernel)
TF_GALLERY_MAKER(BiasReluLog, bias_relu_log_kernel)
TF_GALLERY_MAKER(AddBias, add_bias_kernel)
TF_GALLERY_MAKER(Relu, relu_kernel)
TF_GALLERY_MAKER(Log, log_kernel)
TF_GALLERY_MAKER(CrossEntropyRow, cross_entropy_row_kernel)
TF_GALLERY_MAKER(CrossEntropyRows, cross_entropy_rows_kernel)
TF_GALLERY_MAKER(CrossEntropyLooped, cross_entropy_looped_kernel)
TF_GALLERY_MAKER(Swiglu, swiglu_kernel)
TF_GALLERY_MAKER(SwigluBwd, swiglu_backward_kernel)
TF_GALLERY_MAKER(SoftmaxBwdRow, softmax_backward_row_kernel)
TF_GALLERY_MAKER(SoftmaxBwdRows, softmax_backward_rows_kernel)
TF_GALLERY_MAKER(SoftmaxBwdLooped, softmax_backward_looped_kernel)
TF_GALLERY_MAKER(SoftmaxSplitReduce, softmax_split_reduce_kernel)
TF_GALLERY_MAKER(SoftmaxSplitNormalize, softmax_split_normalize_kernel)
TF_GALLERY_MAKER(RmsSplitReduce, rmsnorm_split_reduce_kernel)
TF_GALLERY_MAKER(RmsSplitNormalize, rmsnorm_split_normalize_kernel)
TF_GALLERY_MAKER(LnSplitReduce, layernorm_split_reduce_kernel)
TF_GALLERY_MAKER(LnSplitNormalize, layernorm_split_normalize_kernel)
#undef TF_GALLERY_MAKER

// Kernels with 16-bit inputs only: f32 is a user error naming the kernel.
#define TF_GALLERY_MAKER_16BIT(maker, label, ...)                                                          \
  template <class T>                                                                                      \
  struct maker {                                                                                          \
    static const KernelBase& get() {                                                                      \
      if constexpr (std::is_same_v<T, float>)                                                             \
        user_error(std::string(label) + " takes f16 or bf16 inputs", SourceLoc{}, "Pick --dtype f16 or bf16"); \
      else                                                                                                \
        return __VA_ARGS__;                                                                               \
    }                                                                                                     \
  };
TF_GALLERY_MAKER_16BIT(Attention, "attention_fwd", attention_fwd_kernel<T>())
TF_GALLERY_MAKER_16BIT(Matmul, "matmul", matmul_kernel<T, T>())
#undef TF_GALLERY_MAKER_16BIT

// The 8-bit GEMM by A's dtype: e4m3 x e4m3 (forward), e5m2 x e4m3 (gradients x weights);
// bf16 output.
const KernelBase& scaled_matmul_by_dtype(DType d) {
  if (d == DType::f8e4m3) return scaled_matmul_kernel<float8_e4m3, float8_e4m3, bfloat16>();
  if (d == DType::f8e5m2) return scaled_matmul_kernel<float8_e5m2, float8_e4m3, bfloat16>();
  user_error(std::string("scaled_matmul takes 8-bit float inputs, not ") + name(d), SourceLoc{},
             "Pick --dtype f8e4m3 or f8e5m2");
}

}  // namespace

const std::vector<GalleryKernel>& gallery() {
  const std::vector<DType> floats = {DType::f32, DType::f16, DType::bf16};
  static const std::vector<GalleryKernel> all = {
      {"softmax", "row softmax, one tile per row", floats, Config{{"BLOCK", 1024}, num_warps(4)}, by_dtype<SoftmaxRow>()},
      {"softmax_rows", "row softmax, ROWS rows per program as one 2-D tile", floats,
       Config{{"BLOCK", 1024}, {"ROWS", 4}, num_warps(4)}, by_dtype<SoftmaxRows>()},
      {"softmax_looped", "row softmax for long rows (online max/sum, two passes)", floats,
       Config{{"BLOCK", 4096}, num_warps(16)}, by_dtype<SoftmaxLooped>()},
      {"rmsnorm", "RMSNorm with weight (RESIDUAL=1: fused residual add)", floats,
       Config{{"BLOCK", 1024}, {"RESIDUAL", 0}, num_warps(4)}, by_dtype<RmsRow>()},
      {"rmsnorm_rows", "RMSNorm of short rows, ROWS rows per program as one 2-D tile (RESIDUAL=1: fused residual add)",
       floats, Config{{"BLOCK", 256}, {"ROWS", 4}, {"RESIDUAL", 0}, num_warps(1)}, by_dtype<RmsRows>()},
      {"rmsnorm_looped", "RMSNorm for long rows", floats, Config{{"BLOCK", 4096}, {"RESIDUAL", 0}, num_warps(16)},
       by_dtype<RmsLooped>()},
      {"layernorm", "LayerNorm with weight and bias (SHIFTED=1: shifted single-pass sums)", floats,
       Config{{"BLOCK", 1024}, {"SHIFTED", 1}, num_warps(4)}, by_dtype<LnRow>()},
      {"layernorm_rows", "LayerNorm of short rows, ROWS rows per program as one 2-D tile", floats,
       Config{{"BLOCK", 256}, {"ROWS", 4}, num_warps(1)}, by_dtype<LnRows>()},
      {"layernorm_looped", "LayerNorm for long rows", floats, Config{{"BLOCK", 4096}, num_warps(16)},
       by_dtype<LnLooped>()},
      {"rmsnorm_bwd", "RMSNorm backward, persistent programs, dW partials (RESIDUAL=1: + dres_out)", floats,
       Config{{"BLOCK", 1024}, {"RESIDUAL", 0}, num_warps(2)}, by_dtype<RmsBwdRow>()},
      {"rmsnorm_bwd_looped", "RMSNorm backward for long rows (two passes)", floats,
       Config{{"BLOCK", 4096}, {"RESIDUAL", 0}, num_warps(8)}, by_dtype<RmsBwdLooped>()},
      {"layernorm_bwd", "LayerNorm backward, persistent programs, dW/dB partials", floats,
       Config{{"BLOCK", 1024}, num_warps(2)}, by_dtype<LnBwdRow>()},
      {"layernorm_bwd_looped", "LayerNorm backward for long rows (two passes)", floats,
       Config{{"BLOCK", 4096}, num_warps(8)}, by_dtype<LnBwdLooped>()},
      {"rmsnorm_bwd_cluster", "RMSNorm backward, a row over a cluster's programs, persistent clusters", floats,
       Config{{"BLOCK", 8192}, {"RESIDUAL", 0}, num_warps(16), num_stages(2), cluster(2)}, by_dtype<RmsBwdCluster>()},
      {"layernorm_bwd_cluster", "LayerNorm backward, a row over a cluster's programs (SAVED=1: the forward's stats)",
       floats, Config{{"BLOCK", 2048}, num_warps(4), num_stages(2), cluster(8)}, by_dtype<LnBwdCluster>()},
      {"norm_bwd_reduce", "sums the per-program dW (BIAS=1: and dB) partials of the norm backward", floats,
       Config{{"BLOCK", 64}, {"PARTS", 32}, {"BIAS", 1}, num_warps(4)}, by_dtype<NormBwdReduce>()},
      {"attention_fwd", "FlashAttention forward (online softmax on tensor cores), returns O and LSE", {DType::f16, DType::bf16},
       Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"HEAD_DIM", 64}, {"CAUSAL", 0}, num_warps(4), num_stages(3)},
       by_dtype<Attention>()},
      {"matmul", "GEMM C = epilogue(A B) (B_TRANS, SCALE, BIAS, ACT 0-3, RESIDUAL)", {DType::f16, DType::bf16},
       Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, num_warps(4), num_stages(3)}, by_dtype<Matmul>()},
      {"scaled_matmul", "8-bit float GEMM C = epilogue(scale_a scale_b A B), B [N, K] (B_TRANS=0: [K, N]); bf16 out",
       {DType::f8e4m3, DType::f8e5m2},
       Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, num_warps(4), num_stages(3)}, scaled_matmul_by_dtype},
      {"bias_relu_log", "fused y = log(relu(x + b))", floats, Config{{"BLOCK", 2048}, num_warps(8)},
       by_dtype<BiasReluLog>()},
      {"add_bias", "unfused step 1: t = x + b", floats, Config{{"BLOCK", 2048}, num_warps(8)}, by_dtype<AddBias>()},
      {"relu", "unfused step 2: u = relu(t)", floats, Config{{"BLOCK", 2048}, num_warps(8)}, by_dtype<Relu>()},
      {"log", "unfused step 3: y = log(u)", floats, Config{{"BLOCK", 2048}, num_warps(8)}, by_dtype<Log>()},
      {"cross_entropy", "cross-entropy loss + dlogits, one row per cluster (REDUCTION 0 none, 1 sum, 2 mean)", floats,
       Config{{"BLOCK", 1024}, {"REDUCTION", 2}, num_warps(4)}, by_dtype<CrossEntropyRow>()},
      {"cross_entropy_rows", "cross-entropy of short rows, ROWS rows per program as one 2-D tile", floats,
       Config{{"BLOCK", 512}, {"ROWS", 2}, {"REDUCTION", 2}, num_warps(1)}, by_dtype<CrossEntropyRows>()},
      {"cross_entropy_looped", "cross-entropy for long rows (online max/sum, then the gradient pass)", floats,
       Config{{"BLOCK", 4096}, {"REDUCTION", 2}, num_warps(16)}, by_dtype<CrossEntropyLooped>()},
      {"cross_entropy_count", "cross-entropy prologue of a mean whose rows have no counting programs: the count word",
       {DType::i64, DType::i32}, cross_entropy_count_config(),
       [](DType d) -> const KernelBase& {
         if (d == DType::i32) return cross_entropy_count_kernel<int32_t>();
         return cross_entropy_count_kernel<int64_t>();
       }},
      {"cross_entropy_finish", "cross-entropy epilogue of a sum or mean: the loss from the rows' losses",
       {DType::f32}, Config(cross_entropy_finish_config()).set("REDUCTION", 2),
       [](DType) -> const KernelBase& { return cross_entropy_finish_kernel(); }},
      {"swiglu", "SwiGLU y = silu(a) * b (a, b separate or packed [gate | up] rows)", floats,
       Config{{"BLOCK", 1024}, num_warps(4)}, by_dtype<Swiglu>()},
      {"swiglu_bwd", "SwiGLU backward: da, db from dy, a, b", floats, Config{{"BLOCK", 1024}, num_warps(4)},
       by_dtype<SwigluBwd>()},
      {"softmax_bwd", "softmax backward dx = y * (dy - sum(dy * y)), one row per cluster", floats,
       Config{{"BLOCK", 1024}, num_warps(4)}, by_dtype<SoftmaxBwdRow>()},
      {"softmax_bwd_rows", "softmax backward of short rows, ROWS rows per program as one 2-D tile", floats,
       Config{{"BLOCK", 256}, {"ROWS", 2}, num_warps(1)}, by_dtype<SoftmaxBwdRows>()},
      {"softmax_bwd_looped", "softmax backward for long rows (two passes)", floats,
       Config{{"BLOCK", 4096}, num_warps(16)}, by_dtype<SoftmaxBwdLooped>()},
      {"softmax_split_reduce", "split-row softmax, phase 1: chunk max and sum of exp to f32 partials", floats,
       Config{{"BLOCK", 8192}, num_warps(8)}, by_dtype<SoftmaxSplitReduce>()},
      {"softmax_split_normalize", "split-row softmax, phase 2: combine the row's partials, write the chunk", floats,
       Config{{"BLOCK", 8192}, {"PARTS", 128}, num_warps(8)}, by_dtype<SoftmaxSplitNormalize>()},
      {"rmsnorm_split_reduce", "split-row RMSNorm, phase 1: chunk sum of squares (RESIDUAL=1: writes in + res)",
       floats, Config{{"BLOCK", 8192}, {"RESIDUAL", 1}, num_warps(8)}, by_dtype<RmsSplitReduce>()},
      {"rmsnorm_split_normalize", "split-row RMSNorm, phase 2: combine the row's partials, write the chunk", floats,
       Config{{"BLOCK", 8192}, {"PARTS", 128}, num_warps(8)}, by_dtype<RmsSplitNormalize>()},
      {"layernorm_split_reduce", "split-row LayerNorm, phase 1: chunk shifted sums of d and d^2", floats,
       Config{{"BLOCK", 8192}, num_warps(8)}, by_dtype<LnSplitReduce>()},
      {"layernorm_split_normalize", "split-row LayerNorm, phase 2: combine the row's partials, write the chunk",
       floats, Config{{"BLOCK", 8192}, {"PARTS", 128}, num_warps(8)}, by_dtype<LnSplitNormalize>()},
  };
  return all;
}

const GalleryKernel& gallery_kernel(const std::string& name) {
  std::string names;
  for (auto& k : gallery()) {
    if (k.name == name) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  user_error("no gallery kernel named '" + name + "'", SourceLoc{}, "Known kernels: " + names);
}

}  // namespace tilefuse::kernels
