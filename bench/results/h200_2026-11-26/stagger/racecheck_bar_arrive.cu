// Does compute-sanitizer racecheck model bar.arrive -> bar.sync ordering?
#include <cstdio>
__global__ void producer_consumer(int* out) {  // writes, arrive | sync, reads
  __shared__ int buf[128];
  int t = threadIdx.x;
  if (t < 128) {
    buf[t] = t * 3;
    asm volatile("bar.arrive 1, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 256;" ::: "memory");
    out[t - 128] = buf[t - 128];
  }
}
__global__ void reader_then_writer(int* out) {  // reads, arrive | sync, writes
  __shared__ int buf[128];
  int t = threadIdx.x;
  if (t < 128) buf[t] = t;
  __syncthreads();
  if (t < 128) {
    out[t] = buf[t];
    asm volatile("bar.arrive 1, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 256;" ::: "memory");
    buf[t - 128] = 7;
  }
}
__global__ void both_sync(int* out) {  // control: reads, sync | sync, writes
  __shared__ int buf[128];
  int t = threadIdx.x;
  if (t < 128) buf[t] = t;
  __syncthreads();
  if (t < 128) {
    out[t] = buf[t];
    asm volatile("bar.sync 1, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 256;" ::: "memory");
    buf[t - 128] = 7;
  }
}
int main() {
  int* out;
  cudaMalloc(&out, 128 * sizeof(int));
  producer_consumer<<<1, 256>>>(out);
  cudaDeviceSynchronize();
  reader_then_writer<<<1, 256>>>(out);
  cudaDeviceSynchronize();
  both_sync<<<1, 256>>>(out);
  cudaDeviceSynchronize();
  int h[128];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("done %d\n", h[5]);
  return 0;
}
