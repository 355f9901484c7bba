#pragma once
// The gallery: reference kernels written in the tilefuse DSL, with host functions.
#include "tilefuse/kernels/attention.hpp"
#include "tilefuse/kernels/bias_relu_log.hpp"
#include "tilefuse/kernels/cross_entropy.hpp"
#include "tilefuse/kernels/matmul.hpp"
#include "tilefuse/kernels/norms.hpp"
#include "tilefuse/kernels/norms_backward.hpp"
#include "tilefuse/kernels/scaled_matmul.hpp"
#include "tilefuse/kernels/softmax.hpp"
#include "tilefuse/kernels/softmax_backward.hpp"
#include "tilefuse/kernels/split_norms.hpp"
#include "tilefuse/kernels/split_softmax.hpp"
#include "tilefuse/kernels/swiglu.hpp"
