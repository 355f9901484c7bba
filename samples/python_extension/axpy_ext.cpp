// axpy_ext: a user's own tilefuse kernel as a Python function. out = alpha * x + y on
// float32 tensors of any framework: NumPy runs on the interpreter, CUDA tensors on the GPU.
#include <tilefuse/python.hpp>
#include <tilefuse/tilefuse.hpp>

namespace nb = nanobind;
namespace py = tilefuse::python;
using namespace tilefuse;

auto axpy_kernel = kernel("axpy", {"out", "x", "y", "alpha", "n"},
    [](Ptr<float> out, Ptr<const float> x, Ptr<const float> y, F32 alpha, I32 n, Meta<"BLOCK"> BLOCK) {
      auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
      auto mask = offs < n;
      store(out + offs, alpha * load(x + offs, mask) + load(y + offs, mask), mask);
    });

void axpy(py::Output out, py::Input x, py::Input y, float alpha, uintptr_t stream) {
  TensorView o = py::view(out), xv = py::view(x), yv = py::view(y);
  bool device = py::same_side({&o, &xv, &yv}, {"out", "x", "y"});
  py::expect_shape(xv, o.shape, "x");
  py::expect_shape(yv, o.shape, "y");
  int64_t n = o.numel(), block = 1024;
  if (n == 0) return;
  py::KernelCall call(stream);  // GIL released, launches on `stream`
  py::on_side(device, [&](auto side) {
    axpy_kernel.launch(grid((n + block - 1) / block), Config{{"BLOCK", block}, num_warps(4)},
                       py::buffer<float>(side, o, "out"), py::buffer<const float>(side, xv, "x"),
                       py::buffer<const float>(side, yv, "y"), alpha, n);
  });
}

NB_MODULE(axpy_ext, m) {
  py::translate_user_errors();  // UserError -> tilefuse.UserError with its text
  m.def("axpy", &axpy, nb::arg("out"), nb::arg("x"), nb::arg("y"), nb::arg("alpha") = 1.0f, nb::arg("stream") = 0);
}
