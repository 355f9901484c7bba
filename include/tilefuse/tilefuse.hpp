#pragma once
// tilefuse: a tile language embedded in C++. Include this header to write kernels.
#include "tilefuse/dsl/config.hpp"
#include "tilefuse/dsl/control.hpp"
#include "tilefuse/dsl/element.hpp"
#include "tilefuse/dsl/kernel.hpp"
#include "tilefuse/dsl/ops.hpp"
#include "tilefuse/dsl/tensor_view.hpp"
#include "tilefuse/dsl/tile.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/interp/interpreter.hpp"
#include "tilefuse/ir/printer.hpp"
