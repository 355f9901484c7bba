// Streams, events and the L2 flush.
#include "tilefuse/cuda/stream.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "driver_api.hpp"
#include "tilefuse/cuda/memory.hpp"

namespace tilefuse::cuda {

using detail::api;
using detail::check;

Stream Stream::create(bool non_blocking) {
  detail::ensure_context();
  CUstream s = nullptr;
  check(api().StreamCreate(&s, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT), "cuStreamCreate");
  return Stream(s);
}

Stream::~Stream() {
  if (s_) api().StreamDestroy(s_);
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (s_) api().StreamDestroy(s_);
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const {
  detail::ensure_context();
  check(api().StreamSynchronize(s_), "cuStreamSynchronize");
}

Event Event::create() {
  detail::ensure_context();
  CUevent e = nullptr;
  check(api().EventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return Event(e);
}

Event::~Event() {
  if (e_) api().EventDestroy(e_);
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (e_) api().EventDestroy(e_);
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) const {
  if (!e_) throw UserError("Event::record on an empty Event; create it with Event::create()");
  check(api().EventRecord(e_, stream), "cuEventRecord");
}

void Event::synchronize() const {
  if (!e_) throw UserError("Event::synchronize on an empty Event; create it with Event::create()");
  check(api().EventSynchronize(e_), "cuEventSynchronize");
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  if (!start.e_ || !end.e_) throw UserError("Event::elapsed_ms on an empty Event; create them with Event::create()");
  float ms = 0;
  check(api().EventElapsedTime(&ms, start.e_, end.e_), "cuEventElapsedTime");
  return ms;
}

L2Flusher::L2Flusher() {
  const DeviceInfo& info = device_info();
  bytes_ = std::max<size_t>(2 * static_cast<size_t>(info.l2_bytes), size_t(64) << 20);
  buf_ = mem_alloc(bytes_);
}

L2Flusher::~L2Flusher() { mem_free(buf_); }

void L2Flusher::flush(CUstream stream) const {
  // Writing every line of a buffer twice the L2 size evicts whatever the kernel under
  // test left there (the values alternate so no write can be elided).
  static std::atomic<uint32_t> salt{0};
  memset_d32(buf_, salt.fetch_add(1, std::memory_order_relaxed), bytes_ / 4, stream);
}

void flush_l2(CUstream stream) {
  static std::mutex m;
  static std::map<int, std::unique_ptr<L2Flusher>> flushers;
  L2Flusher* f;
  {
    std::lock_guard<std::mutex> lock(m);
    auto& slot = flushers[current_device()];
    if (!slot) slot = std::make_unique<L2Flusher>();
    f = slot.get();
  }
  f->flush(stream);
}

}  // namespace tilefuse::cuda
