#include "tilefuse/dsl/trace.hpp"

#include <vector>

namespace tilefuse::detail {

namespace {
thread_local TraceContext* g_current = nullptr;
}

TraceContext* TraceContext::current() { return g_current; }
void TraceContext::set_current(TraceContext* c) { g_current = c; }

ir::Builder& builder(const char* op, const std::source_location& loc) {
  if (!g_current)
    user_error(std::string("tilefuse DSL op '") + op + "' called outside a kernel trace", SourceLoc(loc),
               "DSL ops only work inside a kernel(...) lambda while tilefuse traces it (at launch or "
               "compile); compute host-side values with plain C++");
  g_current->builder->set_loc(SourceLoc(loc));
  return *g_current->builder;
}

void HandleBase::link() {
  ctx_ = g_current;
  if (!ctx_) return;
  next = ctx_->handles;
  if (next) next->prev = this;
  ctx_->handles = this;
}

void HandleBase::unlink() {
  if (!ctx_) return;
  if (prev) prev->next = next;
  else if (ctx_->handles == this) ctx_->handles = next;
  if (next) next->prev = prev;
  prev = next = nullptr;
}

}  // namespace tilefuse::detail

namespace tilefuse::detail {
std::vector<HandleBase*> live_handles() {
  std::vector<HandleBase*> r;
  if (auto* c = TraceContext::current())
    for (HandleBase* h = c->handles; h; h = h->next)
      if (h->value) r.push_back(h);
  return r;
}
}  // namespace tilefuse::detail
