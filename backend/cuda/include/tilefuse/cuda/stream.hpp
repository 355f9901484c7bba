#pragma once
// Streams, events (timing) and an L2 flush for benchmarks, on the current device.
#include <cstddef>
#include <utility>

#include "tilefuse/cuda/driver.hpp"

namespace tilefuse::cuda {

// An owned CUDA stream. Move-only; the default-constructed Stream is the legacy
// default stream (get() == nullptr) and owns nothing.
class Stream {
 public:
  Stream() = default;
  // A new stream; non_blocking streams do not synchronize with the legacy default stream.
  static Stream create(bool non_blocking = false);
  ~Stream();
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream get() const { return s_; }
  operator CUstream() const { return s_; }
  void synchronize() const;

 private:
  explicit Stream(CUstream s) : s_(s) {}
  CUstream s_ = nullptr;
};

// An owned CUDA event with timing enabled. Move-only.
class Event {
 public:
  static Event create();
  Event() = default;  // empty; create() makes a real one
  ~Event();
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(CUstream stream = nullptr) const;
  void synchronize() const;
  CUevent get() const { return e_; }
  // Milliseconds between two recorded events (both must have completed or be waited for).
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  explicit Event(CUevent e) : e_(e) {}
  CUevent e_ = nullptr;
};

// Evicts the L2 cache between benchmark runs by writing a device buffer larger than L2
// (twice the L2 size, at least 64 MB). Holds the buffer until destroyed.
class L2Flusher {
 public:
  L2Flusher();  // sized for the current device
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(CUstream stream = nullptr) const;
  size_t bytes() const { return bytes_; }

 private:
  void* buf_ = nullptr;
  size_t bytes_ = 0;
};

// Flushes L2 with a process-wide L2Flusher for the current device (created on first use).
void flush_l2(CUstream stream = nullptr);

}  // namespace tilefuse::cuda
