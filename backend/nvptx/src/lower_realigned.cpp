// Contiguous global accesses whose start is not known to be 16-byte aligned (rows of an
// odd width, a row-major tile at a runtime offset) or whose mask may change inside a
// run: each thread's run of 16 bytes still moves as whole, aligned 16-byte chunks.
// A load reads the (at most) two chunks its run straddles and shifts the run out of
// them. A store takes the next lane's run by shuffle and writes the chunk straddling
// the two; the pieces nobody could write whole — at the edge of a warp, of the tile, of
// the mask, or where the next lane's run is elsewhere — go element by element. The
// runtime misalignment is per run, so runs in rows of different alignment mix freely.
//
// A load never reads a byte past its run's last element: the first chunk starts at or
// before the run (allocations start 16-byte aligned, so it stays inside the buffer), the
// run's bytes in the second chunk are read as at most one 8-, 4-, 2- and 1-byte access,
// and a run the mask allows only partly is read element by element.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <array>

#include "memory_access.hpp"

namespace tilefuse::nvptx {

using ir::Evict;

namespace {

using Words8 = std::array<llvm::Value*, 8>;
using Words4 = std::array<llvm::Value*, 4>;

// Bytes [s, s + 16) of the 32 bytes w[0..7] (little endian), for a runtime s in [0, 16):
// words selected by s / 4 (two levels of selects: registers cannot be indexed), then a
// funnel shift by the byte remainder (skipped when runs are word aligned).
Words4 window16(Codegen& cg, const Words8& w, llvm::Value* s, bool word_aligned) {
  auto& b = cg.b;
  llvm::Value* q = b.CreateLShr(s, 2);
  llvm::Value* q1 = b.CreateICmpNE(b.CreateAnd(q, 1), cg.c32(0));
  llvm::Value* q2 = b.CreateICmpNE(b.CreateAnd(q, 2), cg.c32(0));
  std::array<llvm::Value*, 7> y;
  for (int j = 0; j < 7; ++j) y[j] = b.CreateSelect(q1, w[j + 1], w[j]);
  std::array<llvm::Value*, 5> x;
  for (int i = 0; i < 5; ++i) x[i] = i + 2 < 7 ? b.CreateSelect(q2, y[i + 2], y[i]) : y[i];
  Words4 out;
  if (word_aligned) {
    for (int i = 0; i < 4; ++i) out[i] = x[i];
    return out;
  }
  llvm::Value* sh = b.CreateShl(b.CreateAnd(s, 3), 3);
  // shf.r.wrap: one instruction (LLVM expands a variable llvm.fshr into four).
  for (int i = 0; i < 4; ++i)
    out[i] = cg.inline_asm(cg.i32(), "shf.r.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r", {x[i], x[i + 1], sh}, false);
  return out;
}

// The elements of a 16-byte run <-> four 32-bit words.
Regs elements_of(Codegen& cg, const Words4& w, DType dt, int vec) {
  auto& b = cg.b;
  llvm::Value* packed = llvm::PoisonValue::get(llvm::FixedVectorType::get(cg.i32(), 4));
  for (int i = 0; i < 4; ++i) packed = b.CreateInsertElement(packed, w[i], i);
  llvm::Type* mt = cg.mem_type(dt);
  llvm::Value* v = b.CreateBitCast(packed, llvm::FixedVectorType::get(mt, vec));
  Regs out;
  for (int i = 0; i < vec; ++i) {
    llvm::Value* e = b.CreateExtractElement(v, i);
    out.push_back(dt == DType::i1 ? b.CreateICmpNE(e, llvm::ConstantInt::get(mt, 0)) : e);
  }
  return out;
}

Words4 words_of(Codegen& cg, const Regs& elems, DType dt) {
  auto& b = cg.b;
  Words w = words_for(cg, dt, static_cast<int>(elems.size()));
  std::vector<llvm::Value*> ws = to_words(cg, elems, dt, w);
  Words4 out;
  if (w.bits == 32) {
    for (int i = 0; i < 4; ++i) out[i] = ws[i];
    return out;
  }
  auto* v2 = llvm::FixedVectorType::get(cg.i32(), 2);  // 64-bit elements: two words each
  for (int i = 0; i < 2; ++i) {
    llvm::Value* pair = b.CreateBitCast(ws[i], v2);
    out[2 * i] = b.CreateExtractElement(pair, uint64_t(0));
    out[2 * i + 1] = b.CreateExtractElement(pair, uint64_t(1));
  }
  return out;
}

struct RunAddress {
  llvm::Value* addr;   // i64 address of the run's first element
  llvm::Value* m;      // i32 misalignment in bytes, [0, 16)
  llvm::Value* k;      // i32 misalignment in elements
  llvm::Value* chunk;  // global pointer to the aligned chunk holding the first element
};

RunAddress run_address(Codegen& cg, llvm::Value* ptr, DType dt) {
  auto& b = cg.b;
  llvm::Value* addr = b.CreatePtrToInt(ptr, b.getInt64Ty());
  llvm::Value* m = b.CreateTrunc(b.CreateAnd(addr, 15), cg.i32());
  int es = byte_size(dt);
  llvm::Value* k = es == 1 ? m : b.CreateLShr(m, __builtin_ctz(static_cast<unsigned>(es)));
  llvm::Value* chunk = b.CreateIntToPtr(b.CreateAnd(addr, ~uint64_t(15)), cg.global_ptr_type());
  return {addr, m, k, chunk};
}

// Bit j set when element j is valid (its mask, and this thread owns it).
llvm::Value* mask_bits(Codegen& cg, const Regs& mask, llvm::Value* owner, int vec = 0) {
  auto& b = cg.b;
  if (mask.empty()) {
    llvm::Value* all = cg.c32((1u << vec) - 1);
    return owner ? b.CreateSelect(owner, all, cg.c32(0)) : all;
  }
  llvm::Value* bits = nullptr;
  for (size_t j = 0; j < mask.size(); ++j) {
    llvm::Value* valid = owner ? b.CreateAnd(mask[j], owner) : mask[j];
    llvm::Value* bit = b.CreateSelect(valid, cg.c32(1u << j), cg.c32(0));
    bits = bits ? b.CreateOr(bits, bit) : bit;
  }
  return bits;
}

// (1 << n) - 1 for a runtime n in [1, 16].
llvm::Value* low_bits(Codegen& cg, llvm::Value* n) {
  return cg.b.CreateSub(cg.b.CreateShl(cg.c32(1), n), cg.c32(1));
}

llvm::Value* shfl(Codegen& cg, llvm::Intrinsic::ID id, llvm::Value* v, uint32_t clamp) {
  return cg.call_intrinsic(id, {cg.c32(0xffffffff), v, cg.c32(1), cg.c32(clamp)});
}
// v (i32 or i64) from the next lane (the last lane gets its own) or the previous one
// (the first lane gets its own).
llvm::Value* from_lane(Codegen& cg, llvm::Value* v, bool next) {
  auto id = next ? llvm::Intrinsic::nvvm_shfl_sync_down_i32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32;
  uint32_t clamp = next ? 0x1f : 0;
  if (v->getType()->isIntegerTy(32)) return shfl(cg, id, v, clamp);
  auto& b = cg.b;
  llvm::Value* lo = shfl(cg, id, b.CreateTrunc(v, cg.i32()), clamp);
  llvm::Value* hi = shfl(cg, id, b.CreateTrunc(b.CreateLShr(v, 32), cg.i32()), clamp);
  return b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
}

}  // namespace

namespace {

// Bytes [0, n) of the 16-byte-aligned chunk at `chunk` as four words (the bytes past n
// undefined), for a runtime n in [0, 16) that is a multiple of `es`, read where `pred`
// holds: an 8-byte piece at 0, a 4-byte one at n & 8, a 2-byte one at n & 12 and a
// 1-byte one at n & 14, each only where n has that bit, so no byte past n is touched.
Words4 load_leading_bytes(Codegen& cg, llvm::Value* chunk, llvm::Value* n, llvm::Value* pred, int es, Evict ev) {
  auto& b = cg.b;
  auto bit = [&](unsigned v) { return b.CreateICmpNE(b.CreateAnd(n, v), cg.c32(0)); };
  // The 2- and 1-byte pieces are zero where not read: they are or-ed together.
  auto piece = [&](unsigned v, DType dt, int count, llvm::Value* offset) {
    llvm::Value* at = offset ? b.CreateGEP(b.getInt8Ty(), chunk, offset) : chunk;
    Words w = words_for(cg, dt, count);
    std::vector<llvm::Value*> fill;
    if (v <= 2) fill.assign(w.n, llvm::Constant::getNullValue(w.ty));
    return load_words(cg, at, b.CreateAnd(pred, bit(v)), fill, w, ev);
  };
  std::vector<llvm::Value*> q = piece(8, DType::i32, 2, nullptr);
  llvm::Value* undef = llvm::UndefValue::get(cg.i32());
  if (es == 8) return {q[0], q[1], undef, undef};
  llvm::Value* d = piece(4, DType::i32, 1, b.CreateAnd(n, 8))[0];
  if (es == 4) return {b.CreateSelect(bit(8), q[0], d), q[1], d, undef};
  // The 2- and 1-byte pieces share the word at n & 12 (the byte in its upper half when
  // both are there).
  llvm::Value* h = b.CreateZExt(piece(2, DType::i16, 1, b.CreateAnd(n, 12))[0], cg.i32());
  if (es == 1) {
    llvm::Value* byte = b.CreateZExt(piece(1, DType::i8, 1, b.CreateAnd(n, 14))[0], cg.i32());
    h = b.CreateOr(h, b.CreateShl(byte, b.CreateShl(b.CreateAnd(n, 2), 3)));
  }
  return {b.CreateSelect(bit(8), q[0], b.CreateSelect(bit(4), d, h)), b.CreateSelect(bit(8), q[1], h),
          b.CreateSelect(bit(4), d, h), h};
}

// The 32 bytes a whole run of 16 bytes at `ra` straddles, as far as the run reaches:
// its first chunk whole, then the run's part of the next one.
Words8 whole_run_words(Codegen& cg, const RunAddress& ra, llvm::Value* pred, DType dt, Evict ev) {
  llvm::Value* always = cg.b.getTrue();
  std::vector<llvm::Value*> lo = load_words(cg, ra.chunk, pred ? pred : always, {}, words_for(cg, DType::i32, 4), ev);
  llvm::Value* second = cg.b.CreateGEP(cg.b.getInt8Ty(), ra.chunk, cg.c32(16));
  Words4 hi = load_leading_bytes(cg, second, ra.m, pred ? pred : always, byte_size(dt), ev);
  return {lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
}

}  // namespace

RealignedChunks load_realigned_chunks(Codegen& cg, llvm::Value* ptr, llvm::Value* pred, DType dt, Evict ev) {
  RunAddress ra = run_address(cg, ptr, dt);
  RealignedChunks out;
  out.shift = ra.m;
  Words8 w = whole_run_words(cg, ra, pred, dt, ev);
  for (int i = 0; i < 8; ++i) out.words[i] = w[i];
  return out;
}

Regs realigned_elements(Codegen& cg, const RealignedChunks& c, DType dt) {
  Words8 w;
  for (int i = 0; i < 8; ++i) w[i] = c.words[i];
  int es = byte_size(dt);
  return elements_of(cg, window16(cg, w, c.shift, es >= 4), dt, 16 / es);
}

Regs realigned_load(Codegen& cg, llvm::Value* ptr, const Regs& mask, const Regs& other, DType dt, Evict ev) {
  auto& b = cg.b;
  int es = byte_size(dt), vec = 16 / es;
  RunAddress ra = run_address(cg, ptr, dt);
  llvm::Value* all = nullptr;
  for (llvm::Value* m : mask) all = all ? b.CreateAnd(all, m) : m;
  Regs out = elements_of(cg, window16(cg, whole_run_words(cg, ra, all, dt, ev), ra.m, es >= 4), dt, vec);
  if (mask.empty()) return out;
  // A run only partly valid, element by element (a chunk could reach past the buffer).
  return unless(cg, all, out, [&] {
    Regs part;
    for (int j = 0; j < vec; ++j) {
      llvm::Value* fill = other.empty() ? llvm::Constant::getNullValue(out[j]->getType()) : other[j];
      llvm::Value* elem_ptr = b.CreateGEP(b.getInt8Ty(), ptr, cg.c32(j * es));
      part.push_back(emit_load(cg, elem_ptr, mask[j], {fill}, dt, 1, ev)[0]);
    }
    return part;
  });
}

void realigned_store(Codegen& cg, llvm::Value* ptr, const Regs& vals, const Regs& mask, llvm::Value* owner, DType dt,
                     Evict ev) {
  auto& b = cg.b;
  int es = byte_size(dt), vec = 16 / es;
  RunAddress ra = run_address(cg, ptr, dt);
  llvm::Value* bits = mask_bits(cg, mask, owner, vec);  // the elements this thread writes
  llvm::Value* all = cg.c32((1u << vec) - 1);
  Words4 own = words_of(cg, vals, dt);

  // The chunk after this run's first one: this run's tail (elements vec - k on) and
  // the next lane's head, when that lane's run follows this one in memory.
  llvm::Value* next_addr = from_lane(cg, ra.addr, true);
  llvm::Value* next_bits = from_lane(cg, bits, true);
  Words8 pair;
  for (int i = 0; i < 4; ++i) {
    pair[i] = own[i];
    pair[4 + i] = from_lane(cg, own[i], true);
  }
  llvm::Value* misaligned = b.CreateICmpNE(ra.m, cg.c32(0));
  llvm::Value* head_bits = low_bits(cg, b.CreateSub(cg.c32(vec), ra.k));
  llvm::Value* tail_bits = b.CreateXor(head_bits, all);
  llvm::Value* full = b.CreateAnd(misaligned, b.CreateICmpEQ(next_addr, b.CreateAdd(ra.addr, b.getInt64(16))));
  full = b.CreateAnd(full, b.CreateICmpEQ(b.CreateAnd(bits, tail_bits), tail_bits));
  full = b.CreateAnd(full, b.CreateICmpEQ(b.CreateAnd(next_bits, head_bits), head_bits));
  llvm::Value* shift = b.CreateAnd(b.CreateSub(cg.c32(16), ra.m), cg.c32(15));
  Words4 straddling = window16(cg, pair, shift, es >= 4);
  llvm::Value* second = b.CreateGEP(b.getInt8Ty(), ra.chunk, cg.c32(16));
  emit_store(cg, second, Regs(straddling.begin(), straddling.end()), full, DType::i32, ev);

  // This run's head went out whole with the previous lane's chunk when that lane's
  // chunk was complete (which implies its run precedes this one); lane 0 has none.
  llvm::Value* prev_full = from_lane(cg, b.CreateZExt(full, cg.i32()), false);
  llvm::Value* head_done = b.CreateAnd(b.CreateICmpNE(prev_full, cg.c32(0)), b.CreateICmpNE(cg.lane(), cg.c32(0)));
  // An aligned run goes out as one chunk when all of it is written.
  llvm::Value* aligned_full = b.CreateAnd(b.CreateNot(misaligned), b.CreateICmpEQ(bits, all));
  emit_store(cg, ra.chunk, Regs(own.begin(), own.end()), aligned_full, DType::i32, ev);

  // The rest, element by element.
  llvm::Value* zero = cg.c32(0);
  llvm::Value* covered = b.CreateOr(b.CreateSelect(head_done, head_bits, zero), b.CreateSelect(full, tail_bits, zero));
  covered = b.CreateOr(covered, b.CreateSelect(aligned_full, all, zero));
  llvm::Value* rest = b.CreateAnd(bits, b.CreateXor(covered, all));
  for (int j = 0; j < vec; ++j) {
    llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(rest, cg.c32(1u << j)), zero);
    llvm::Value* elem_ptr = b.CreateGEP(b.getInt8Ty(), ptr, cg.c32(j * es));
    emit_store(cg, elem_ptr, {vals[j]}, bit, dt, ev);
  }
}

}  // namespace tilefuse::nvptx
