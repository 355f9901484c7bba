#pragma once
// Whole-file reads and atomic replacement for the on-disk caches, through
// llvm::sys::fs and llvm::MemoryBuffer (linked into libtilefuse).
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace tilefuse::cuda {

// Reads the whole file into `out`; std::errc::no_such_file_or_directory when absent.
std::error_code read_whole_file(const std::filesystem::path& path, std::string& out);

// Writes `data` to a uniquely named temporary file beside `path`, then renames it over
// `path`: readers see the old or the new file, never part of one. No temporary file is
// left behind on failure. No fsync: a crash can at worst leave a truncated file,
// which the caches detect and ignore.
std::error_code replace_file_atomically(const std::filesystem::path& path, std::string_view data);

}  // namespace tilefuse::cuda
