// Ping-pong scheduling of two consumer warpgroups (warp-specialized kernels with 8
// consumer warps, FlashAttention-3's inter-warpgroup overlap). Each warpgroup owns its
// rows of every tile, so they need not meet; left alone they issue their MMAs at the
// same moments and then both run their softmax while the tensor cores idle. Turns
// order the issues instead: warpgroup w waits on named barrier 2 + w before it issues
// a group of MMAs and arrives on the other's barrier once they are committed, so the
// issues alternate (w0, w1, w0, ...) and one warpgroup's softmax overlaps the other's
// MMAs. Every consumer runs the same dots in the same order (control flow is uniform
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

void pingpong_wait_turn(Codegen& cg) { turn_barrier(cg, "bar.sync", 0); }

void pingpong_pass_turn(Codegen& cg) { turn_barrier(cg, "bar.arrive", 1); }

void pingpong_finish(Codegen& cg) {
  cg.if_then(cg.b.CreateICmpEQ(warpgroup(cg), cg.c32(0)), [&] {
    cg.inline_asm(cg.b.getVoidTy(), "bar.sync " + std::to_string(kFirstTurnBarrier) + ", 256;", "~{memory}", {}, true);
  });
  cg.pingpong = false;
}

}  // namespace tilefuse::nvptx
