// Cluster execution in the interpreter: the exchange behind ClusterReduce, the op
// itself (values, or tiles element by element, combined in rank order, so every program
// gets the same bits), and running the programs of each cluster on their own threads.
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
  values_[rank] = std::move(v);
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

namespace {

// A custom cluster reduction: each of the op's values is exchanged in turn, then the
// programs' values are combined by the op's region as a tree of rank pairs (lower rank
// on the left), the order the GPU uses.
void exec_cluster_reduce_custom(Exec& ex, const ir::Op& op) {
  const size_t n = op.operands.size();
  const Kind kind = kind_of(op.operand(0)->type);
  const bool fl = kind == Kind::Float;
  std::vector<std::vector<ClusterValue>> all;  // [value][rank]
  for (size_t k = 0; k < n; ++k) {
    const Slot& x = ex.at(op.operand(static_cast<int>(k)));
    ClusterValue mine;
    if (fl) mine.f = x.f[0];
    else mine.i = x.i[0];
    all.push_back(ex.cluster ? ex.cluster->exchange(ex.cluster_rank, mine,
                                                    "cluster_reduce (at " + op.loc.str() + ") in kernel '" +
                                                        ex.fn.name + "'",
                                                    *ex.cluster_turn)
                             : std::vector<ClusterValue>{mine});
  }
  const ir::Block& body = *op.region(0);
  const ir::Op* yield = body.terminator();
  TF_ASSERT(body.args.size() == 2 * n && yield && yield->kind == ir::OpKind::Yield && yield->operands.size() == n,
            "malformed cluster_reduce region");
  const size_t ranks = all[0].size();
  std::vector<std::vector<ClusterValue>> acc(ranks, std::vector<ClusterValue>(n));  // [rank][value]
  for (size_t r = 0; r < ranks; ++r)
    for (size_t k = 0; k < n; ++k) acc[r][k] = all[k][r];
  auto put = [&](const ir::Value* arg, const ClusterValue& v) {
    Slot& s = ex.at(arg);
    resize(s, kind, 1);
    if (fl) s.f[0] = v.f;
    else s.i[0] = v.i;
  };
  for (size_t step = 1; step < ranks; step *= 2)
    for (size_t r = 0; r + step < ranks; r += 2 * step) {
      for (size_t k = 0; k < n; ++k) {
        put(body.args[k], acc[r][k]);
        put(body.args[n + k], acc[r + step][k]);
      }
      exec_block(ex, body);
      std::vector<ClusterValue> combined(n);
      for (size_t k = 0; k < n; ++k) {
        const Slot& y = ex.at(yield->operand(static_cast<int>(k)));
        if (fl) combined[k].f = y.f[0];
        else combined[k].i = y.i[0];
      }
      acc[r] = combined;
    }
  for (size_t k = 0; k < n; ++k) put(op.result(static_cast<int>(k)), acc[0][k]);
}

// A tile combined element by element (each element as a scalar reduction would be).
void exec_cluster_reduce_tile(Exec& ex, const ir::Op& op) {
  const ir::Type& t = op.operand(0)->type;
  const Slot& x = ex.at(op.operand(0));
  const bool fl = is_float(t.dtype);
  const int64_t n = t.numel();
  ClusterValue mine;
  if (fl) mine.fs.assign(x.f.begin(), x.f.begin() + n);
  else mine.is.assign(x.i.begin(), x.i.begin() + n);
  std::vector<ClusterValue> all{mine};
  if (ex.cluster)
    all = ex.cluster->exchange(ex.cluster_rank, std::move(mine),
                               std::string("cluster_") + ir::name(op.red()) + " of a tile (at " + op.loc.str() +
                                   ") in kernel '" + ex.fn.name + "'",
                               *ex.cluster_turn);
  const ir::ReduceKind k = op.red();
  Slot& out = ex.at(op.result());
  resize(out, fl ? Kind::Float : Kind::Int, n);
  for (int64_t e = 0; e < n; ++e) {
    if (fl) {
      double acc = all[0].fs[e];
      for (size_t r = 1; r < all.size(); ++r) {
        double v = all[r].fs[e];
        if (k == ir::ReduceKind::Sum) acc += v;  // in double, rounded once
        else if (!std::isnan(acc) && (std::isnan(v) || (k == ir::ReduceKind::Max ? v > acc : v < acc))) acc = v;
      }
      out.f[e] = round_to(acc, t.dtype);
    } else {
      int64_t acc = all[0].is[e];
      for (size_t r = 1; r < all.size(); ++r) {
        int64_t v = all[r].is[e];
        if (k == ir::ReduceKind::Sum) acc = wrap_int(static_cast<int64_t>(uint64_t(acc) + uint64_t(v)), t.dtype);
        else acc = k == ir::ReduceKind::Max ? std::max(acc, v) : std::min(acc, v);
      }
      out.i[e] = acc;
    }
  }
}

}  // namespace

void exec_cluster_reduce(Exec& ex, const ir::Op& op) {
  if (op.red() == ir::ReduceKind::Custom) return exec_cluster_reduce_custom(ex, op);
  if (op.operand(0)->type.is_tile()) return exec_cluster_reduce_tile(ex, op);
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
