#include "tilefuse/ir/printer.hpp"

#include <cmath>
#include <sstream>
#include <unordered_map>

namespace tilefuse::ir {
namespace {

class Printer {
 public:
  Printer(std::ostream& os, PrintOptions o) : os_(os), opts_(o) {}

  void function(const Function& f) {
    for (auto& p : f.params) names_[p.value] = "%" + p.name;
    os_ << "kernel @" << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      os_ << (i ? ", " : "") << "%" << p.name << ": " << p.value->type.str() << (p.is_const ? " const" : "")
          << (p.divisibility > 1 ? " {div " + std::to_string(p.divisibility) + "}" : "");
    }
    os_ << ")";
    if (!f.meta.empty()) {
      os_ << " meta {";
      bool first = true;
      for (auto& [k, v] : f.meta) {
        os_ << (first ? "" : ", ") << k << " = " << v;
        first = false;
      }
      os_ << "}";
    }
    os_ << " warps " << f.num_warps << " stages " << f.num_stages;
    if (f.cluster_size > 1) os_ << " cluster " << f.cluster_size;
    if (f.warp_specialize) os_ << " warp_specialize";
    if (f.persistent) os_ << " persistent";
    if (f.min_programs_per_sm) os_ << " min_programs_per_sm " << f.min_programs_per_sm;
    os_ << " {\n";
    block(f.body, 1);
    os_ << "}\n";
  }

 private:
  std::string name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string n = "%" + std::to_string(next_++);
    names_[v] = n;
    return n;
  }

  std::string list(const std::vector<Value*>& vs, size_t from = 0) {
    std::string r;
    for (size_t i = from; i < vs.size(); ++i) r += (i > from ? ", " : "") + name(vs[i]);
    return r;
  }

  static std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::isnan(v)) return "nan";
    std::ostringstream s;
    s.precision(9);
    s << v;
    return s.str();
  }

  void indent(int depth) { os_ << std::string(2 * depth, ' '); }

  void block(const Block& b, int depth) {
    for (auto& op : b.ops) this->op(*op, depth);
  }

  std::string types(const std::vector<Value*>& vs) {
    std::string r;
    for (size_t i = 0; i < vs.size(); ++i) r += (i ? ", " : "") + vs[i]->type.str();
    return r;
  }

  void op(const Op& op, int depth) {
    indent(depth);
    if (!op.results.empty()) os_ << list(op.results) << " = ";
    switch (op.kind) {
      case OpKind::ProgramId: os_ << "program_id " << op.axis; break;
      case OpKind::NumPrograms: os_ << "num_programs " << op.axis; break;
      case OpKind::Constant:
        os_ << "constant " << (is_float(op.result()->type.dtype) ? number(op.fval) : std::to_string(op.ival));
        break;
      case OpKind::Arange: os_ << "arange " << op.start << ", " << op.end; break;
      case OpKind::Splat: os_ << "splat " << list(op.operands); break;
      case OpKind::Broadcast: os_ << "broadcast " << list(op.operands); break;
      case OpKind::ExpandDims: os_ << "expand_dims " << list(op.operands) << ", axis " << op.axis; break;
      case OpKind::Reshape: os_ << "reshape " << list(op.operands); break;
      case OpKind::Trans: {
        os_ << "trans " << list(op.operands) << ", perm [";
        for (size_t i = 0; i < op.perm.size(); ++i) os_ << (i ? ", " : "") << op.perm[i];
        os_ << "]";
        break;
      }
      case OpKind::Binary: os_ << ir::name(op.bin()) << " " << list(op.operands); break;
      case OpKind::Unary:
        os_ << ir::name(op.un()) << (op.approx ? ".approx " : " ") << list(op.operands);
        break;
      case OpKind::Compare: os_ << "cmp " << ir::name(op.cmp()) << " " << list(op.operands); break;
      case OpKind::Select: os_ << "select " << list(op.operands); break;
      case OpKind::Fma: os_ << "fma " << list(op.operands); break;
      case OpKind::Cast: os_ << "cast " << list(op.operands); break;
      case OpKind::AddPtr: os_ << "add_ptr " << list(op.operands); break;
      case OpKind::AlignPtr:
        os_ << (op.code ? "align_elements " : "align_down ") << op.ival << " " << list(op.operands);
        break;
      case OpKind::Load:
        os_ << "load" << (op.evict != Evict::Normal ? std::string(".") + ir::name(op.evict) : "")
            << (op.view_rank ? ".view" + std::to_string(op.view_rank) : "") << " " << list(op.operands);
        break;
      case OpKind::Store:
        os_ << "store" << (op.evict != Evict::Normal ? std::string(".") + ir::name(op.evict) : "")
            << (op.view_rank ? ".view" + std::to_string(op.view_rank) : "") << " " << list(op.operands);
        break;
      case OpKind::AtomicRMW:
        os_ << "atomic_" << ir::name(op.atomic()) << (op.acq_rel ? ".acq_rel " : " ") << list(op.operands);
        break;
      case OpKind::AtomicCas: os_ << "atomic_cas" << (op.acq_rel ? ".acq_rel " : " ") << list(op.operands); break;
      case OpKind::Reduce:
      case OpKind::Scan:
        os_ << (op.kind == OpKind::Reduce ? "reduce." : "scan.") << ir::name(op.red()) << " "
            << list(op.operands) << ", axis " << op.axis;
        break;
      case OpKind::ClusterReduce: os_ << "cluster_reduce." << ir::name(op.red()) << " " << list(op.operands); break;
      case OpKind::Dot:
        os_ << (op.precision() == DotPrecision::Tf32 ? "dot.tf32 " : "dot ") << list(op.operands);
        break;
      case OpKind::For: {
        const Block& body = *op.regions[0];
        os_ << "for " << name(body.args[0]) << " = " << name(op.operands[0]) << " to " << name(op.operands[1])
            << " step " << name(op.operands[2]);
        if (op.operands.size() > 3) {
          os_ << " iter(";
          for (size_t i = 3; i < op.operands.size(); ++i)
            os_ << (i > 3 ? ", " : "") << name(body.args[i - 2]) << " = " << name(op.operands[i]);
          os_ << ")";
        }
        break;
      }
      case OpKind::If: os_ << "if " << list(op.operands); break;
      case OpKind::Yield: os_ << "yield " << list(op.operands); break;
      case OpKind::Barrier: os_ << "barrier"; break;
    }
    if (!op.results.empty()) os_ << " : " << types(op.results);
    if ((op.kind == OpKind::Reduce || op.kind == OpKind::ClusterReduce) && op.red() == ReduceKind::Custom) {
      const Block& b = *op.regions[0];
      os_ << " combine(" << list(b.args) << ")";
    }
    if (opts_.locations && op.loc.known()) os_ << "  loc(" << op.loc.str() << ")";
    if (!op.regions.empty()) {
      os_ << " {\n";
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r > 0) {
          indent(depth);
          os_ << "} else {\n";
        }
        block(*op.regions[r], depth + 1);
      }
      indent(depth);
      os_ << "}";
    }
    os_ << "\n";
  }

  std::ostream& os_;
  PrintOptions opts_;
  std::unordered_map<const Value*, std::string> names_;
  int next_ = 0;
};

}  // namespace

void print(std::ostream& os, const Function& f, PrintOptions opts) { Printer(os, opts).function(f); }

std::string to_string(const Function& f, PrintOptions opts) {
  std::ostringstream s;
  print(s, f, opts);
  return s.str();
}

}  // namespace tilefuse::ir
