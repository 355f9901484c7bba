#pragma once
// The trace context: while a kernel lambda is traced, DSL ops append IR through the
// current Builder. Every live handle is registered so control-flow helpers can find
// the values a loop or branch body reassigns (they become loop-carried values).
#include <source_location>

#include "tilefuse/ir/builder.hpp"

namespace tilefuse::detail {

struct HandleBase;

struct TraceContext {
  ir::Builder* builder = nullptr;
  HandleBase* handles = nullptr;  // intrusive list of live handles (most recent first)

  static TraceContext* current();
  static void set_current(TraceContext* c);
};

// The current builder positioned at `loc`; throws UserError when no trace is active.
ir::Builder& builder(const char* op, const std::source_location& loc);

// Base of every DSL handle: the traced IR value it names.
struct HandleBase {
  ir::Value* value = nullptr;

  HandleBase() { link(); }
  explicit HandleBase(ir::Value* v) : value(v) { link(); }
  HandleBase(const HandleBase& o) : value(o.value) { link(); }
  HandleBase& operator=(const HandleBase& o) {
    value = o.value;
    return *this;
  }
  ~HandleBase() { unlink(); }

  HandleBase* next = nullptr;
  HandleBase* prev = nullptr;

 private:
  TraceContext* ctx_ = nullptr;
  void link();
  void unlink();
};

}  // namespace tilefuse::detail
