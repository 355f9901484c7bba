// Kernel parameters are DSL handles (Ptr<T>, I32, F32, ...) or Meta<"NAME">, not C++ ints.
// expect: kernel parameters must be Ptr<T>, scalars (I32, I64, U32, F32, F64) or Meta<"NAME">
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("param_int", [](Ptr<f32> out, int n) {});  // <- error
