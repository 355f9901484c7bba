// LaunchStreamScope: the stream device launches fall back to, per thread and nested.
#include <doctest/doctest.h>

#include <thread>

#include "tilefuse/launch_stream.hpp"

using namespace tilefuse;

TEST_CASE("launch stream scopes nest, restore, and belong to their thread") {
  int a = 0, b = 0;
  CHECK(current_launch_stream() == nullptr);
  {
    LaunchStreamScope outer(&a);
    CHECK(current_launch_stream() == &a);
    {
      LaunchStreamScope inner(&b);
      CHECK(current_launch_stream() == &b);
      void* seen = &a;
      std::thread([&] { seen = current_launch_stream(); }).join();
      CHECK(seen == nullptr);  // another thread keeps the default
    }
    CHECK(current_launch_stream() == &a);
  }
  CHECK(current_launch_stream() == nullptr);
}
