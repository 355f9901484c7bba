// libdevice: NVIDIA's bitcode math library. Located once, read once per process; each
// compile links lazily only the functions it calls.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "llvm_backend.hpp"
#include "tilefuse/ir/errors.hpp"
#include "tilefuse/nvptx/compiler.hpp"

#ifndef TILEFUSE_CUDA_ROOT_DEFAULT
#define TILEFUSE_CUDA_ROOT_DEFAULT ""
#endif

namespace tilefuse::nvptx {

namespace {

const llvm::MemoryBuffer* libdevice_buffer() {
  static std::once_flag once;
  static std::unique_ptr<llvm::MemoryBuffer> buf;
  std::call_once(once, [] {
    std::string path = libdevice_path();
    if (path.empty()) return;
    auto b = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (b) buf = std::move(*b);
  });
  return buf.get();
}

}  // namespace

std::string libdevice_path() {
  std::vector<std::string> roots;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v && *v) roots.push_back(v);
  if (*TILEFUSE_CUDA_ROOT_DEFAULT) roots.push_back(TILEFUSE_CUDA_ROOT_DEFAULT);
  roots.push_back("/usr/local/cuda");
  for (auto& r : roots) {
    std::filesystem::path p = std::filesystem::path(r) / "nvvm" / "libdevice" / "libdevice.10.bc";
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

bool needs_libdevice(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

void link_libdevice(llvm::Module& m) {
  const llvm::MemoryBuffer* buf = libdevice_buffer();
  if (!buf)
    throw UserError(
        "libdevice (nvvm/libdevice/libdevice.10.bc) was not found, but the kernel uses math functions that need it. "
        "Set CUDA_HOME to the CUDA toolkit root");
  auto lib = llvm::getLazyBitcodeModule(buf->getMemBufferRef(), m.getContext());
  if (!lib) internal_error("cannot read libdevice: " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    internal_error("linking libdevice failed");
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", 1);
  llvm::internalizeModule(m, [](const llvm::GlobalValue& gv) {
    if (auto* f = llvm::dyn_cast<llvm::Function>(&gv))
      return f->getCallingConv() == llvm::CallingConv::PTX_Kernel || f->isIntrinsic();
    return gv.isDeclaration();
  });
}

}  // namespace tilefuse::nvptx
