#include "tilefuse/nvptx/axis_info.hpp"

#include <algorithm>
#include <numeric>

namespace tilefuse::nvptx {

using ir::BinaryOp;
using ir::Op;
using ir::OpKind;
using ir::Value;

int64_t highest_pow2_divisor(int64_t v) {
  if (v == 0) return AxisInfo::kMaxDivisibility;
  uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  return std::min<int64_t>(int64_t(u & (~u + 1)), AxisInfo::kMaxDivisibility);
}

AxisInfo AxisInfo::unknown(int rank) {
  int r = std::max(rank, 1);
  return AxisInfo{std::vector<int64_t>(r, 1), std::vector<int64_t>(r, 1), std::vector<int64_t>(r, 1), {}};
}

std::string AxisInfo::str() const {
  auto v = [](const std::vector<int64_t>& x) {
    std::string s = "[";
    for (size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
    return s + "]";
  };
  std::string s = "{contig=" + v(contiguity) + ", div=" + v(divisibility) + ", const=" + v(constancy);
  if (value) s += ", value=" + std::to_string(*value);
  return s + "}";
}

const AxisInfo& AxisInfoMap::get(const Value* v) const {
  auto it = info_.find(v);
  if (it != info_.end()) return it->second;
  static const AxisInfo fallback[5] = {AxisInfo::unknown(1), AxisInfo::unknown(1), AxisInfo::unknown(2),
                                       AxisInfo::unknown(3), AxisInfo::unknown(4)};
  return fallback[std::clamp(v->type.rank(), 0, 4)];
}

namespace {

int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }
int64_t mul_div(int64_t a, int64_t b) { return std::min<int64_t>(AxisInfo::kMaxDivisibility, a * b); }

AxisInfo join(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo r = a;
  for (int d = 0; d < a.rank(); ++d) {
    r.contiguity[d] = gcd(a.contiguity[d], b.contiguity[d]);
    r.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
    r.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
  }
  if (a.value != b.value) r.value.reset();
  return r;
}

class Analysis {
 public:
  Analysis(const ir::Function& f, AxisInfoMap& m) : f_(f), m_(m) {}

  void run() {
    for (auto& p : f_.params) {
      AxisInfo ai = AxisInfo::unknown(0);
      bool integral = p.value->type.is_ptr || is_int(p.value->type.dtype);
      if (integral) ai.divisibility[0] = std::clamp<int64_t>(highest_pow2_divisor(std::max<int64_t>(p.divisibility, 1)), 1,
                                                            AxisInfo::kMaxDivisibility);
      m_.set(p.value, ai);
    }
    block(f_.body);
  }

 private:
  const AxisInfo& in(const Value* v) const { return m_.get(v); }
  static std::vector<int64_t> dims(const Value* v) {
    if (v->type.is_scalar()) return {1};
    return v->type.shape;
  }
  static bool intlike(const Value* v) { return v->type.is_ptr || is_int(v->type.dtype); }

  void block(const ir::Block& b) {
    for (auto& op : b.ops) visit(*op);
  }

  AxisInfo constant_info(const Value* r, int64_t v) {
    auto s = dims(r);
    AxisInfo ai = AxisInfo::unknown(static_cast<int>(s.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      ai.divisibility[d] = highest_pow2_divisor(v);
      ai.constancy[d] = s[d];
    }
    ai.value = v;
    return ai;
  }

  void visit(const Op& op) {
    switch (op.kind) {
      case OpKind::For: return loop(op);
      case OpKind::If: return branch(op);
      case OpKind::Reduce: case OpKind::ClusterReduce:  // a custom combine's region
        if (!op.regions.empty()) block(*op.regions[0]);
        break;
      default: break;
    }
    for (auto* r : op.results) m_.set(r, compute(op, r));
  }

  void loop(const Op& op) {
    const ir::Block& body = *op.regions[0];
    const AxisInfo& lo = in(op.operand(0));
    const AxisInfo& step = in(op.operand(2));
    AxisInfo iv = AxisInfo::unknown(0);
    iv.divisibility[0] = gcd(lo.divisibility[0], step.divisibility[0]);
    m_.set(body.args[0], iv);
    size_t n = op.operands.size() - 3;
    for (size_t i = 0; i < n; ++i) m_.set(body.args[i + 1], in(op.operands[i + 3]));
    // Fixpoint: an iteration value keeps what holds for its init and every yield.
    for (int iter = 0; iter < 8; ++iter) {
      block(body);
      const Op* y = body.terminator();
      bool changed = false;
      for (size_t i = 0; i < n; ++i) {
        AxisInfo j = join(in(body.args[i + 1]), in(y->operands[i]));
        if (!(j == in(body.args[i + 1]))) {
          m_.set(body.args[i + 1], j);
          changed = true;
        }
      }
      if (!changed) break;
      if (iter == 7)
        for (size_t i = 0; i < n; ++i) m_.set(body.args[i + 1], AxisInfo::unknown(body.args[i + 1]->type.rank()));
    }
    block(body);
    for (size_t i = 0; i < n; ++i) m_.set(op.results[i], in(body.args[i + 1]));
  }

  void branch(const Op& op) {
    block(*op.regions[0]);
    block(*op.regions[1]);
    const Op* y0 = op.regions[0]->terminator();
    const Op* y1 = op.regions[1]->terminator();
    for (size_t i = 0; i < op.results.size(); ++i)
      m_.set(op.results[i], join(in(y0->operands[i]), in(y1->operands[i])));
  }

  AxisInfo compute(const Op& op, const Value* r) {
    auto shape = dims(r);
    int rank = static_cast<int>(shape.size());
    AxisInfo out = AxisInfo::unknown(r->type.rank());
    if (!intlike(r)) return out;
    auto clip = [&](AxisInfo& a) {
      for (int d = 0; d < rank; ++d) {
        a.contiguity[d] = std::min(a.contiguity[d], shape[d]);
        a.constancy[d] = std::min(a.constancy[d], shape[d]);
      }
      return a;
    };
    switch (op.kind) {
      case OpKind::Constant: return constant_info(r, op.ival);
      case OpKind::Arange:
        out.contiguity[0] = op.end - op.start;
        out.divisibility[0] = highest_pow2_divisor(op.start);
        return out;
      case OpKind::Splat: {
        const AxisInfo& s = in(op.operand(0));
        for (int d = 0; d < rank; ++d) {
          out.divisibility[d] = s.divisibility[0];
          out.constancy[d] = shape[d];
        }
        out.value = s.value;
        return out;
      }
      case OpKind::Broadcast: {
        const AxisInfo& s = in(op.operand(0));
        const auto& src = op.operand(0)->type.shape;
        out = s;
        for (int d = 0; d < rank; ++d)
          if (src[d] == 1 && shape[d] != 1) {
            out.contiguity[d] = 1;
            out.constancy[d] = shape[d];
          }
        return out;
      }
      case OpKind::ExpandDims: {
        const AxisInfo& s = in(op.operand(0));
        int64_t div;
        if (s.value) {
          div = highest_pow2_divisor(*s.value);
        } else {
          div = AxisInfo::kMaxDivisibility;
          for (int d = 0; d < s.rank(); ++d) div = gcd(div, s.contiguity[d] > 1 ? 1 : s.divisibility[d]);
        }
        if (op.operand(0)->type.is_scalar()) {
          out = AxisInfo::unknown(1);
          out.divisibility[0] = s.divisibility[0];
          out.value = s.value;
          return out;
        }
        out = s;
        out.contiguity.insert(out.contiguity.begin() + op.axis, 1);
        out.divisibility.insert(out.divisibility.begin() + op.axis, div);
        out.constancy.insert(out.constancy.begin() + op.axis, 1);
        return out;
      }
      case OpKind::Cast: {
        const Value* x = op.operand(0);
        if (!is_int(x->type.dtype) || r->type.dtype == DType::i1 || x->type.dtype == DType::i1) {
          for (int d = 0; d < rank; ++d) out.constancy[d] = in(x).constancy[d];
          return out;
        }
        out = in(x);
        if (bit_width(r->type.dtype) < bit_width(x->type.dtype)) out.value.reset();
        return out;
      }
      case OpKind::Binary: return binary(op, shape);
      case OpKind::AddPtr: {
        const AxisInfo& p = in(op.operand(0));
        const AxisInfo& o = in(op.operand(1));
        int64_t es = byte_size(r->type.dtype);
        for (int d = 0; d < rank; ++d) {
          out.contiguity[d] = std::max(gcd(p.contiguity[d], o.constancy[d]), gcd(p.constancy[d], o.contiguity[d]));
          out.divisibility[d] = gcd(p.divisibility[d], mul_div(o.divisibility[d], es));
          out.constancy[d] = gcd(p.constancy[d], o.constancy[d]);
        }
        return clip(out);
      }
      case OpKind::AlignPtr:
        // The rounded pointer is aligned by construction (its byte count is what divides).
        if (op.code == 0) out.divisibility[0] = std::min<int64_t>(op.ival, AxisInfo::kMaxDivisibility);
        return out;
      case OpKind::Compare: return compare(op, shape);
      case OpKind::Select: {
        const AxisInfo& c = in(op.operand(0));
        const AxisInfo& a = in(op.operand(1));
        const AxisInfo& b = in(op.operand(2));
        for (int d = 0; d < rank; ++d) {
          out.constancy[d] = gcd(c.constancy[d], gcd(a.constancy[d], b.constancy[d]));
          out.contiguity[d] = gcd(c.constancy[d], gcd(a.contiguity[d], b.contiguity[d]));
          out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
        }
        if (c.value) out = *c.value ? a : b;
        return clip(out);
      }
      case OpKind::Reshape: case OpKind::Trans: {
        // Constancy of a fully constant tile survives any relabeling.
        const AxisInfo& s = in(op.operand(0));
        if (s.value) return constant_info(r, *s.value);
        return out;
      }
      case OpKind::ProgramId: case OpKind::NumPrograms:
      default: return out;
    }
  }

  AxisInfo binary(const Op& op, const std::vector<int64_t>& shape) {
    int rank = static_cast<int>(shape.size());
    const AxisInfo& a = in(op.operand(0));
    const AxisInfo& b = in(op.operand(1));
    AxisInfo out = AxisInfo::unknown(op.result()->type.rank());
    if (a.value && b.value && op.result()->type.dtype != DType::i1) {
      int64_t x = *a.value, y = *b.value;
      std::optional<int64_t> v;
      switch (op.bin()) {
        case BinaryOp::Add: v = x + y; break;
        case BinaryOp::Sub: v = x - y; break;
        case BinaryOp::Mul: v = x * y; break;
        default: break;
      }
      if (v) return constant_info(op.result(), *v);
    }
    for (int d = 0; d < rank; ++d) out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
    switch (op.bin()) {
      case BinaryOp::Add:
        for (int d = 0; d < rank; ++d) {
          out.contiguity[d] = std::max(gcd(a.contiguity[d], b.constancy[d]), gcd(a.constancy[d], b.contiguity[d]));
          out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
        }
        break;
      case BinaryOp::Sub:
        for (int d = 0; d < rank; ++d) {
          out.contiguity[d] = gcd(a.contiguity[d], b.constancy[d]);
          out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
        }
        break;
      case BinaryOp::Mul:
      case BinaryOp::Shl:
        for (int d = 0; d < rank; ++d) {
          bool is_shl = op.bin() == BinaryOp::Shl;
          if (is_shl && !(b.value && *b.value >= 0 && *b.value < 30)) break;
          int64_t bdiv = is_shl ? (int64_t(1) << *b.value) : b.divisibility[d];
          bool b_one = is_shl ? *b.value == 0 : b.value == 1;
          bool a_one = !is_shl && a.value == 1;
          int64_t ad = a.contiguity[d] > 1 && !b_one ? 1 : a.divisibility[d];
          int64_t bd = !is_shl && b.contiguity[d] > 1 && !a_one ? 1 : bdiv;
          out.divisibility[d] = mul_div(ad, bd);
          if (b_one) out.contiguity[d] = a.contiguity[d];
          if (a_one) out.contiguity[d] = b.contiguity[d];
        }
        break;
      case BinaryOp::Min:
      case BinaryOp::Max:
        // The result is one of the operands, so it has every divisor both have (a tile
        // clamped to end at an aligned extent keeps its aligned start).
        for (int d = 0; d < rank; ++d) out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
        break;
      case BinaryOp::Rem:
        // C remainder of a negative run is not contiguous; unsigned types only.
        if (b.value && *b.value > 0 && is_unsigned(op.result()->type.dtype)) {
          int64_t c = *b.value;
          for (int d = 0; d < rank; ++d) {
            int64_t g = gcd(a.contiguity[d], c);
            out.contiguity[d] = std::min(g, a.divisibility[d]);
            out.divisibility[d] = a.contiguity[d] > 1 ? 1 : gcd(a.divisibility[d], highest_pow2_divisor(c));
          }
        }
        break;
      case BinaryOp::Div:
        // Unsigned x / c (c a power of two) is constant over aligned runs of c
        // consecutive values. Signed division truncates toward zero, so a run crossing
        // zero breaks that; only unsigned types get the rule.
        if (b.value && *b.value > 0 && is_unsigned(op.result()->type.dtype) &&
            highest_pow2_divisor(*b.value) == *b.value) {
          for (int d = 0; d < rank; ++d)
            out.constancy[d] =
                std::max(out.constancy[d], std::min(gcd(a.contiguity[d], *b.value), a.divisibility[d]));
        }
        break;
      default: break;
    }
    for (int d = 0; d < rank; ++d) {
      out.contiguity[d] = std::min(out.contiguity[d], shape[d]);
      out.constancy[d] = std::min(out.constancy[d], shape[d]);
    }
    return out;
  }

  AxisInfo compare(const Op& op, const std::vector<int64_t>& shape) {
    int rank = static_cast<int>(shape.size());
    const AxisInfo& a = in(op.operand(0));
    const AxisInfo& b = in(op.operand(1));
    AxisInfo out = AxisInfo::unknown(op.result()->type.rank());
    bool ints = is_int(op.operand(0)->type.dtype) || op.operand(0)->type.is_ptr;
    for (int d = 0; d < rank; ++d) {
      int64_t c = gcd(a.constancy[d], b.constancy[d]);
      if (ints) {
        // x < n and x >= n change value only at x == n: constant over aligned runs of
        // x that divide n (likewise n > x and n <= x).
        ir::CmpPred p = op.cmp();
        bool lhs_run = p == ir::CmpPred::Lt || p == ir::CmpPred::Ge;
        bool rhs_run = p == ir::CmpPred::Gt || p == ir::CmpPred::Le;
        int64_t div = gcd(a.divisibility[d], b.divisibility[d]);
        if (lhs_run) c = std::max(c, gcd(gcd(a.contiguity[d], b.constancy[d]), div));
        if (rhs_run) c = std::max(c, gcd(gcd(b.contiguity[d], a.constancy[d]), div));
      }
      out.constancy[d] = std::min(c, shape[d]);
    }
    return out;
  }

  const ir::Function& f_;
  AxisInfoMap& m_;
};

}  // namespace

AxisInfoMap analyze_axis_info(const ir::Function& f) {
  AxisInfoMap m;
  Analysis(f, m).run();
  return m;
}

}  // namespace tilefuse::nvptx
