#pragma once
// The CUDA stream that launches on device buffers use when their caller passes none:
// the legacy default stream unless a LaunchStreamScope on this thread names another.
// It lets code that calls gallery functions (the Python bindings: a framework's
// current stream) choose the stream without a parameter on every function.
namespace tilefuse {

void* current_launch_stream();  // a CUstream; nullptr = the legacy default stream

class LaunchStreamScope {
 public:
  explicit LaunchStreamScope(void* stream);
  ~LaunchStreamScope();
  LaunchStreamScope(const LaunchStreamScope&) = delete;
  LaunchStreamScope& operator=(const LaunchStreamScope&) = delete;

 private:
  void* previous_;
};

}  // namespace tilefuse
