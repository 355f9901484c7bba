// Cluster residency probe: how many clusters of each size are resident at once
// (cudaOccupancyMaxActiveClusters) for programs capped at B per SM (by shared memory),
// as a share of the SMs' program slots.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void k(float* p) { extern __shared__ float s[]; if (p) p[threadIdx.x] = s[threadIdx.x]; }
void probe(int T, int B) {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int smem_sm; cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
  int smem = smem_sm / B - 1024 - 128;
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int per_sm = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, T, smem);
  printf("threads %d, %d programs per SM (%d slots):", T, per_sm, per_sm * sms);
  for (int c = 1; c <= 16; ++c) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(c * 64); cfg.blockDim = dim3(T); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = c; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
    cfg.attrs = &a; cfg.numAttrs = 1;
    int n = 0; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
    if (e != cudaSuccess) { printf(" c%d:err(%s)", c, cudaGetErrorString(e)); continue; }
    printf(" c%d:%d(%.0f%%)", c, n, 100.0 * n * c / (per_sm * sms));
  }
  printf("\n");
}
int main() { for (int b : {1, 2, 3, 4, 5, 6, 7, 8}) probe(256, b); }
