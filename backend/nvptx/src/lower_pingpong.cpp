// Ping-pong scheduling of two consumer warpgroups (warp-specialized kernels with 8
// consumer warps, FlashAttention-3's inter-warpgroup overlap). Each warpgroup owns its
// rows of every tile, so they need not meet; left alone they issue their MMAs at the
// same moments and then both run their softmax while the tensor cores idle. Turns
// order the issues instead: warpgroup w waits on named barrier 2 + w before it issues
// MMAs and arrives on the other's barrier when it is about to wait for MMA results, so
// the MMAs a warpgroup issues between two waits (in FlashAttention-3's order: the next
// block's Q.K^T and this block's P.V) go to the tensor cores as one turn, alternating
// w0, w1, w0, ..., and one warpgroup's softmax overlaps the other's turn. Every consumer runs the same dots in the same order (control flow is uniform
// over the program), so the turns pair up; warpgroup 1 hands warpgroup 0 the first
// turn, and warpgroup 0 takes the last hand-over at the end.
#include "codegen.hpp"

namespace tilefuse::nvptx {

namespace {

constexpr int kFirstTurnBarrier = 2;  // 0: the CTA's, 1: the consumers' (Codegen::barrier)

llvm::Value* warpgroup(Codegen& cg) { return cg.b.CreateLShr(cg.warp(), cg.c32(2)); }

// `op` on barrier kFirstTurnBarrier + (warpgroup ^ flip), written with an immediate id
// per warpgroup (a register id makes ptxas reserve all 16 barriers).
void turn_barrier(Codegen& cg, const char* op, int flip) {
  llvm::Value* wg = warpgroup(cg);
  for (int w = 0; w < 2; ++w)
    cg.if_then(cg.b.CreateICmpEQ(wg, cg.c32(w)), [&] {
      std::string id = std::to_string(kFirstTurnBarrier + (w ^ flip));
      cg.inline_asm(cg.b.getVoidTy(), std::string(op) + " " + id + ", 256;", "~{memory}", {}, true);
    });
}

}  // namespace

void pingpong_start(Codegen& cg) {
  cg.pingpong = true;
  cg.if_then(cg.b.CreateICmpEQ(warpgroup(cg), cg.c32(1)), [&] {
    cg.inline_asm(cg.b.getVoidTy(), "bar.arrive " + std::to_string(kFirstTurnBarrier) + ", 256;", "~{memory}", {}, true);
  });
}

void pingpong_take_turn(Codegen& cg) {
  if (!cg.pingpong || cg.turn_held) return;
  turn_barrier(cg, "bar.sync", 0);
  cg.turn_held = true;
}

void pingpong_pass_turn(Codegen& cg) {
  if (!cg.pingpong || !cg.turn_held) return;
  turn_barrier(cg, "bar.arrive", 1);
  cg.turn_held = false;
}

void pingpong_finish(Codegen& cg) {
  pingpong_pass_turn(cg);
  cg.if_then(cg.b.CreateICmpEQ(warpgroup(cg), cg.c32(0)), [&] {
    cg.inline_asm(cg.b.getVoidTy(), "bar.sync " + std::to_string(kFirstTurnBarrier) + ", 256;", "~{memory}", {}, true);
  });
  cg.pingpong = false;
}

}  // namespace tilefuse::nvptx
