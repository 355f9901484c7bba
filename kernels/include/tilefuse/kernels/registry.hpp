#pragma once
// The gallery as data: every kernel by name, with its meta-parameters, dtypes and a
// default config, so tools (tilefuse-compile, tilefuse-bench, tilefuse-tune) can
// specialize any of them without knowing their C++ types.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilefuse/dsl/config.hpp"
#include "tilefuse/dsl/kernel.hpp"

namespace tilefuse::kernels {

struct GalleryKernel {
  std::string name;                      // "softmax"
  std::string summary;
  std::vector<DType> dtypes;             // element types it is instantiated for
  Config default_config;                 // a valid config (meta-parameters + warps)
  // The kernel object for one dtype (its params() and meta_names() describe it).
  std::function<const KernelBase&(DType)> get;
};

const std::vector<GalleryKernel>& gallery();
// The entry named `name`; UserError listing the known names when there is none.
const GalleryKernel& gallery_kernel(const std::string& name);

}  // namespace tilefuse::kernels
