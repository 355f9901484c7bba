// dot(a, b, acc) on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a).
// Each warpgroup issues m64nNk16 instructions over its part of the accumulator
// (mma_layout.hpp). B — and A when an async copy put it in shared memory — is read by
// the tensor cores straight from the swizzled buffer through a 64-bit matrix
// descriptor: start address, the byte distance between 128-byte column blocks (LBO)
// and between 8-row groups (SBO), and the swizzle width (shared_encoding.hpp's blocked
// layout is the canonical one). Otherwise A arrives in registers (mma.sync's A
// fragment) and B is stored K-major into the dot's scratch first. The instructions of
// one dot form one wgmma group, waited for before the dot's result is used.
#include <array>
#include <string>

#include "codegen.hpp"
#include "memory_access.hpp"
#include "passes.hpp"

namespace tilefuse::nvptx {

namespace {

// A shared-memory tile in swizzled_encoding's layout, addressed by operand coordinates.
struct SmemTile {
  llvm::Value* addr = nullptr;  // 32-bit shared address of element (0, 0)
  int64_t rows = 0;             // extent of the stored tile's non-contiguous dimension
  int width = 0;                // swizzle width in bytes (32, 64, 128): one block row
  int es = 2;
  bool k_major = true;          // K is the contiguous dimension
};

// The descriptor bits that do not depend on the address.
uint64_t descriptor_constant(const SmemTile& t) {
  uint64_t mode = t.width == 128 ? 1 : t.width == 64 ? 2 : 3;
  uint64_t lbo = static_cast<uint64_t>(t.rows) * t.width;  // one column block
  uint64_t sbo = 8ull * t.width;                            // 8 rows
  return ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | mode << 62;
}

// Byte offset of operand element (mn, k) (i32 values) in the tile.
llvm::Value* tile_offset(Codegen& cg, const SmemTile& t, llvm::Value* mn, llvm::Value* k) {
  auto& b = cg.b;
  llvm::Value* c = t.k_major ? k : mn;
  llvm::Value* o = t.k_major ? mn : k;
  int64_t e = t.width / t.es;  // elements per block row
  llvm::Value* block = b.CreateMul(b.CreateLShr(c, log2_exact(e)), cg.c32(t.rows * e));
  llvm::Value* within = b.CreateAdd(b.CreateMul(o, cg.c32(e)), b.CreateAnd(c, cg.c32(e - 1)));
  return b.CreateMul(b.CreateAdd(block, within), cg.c32(t.es));
}

// The operand tile of a descriptor-read operand: its async buffer, or (B only) the
// staged copy. `kdim` is the operand's K dimension (A: 1, B: 0).
SmemTile async_tile(Codegen& cg, const ir::Value* v, const ir::Op* ld, int kdim) {
  const LinearLayout& l = cg.plan.layout(ld->result())->ll;
  int cd = contiguous_dim(l);
  bool trans = ld->result() != v;
  int k_in_tile = trans ? 1 - kdim : kdim;
  SmemTile t;
  t.es = byte_size(v->type.dtype);
  t.rows = l.shape()[1 - cd];
  t.width = swizzle_bytes(l.shape(), cd, t.es);
  t.k_major = k_in_tile == cd;
  t.addr = cg.shared_addr32(cg.smem_addr(0, cg.async_base.at(ld)));
  return t;
}

void fence_proxy_async(Codegen& cg) {
  // Data written through the generic proxy (st.shared, cp.async) becomes visible to the
  // tensor cores' async proxy.
  cg.inline_asm(cg.b.getVoidTy(), "fence.proxy.async.shared::cta;", "~{memory}", {}, true);
}

}  // namespace

// Registers `vals` in a fresh inline-asm value, so that uses cannot move above it.
Regs thread_through(Codegen& cg, const std::string& text, const Regs& vals) {
  auto& b = cg.b;
  std::vector<llvm::Type*> tys(vals.size(), b.getFloatTy());
  auto* st = llvm::StructType::get(cg.ctx, tys);
  std::string cons;
  for (size_t i = 0; i < vals.size(); ++i) cons += (i ? ",=f" : "=f");
  for (size_t i = 0; i < vals.size(); ++i) cons += "," + std::to_string(i);
  cons += ",~{memory}";
  llvm::Value* r = cg.inline_asm(st, text, cons, vals, true);
  Regs out;
  for (size_t i = 0; i < vals.size(); ++i) out.push_back(b.CreateExtractValue(r, static_cast<unsigned>(i)));
  return out;
}

Regs wgmma_wait(Codegen& cg, int pending, const Regs& acc) {
  pingpong_pass_turn(cg);
  return thread_through(cg, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", acc);
}

void lower_wgmma(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  const WgmmaTiling& t = p.wgmma_tiling;
  const ir::Type& ta = op.operand(0)->type;
  const ir::Type& tb = op.operand(1)->type;
  int64_t M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
  int es = byte_size(ta.dtype);
  const ir::Op* src_a = wgmma_smem_source(cg.plan, op.operand(0), 0);
  const ir::Op* src_b = wgmma_smem_source(cg.plan, op.operand(1), 1);
  int staged_b = src_b ? 0 : static_cast<int>((K * N * es + 15) / 16 * 16);
  int off_b = p.smem_offset, off_a = p.smem_offset + staged_b;

  Regs C = cg.operand(op, 2);
  bool async = false, group_copies = false;
  for (int i = 0; i < 2; ++i) {
    const ir::Op* src = async_source(cg.plan, op.operand(i));
    async = async || src;
    // Warp-specialized loops see copies made before them at the loop's entry barrier
    // (lower_for, for the loops in GpuPlan::loops_reading_copies).
    const ir::Op* loop = op.parent->parent;
    bool before_loop = src && cg.plan.warp_specialized() && src->parent != op.parent && loop &&
                       cg.plan.loops_reading_copies.count(loop);
    group_copies = group_copies || (src && cg.plan.op(src).tma_map < 0 && !before_loop);
  }
  bool wrote = false;
  if (async) {
    wait_async_copies(cg, op);
    fence_proxy_async(cg);
    // The copies of other threads become visible at the barrier, which also ends the
    // reads of the buffers refilled next; warp-specialized TMA stages need neither
    // (their mbarriers carry both), nor TMA operands after the iteration's first
    // barrier (their mbarriers publish the data; the buffers refilled are free since).
    auto st = cg.pipeline_state.find(op.parent);
    bool refills_free = st != cg.pipeline_state.end() && st->second.barrier_passed;
    wrote = group_copies || (!cg.plan.warp_specialized() && !refills_free);
  }
  std::function<Regs()> read_a;
  if (!src_a) read_a = cg.stage(op.operand(0), p.operands[0]->ll, off_a, wrote);
  SmemTile tile_a, tile_b;
  if (src_a) tile_a = async_tile(cg, op.operand(0), src_a, 1);
  if (src_b) {
    tile_b = async_tile(cg, op.operand(1), src_b, 0);
  } else {
    // Staged K-major: every K of 32 bytes or more gives a descriptor-friendly row.
    Regs vals = cg.operand(op, 1);
    SharedEncoding enc = swizzled_encoding(tb.shape, 0, es, true);
    cg.smem_before_write();
    cg.smem_store_tile(vals, enc.apply(p.operands[1]->ll), off_b, cg.elem_type(tb.dtype));
    fence_proxy_async(cg);
    wrote = true;
    tile_b.es = es;
    tile_b.rows = N;
    tile_b.width = swizzle_bytes(tb.shape, 0, es);
    tile_b.k_major = true;
    tile_b.addr = cg.shared_addr32(cg.smem_addr(off_b));
  }
  if (wrote) {
    cg.smem_after_write();
    if (auto st = cg.pipeline_state.find(op.parent); st != cg.pipeline_state.end()) st->second.barrier_passed = true;
  }
  issue_deferred_copies(cg, op);  // refill the buffers the previous iteration read
  Regs A = read_a ? read_a() : Regs{};

  // This warpgroup's first row and column.
  llvm::Value* group = b.CreateLShr(cg.warp(), 2);
  llvm::Value* m_base = b.CreateMul(b.CreateAnd(group, cg.c32(t.wg_m - 1)), cg.c32(kWgmmaM));
  llvm::Value* n_base = b.CreateMul(b.CreateAnd(b.CreateLShr(group, log2_exact(t.wg_m)), cg.c32(t.wg_n - 1)),
                                    cg.c32(N / t.wg_n));
  auto descriptor = [&](const SmemTile& tile, llvm::Value* mn, int64_t k) {
    llvm::Value* addr = b.CreateAdd(tile.addr, tile_offset(cg, tile, mn, cg.c32(k)));
    llvm::Value* a16 = b.CreateZExt(b.CreateAnd(b.CreateLShr(addr, 4), cg.c32(0x3FFF)), b.getInt64Ty());
    return b.CreateOr(a16, b.getInt64(descriptor_constant(tile)));
  };

  const int kk = wgmma_k(ta.dtype);  // K per instruction: 32 bytes of a row
  int kreps = static_cast<int>(K / kk);
  int mreps = static_cast<int>(M / (kWgmmaM * t.wg_m));
  int nreps = static_cast<int>(N / t.wg_n / t.instr_n);
  int per_instr = t.instr_n / 2;  // accumulator registers per thread of one instruction
  int ib = log2_exact(per_instr), nb = log2_exact(nreps), kb = log2_exact(kreps);
  auto type_name = [](DType d) {
    return d == DType::bf16 ? "bf16" : d == DType::f8e4m3 ? "e4m3" : d == DType::f8e5m2 ? "e5m2" : "f16";
  };
  bool f8 = is_float8(ta.dtype);
  std::string types = std::string(type_name(ta.dtype)) + "." + type_name(tb.dtype);
  std::string shape = "m64n" + std::to_string(t.instr_n) + "k" + std::to_string(kk);
  // A register fragment: 4 words of two 16-bit or four 8-bit elements (16 / 32 registers
  // per instruction tile, k first).
  int per_word = f8 ? 4 : 2, a_bits = f8 ? 4 : 3;
  auto* packed_type = llvm::FixedVectorType::get(cg.elem_type(ta.dtype), per_word);
  auto word = [&](int base, int w) {
    int r0 = base + per_word * w;
    if (!f8)
      if (llvm::Value* packed = packed_pair(cg, A[r0], A[r0 + 1], ta.dtype)) return packed;
    llvm::Value* v = llvm::PoisonValue::get(packed_type);
    for (int e = 0; e < per_word; ++e) v = b.CreateInsertElement(v, A[r0 + e], uint64_t(e));
    return b.CreateBitCast(v, cg.i32());
  };

  // Register A fragments packed before the fence: wgmma may only read registers written
  // before it (otherwise ptxas injects a warpgroup arrive per instruction).
  std::vector<std::array<llvm::Value*, 4>> a_words;
  if (!src_a)
    for (int ki = 0; ki < kreps; ++ki)
      for (int mi = 0; mi < mreps; ++mi) {
        int a0 = (ki << a_bits) | (mi << (a_bits + kb));
        a_words.push_back({word(a0, 0), word(a0, 1), word(a0, 2), word(a0, 3)});
      }
  Regs out(C.begin(), C.end());
  pingpong_take_turn(cg);
  // A zero accumulator is not read: the first K step writes it (scale-d = 0), so no
  // registers are zeroed per dot (attention's Q.K^T, once per key block).
  bool zero_acc = is_zero_constant(op.operand(2));
  if (zero_acc)
    cg.inline_asm(b.getVoidTy(), "wgmma.fence.sync.aligned;", "~{memory}", {}, true);
  else
    out = thread_through(cg, "wgmma.fence.sync.aligned;", out);
  std::vector<llvm::Type*> acc_tys(per_instr, b.getFloatTy());
  auto* ret = llvm::StructType::get(cg.ctx, acc_tys);
  for (int ki = 0; ki < kreps; ++ki)
    for (int mi = 0; mi < mreps; ++mi)
      for (int ni = 0; ni < nreps; ++ni) {
        int c0 = (ni << ib) | (mi << (ib + nb));
        std::string dl;
        for (int i = 0; i < per_instr; ++i) dl += (i ? ",$" : "$") + std::to_string(i);
        std::vector<llvm::Value*> args;
        std::string cons, text;
        for (int i = 0; i < per_instr; ++i) cons += (i ? ",=f" : "=f");
        int next = per_instr;
        std::string a_text;
        if (src_a) {
          llvm::Value* mn = b.CreateAdd(m_base, cg.c32(int64_t{mi} * kWgmmaM * t.wg_m));
          args.push_back(descriptor(tile_a, mn, int64_t{ki} * kk));
          cons += ",l";
          a_text = "$" + std::to_string(next++);
        } else {
          a_text = "{";
          for (int w = 0; w < 4; ++w) {
            args.push_back(a_words[ki * mreps + mi][w]);
            cons += ",r";
            a_text += (w ? ",$" : "$") + std::to_string(next++);
          }
          a_text += "}";
        }
        llvm::Value* nn = b.CreateAdd(n_base, cg.c32(int64_t{ni} * t.instr_n));
        args.push_back(descriptor(tile_b, nn, int64_t{ki} * kk));
        cons += ",l";
        std::string b_text = "$" + std::to_string(next++);
        bool first_write = zero_acc && ki == 0;
        if (!first_write)
          for (int i = 0; i < per_instr; ++i) {
            args.push_back(out[c0 + i]);
            cons += "," + std::to_string(i);
          }
        // scale-d = 1 (accumulate) or 0 (D = A.B), no negation; transpose bits: 1 =
        // M/N-major in shared memory (16-bit only: 8-bit operands are K-major).
        std::string trans = f8 ? std::string()
                               : ", " + (src_a ? std::string(tile_a.k_major ? "0" : "1") + ", " : std::string()) +
                                     (tile_b.k_major ? "0" : "1");
        text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::string(first_write ? "0" : "1") +
               ", 0;\nwgmma.mma_async.sync.aligned." + shape + ".f32." + types + " {" + dl + "}, " + a_text +
               ", " + b_text + ", p, 1, 1" + trans + ";\n}";
        llvm::Value* d = cg.inline_asm(ret, text, cons + ",~{memory}", args, true);
        for (int i = 0; i < per_instr; ++i) out[c0 + i] = b.CreateExtractValue(d, i);
      }
  cg.inline_asm(b.getVoidTy(), "wgmma.commit_group.sync.aligned;", "~{memory}", {}, true);
  if (!p.wgmma_defer) out = wgmma_wait(cg, 0, out);  // else waited for where it is read
  // A block the producer copied is read by TMA's barrier alone (no CTA barrier before):
  // other scratch placed over it afterwards must wait for every warp's read.
  bool producer_copy = (src_a && cg.plan.is_producer_copy(src_a)) || (src_b && cg.plan.is_producer_copy(src_b));
  if (wrote || producer_copy) cg.smem_after_read();
  cg.set(op.result(), std::move(out));
}

}  // namespace tilefuse::nvptx
