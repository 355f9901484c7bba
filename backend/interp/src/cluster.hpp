#pragma once
// Internal: how the interpreter runs the programs of one thread-block cluster. Each
// program of the cluster runs on its own thread, but only one at a time: a program
// holds the cluster's turn while it executes and passes it on only while it waits in
// an exchange, so memory ops stay sequential (atomics atomic, no data races on the
// host buffers). A ClusterReduce is such an exchange: every program publishes its value
// and waits for the others, like the GPU's cluster barrier.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tilefuse::interp::detail {

// One program's contribution to a cluster reduction (floats use f, ints use i; a
// tile's elements: fs or is).
struct ClusterValue {
  double f = 0;
  int64_t i = 0;
  std::vector<double> fs;
  std::vector<int64_t> is;
};

// Thrown in the other programs of a cluster when one of them failed.
struct ClusterAborted {};

class ClusterSync {
 public:
  explicit ClusterSync(int size) : size_(size), values_(size) {}
  int size() const { return size_; }
  // The turn: held by the one program that executes.
  std::mutex& turn() { return turn_; }
  // Publishes `v` as program `rank`'s value, waits (giving up `turn`, which it holds)
  // until every program of the cluster has published one, takes the turn back and
  // returns all values in rank order.
  std::vector<ClusterValue> exchange(int rank, ClusterValue v, const std::string& what,
                                     std::unique_lock<std::mutex>& turn);
  // One program ended its body (a program still waiting in exchange then fails).
  void program_finished();
  // A program failed: wakes every waiter, which throws ClusterAborted.
  void abort();
  // Ready for the next cluster.
  void reset();

 private:
  std::mutex mu_, turn_;
  std::condition_variable cv_;
  int size_;
  int arrived_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::vector<ClusterValue> values_, published_;
};

}  // namespace tilefuse::interp::detail
