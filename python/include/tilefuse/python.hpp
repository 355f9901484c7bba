#pragma once
// tilefuse in Python extensions (nanobind): a tensor argument of any framework
// (nb::ndarray: NumPy, PyTorch, JAX, CuPy...) as a checked tilefuse buffer, and the
// scope a kernel call runs in (GIL released, the caller's CUDA stream).
//
//   TensorView o = python::view(out), v = python::view(x);           // checked DLPack views
//   bool device = python::same_side({&o, &v}, {"out", "x"});           // all host or one GPU
//   python::KernelCall call(stream);                                   // GIL off, caller's stream
//   python::on_side(device, [&](auto side) {
//     my_kernel.launch(g, cfg, python::buffer<float>(side, o, "out"), python::buffer<const float>(side, v, "x"));
//   });
//
// samples/python_extension/ is a whole extension built this way.
#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/dlpack.hpp"
#include "tilefuse/launch_stream.hpp"

namespace tilefuse::python {

namespace nb = nanobind;

// Tensor parameters: inputs may be read-only arrays; outputs must be writable (nanobind
// refuses a read-only array for an Output).
using Input = nb::ndarray<nb::ro>;
using Output = nb::ndarray<>;

// The tensor behind an nb::ndarray, through from_dltensor's checks.
template <class... Ts>
TensorView view(const nb::ndarray<Ts...>& a) {
  DLTensor t{};
  t.data = const_cast<void*>(static_cast<const void*>(a.data()));
  t.device = DLDevice{static_cast<DLDeviceType>(a.device_type()), a.device_id()};
  t.ndim = static_cast<int32_t>(a.ndim());
  t.dtype = DLDataType{a.dtype().code, a.dtype().bits, a.dtype().lanes};
  t.shape = const_cast<int64_t*>(a.shape_ptr());
  t.strides = const_cast<int64_t*>(a.stride_ptr());
  return from_dltensor(t);
}

// The two places a call runs: the interpreter on host memory, or the GPU.
struct Host {};
struct Device {};

// Where one call's tensors live: all on the host or all on one CUDA device, which then
// becomes tilefuse's current device. Returns whether they are on a device.
inline bool same_side(std::initializer_list<const TensorView*> views, std::initializer_list<const char*> names) {
  const TensorView* first = *views.begin();
  const char* first_name = *names.begin();
  auto name = names.begin();
  for (const TensorView* v : views) {
    if (v->on_device != first->on_device || (v->on_device && v->device_id != first->device_id))
      user_error(std::string(*name) + " is " + v->describe() + " but " + first_name + " is " + first->describe(),
                 SourceLoc{}, "Pass all tensors of one call on the CPU (interpreter) or all on one CUDA device");
    ++name;
  }
  if (first->on_device && cuda::current_device() != first->device_id) cuda::set_device(first->device_id);
  return first->on_device;
}
// Calls f(Device{}) or f(Host{}): f picks its buffers with buffer<T>(side, ...).
template <class F>
decltype(auto) on_side(bool device, F&& f) {
  return device ? f(Device{}) : f(Host{});
}

// The typed buffer of a checked view: a host span (interpreter) or a DevicePtr (GPU).
template <class T>
std::span<T> buffer(Host, const TensorView& v, const std::string& what) {
  return v.host<T>(what);
}
template <class T>
DevicePtr<T> buffer(Device, const TensorView& v, const std::string& what) {
  return v.device<T>(what);
}

// Requires `v` to have exactly `shape`.
inline void expect_shape(const TensorView& v, const std::vector<int64_t>& shape, const std::string& what) {
  if (v.shape == shape) return;
  std::string want = "[";
  for (size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape[i]);
  user_error(what + " is " + v.describe() + ", expected shape " + want + "]", SourceLoc{});
}

// For the length of a kernel call: the GIL released (other Python threads run while
// tilefuse compiles or the interpreter works) and launches on `stream` (a CUstream as an
// integer; 0 = the legacy default stream). Build the views before: they read Python objects.
class KernelCall {
 public:
  explicit KernelCall(uintptr_t stream) : stream_(reinterpret_cast<void*>(stream)) {}

 private:
  nb::gil_scoped_release release_;
  LaunchStreamScope stream_;
};

// Makes a UserError thrown by this extension's functions raise tilefuse.UserError (a
// ValueError) with its whole text: what went wrong, where, and how to fix it.
inline void translate_user_errors() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const UserError& e) {
      nb::object cls = nb::module_::import_("tilefuse").attr("UserError");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
}

}  // namespace tilefuse::python
