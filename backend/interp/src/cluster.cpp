// Cluster execution in the interpreter: the exchange behind ClusterReduce, the op
// itself (values combined in rank order, so every program gets the same bits), and
// running the programs of each cluster on their own threads.
#include "cluster.hpp"

#include <cmath>
#include <exception>
#include <system_error>
#include <thread>

#include "exec.hpp"
#include "numeric.hpp"

namespace tilefuse::interp::detail {

std::vector<ClusterValue> ClusterSync::exchange(int rank, ClusterValue v, const std::string& what,
                                                std::unique_lock<std::mutex>& turn) {
  std::unique_lock lock(mu_);
  auto mismatch = [&] {
    aborted_ = true;
    cv_.notify_all();
    throw UserError(what + " is reached by some programs of the cluster but not by all of them. Every program of a "
                           "cluster must execute the same cluster reductions");
  };
  if (aborted_) throw ClusterAborted{};
  if (finished_ > 0) mismatch();
  values_[rank] = v;
  uint64_t gen = generation_;
  if (++arrived_ == size_) {  // the last to arrive keeps the turn and goes on
    arrived_ = 0;
    published_ = values_;
    ++generation_;
    cv_.notify_all();
    return published_;
  }
  turn.unlock();  // let the next program run while this one waits
  cv_.wait(lock, [&] { return generation_ != gen || aborted_ || finished_ > 0; });
  if (generation_ != gen) {
    std::vector<ClusterValue> all = published_;
    lock.unlock();
    turn.lock();
    return all;
  }
  if (aborted_) throw ClusterAborted{};
  mismatch();
  return {};
}

void ClusterSync::program_finished() {
  std::lock_guard lock(mu_);
  ++finished_;
  cv_.notify_all();
}

void ClusterSync::abort() {
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

void ClusterSync::reset() {
  std::lock_guard lock(mu_);
  arrived_ = finished_ = 0;
  aborted_ = false;
}

void exec_cluster_reduce(Exec& ex, const ir::Op& op) {
  const ir::Type& t = op.operand(0)->type;
  const Slot& x = ex.at(op.operand(0));
  Slot& out = ex.at(op.result());
  bool fl = is_float(t.dtype);
  ClusterValue mine;
  if (fl) mine.f = x.f[0];
  else mine.i = x.i[0];
  std::vector<ClusterValue> all{mine};
  if (ex.cluster)
    all = ex.cluster->exchange(ex.cluster_rank, mine,
                               std::string("cluster_") + ir::name(op.red()) + " (at " + op.loc.str() + ") in kernel '" +
                                   ex.fn.name + "'",
                               *ex.cluster_turn);
  ir::ReduceKind k = op.red();
  if (fl) {
    double acc = all[0].f;
    for (size_t r = 1; r < all.size(); ++r) {
      double v = all[r].f;
      if (k == ir::ReduceKind::Sum) acc += v;  // in double, rounded once, like reduce
      else if (!std::isnan(acc) && (std::isnan(v) || (k == ir::ReduceKind::Max ? v > acc : v < acc))) acc = v;
    }
    resize(out, Kind::Float, 1);
    out.f[0] = round_to(acc, t.dtype);
    return;
  }
  int64_t acc = all[0].i;
  for (size_t r = 1; r < all.size(); ++r) {
    int64_t v = all[r].i;
    if (k == ir::ReduceKind::Sum) acc = wrap_int(static_cast<int64_t>(uint64_t(acc) + uint64_t(v)), t.dtype);
    else acc = k == ir::ReduceKind::Max ? std::max(acc, v) : std::min(acc, v);
  }
  resize(out, Kind::Int, 1);
  out.i[0] = acc;
}

void run_clusters(std::vector<Exec>& programs, const std::array<int64_t, 3>& grid) {
  const int size = static_cast<int>(programs.size());
  ClusterSync sync(size);
  for (int r = 0; r < size; ++r) {
    programs[r].cluster = &sync;
    programs[r].cluster_rank = r;
  }
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t c = 0; c < grid[0] / size; ++c) {
        sync.reset();
        std::vector<std::exception_ptr> errors(size);  // per rank: the lowest rank's is reported
        std::vector<std::thread> threads;
        auto join_all = [&] {
          for (auto& t : threads) t.join();
        };
        for (int r = 0; r < size; ++r) {
          try {
            threads.emplace_back([&, r] {
              Exec& ex = programs[r];
              ex.pid = {c * size + r, y, z};
              std::unique_lock turn(sync.turn());
              ex.cluster_turn = &turn;
              try {
                exec_block(ex, ex.fn.body);
                sync.program_finished();
              } catch (const ClusterAborted&) {
              } catch (...) {
                errors[r] = std::current_exception();
                sync.abort();
              }
            });
          } catch (const std::system_error& e) {
            sync.abort();
            join_all();
            throw UserError(std::string("the interpreter could not start a thread for program ") +
                            std::to_string(c * size + r) + " of a cluster of " + std::to_string(size) + " (" +
                            e.what() + "). Run fewer threads in this process or use a smaller cluster");
          }
        }
        join_all();
        for (auto& e : errors)
          if (e) std::rethrow_exception(e);
      }
}

}  // namespace tilefuse::interp::detail
