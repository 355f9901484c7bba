// TMA stores of tensor-view blocks (GpuPlan::tma_stores). Every thread writes its
// elements of the block into the store's shared buffer, swizzled as the tensor map's
// boxes (128-byte column blocks holding all rows: the layout a TMA load of the same box
// produces), and fences them for the async proxy; after a barrier thread 0 copies each
// box out with one bulk tensor copy (the engine skips what lies outside the view, as the
// store's bounds mask does) and waits until the engine has read the buffer, so that the
// next writer of those bytes, behind its own barrier, cannot overwrite it early. The
// global writes complete on their own, as plain stores do. The caller (lower_memory)
// runs this for blocks at non-negative coordinates only.
#include "codegen.hpp"

namespace tilefuse::nvptx {

void lower_tma_store(Codegen& cg, const ir::Op& op, const Regs& vals) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  const TensorMapSpec& spec = cg.plan.tensor_maps.at(p.tma_map);
  const ir::Type& t = op.operand(1)->type;
  const int es = byte_size(t.dtype), rank = op.view_rank;
  const int64_t rows = t.shape[0], inner = spec.box.back(), boxes = t.shape[1] / inner;
  const int64_t box_bytes = rows * inner * es;

  SharedEncoding enc = swizzled_encoding(t.shape, 1, es, true);
  cg.smem_before_write();
  cg.smem_store_tile(vals, enc.apply(p.operands[1]->ll), p.smem_offset, cg.elem_type(t.dtype));
  // This thread's writes (generic proxy) become visible to the copy engine (async proxy).
  cg.inline_asm(b.getVoidTy(), "fence.proxy.async.shared::cta;", "~{memory}", {}, true);
  cg.smem_after_write();

  std::vector<llvm::Value*> coords;
  for (int d = 0; d < rank; ++d) coords.push_back(cg.scalar(op.view_coord(d)));
  llvm::Value* map = b.CreatePtrToInt(cg.kernel->getArg(static_cast<unsigned>(cg.fn.params.size() + p.tma_map)),
                                      b.getInt64Ty());
  // Operands: map, coordinates innermost first, source.
  std::string text = "cp.async.bulk.tensor." + std::to_string(rank) + "d.global.shared::cta.bulk_group [$0, {";
  for (int d = 0; d < rank; ++d) text += (d ? ", $" : "$") + std::to_string(1 + d);
  text += "}], [$" + std::to_string(1 + rank) + "];";
  std::string constraints = "l";
  for (int d = 0; d < rank; ++d) constraints += ",r";
  constraints += ",r,~{memory}";
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (int64_t j = 0; j < boxes; ++j) {
      std::vector<llvm::Value*> args{map};
      for (int d = rank - 1; d >= 0; --d)
        args.push_back(d == rank - 1 ? b.CreateAdd(coords[d], cg.c32(j * inner)) : coords[d]);
      args.push_back(cg.shared_addr32(cg.smem_addr(p.smem_offset + static_cast<int>(j * box_bytes))));
      cg.inline_asm(b.getVoidTy(), text, constraints, args, true);
    }
    cg.inline_asm(b.getVoidTy(), "cp.async.bulk.commit_group;", "~{memory}", {}, true);
    cg.inline_asm(b.getVoidTy(), "cp.async.bulk.wait_group.read 0;", "~{memory}", {}, true);
  });
  cg.smem_after_read();  // the buffer is free once thread 0 has passed its wait
}

}  // namespace tilefuse::nvptx
