#pragma once
// The tilefuse CUDA runtime: driver loading, device info, memory, streams, module
// loading, launch and the kernel caches.
#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/hash.hpp"
#include "tilefuse/cuda/kernel_cache.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/cuda/module.hpp"
#include "tilefuse/cuda/stream.hpp"
