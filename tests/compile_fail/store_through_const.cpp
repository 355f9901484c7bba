// Ptr<const T> is read-only: storing through it is a compile error.
// expect: store: this pointer is Ptr<const T>, which is read-only
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("store_through_const", [](Ptr<const f32> in, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto x = load(in + offs);
  store(in + offs, x + 1.0f);  // <- error
});
