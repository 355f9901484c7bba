// Entry point: checks the arguments against the kernel signature, binds them to the
// parameters and runs the body once per program id of the grid.
#include "tilefuse/interp/interpreter.hpp"

#include "exec.hpp"
#include "numeric.hpp"

namespace tilefuse::interp {
namespace detail {

std::string Exec::where() const {
  return "kernel '" + fn.name + "' at program id (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " +
         std::to_string(pid[2]) + ")";
}

void Exec::fail(const ir::Op& op, const std::string& what, const std::string& fix) const {
  user_error(what + " in " + where(), op.loc, fix);
}

namespace {

std::string describe(const ArgValue& a) {
  switch (a.kind) {
    case ArgValue::Kind::HostBuffer: return std::string("a host buffer of ") + name(a.dtype);
    case ArgValue::Kind::DevicePtr: return std::string("a device pointer to ") + name(a.dtype);
    case ArgValue::Kind::Int: return std::string("an integer (") + name(a.dtype) + ")";
    case ArgValue::Kind::Float: return std::string("a float (") + name(a.dtype) + ")";
  }
  return "?";
}

[[noreturn]] void arg_error(const ir::Function& f, size_t i, const ir::Param& p, const ArgValue& a,
                            const std::string& fix) {
  throw UserError("kernel '" + f.name + "': argument " + std::to_string(i) + " for parameter '" + p.name + "' (" +
                  p.value->type.str() + ") is " + describe(a) + ". " + fix);
}

// Checks one argument and stores it in the parameter's slot.
void bind(Exec& ex, size_t i, const ArgValue& a) {
  const ir::Function& f = ex.fn;
  const ir::Param& p = f.params[i];
  const ir::Type& t = p.value->type;
  TF_ASSERT(t.is_scalar(), "tile-typed kernel parameter");
  Slot& s = ex.at(p.value);
  if (t.is_ptr) {
    if (a.kind == ArgValue::Kind::DevicePtr)
      arg_error(f, i, p, a, "The CPU interpreter needs host memory: pass ArgValue::host(ptr, bytes, dtype)");
    if (a.kind != ArgValue::Kind::HostBuffer)
      arg_error(f, i, p, a, std::string("Pass a host buffer of ") + name(t.dtype) + " elements");
    if (a.dtype != t.dtype)
      arg_error(f, i, p, a, std::string("Pass a buffer of ") + name(t.dtype) + " elements or cast the data first");
    if (!a.ptr && a.bytes != 0) arg_error(f, i, p, a, "The buffer pointer is null but its size is not zero");
    Buffer b;
    b.name = p.name;
    b.base = static_cast<unsigned char*>(a.ptr);
    b.n = static_cast<int64_t>(a.bytes / byte_size(t.dtype));
    b.dtype = t.dtype;
    b.read_only = p.is_const;
    resize(s, Kind::Ptr, 1);
    s.i[0] = 0;
    s.buf[0] = static_cast<int32_t>(ex.buffers.size());
    ex.buffers.push_back(std::move(b));
    return;
  }
  if (is_float(t.dtype)) {
    if (a.kind != ArgValue::Kind::Float || a.dtype != t.dtype)
      arg_error(f, i, p, a, std::string("Pass ArgValue::real(value, ") + name(t.dtype) + ")");
    resize(s, Kind::Float, 1);
    s.f[0] = round_to(a.f, t.dtype);
    return;
  }
  if (a.kind != ArgValue::Kind::Int || a.dtype != t.dtype)
    arg_error(f, i, p, a, std::string("Pass ArgValue::integer(value, ") + name(t.dtype) + ")");
  if (a.i < int_min(t.dtype) || a.i > int_max(t.dtype))
    throw UserError("kernel '" + f.name + "': argument " + std::to_string(i) + " for parameter '" + p.name + "' (" +
                    t.str() + ") has the value " + std::to_string(a.i) + ", which does not fit in " +
                    name(t.dtype) + ". Pass a value in [" + std::to_string(int_min(t.dtype)) + ", " +
                    std::to_string(int_max(t.dtype)) + "]");
  resize(s, Kind::Int, 1);
  s.i[0] = a.i;
}

}  // namespace
}  // namespace detail

void run(const ir::Function& f, Grid grid, const std::vector<ArgValue>& args) {
  using namespace detail;
  if (args.size() != f.params.size()) {
    std::string names;
    for (const auto& p : f.params) names += (names.empty() ? "" : ", ") + p.name + ": " + p.value->type.str();
    throw UserError("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) + " arguments (" + names +
                    ") but " + std::to_string(args.size()) + " were given. Pass one argument per parameter");
  }
  if (grid.x < 0 || grid.y < 0 || grid.z < 0)
    throw UserError("kernel '" + f.name + "' launched on a grid with a negative size (" + std::to_string(grid.x) +
                    ", " + std::to_string(grid.y) + ", " + std::to_string(grid.z) + "). Pass sizes >= 0");
  const int cs = f.cluster_size;
  if (cs > 1 && grid.x % cs != 0)
    throw UserError("kernel '" + f.name + "' launched with grid x = " + std::to_string(grid.x) +
                    ", which is not a multiple of its cluster size " + std::to_string(cs) +
                    ". Launch whole clusters");
  bool exchanges = false;
  ir::walk(f.body, [&](ir::Op& op) { exchanges |= op.kind == ir::OpKind::ClusterReduce; });
  if (cs > 1 && exchanges) {
    std::vector<Exec> programs;
    programs.reserve(cs);
    for (int r = 0; r < cs; ++r) {
      programs.emplace_back(f);
      for (size_t i = 0; i < args.size(); ++i) bind(programs.back(), i, args[i]);
      programs.back().nprog = {grid.x, grid.y, grid.z};
    }
    run_clusters(programs, {grid.x, grid.y, grid.z});
    return;
  }
  Exec ex(f);
  for (size_t i = 0; i < args.size(); ++i) bind(ex, i, args[i]);
  ex.nprog = {grid.x, grid.y, grid.z};
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        ex.pid = {x, y, z};
        exec_block(ex, f.body);
      }
}

}  // namespace tilefuse::interp
