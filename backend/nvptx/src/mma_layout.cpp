// mma.sync m16n8k16 fragment layouts as linear layouts (see mma_layout.hpp).
#include "tilefuse/nvptx/mma_layout.hpp"

#include <algorithm>

namespace tilefuse::nvptx {

namespace {

// Flat index of tile coordinate (r, c) in a row-major [rows, cols] tile.
uint32_t at(const Shape& s, int64_t r, int64_t c) { return static_cast<uint32_t>(r * s[1] + c); }

// Bases stepping `step`, 2*step, ... up to (excluding) `extent` along one dimension.
void repeat(std::vector<uint32_t>& out, const Shape& s, int dim, int64_t step, int64_t extent) {
  for (int64_t x = step; x < extent; x *= 2) out.push_back(dim == 0 ? at(s, x, 0) : at(s, 0, x));
}

// Warp bases: warps_m bits along M (rows of `m_dim`), then warps_n bits along N, then
// zero bases (replication) for the remaining warps. `m_dim`/`n_dim` < 0: that warp
// direction replicates in this tile (an operand shared by those warps).
std::vector<uint32_t> warp_bases(const Shape& s, const MmaTiling& t, int num_warps, int m_dim, int n_dim) {
  std::vector<uint32_t> w;
  for (int i = 1; i < t.warps_m; i *= 2) w.push_back(m_dim < 0 ? 0 : (m_dim == 0 ? at(s, kMmaM * i, 0) : at(s, 0, kMmaM * i)));
  for (int i = 1; i < t.warps_n; i *= 2) w.push_back(n_dim < 0 ? 0 : (n_dim == 0 ? at(s, kMmaN * i, 0) : at(s, 0, kMmaN * i)));
  while ((1 << w.size()) < num_warps) w.push_back(0);
  return w;
}

}  // namespace

bool mma_applies(DType in, bool tf32, int64_t m, int64_t n, int64_t k, MmaKind* kind, bool float8_mma) {
  MmaKind kd = tf32 ? MmaKind::Tf32 : is_float8(in) ? MmaKind::F8 : MmaKind::F16;
  bool dtype_ok = tf32 ? in == DType::f32 : (in == DType::f16 || in == DType::bf16 || (is_float8(in) && float8_mma));
  if (kind) *kind = kd;
  return dtype_ok && m >= kMmaM && n >= kMmaN && k >= mma_k(kd);
}

MmaTiling choose_mma_tiling(int64_t m, int64_t n, int num_warps, bool along_m) {
  MmaTiling t;
  auto can_m = [&] { return m / kMmaM >= 2 * t.warps_m; };
  auto can_n = [&] { return n / kMmaN >= 2 * t.warps_n; };
  while (t.warps_m * t.warps_n < num_warps) {
    bool m_first = along_m ? true : (m / (kMmaM * t.warps_m) >= n / (kMmaN * t.warps_n));
    if (m_first && can_m()) t.warps_m *= 2;
    else if (can_n()) t.warps_n *= 2;
    else if (can_m()) t.warps_m *= 2;
    else break;  // the tile is smaller than the warps: the rest replicate
  }
  return t;
}

LinearLayout mma_accumulator(const Shape& s, const MmaTiling& t, int num_warps) {
  std::vector<uint32_t> regs{at(s, 0, 1), at(s, 8, 0)};
  repeat(regs, s, 1, int64_t{kMmaN} * t.warps_n, s[1]);
  repeat(regs, s, 0, int64_t{kMmaM} * t.warps_m, s[0]);
  std::vector<uint32_t> lanes{at(s, 0, 2), at(s, 0, 4), at(s, 1, 0), at(s, 2, 0), at(s, 4, 0)};
  return LinearLayout(s, regs, lanes, warp_bases(s, t, num_warps, 0, 1));
}

LinearLayout mma_operand_a(const Shape& s, const MmaTiling& t, int num_warps, MmaKind kind) {
  bool tf32 = kind == MmaKind::Tf32;
  // Elements per 32-bit register along k: 1 (tf32), 2 (16-bit), 4 (8-bit).
  int64_t per = tf32 ? 1 : kind == MmaKind::F8 ? 4 : 2;
  std::vector<uint32_t> regs;
  repeat(regs, s, 1, 1, per);
  regs.push_back(at(s, 8, 0));
  regs.push_back(at(s, 0, 4 * per));
  repeat(regs, s, 1, mma_k(kind), s[1]);
  repeat(regs, s, 0, int64_t{kMmaM} * t.warps_m, s[0]);
  std::vector<uint32_t> lanes{at(s, 0, per), at(s, 0, 2 * per), at(s, 1, 0), at(s, 2, 0), at(s, 4, 0)};
  return LinearLayout(s, regs, lanes, warp_bases(s, t, num_warps, 0, -1));
}

LinearLayout mma_operand_b(const Shape& s, const MmaTiling& t, int num_warps, MmaKind kind) {
  bool tf32 = kind == MmaKind::Tf32;
  int64_t per = tf32 ? 1 : kind == MmaKind::F8 ? 4 : 2;
  std::vector<uint32_t> regs;
  repeat(regs, s, 0, 1, per);
  regs.push_back(at(s, 4 * per, 0));
  repeat(regs, s, 0, mma_k(kind), s[0]);
  repeat(regs, s, 1, int64_t{kMmaN} * t.warps_n, s[1]);
  std::vector<uint32_t> lanes{at(s, per, 0), at(s, 2 * per, 0), at(s, 0, 1), at(s, 0, 2), at(s, 0, 4)};
  return LinearLayout(s, regs, lanes, warp_bases(s, t, num_warps, -1, 1));
}

bool wgmma_applies(DType in, bool tf32, int64_t m, int64_t n, int64_t k, int num_warps) {
  if (tf32 || (in != DType::f16 && in != DType::bf16 && !is_float8(in))) return false;
  int groups = num_warps / 4;
  if (num_warps % 4 || m % kWgmmaM || k < wgmma_k(in)) return false;
  // Warpgroups beyond M's 64-row blocks split N, each at least 8 columns wide.
  int64_t along_m = std::min<int64_t>(groups, m / kWgmmaM);
  return n / (groups / along_m) >= 8;
}

WgmmaTiling choose_wgmma_tiling(int64_t m, int64_t n, int num_warps, bool along_m) {
  WgmmaTiling t;
  int groups = num_warps / 4;
  while (t.wg_m * t.wg_n < groups) {
    bool more_m = m / (kWgmmaM * t.wg_m) >= 2;
    bool more_n = n / (8 * t.wg_n) >= 2;
    // Prefer M (smaller accumulator per instruction, row statistics inside a warpgroup)
    // unless N is much wider than M.
    bool prefer_m = along_m || m / (kWgmmaM * t.wg_m) * 4 >= n / (kWgmmaMaxN * t.wg_n);
    if (more_m && prefer_m) t.wg_m *= 2;
    else if (more_n) t.wg_n *= 2;
    else if (more_m) t.wg_m *= 2;
    else break;
  }
  t.instr_n = static_cast<int>(std::min<int64_t>(kWgmmaMaxN, n / t.wg_n));
  return t;
}

LinearLayout wgmma_accumulator(const Shape& s, const WgmmaTiling& t, int num_warps) {
  std::vector<uint32_t> regs{at(s, 0, 1), at(s, 8, 0)};
  repeat(regs, s, 1, kMmaN, t.instr_n);
  repeat(regs, s, 1, t.instr_n, s[1] / t.wg_n);
  repeat(regs, s, 0, int64_t{kWgmmaM} * t.wg_m, s[0]);
  std::vector<uint32_t> lanes{at(s, 0, 2), at(s, 0, 4), at(s, 1, 0), at(s, 2, 0), at(s, 4, 0)};
  std::vector<uint32_t> warps{at(s, 16, 0), at(s, 32, 0)};
  repeat(warps, s, 0, kWgmmaM, int64_t{kWgmmaM} * t.wg_m);
  repeat(warps, s, 1, s[1] / t.wg_n, s[1]);
  while ((1 << warps.size()) < num_warps) warps.push_back(0);
  return LinearLayout(s, regs, lanes, warps);
}

LinearLayout wgmma_operand_a(const Shape& s, const WgmmaTiling& t, int num_warps, MmaKind kind) {
  return mma_operand_a(s, MmaTiling{4 * t.wg_m, t.wg_n}, num_warps, kind);
}

}  // namespace tilefuse::nvptx
