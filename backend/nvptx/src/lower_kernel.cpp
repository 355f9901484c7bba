// The kernel function: signature, entry block with thread indices, the body, and the
// nvvm annotations (kernel, maxntid) LLVM 19 reads.
#include <algorithm>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "codegen.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

namespace {

bool valid_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

namespace {

// Whether `v` is computed from num_programs (through ops without regions).
bool from_num_programs(const ir::Value* v, int depth = 0) {
  if (!v->def || depth > 16) return false;
  if (v->def->kind == ir::OpKind::NumPrograms) return true;
  if (!v->def->regions.empty()) return false;
  for (const ir::Value* o : v->def->operands)
    if (from_num_programs(o, depth + 1)) return true;
  return false;
}

}  // namespace

// The last top-level loop whose step is built from num_programs (programs striding over
// the rows of a grid the size of the GPU), or null. A kernel with one lets the next kernel
// launch after it rather than when it exits (bench/NOTES.md: the norm backwards' partial
// sums).
const ir::Op* grid_stride_loop(const ir::Function& fn) {
  const ir::Op* last = nullptr;
  for (const auto& op : fn.body.ops)
    if (op->kind == ir::OpKind::For && from_num_programs(op->operand(2))) last = op.get();
  return last;
}

uint32_t early_launch_max_blocks(const TargetInfo& ti) {
  if (!ti.has_grid_dependency_control() || knob("TILEFUSE_PDL") == "0") return 0;
  long n = knob_count("TILEFUSE_PDL_BLOCKS");
  return n > 0 ? static_cast<uint32_t>(std::min<long>(n, kEarlyLaunchMaxBlocks)) : kEarlyLaunchMaxBlocks;
}

void Codegen::launch_dependents() {
  inline_asm(b.getVoidTy(), "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n@p griddepcontrol.launch_dependents;\n}",
             "r,~{memory}", {b.CreateZExt(early_launch, b.getInt32Ty())}, true);
}

void Codegen::lower_kernel() {
  if (!valid_identifier(fn.name))
    throw UserError("kernel name '" + fn.name +
                    "' is not a valid PTX entry name. Use letters, digits and underscores, not starting with a digit");
  std::vector<llvm::Type*> tys;
  for (auto& p : fn.params) {
    const ir::Type& t = p.value->type;
    if (t.is_ptr) {
      tys.push_back(global_ptr_type());
      continue;
    }
    DType d = t.dtype;
    bool ok = t.is_scalar() && (d == DType::i32 || d == DType::u32 || d == DType::i64 || d == DType::f32 ||
                                d == DType::f64);
    if (!ok)
      throw UserError("kernel '" + fn.name + "' parameter '" + p.name + "' has type " + t.str() +
                      ", which the GPU backend cannot pass. Use i32, u32, i64, f32, f64 or a pointer (widen " +
                      "narrow integers and bools to i32)");
    tys.push_back(elem_type(d));
  }
  // TMA descriptors: 128-byte CUtensorMaps passed by value after the signature's
  // parameters, read in parameter space (grid_constant: no local copy).
  auto* map_ty = llvm::ArrayType::get(b.getInt8Ty(), 128);
  for (size_t i = 0; i < plan.tensor_maps.size(); ++i) tys.push_back(b.getPtrTy());
  if (fn.persistent)  // the grid's sizes (x, y, z) the programs loop over
    for (int d = 0; d < 3; ++d) tys.push_back(b.getInt32Ty());
  else if (plan.clusters_in_memory && memory_cluster_layout(fn, plan).bytes > 0)
    tys.push_back(global_ptr_type());  // the memory clusters' workspace
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), tys, false);
  kernel = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, fn.name, mod);
  kernel->setCallingConv(llvm::CallingConv::PTX_Kernel);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < plan.tensor_maps.size(); ++i) {
    unsigned a = static_cast<unsigned>(fn.params.size() + i);
    kernel->addParamAttr(a, llvm::Attribute::getWithByValType(ctx, map_ty));
    kernel->addParamAttr(a, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
    kernel->getArg(a)->setName("tensor_map_" + std::to_string(i));
  }
  entry_ = llvm::BasicBlock::Create(ctx, "entry", kernel);
  auto* body = llvm::BasicBlock::Create(ctx, "body", kernel);
  b.SetInsertPoint(entry_);
  b.CreateBr(body);
  setup_thread_ids();
  b.SetInsertPoint(body);
  if (uint32_t limit = early_launch_max_blocks(ti)) {
    // Programmatic dependent launch, for grids of at most `limit` blocks (the launch sets
    // its attribute by the same test): launched early, the kernel waits here, before any
    // memory access, for the grids before it in the stream to finish and their writes to
    // be visible. It lets the next kernel launch early after its loop over the grid, if it
    // has one, else when it exits: a trigger at entry halved the resident warps of a
    // 65536-block row kernel, and an unpredicated wait cost a bf16 row kernel 12% with no
    // other difference in its SASS; predicated, neither costs (bench/NOTES.md).
    auto nctaid = [&](llvm::Intrinsic::ID id) {
      return b.CreateZExt(call_intrinsic(id, {}), b.getInt64Ty());
    };
    llvm::Value* blocks = b.CreateMul(nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                      b.CreateMul(nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y),
                                                  nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z)));
    early_launch = b.CreateICmpULE(blocks, b.getInt64(limit));
    inline_asm(b.getVoidTy(), "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n@p griddepcontrol.wait;\n}", "r,~{memory}",
               {b.CreateZExt(early_launch, b.getInt32Ty())}, true);
    launch_dependents_after = fn.persistent || plan.warp_specialized() ? nullptr : grid_stride_loop(fn);
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    llvm::Argument* a = kernel->getArg(static_cast<unsigned>(i));
    a->setName(fn.params[i].name);
    vals_[fn.params[i].value] = {a};
  }
  init_cluster_reductions(*this);
  if (fn.persistent) bind_grid_sizes(*this);  // the producer loops over the programs too
  if (plan.warp_specialized()) split_producer(*this);
  if (plan.pingpong) pingpong_start(*this);
  if (fn.persistent) lower_persistent_body(*this);
  else lower_block(fn.body);
  if (plan.pingpong) pingpong_finish(*this);
  finish_memory_clusters(*this);
  b.CreateRetVoid();

  auto* md = mod.getOrInsertNamedMetadata("nvvm.annotations");
  auto* i32t = b.getInt32Ty();
  auto entry = [&](const char* key, int v) {
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(kernel), llvm::MDString::get(ctx, key),
                             llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32t, v))};
    md->addOperand(llvm::MDNode::get(ctx, ops));
  };
  entry("kernel", 1);
  entry("maxntidx", 32 * (fn.num_warps + (plan.warp_specialized() ? 4 : 0)));
  entry("maxntidy", 1);
  entry("maxntidz", 1);
  if (plan.warp_specialized()) entry("minctasm", 1);  // a register cap at entry, for setmaxnreg
  else if (fn.min_programs_per_sm > 0) entry("minctasm", fn.min_programs_per_sm);
  if (!plan.tensor_maps.empty()) {
    std::vector<llvm::Metadata*> idx;  // 1-based parameter numbers
    for (size_t i = 0; i < plan.tensor_maps.size(); ++i)
      idx.push_back(llvm::ConstantAsMetadata::get(
          llvm::ConstantInt::get(i32t, static_cast<int>(fn.params.size() + i + 1))));
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(kernel), llvm::MDString::get(ctx, "grid_constant"),
                             llvm::MDNode::get(ctx, idx)};
    md->addOperand(llvm::MDNode::get(ctx, ops));
  }
}

}  // namespace tilefuse::nvptx
