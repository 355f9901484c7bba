#pragma once
// Backward passes of the gallery's norms: rmsnorm_backward, add_rmsnorm_backward and
// layernorm_backward (deterministic dW/dB through per-program partial sums).
#include "tilefuse/kernels/layernorm_backward.hpp"
#include "tilefuse/kernels/rmsnorm_backward.hpp"
