#pragma once
// Control flow that builds IR: for_range loops and if_ branches. Handles assigned in
// a body become loop-carried values (for_range) or branch results (if_); handles the
// body leaves alone stay as they are.
#include <type_traits>
#include <vector>

#include "tilefuse/dsl/ops.hpp"

namespace tilefuse {
namespace detail {
// The live handles of the current trace, oldest last.
std::vector<HandleBase*> live_handles();
}  // namespace detail

// for_range(lo, hi, step, [&](I32 i) { ... }): i = lo, lo + step, ... while i < hi.
template <class Lo, class Hi, class St, class F>
void for_range(const Lo& lo, const Hi& hi, const St& step, F&& body, TF_HERE) {
  static_assert(std::is_invocable_v<F, I32> || std::is_invocable_v<F, I64>,
                "for_range: the body must take the induction variable (I32 or I64)");
  ir::Builder& b = detail::builder("for_range", loc);
  ir::Value* vlo = detail::value_of<int32_t>(b, lo);
  ir::Value* vhi = detail::value_of<int32_t>(b, hi);
  ir::Value* vst = detail::value_of<int32_t>(b, step);
  std::vector<detail::HandleBase*> handles = detail::live_handles();
  std::vector<ir::Value*> inits;
  for (auto* h : handles) inits.push_back(h->value);
  auto results = b.for_(vlo, vhi, vst, inits, [&](ir::Builder& bb, ir::Value* iv, const std::vector<ir::Value*>& iters) {
    for (size_t k = 0; k < handles.size(); ++k) handles[k]->value = iters[k];
    if constexpr (std::is_invocable_v<F, I32>) {
      body(I32(iv->type.dtype == DType::i32 ? iv : bb.cast(iv, DType::i32)));
    } else {
      body(I64(iv->type.dtype == DType::i64 ? iv : bb.cast(iv, DType::i64)));
    }
    std::vector<ir::Value*> ys;
    for (auto* h : handles) ys.push_back(h->value);
    return ys;
  });
  for (size_t k = 0; k < handles.size(); ++k) handles[k]->value = results[k];
}

// if_(cond, [&] { ... } [, [&] { ... }]): a scalar branch in the generated code.
// (Use plain C++ `if` on meta-parameters to specialize at trace time instead.)
template <class Then, class Else = std::nullptr_t>
void if_(const I1& cond, Then&& then_fn, Else&& else_fn = nullptr, TF_HERE) {
  ir::Builder& b = detail::builder("if_", loc);
  std::vector<detail::HandleBase*> handles = detail::live_handles();
  std::vector<ir::Value*> before;
  for (auto* h : handles) before.push_back(h->value);
  auto run = [&](auto& fn) {
    return [&](ir::Builder&) {
      if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(fn)>, std::nullptr_t>) fn();
      std::vector<ir::Value*> ys;
      for (size_t k = 0; k < handles.size(); ++k) {
        ys.push_back(handles[k]->value);
        handles[k]->value = before[k];
      }
      return ys;
    };
  };
  auto results = b.if_(cond.value, run(then_fn), run(else_fn));
  for (size_t k = 0; k < handles.size(); ++k) handles[k]->value = results[k];
}

}  // namespace tilefuse
