#include "tilefuse/launch_stream.hpp"

namespace tilefuse {
namespace {
thread_local void* g_stream = nullptr;  // per thread: each caller keeps its own stream
}  // namespace

void* current_launch_stream() { return g_stream; }

LaunchStreamScope::LaunchStreamScope(void* stream) : previous_(g_stream) { g_stream = stream; }
LaunchStreamScope::~LaunchStreamScope() { g_stream = previous_; }

}  // namespace tilefuse
