#include "tilefuse/cuda/file_io.hpp"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace tilefuse::cuda {

std::error_code read_whole_file(const std::filesystem::path& path, std::string& out) {
  auto buf = llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return buf.getError();
  out.assign((*buf)->getBufferStart(), (*buf)->getBufferSize());
  return {};
}

std::error_code replace_file_atomically(const std::filesystem::path& path, std::string_view data) {
  namespace sfs = llvm::sys::fs;
  int fd = -1;
  llvm::SmallString<256> tmp;
  // createUniqueFile (unlike TempFile) installs no signal handlers in the host process.
  unsigned mode = sfs::owner_read | sfs::owner_write | sfs::group_read | sfs::others_read;
  if (std::error_code ec = sfs::createUniqueFile(path.string() + ".tmp.%%%%%%%%", fd, tmp, sfs::OF_None, mode))
    return ec;
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::StringRef(data.data(), data.size());
    os.close();
    ec = os.error();
    os.clear_error();  // reported through ec, not by raw_fd_ostream's destructor
  }
  if (!ec) ec = sfs::rename(tmp, path.string());
  if (ec) sfs::remove(tmp);
  return ec;
}

}  // namespace tilefuse::cuda
