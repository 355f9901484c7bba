#pragma once
// Device memory for the duration of one host call, ordered on the launch stream.
#include <cstddef>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/launch_stream.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels::detail {

// Device memory from the launch stream's pool for the duration of one host call: work
// queued on the stream before the destructor's free may use it.
template <class T>
class StreamScratch {
 public:
  explicit StreamScratch(size_t n)
      : stream_(static_cast<CUstream>(current_launch_stream())),
        ptr_(static_cast<T*>(cuda::mem_alloc_async(n * sizeof(T), stream_))), n_(n) {}
  ~StreamScratch() { cuda::mem_free_async(ptr_, stream_); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  DevicePtr<T> get() const { return DevicePtr<T>(ptr_, n_); }

 private:
  CUstream stream_;
  T* ptr_;
  size_t n_;
};

}  // namespace tilefuse::kernels::detail
