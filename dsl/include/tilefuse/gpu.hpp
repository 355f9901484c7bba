#pragma once
// Whether kernels can run on a GPU in this process, and the compiler's version string
// (part of every compiled-kernel cache key).
#include <string>

namespace tilefuse {

// True when a CUDA driver loads and reports at least one device; otherwise false with
// the reason in *why. Never throws.
bool gpu_available(std::string* why = nullptr);

// Whether launches on device buffers can use thread-block clusters: the current GPU
// is sm_90 or newer. False without a GPU. Never throws.
bool gpu_has_clusters();

// Whether dots on device buffers compile to Hopper's warpgroup MMA (wgmma): the current
// GPU's target is sm_90a. False without a GPU. Never throws.
bool gpu_has_warpgroup_mma();

// "tilefuse <version> (LLVM <version>)": changes invalidate compiled-kernel caches.
const char* compiler_version();

}  // namespace tilefuse
