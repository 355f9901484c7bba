// tilefuse._tilefuse: the gallery on DLPack tensors and the runtime's switches. The
// Python package (tilefuse/__init__.py) allocates outputs and picks the stream.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bind_util.hpp"
#include "tilefuse/autotune/cache.hpp"
#include "tilefuse/autotune/tuner.hpp"
#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/gpu.hpp"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_tilefuse, m) {
  m.doc() = "tilefuse: fused kernels on any framework's tensors (DLPack)";
  nb::exception<tilefuse::UserError>(m, "UserError", PyExc_ValueError);

  m.def("gpu_available", [] { return tilefuse::gpu_available(); }, "Whether a CUDA GPU can run kernels here.");
  m.def(
      "gpu_unavailable_reason",
      [] {
        std::string why;
        return tilefuse::gpu_available(&why) ? std::string() : why;
      },
      "Why gpu_available() is False ('' when it is True).");
  m.def("compiler_version", [] { return std::string(tilefuse::compiler_version()); });
  m.def("autotune_mode", [] { return std::string(tilefuse::tuning::mode_name(tilefuse::tuning::mode())); },
        "'off', 'cached' or 'always' (TILEFUSE_AUTOTUNE unless set_autotune_mode overrides it).");
  m.def(
      "set_autotune_mode",
      [](std::optional<std::string> mode) {
        tilefuse::tuning::set_mode(mode ? std::optional(tilefuse::tuning::parse_mode(*mode)) : std::nullopt);
      },
      "mode"_a.none(), "'off', 'cached', 'always', or None for TILEFUSE_AUTOTUNE again.");
  // The caches read TILEFUSE_CACHE_DIR once, when first used; asking for the directory
  // fixes it, so the answer stays true.
  m.def(
      "cache_dir",
      [] {
        tilefuse::cuda::DiskCache::global();
        return tilefuse::tuning::TuningCache::global().dir().parent_path().string();
      },
      "The kernel and tuning cache directory. Fixed from here on: set_cache_dir() must come first.");

  // NumPy's bfloat16 and 8-bit floats (ml_dtypes) cannot travel through DLPack or the
  // buffer protocol, nor can 8-bit float tensors of frameworks whose DLPack predates them:
  // the package passes such arrays as unsigned-integer views of the same width, relabelled
  // here with the DLPack type code (4 bfloat, 10 float8_e4m3fn, 12 float8_e5m2).
  m.def("_relabel", [](nb::object owner, uint8_t code) {
    auto a = nb::cast<nb::ndarray<nb::ro>>(owner);
    uint8_t bits = code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) ? 16 : 8;
    if (a.dtype() != (bits == 16 ? nb::dtype<uint16_t>() : nb::dtype<uint8_t>()))
      throw tilefuse::UserError("_relabel takes a uint" + std::to_string(bits) + " view for type code " +
                                std::to_string(code));
    std::vector<size_t> shape(a.shape_ptr(), a.shape_ptr() + a.ndim());
    nb::dlpack::dtype d{code, bits, 1};
    return nb::ndarray<>(const_cast<void*>(a.data()), a.ndim(), shape.data(), owner, a.stride_ptr(), d, a.device_type(),
                         a.device_id());
  });

  tilefuse::python::bind_rows(m);
  tilefuse::python::bind_attention(m);
  tilefuse::python::bind_matmul(m);
  tilefuse::python::bind_training(m);
}
